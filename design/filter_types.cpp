// SPDX-License-Identifier: Apache-2.0
// Names of the filter-design enums, as the .fx language spells them, and their inverse.
#include "design/filter_types.h"

#include <array>

namespace fxc::design {
namespace {

// One table per enum, in declaration order, so name(), parse_enum() and enum_names() agree.
template <class E>
struct EnumTable;

template <>
struct EnumTable<BandType> {
  static constexpr std::array<std::string_view, 4> names = {"lowpass", "highpass", "bandpass",
                                                            "bandstop"};
};
template <>
struct EnumTable<IirFamily> {
  static constexpr std::array<std::string_view, 5> names = {"butter", "cheby1", "cheby2", "ellip",
                                                            "bessel"};
};
template <>
struct EnumTable<BesselNorm> {
  static constexpr std::array<std::string_view, 3> names = {"phase", "delay", "mag"};
};
template <>
struct EnumTable<BiquadType> {
  static constexpr std::array<std::string_view, 8> names = {
      "lowpass", "highpass", "bandpass", "notch", "allpass", "peaking", "lowshelf", "highshelf"};
};
template <>
struct EnumTable<Window> {
  static constexpr std::array<std::string_view, 5> names = {"hamming", "hann", "blackman", "boxcar",
                                                            "kaiser"};
};

template <>
struct EnumTable<DynamicsType> {
  static constexpr std::array<std::string_view, 5> names = {"envelope", "compressor", "expander", "gate",
                                                            "limiter"};
};
template <>
struct EnumTable<Detector> {
  static constexpr std::array<std::string_view, 2> names = {"peak", "rms"};
};

template <>
struct EnumTable<LinkMode> {
  static constexpr std::array<std::string_view, 2> names = {"max", "mean"};
};

template <class E>
std::string_view lookup_name(E value) {
  const auto& names = EnumTable<E>::names;
  const auto index = static_cast<std::size_t>(value);
  return index < names.size() ? names[index] : std::string_view("?");
}

}  // namespace

std::string_view name(BandType value) {
  return lookup_name(value);
}
std::string_view name(IirFamily value) {
  return lookup_name(value);
}
std::string_view name(BesselNorm value) {
  return lookup_name(value);
}
std::string_view name(BiquadType value) {
  return lookup_name(value);
}
std::string_view name(Window value) {
  return lookup_name(value);
}
std::string_view name(DynamicsType value) {
  return lookup_name(value);
}
std::string_view name(Detector value) {
  return lookup_name(value);
}
std::string_view name(LinkMode value) {
  return lookup_name(value);
}

template <class E>
std::optional<E> parse_enum(std::string_view word) {
  const auto& names = EnumTable<E>::names;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == word) return static_cast<E>(i);
  }
  return std::nullopt;
}

template <class E>
std::vector<std::string_view> enum_names() {
  const auto& names = EnumTable<E>::names;
  return std::vector<std::string_view>(names.begin(), names.end());
}

template std::optional<BandType> parse_enum<BandType>(std::string_view);
template std::optional<IirFamily> parse_enum<IirFamily>(std::string_view);
template std::optional<BesselNorm> parse_enum<BesselNorm>(std::string_view);
template std::optional<BiquadType> parse_enum<BiquadType>(std::string_view);
template std::optional<Window> parse_enum<Window>(std::string_view);
template std::optional<DynamicsType> parse_enum<DynamicsType>(std::string_view);
template std::optional<Detector> parse_enum<Detector>(std::string_view);
template std::optional<LinkMode> parse_enum<LinkMode>(std::string_view);

template std::vector<std::string_view> enum_names<BandType>();
template std::vector<std::string_view> enum_names<IirFamily>();
template std::vector<std::string_view> enum_names<BesselNorm>();
template std::vector<std::string_view> enum_names<BiquadType>();
template std::vector<std::string_view> enum_names<Window>();
template std::vector<std::string_view> enum_names<DynamicsType>();
template std::vector<std::string_view> enum_names<Detector>();
template std::vector<std::string_view> enum_names<LinkMode>();

}  // namespace fxc::design

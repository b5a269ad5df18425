// SPDX-License-Identifier: Apache-2.0
// The vocabulary of filter design: section layout, band types, families, windows.
// Shared by the design functions, the IR payloads and the frontends.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include <fxc/dsl.h>

namespace fxc::design {

/// One second-order section, normalized so that a0 = 1:
///   H(z) = (b0 + b1 z^-1 + b2 z^-2) / (1 + a1 z^-1 + a2 z^-2)
/// SciPy's row [b0, b1, b2, 1, a1, a2].
struct Section {
  double b0 = 1, b1 = 0, b2 = 0, a1 = 0, a2 = 0;
  friend bool operator==(const Section&, const Section&) = default;
};
using Sos = std::vector<Section>;

// The enums the public DSL names too (include/fxc/dsl.h) are defined there, once.
using BandType = ::fxc::BandType;
enum class IirFamily { butter, cheby1, cheby2, ellip, bessel };
using BesselNorm = ::fxc::BesselNorm;
using BiquadType = ::fxc::BiquadType;
using Window = ::fxc::Window;
/// The dynamics stages (docs/fx-language.md, "Dynamics"): one IR kind, ir::Dynamics, for all.
enum class DynamicsType { envelope, compressor, expander, gate, limiter };
using Detector = ::fxc::Detector;
/// How a linked dynamics stage makes one level of its channels: the largest |x_c| or their mean.
enum class LinkMode { max, mean };

std::string_view name(BandType);
std::string_view name(IirFamily);
std::string_view name(BesselNorm);
std::string_view name(BiquadType);
std::string_view name(Window);
std::string_view name(DynamicsType);
std::string_view name(Detector);
std::string_view name(LinkMode);

/// Inverse of name(); nullopt for an unknown word. `E` is one of the enums above.
template <class E>
std::optional<E> parse_enum(std::string_view word);

/// Every name of an enum, in declaration order (for messages and suggestions).
template <class E>
std::vector<std::string_view> enum_names();

/// True for bandpass and bandstop, which take two band edges.
inline bool is_band(BandType t) { return t == BandType::bandpass || t == BandType::bandstop; }

}  // namespace fxc::design

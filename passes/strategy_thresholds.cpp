// SPDX-License-Identifier: Apache-2.0
#include "passes/strategy_thresholds.h"

#include <cmath>
#include <limits>

#include "support/float_format.h"
#include "support/strings.h"

namespace fxc::passes {

std::vector<std::string_view> StrategyThresholds::names() {
  return {"lane_fill",        "partial_lanes_min_channels", "chunked_min_samples", "chunked_busy_lanes_min_samples",
          "chunk_length",     "chunk_decay_ratio",
          "fir_fft_min_taps", "fir_fft_min_taps_f64", "fir_alone_min_taps", "gpu_min_channels", "gpu_chunk_length",
          "gpu_fir_fft_min_taps", "gpu_wavefront_max_steps", "gpu_float_pairs_max_f64_rate", "gpu_fuse_loops",
          "f64_state_pole_radius", "f64_state_error", "split_error"};
}

std::optional<std::string> StrategyThresholds::set(std::string_view name, std::string_view value) {
  std::optional<double> v = parse_double(value);
  if (!v || !std::isfinite(*v) || *v < 0)
    return "threshold '" + std::string(name) + "' needs a non-negative number, got '" +
           std::string(value) + "'";
  auto whole = [&](auto& field, int least = 0) -> std::optional<std::string> {
    using Field = std::decay_t<decltype(field)>;
    // 2^digits is the first value the field cannot hold, but also the double nearest its
    // largest (9223372036854775807 reads as 2^63, and the API passes doubles): that largest.
    const double limit = std::ldexp(1.0, std::numeric_limits<Field>::digits);
    if (*v != std::floor(*v) || *v < least || *v > limit)
      return "threshold '" + std::string(name) + "' needs a whole number from " + std::to_string(least) + " to " +
             std::to_string(std::numeric_limits<Field>::max()) + ", got '" + std::string(value) + "'";
    field = *v == limit ? std::numeric_limits<Field>::max() : static_cast<Field>(*v);
    return std::nullopt;
  };
  if (name == "lane_fill") {
    lane_fill = *v;
    return std::nullopt;
  }
  if (name == "partial_lanes_min_channels") return whole(partial_lanes_min_channels);
  if (name == "chunked_min_samples") return whole(chunked_min_samples);
  if (name == "chunked_busy_lanes_min_samples") return whole(chunked_busy_lanes_min_samples);
  if (name == "chunk_decay_ratio") {
    chunk_decay_ratio = *v;
    return std::nullopt;
  }
  if (name == "f64_state_pole_radius") {
    f64_state_pole_radius = *v;
    return std::nullopt;
  }
  if (name == "f64_state_error") {
    f64_state_error = *v;
    return std::nullopt;
  }
  if (name == "gpu_float_pairs_max_f64_rate") {
    gpu_float_pairs_max_f64_rate = *v;
    return std::nullopt;
  }
  if (name == "split_error") {
    split_error = *v;
    return std::nullopt;
  }
  if (name == "chunk_length") return whole(chunk_length, 1);
  if (name == "fir_fft_min_taps") return whole(fir_fft_min_taps);
  if (name == "fir_fft_min_taps_f64") return whole(fir_fft_min_taps_f64);
  if (name == "fir_alone_min_taps") return whole(fir_alone_min_taps);
  if (name == "gpu_min_channels") return whole(gpu_min_channels);
  if (name == "gpu_chunk_length") return whole(gpu_chunk_length);
  if (name == "gpu_fir_fft_min_taps") return whole(gpu_fir_fft_min_taps);
  if (name == "gpu_wavefront_max_steps") return whole(gpu_wavefront_max_steps);
  if (name == "gpu_fuse_loops") return whole(gpu_fuse_loops);
  std::string message = "unknown threshold '" + std::string(name) + "'";
  std::vector<std::string_view> all = names();
  if (auto near = nearest_name(name, all)) message += " (did you mean '" + *near + "'?)";
  return message;
}

}  // namespace fxc::passes

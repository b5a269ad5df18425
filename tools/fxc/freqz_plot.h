// SPDX-License-Identifier: Apache-2.0
// The picture `fxc freqz` draws: magnitude and phase responses against a log frequency axis,
// as an SVG file.
#pragma once

#include <complex>
#include <string>
#include <variant>
#include <vector>

#include "support/expected.h"

namespace fxc {

/// One response to draw: H at each frequency (Hz); the label goes in the legend.
struct ResponseCurve {
  std::string label;
  std::vector<double> frequency_hz;
  std::vector<std::complex<double>> response;
};

/// Draws `curves` to an SVG at `path`: magnitude in dB above, phase in degrees wrapped to
/// [-180, 180] below, both from a round low frequency up to fs/2 on a log axis. The file is
/// written atomically. Errors read "cannot write 'PATH': REASON".
Expected<std::monostate, std::string> write_freqz_svg(const std::string& path,
                                                      const std::string& title, double fs_hz,
                                                      const std::vector<ResponseCurve>& curves);

}  // namespace fxc

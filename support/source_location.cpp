// SPDX-License-Identifier: Apache-2.0
#include "support/source_location.h"

namespace fxc {

std::string to_string(const SourceLoc& loc) {
  if (!loc.valid()) return loc.file;
  std::string out = loc.file.empty() ? std::string("<input>") : loc.file;
  out += ':' + std::to_string(loc.line);
  if (loc.col != 0) out += ':' + std::to_string(loc.col);
  return out;
}

}  // namespace fxc

// SPDX-License-Identifier: Apache-2.0
#include "runtime/counters.h"

namespace fxc {

Counters& counters() {
  static Counters instance;
  return instance;
}

}  // namespace fxc

// SPDX-License-Identifier: Apache-2.0
// Signals are part of the public API: see include/fxc/signal.h.
#pragma once

#include <fxc/signal.h>

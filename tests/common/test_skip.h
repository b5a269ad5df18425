// SPDX-License-Identifier: Apache-2.0
// Visible skips. A doctest case that cannot run here (no GPU) calls fxc::test::skip(why) and
// returns; the runner in test_main.h then exits with kSkipExitCode, which CTest reports as
// "Skipped" (every fxc CTest test sets it as SKIP_RETURN_CODE), never as a pass. A case that
// runs no assertion and does not say it skipped fails the run instead: it could not fail.
#pragma once

#include <doctest/doctest.h>

#include <string>

namespace fxc::test {

/// The exit status of a run in which a test case skipped and none failed (CTest's
/// SKIP_RETURN_CODE; 77 is the Automake convention).
inline constexpr int kSkipExitCode = 77;

/// What the current test case said about skipping (reset by the runner at each case).
struct SkipState {
  bool skipped = false;
  std::string reason;
};
inline SkipState& current_skip() {
  static SkipState state;
  return state;
}

/// Marks the current test case as skipped, saying why; the caller returns afterwards.
inline void skip(const std::string& why) {
  MESSAGE("skipped: " << why);
  current_skip().skipped = true;
  current_skip().reason = why;
}

}  // namespace fxc::test

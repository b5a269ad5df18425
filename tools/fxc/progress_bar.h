// SPDX-License-Identifier: Apache-2.0
// A progress line for long runs: shown on a terminal only, and only once a run has taken a
// second, with the rate and the time left.
#pragma once

#include <chrono>
#include <cstdint>

namespace fxc::cli {

class ProgressBar {
 public:
  /// `total` units of work (samples); `unit` names them in the rate ("samples").
  ProgressBar(std::uint64_t total, const char* unit);
  ~ProgressBar();

  /// `done` units finished so far.
  void update(std::uint64_t done);

 private:
  using Clock = std::chrono::steady_clock;
  std::uint64_t total_;
  const char* unit_;
  bool terminal_;
  bool shown_ = false;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
};

}  // namespace fxc::cli

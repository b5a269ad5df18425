// SPDX-License-Identifier: Apache-2.0
// A progress line for long runs: shown on a terminal once a run has taken a second (or as
// --progress says), with the rate (or what was done) and the time left.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace fxc::cli {

/// When the line is drawn (`fxc run --progress`): on a terminal once a run has taken a
/// second; from the start wherever standard error goes (a line per corpus file for logs, a
/// stream's progress at most once a second there); never.
enum class ProgressMode { automatic, always, never };

class ProgressBar {
 public:
  /// `total` units of work (samples, bytes); `unit` names them in the rate ("samples").
  ProgressBar(std::uint64_t total, const char* unit, ProgressMode mode = ProgressMode::automatic);
  ~ProgressBar();

  /// `done` units finished so far: the rate in units per second and the time left.
  void update(std::uint64_t done);
  /// `done` units finished so far, described by `detail` ("12/100 files, 0.3 h of audio")
  /// instead of a rate, and the time left.
  void update(std::uint64_t done, const std::string& detail);
  /// Erases the line (before another message goes to standard error); the next update draws
  /// it again.
  void clear();

 private:
  using Clock = std::chrono::steady_clock;
  void draw(std::uint64_t done, const std::string* detail);
  std::uint64_t total_;
  const char* unit_;
  bool terminal_;
  ProgressMode mode_;
  bool shown_ = false;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
};

}  // namespace fxc::cli

// SPDX-License-Identifier: Apache-2.0
#include "tools/fxc/progress_bar.h"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <unistd.h>

namespace fxc::cli {

ProgressBar::ProgressBar(std::uint64_t total, const char* unit, ProgressMode mode)
    : total_(total), unit_(unit), terminal_(isatty(STDERR_FILENO)), mode_(mode) {}

ProgressBar::~ProgressBar() { clear(); }

void ProgressBar::clear() {
  if (shown_ && terminal_) std::fputs("\r\033[K", stderr);  // leave the terminal line clean
  shown_ = false;
}

void ProgressBar::update(std::uint64_t done) { draw(done, nullptr); }

void ProgressBar::update(std::uint64_t done, const std::string& detail) { draw(done, &detail); }

void ProgressBar::draw(std::uint64_t done, const std::string* detail) {
  if (mode_ == ProgressMode::never || (mode_ == ProgressMode::automatic && !terminal_) || total_ == 0) return;
  auto now = Clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  // Automatic: a short run shows nothing, and the line is redrawn at most ten times a second.
  // Always: from the first update, and every update with a detail (a corpus's files: a log
  // gets a line per file); a stream's counts, which come a call per block, at most once a
  // second into a log (ten times on a terminal), and the last one.
  const auto every = terminal_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(1000);
  if (mode_ == ProgressMode::automatic && (elapsed < 1.0 || now - last_ < std::chrono::milliseconds(100))) return;
  if (mode_ == ProgressMode::always && !detail && shown_ && done < total_ && now - last_ < every) return;
  last_ = now;
  shown_ = true;
  double fraction = std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
  double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  double left = rate > 0 ? static_cast<double>(total_ - std::min(done, total_)) / rate : 0;
  constexpr int kWidth = 30;
  int filled = static_cast<int>(fraction * kWidth);
  std::string bar(filled, '#');
  bar.resize(kWidth, ' ');
  std::string what = detail ? *detail : fmt::format("{:.1f} M {}/s", rate / 1e6, unit_);
  std::string eta = left < 120 ? fmt::format("{:.0f} s", left) : left < 7200 ? fmt::format("{:.1f} min", left / 60)
                                                                             : fmt::format("{:.1f} h", left / 3600);
  std::string line = fmt::format("{:3.0f}% [{}] {}, {} left", 100 * fraction, bar, what, eta);
  std::fputs((terminal_ ? "\r" + line + "\033[K" : line + "\n").c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace fxc::cli

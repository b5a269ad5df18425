// SPDX-License-Identifier: Apache-2.0
#include "tools/fxc/progress_bar.h"

#include <cstdio>
#include <fmt/format.h>
#include <unistd.h>

namespace fxc::cli {

ProgressBar::ProgressBar(std::uint64_t total, const char* unit)
    : total_(total), unit_(unit), terminal_(isatty(STDERR_FILENO)) {}

ProgressBar::~ProgressBar() {
  if (shown_) std::fputs("\r\033[K", stderr);  // leave the terminal line clean
}

void ProgressBar::update(std::uint64_t done) {
  if (!terminal_ || total_ == 0) return;
  auto now = Clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 1.0 || now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  shown_ = true;
  double fraction = static_cast<double>(done) / static_cast<double>(total_);
  double rate = static_cast<double>(done) / elapsed;
  double left = rate > 0 ? static_cast<double>(total_ - done) / rate : 0;
  constexpr int kWidth = 30;
  int filled = static_cast<int>(fraction * kWidth);
  std::string bar(filled, '#');
  bar.resize(kWidth, ' ');
  std::fputs(fmt::format("\r{:3.0f}% [{}] {:.1f} M {}/s, {:.1f} s left\033[K", 100 * fraction, bar,
                         rate / 1e6, unit_, left)
                 .c_str(),
             stderr);
  std::fflush(stderr);
}

}  // namespace fxc::cli

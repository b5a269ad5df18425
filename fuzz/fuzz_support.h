// SPDX-License-Identifier: Apache-2.0
// What the fuzz targets share: handing fuzz bytes to readers that take a path, and checks that
// abort (so that libFuzzer, or the replay driver, records the input) with a readable message.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace fxc::fuzz {

/// The bytes as a file in memory (memfd), reachable by `path` while the object lives: the
/// readers under test open a path, and a memfd keeps the fuzzer off the disk. fstat() reports
/// it as a regular file, as the readers require.
class MemoryFile {
 public:
  MemoryFile(const std::uint8_t* data, std::size_t size) {
    fd_ = ::memfd_create("fxc-fuzz", MFD_CLOEXEC);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    for (std::size_t done = 0; done < size;) {
      ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0) {
        std::perror("write to memfd");
        std::abort();
      }
      done += static_cast<std::size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

/// True when the environment sets FXC_FUZZ_SKIP_KNOWN_BUGS (scripts/run-fuzzers.sh -k): the
/// targets then step around the bugs already found, each of which has a reproducer in
/// tests/data/fuzz-regressions/, so that a run can look for new ones. Replaying the
/// reproducers never sets it. Each use names its reproducer; remove it with the bug.
inline bool skip_known_bugs() {
  static const bool skip = std::getenv("FXC_FUZZ_SKIP_KNOWN_BUGS") != nullptr;
  return skip;
}

/// Aborts with `what` and the two texts when a property the target checks does not hold.
[[noreturn]] inline void property_failed(const char* what, std::string_view first = {},
                                         std::string_view second = {}) {
  std::fprintf(stderr, "fxc fuzz property failed: %s\n", what);
  if (!first.empty())
    std::fprintf(stderr, "--- first ---\n%.*s\n", static_cast<int>(first.size()), first.data());
  if (!second.empty())
    std::fprintf(stderr, "--- second ---\n%.*s\n", static_cast<int>(second.size()), second.data());
  std::abort();
}

}  // namespace fxc::fuzz

// SPDX-License-Identifier: Apache-2.0
// What the end-to-end suites share (e2e_test.cpp, corpus_e2e_test.cpp,
// language_v2_e2e_test.cpp): a fresh directory per test, running the fxc binary, checking what
// it reported, and reading the files it wrote.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "formats/signal_file.h"
#include "run_command.h"

namespace fxc::e2e {

namespace fs = std::filesystem;
using fxc::test::CommandResult;

// A fresh, empty directory, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "fxc-e2e-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

  /// The names of the entries in the directory, hidden ones included, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(path_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

// Runs `fxc ARGS...` in `cwd`, with `env` (NAME=VALUE) added to the environment.
inline CommandResult run_fxc(const std::vector<std::string>& args, const fs::path& cwd,
                             const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv{FXC_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return fxc::test::run_command(argv, cwd, env);
}

// The same with standard input from `stdin_path` (`-i -` reads it).
inline CommandResult run_fxc_from(const std::vector<std::string>& args, const fs::path& cwd,
                                  const fs::path& stdin_path) {
  std::vector<std::string> argv{FXC_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return fxc::test::run_command(argv, cwd, {}, stdin_path);
}

inline std::string show(const CommandResult& r) {
  return "exit status " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

// A run that must succeed: exit status 0 and nothing on standard error.
inline void require_success(const CommandResult& r) {
  INFO(show(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
}

// A run that must fail with `status`: nothing on standard output, a message on standard error
// that contains `message`.
inline void check_failure(const CommandResult& r, int status, const std::string& message) {
  INFO(show(r));
  CHECK(r.exit_code == status);
  CHECK(r.out.empty());
  CHECK(r.err.find(message) != std::string::npos);
}

inline void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The value of a counter line ("  compiles          0") in --stats output; -1 if absent.
inline long stats_counter(const std::string& err, const std::string& name) {
  std::size_t at = err.find("  " + name + " ");
  if (at == std::string::npos) return -1;
  return std::strtol(err.c_str() + at + name.size() + 2, nullptr, 10);
}

/// The process's peak resident memory that --stats printed ("peak RSS ... KiB").
inline long peak_rss_kib(const std::string& err) {
  const std::size_t at = err.find("peak RSS");
  REQUIRE(at != std::string::npos);
  return std::strtol(err.c_str() + at + 8, nullptr, 10);
}

/// A signal file fxc wrote, in float64 (the test fails if it cannot be read).
// Seeded noise in [-0.5, 0.5), written as float64 .npy at 48 kHz.
inline void write_noise(const fs::path& path, std::size_t channels, std::size_t samples, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  fxc::Signal s(channels, samples);
  for (std::size_t c = 0; c < channels; ++c)
    for (double& v : s.f64(c)) v = u(rng);
  REQUIRE(fxc::write_signal_file(path.string(), s, 48000, {}));
}

inline fxc::Signal load(const fs::path& path) {
  auto file = fxc::read_signal_file(path.string(), fxc::DType::f64);
  INFO("reading " << path.string());
  REQUIRE_MESSAGE(file.has_value(), (file ? std::string() : file.error()));
  return std::move(file.value().signal);
}

}  // namespace fxc::e2e

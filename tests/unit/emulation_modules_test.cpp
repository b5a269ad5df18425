// SPDX-License-Identifier: Apache-2.0
// The emulation's module cache (emulation_modules.h), through this test binary run again as a
// child with FXC_CUDA_EMULATION_CACHE naming a directory (a process reads it once): what it
// keeps, what it removes, a damaged library, and a directory that is not this user's alone.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/file_io.h"
#include "temp_dir.h"

namespace fxc::test {
namespace {
namespace fs = std::filesystem;

// Runs one small emulation case (two modules) in a child with the cache in `cache`; returns
// its exit status, its stderr in `err`.
int run_child(const fs::path& cache, const fs::path& err) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string command = "FXC_CUDA_EMULATION_CACHE='" + cache.string() + "' '" + self +
                              "' '--test-case=CUDA emulation: a misaligned async copy*' > /dev/null 2> '" +
                              err.string() + "'";
  return std::system(command.c_str());
}

int libraries_in(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".so";
  return n;
}

void age(const fs::path& path, int days) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(24 * days));
}

}  // namespace

TEST_CASE("CUDA emulation: the module cache keeps its own files, and only for a user alone") {
  TempDir tmp;
  const fs::path cache = tmp.path / "cache", err = tmp.path / "stderr";

  // A new directory: made the user's alone, and filled.
  REQUIRE(run_child(cache, err) == 0);
  struct stat st {};
  REQUIRE(stat(cache.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  const int libraries = libraries_in(cache);
  CHECK(libraries >= 2);

  // Its own names unused for 30 days go; whatever else the directory holds stays.
  std::ofstream(cache / "notes.txt") << "the user's";
  std::ofstream(cache / "0123456789abcdef0123456789abcdef.so") << "stale";
  age(cache / "notes.txt", 60);
  age(cache / "0123456789abcdef0123456789abcdef.so", 60);
  REQUIRE(run_child(cache, err) == 0);
  CHECK(fs::exists(cache / "notes.txt"));
  CHECK_FALSE(fs::exists(cache / "0123456789abcdef0123456789abcdef.so"));

  // Damaged libraries: compiled again, and the case passes.
  for (const auto& e : fs::directory_iterator(cache))
    if (e.path().extension() == ".so") std::ofstream(e.path(), std::ios::trunc) << "not a library";
  REQUIRE(run_child(cache, err) == 0);
  for (const auto& e : fs::directory_iterator(cache))
    if (e.path().extension() == ".so") {
      auto bytes = read_whole_file(e.path().string());
      REQUIRE(bytes);
      CHECK(bytes->compare(0, 4, "\x7f" "ELF") == 0);
    }

  // A directory others may write to: not used. A private one is made for the process, said on
  // stderr, and removed at its end.
  const fs::path shared = tmp.path / "shared";
  fs::create_directories(shared);
  fs::permissions(shared, fs::perms::all);
  REQUIRE(run_child(shared, err) == 0);
  auto stderr_text = read_whole_file(err.string());
  REQUIRE(stderr_text);
  const std::string said = *stderr_text;
  CHECK(said.find("is not this user's alone; its modules go to ") != std::string::npos);
  CHECK(libraries_in(shared) == 0);
  const std::size_t at = said.find("its modules go to ") + std::string("its modules go to ").size();
  const std::string made = said.substr(at, said.find(' ', at) - at);
  CAPTURE(made);
  CHECK(made.find("fxc-cuda-emulation-") != std::string::npos);
  CHECK_FALSE(fs::exists(made));
}

}  // namespace fxc::test

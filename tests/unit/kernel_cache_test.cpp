// SPDX-License-Identifier: Apache-2.0
// The kernel cache: keys ignore values, entries survive processes, damage is detected.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "frontend/dsl.h"
#include "passes/pipeline.h"
#include "runtime/counters.h"
#include "runtime/kernel_cache.h"

namespace fxc {
namespace {

namespace fs = std::filesystem;
using namespace fxc::literals;

ir::Graph scheduled(Frequency cutoff, int order, double fs = 48000) {
  Flow x = input("x", 2);
  ir::Graph g = make_graph("eq", {output("y", x | butter(order, cutoff) | gain(0.5) | tanh())});
  DiagnosticEngine diags;
  passes::PassContext context{diags, {fs, 2, DType::f32}};
  auto s = passes::run_pipeline(g, context);
  REQUIRE_MESSAGE(s, diags.str());
  return *s;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("fxc-cache-test-" + std::to_string(getpid()) + "-" +
                                               std::to_string(counter++));
  TempDir() { fs::remove_all(path); }
  ~TempDir() { fs::remove_all(path); }
  static inline int counter = 0;
};

fs::path only_file(const fs::path& dir, const std::string& ext) {
  for (const auto& f : fs::directory_iterator(dir))
    if (f.path().extension() == ext) return f.path();
  FAIL("no " << ext << " file in " << dir);
  return {};
}

TEST_CASE("a value-only change hits the memory cache; a shape change compiles") {
  clear_memory_cache();
  KernelCache cache("");
  DiagnosticEngine diags;
  auto before = counters().compiles.load();
  REQUIRE(cache.cpu_kernels(scheduled(1_kHz, 4), diags));
  CHECK(counters().compiles - before == 1);
  auto hits = counters().memory_hits.load();
  REQUIRE(cache.cpu_kernels(scheduled(3_kHz, 4, 44100), diags));  // new cutoff and rate
  CHECK(counters().compiles - before == 1);
  CHECK(counters().memory_hits - hits == 1);
  REQUIRE(cache.cpu_kernels(scheduled(1_kHz, 6), diags));  // more sections: a new shape
  CHECK(counters().compiles - before == 2);
  CHECK(KernelCache::key(scheduled(1_kHz, 4)) == KernelCache::key(scheduled(9_kHz, 4, 96000)));
  CHECK(KernelCache::key(scheduled(1_kHz, 4)) != KernelCache::key(scheduled(1_kHz, 5)));
}

TEST_CASE("another process hits the disk cache") {
  TempDir dir;
  clear_memory_cache();
  {
    KernelCache cache(dir.path.string());
    DiagnosticEngine diags;
    REQUIRE(cache.cpu_kernels(scheduled(2_kHz, 4), diags));
    CHECK(diags.diagnostics().empty());
    CHECK(cache.list().size() == 1);
  }
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // a fresh process: empty memory cache
    clear_memory_cache();
    counters().reset();
    KernelCache cache(dir.path.string());
    DiagnosticEngine diags;
    bool ok = cache.cpu_kernels(scheduled(5_kHz, 4), diags).has_value();
    _exit(ok && counters().disk_hits == 1 && counters().compiles == 0 ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a damaged entry is reported once and rebuilt") {
  for (std::string damage : {"flip", "truncate", "meta"}) {
    CAPTURE(damage);
    TempDir dir;
    clear_memory_cache();
    DiagnosticEngine diags;
    {
      KernelCache cache(dir.path.string());
      REQUIRE(cache.cpu_kernels(scheduled(2_kHz, 2), diags));
    }
    fs::path object = only_file(dir.path, ".o");
    if (damage == "flip") {
      std::fstream f(object, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(100);
      f.put('\x5a');
    } else if (damage == "truncate") {
      fs::resize_file(object, fs::file_size(object) / 2);
    } else {
      std::ofstream(only_file(dir.path, ".meta"), std::ios::trunc) << "garbage";
    }
    clear_memory_cache();
    KernelCache cache(dir.path.string());
    auto compiles = counters().compiles.load();
    REQUIRE(cache.cpu_kernels(scheduled(2_kHz, 2), diags));
    CHECK(counters().compiles - compiles == 1);
    REQUIRE(diags.diagnostics().size() == 1);
    CHECK(diags.diagnostics()[0].severity == Severity::warning);
    CHECK(diags.str().find("is damaged") != std::string::npos);
    // The rebuilt entry is whole again: a fresh lookup hits the disk without a warning.
    clear_memory_cache();
    DiagnosticEngine again;
    auto hits = counters().disk_hits.load();
    REQUIRE(cache.cpu_kernels(scheduled(2_kHz, 2), again));
    CHECK(again.diagnostics().empty());
    CHECK(counters().disk_hits - hits == 1);
  }
}

TEST_CASE("concurrent writers of one key leave one valid entry") {
  TempDir dir;
  clear_memory_cache();
  std::vector<std::thread> writers;
  for (int i = 0; i < 4; ++i)
    writers.emplace_back([&] {
      KernelCache cache(dir.path.string());
      DiagnosticEngine diags;
      CHECK(cache.cpu_kernels(scheduled(1_kHz, 3), diags).has_value());
    });
  for (auto& t : writers) t.join();
  clear_memory_cache();
  KernelCache cache(dir.path.string());
  CHECK(cache.list().size() == 1);
  DiagnosticEngine diags;
  auto hits = counters().disk_hits.load();
  REQUIRE(cache.cpu_kernels(scheduled(1_kHz, 3), diags));
  CHECK(diags.diagnostics().empty());
  CHECK(counters().disk_hits - hits == 1);
  for (const auto& f : fs::directory_iterator(dir.path))  // no temporary files left behind
    CHECK(f.path().filename().string().find(".tmp") == std::string::npos);
}

TEST_CASE("clear removes every entry") {
  TempDir dir;
  KernelCache cache(dir.path.string());
  DiagnosticEngine diags;
  clear_memory_cache();
  REQUIRE(cache.cpu_kernels(scheduled(1_kHz, 2), diags));
  REQUIRE(cache.cpu_kernels(scheduled(1_kHz, 7), diags));
  CHECK(cache.list().size() == 2);
  CHECK(cache.clear() == 2);
  CHECK(cache.list().empty());
}

}  // namespace
}  // namespace fxc

namespace fxc {
namespace {

TEST_CASE("two processes writing one key at once leave one valid entry") {
  TempDir dir;
  clear_memory_cache();
  std::vector<pid_t> children;
  for (int i = 0; i < 2; ++i) {
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      clear_memory_cache();
      KernelCache cache(dir.path.string());
      DiagnosticEngine diags;
      bool ok = cache.cpu_kernels(scheduled(700_Hz, 5), diags).has_value() && diags.diagnostics().empty();
      _exit(ok ? 0 : 1);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  clear_memory_cache();
  KernelCache cache(dir.path.string());
  CHECK(cache.list().size() == 1);
  DiagnosticEngine diags;
  auto hits = counters().disk_hits.load();
  REQUIRE(cache.cpu_kernels(scheduled(700_Hz, 5), diags));
  CHECK(diags.diagnostics().empty());
  CHECK(counters().disk_hits - hits == 1);
}

}  // namespace
}  // namespace fxc

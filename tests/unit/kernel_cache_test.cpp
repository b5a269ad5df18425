// SPDX-License-Identifier: Apache-2.0
// The kernel cache: keys ignore values and hold every shape field, entries survive
// processes, damage is detected.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "accuracy_support.h"
#include "codegen/chain_layout.h"
#include "expected_text.h"
#include "frontend/dsl.h"
#include "passes/pipeline.h"
#include "runtime/counters.h"
#include "runtime/cpu_executor.h"
#include "driver/kernel_cache.h"
#include "runtime/reference_interpreter.h"

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

TEST_CASE("the cache's place: a relative XDG_CACHE_HOME or HOME, or a missing HOME, is not used") {
  // Until 2026-11-29 a relative value put the cache under the working directory (a literal
  // '~' directory for XDG_CACHE_HOME='~/c'), and a missing HOME was made, whole.
  struct Saved {
    std::string name;
    std::optional<std::string> value;
    explicit Saved(std::string n) : name(std::move(n)) {
      if (const char* v = std::getenv(name.c_str())) value = v;
    }
    ~Saved() { value ? setenv(name.c_str(), value->c_str(), 1) : unsetenv(name.c_str()); }
  };
  Saved fxc_dir("FXC_CACHE_DIR"), xdg("XDG_CACHE_HOME"), home("HOME");
  unsetenv("FXC_CACHE_DIR");
  TempDir dir;
  fs::create_directories(dir.path);
  setenv("HOME", dir.path.c_str(), 1);
  setenv("XDG_CACHE_HOME", "/abs/cache", 1);
  CHECK(KernelCache::default_directory("") == "/abs/cache/fxc");
  for (const char* relative : {"relative/dir", "~/c", " "}) {
    CAPTURE(relative);
    setenv("XDG_CACHE_HOME", relative, 1);
    CHECK(KernelCache::default_directory("") == dir.path.string() + "/.cache/fxc");
  }
  unsetenv("XDG_CACHE_HOME");
  for (const std::string& bad : {std::string("relhome"), dir.path.string() + "/missing/home"}) {
    CAPTURE(bad);
    setenv("HOME", bad.c_str(), 1);
    const std::string chosen = KernelCache::default_directory("");
    CHECK(chosen.rfind(bad, 0) != 0);
    CHECK(chosen.find("relhome") == std::string::npos);
  }
  CHECK_FALSE(fs::exists(dir.path / "missing"));
  CHECK(KernelCache::default_directory("given") == "given");
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

// What stands at an entry's name is the cache's to replace, never to write through or to wait
// on: a link to a user's file had that file overwritten by the rebuilt kernel, a FIFO blocked
// the run forever, a link to /dev/zero filled the memory.
TEST_CASE("an entry file that is a link, a FIFO, a device or a directory is replaced, not followed") {
  for (std::string kind : {"link", "fifo", "device", "directory"})
    for (std::string ext : {".o", ".meta"}) {
      CAPTURE(kind);
      CAPTURE(ext);
      TempDir dir;
      clear_memory_cache();
      {
        KernelCache cache(dir.path.string());
        DiagnosticEngine diags;
        REQUIRE(cache.cpu_kernels(scheduled(2_kHz, 2), diags));
      }
      const fs::path entry = only_file(dir.path, ext);
      const fs::path victim = dir.path.parent_path() / (dir.path.filename().string() + "-victim.wav");
      std::ofstream(victim) << "a user's file";
      fs::remove(entry);
      if (kind == "link") fs::create_symlink(victim, entry);
      if (kind == "fifo") REQUIRE(::mkfifo(entry.c_str(), 0600) == 0);
      if (kind == "device") fs::create_symlink("/dev/zero", entry);
      if (kind == "directory") fs::create_directory(entry);
      clear_memory_cache();
      KernelCache cache(dir.path.string());
      DiagnosticEngine diags;
      auto compiles = counters().compiles.load();
      REQUIRE(cache.cpu_kernels(scheduled(2_kHz, 2), diags));
      CHECK(counters().compiles - compiles == 1);
      std::ifstream kept(victim);
      CHECK(std::string(std::istreambuf_iterator<char>(kept), {}) == "a user's file");
      fs::remove(victim);
      // The entry is whole again: a fresh lookup hits the disk without a word.
      CHECK(fs::is_regular_file(fs::symlink_status(entry)));
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
  // Files that are not entries (a cache directory given by mistake) are left alone, by
  // clear and by pruning, and not listed.
  for (const char* name : {"main.o", "notes.meta", "lib.cubin"}) std::ofstream(dir.path / name) << "mine";
  CHECK(cache.list().size() == 2);
  auto cleared = cache.clear();
  REQUIRE(cleared);
  CHECK(*cleared == 2);
  CHECK(cache.list().empty());
  for (const char* name : {"main.o", "notes.meta", "lib.cubin"}) CHECK(std::filesystem::exists(dir.path / name));
  KernelCache tiny(dir.path.string(), 1);  // every entry over the budget: pruned at each store
  REQUIRE(tiny.cpu_kernels(scheduled(1_kHz, 3), diags));
  for (const char* name : {"main.o", "notes.meta", "lib.cubin"}) CHECK(std::filesystem::exists(dir.path / name));
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

namespace fxc {
namespace {

template <class>
constexpr bool kAlwaysFalse = false;

// Another value of a shape field, whatever its type: a shape field of a new type fails to
// compile here until the test knows how to change it.
template <class T>
void change(T& field) {
  if constexpr (std::is_same_v<T, int>) field += 1;
  else if constexpr (std::is_enum_v<T>) field = static_cast<T>(static_cast<int>(field) == 0 ? 1 : 0);
  else if constexpr (std::is_same_v<T, std::vector<ir::Stage>>) field.push_back(ir::Gain{2.0});
  else if constexpr (std::is_same_v<T, std::string>) field += "?";
  else static_assert(kAlwaysFalse<T>, "a shape field of a new type: teach change() to change it");
}

// A scheduled graph with one chain that has a section, a FIR and a gain.
ir::Graph one_chain(DType dtype, int channels) {
  Flow x = input("x", channels);
  ir::Graph g = make_graph("k", {output("y", x | butter(2, 500_Hz) | fir({0.5, 0.25, 0.25}) | gain(0.5))});
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, channels, dtype}};
  auto s = passes::run_pipeline(g, context);
  REQUIRE_MESSAGE(s, diags.str());
  REQUIRE(test::chains_of(*s).size() == 1);
  return *s;
}

ir::Chain& the_chain(ir::Graph& g) {
  for (ir::NodeId id = 0; id < g.size(); ++id)
    if (auto* chain = std::get_if<ir::Chain>(&g.node(id).op)) return *chain;
  FAIL("no chain");
  throw 0;
}

TEST_CASE("the key holds each chain's state layout as the runtime lays it out") {
  // A code generator changed without its version raised must miss, not hand a kernel a state of
  // another size: an old binary loading kernels of a grown dynamics state corrupted its heap.
  ir::Graph g = one_chain(DType::f32, 2);
  const codegen::ChainLayout layout = codegen::layout_of(the_chain(g));
  const std::string text = KernelCache::key_text(g);
  ir::NodeId id = 0;
  for (; id < g.size(); ++id)
    if (std::holds_alternative<ir::Chain>(g.node(id).op)) break;
  CHECK(text.find("\nlayouts %" + std::to_string(id) + ":" + std::to_string(layout.param_count) + "," +
                  std::to_string(layout.state_per_channel) + "," + std::to_string(layout.delay_count) + "," +
                  std::to_string(layout.ring_count) + "\n") != std::string::npos);
}

TEST_CASE("every shape field of a chain, the dtype and the channel count change the cache key") {
  // A field left out of the key would let a graph that differs only there load kernels
  // compiled for another schedule. The fields are walked through Chain::fields, so a shape
  // field added later is covered without changing this test.
  const ir::Graph base = one_chain(DType::f32, 2);
  const std::string base_key = KernelCache::key(base), base_cuda = KernelCache::cuda_key_text(base, "sm_90");
  int shape_fields = 0;
  ir::Graph copy = base;
  const ir::Chain probe = the_chain(copy);
  int index = 0;
  ir::Chain::fields(probe, [&](ir::FieldRole role, std::string_view name, auto&) {
    const int which = index++;
    if (role != ir::FieldRole::shape) return;
    ++shape_fields;
    CAPTURE(name);
    ir::Graph changed = base;
    int at = 0;
    ir::Chain::fields(the_chain(changed), [&](ir::FieldRole, std::string_view, auto& field) {
      if (at++ == which) change(field);
    });
    CHECK(KernelCache::key(changed) != base_key);
    if (!base_cuda.empty()) CHECK(KernelCache::cuda_key_text(changed, "sm_90") != base_cuda);
  });
  CHECK(shape_fields >= 6);  // stages, strategy, chunk_length, fir_method, fft_block, state_precision
  CHECK(KernelCache::key(one_chain(DType::f64, 2)) != base_key);
  CHECK(KernelCache::key(one_chain(DType::f32, 3)) != base_key);
  // Labels are not shape: a reason or a graph name reuses the kernels.
  ir::Graph relabelled = base;
  the_chain(relabelled).reason = "another reason";
  relabelled.name = "other";
  CHECK(KernelCache::key(relabelled) == base_key);
}

// Graphs that differ only in a value (a cutoff) that makes select_strategy change one shape
// field: through one cache, the second graph must get kernels of its own and match the
// interpreter (a field missing from the key would serve it the first graph's kernels).
TEST_CASE("a value that changes a chain's schedule gets its own kernels and runs correctly") {
  struct Flip {
    std::string fields;  // the shape fields the value changes
    DType dtype;
    std::int64_t samples;
    double from_hz, to_hz;
    double tolerance;  // relative RMS against the interpreter
  };
  // 2 kHz: pole radius 0.83; 20 Hz: 0.998. One channel, butter(2) highpass.
  const Flip flips[] = {
      // float32, 3000 samples (too short for time chunks): float32 state -> float64 state.
      // Bound: float32 state on r = 0.83 measures 3.7e-7 here (2^-24 rounding amplified by
      // about 1/(1 - r) = 6), float64 state 2.3e-8 (output rounding only).
      {"state_precision", DType::f32, 3000, 2000, 20, 1e-6},
      // float64, 100000 samples: the fix-up of 2 kHz is short enough for the chunked scan,
      // 20 Hz's is not (0.35 x 16 x 21850 samples > 100000, chunk_decay_ratio 0.35; with
      // AVX-512's 8 float64 lanes, 0.35 x 64 x 21850):
      // chunked_scan -> sequential (and the chunk length with it, to 0).
      // Bound: float64 recurrences, 1e-9 as every float64 comparison.
      {"strategy chunk_length", DType::f64, 100000, 2000, 20, 1e-9},
      // float64, 2400000 samples: both chunked (with AVX-512's 8 float64 lanes too: 0.35 x 64 x
      // 94532 = 2.1 M samples at 5 Hz), in chunks aimed at max(65536, lanes x decay): 65536 at
      // 2 kHz, 4 x 94532 = 378128 at 5 Hz with AVX2 (pole radius 0.99954).
      {"chunk_length", DType::f64, 2400000, 2000, 5, 1e-9},
  };
  for (const Flip& flip : flips) {
    CAPTURE(flip.fields);
    auto graph_at = [](double hz) {
      Flow x = input("x", 1);
      return make_graph("flip", {output("y", x | butter(2, Frequency{hz}, design::BandType::highpass))});
    };
    clear_memory_cache();
    KernelCache cache("");
    test::CompiledCpu a = test::compile_cpu(graph_at(flip.from_hz), 1, flip.dtype, flip.samples, {}, &cache);
    test::CompiledCpu b = test::compile_cpu(graph_at(flip.to_hz), 1, flip.dtype, flip.samples, {}, &cache);
    // The value changed exactly the fields this case is about (and the key with them).
    const ir::Chain& ca = *test::chains_of(a.scheduled).at(0);
    const ir::Chain& cb = *test::chains_of(b.scheduled).at(0);
    std::string changed;
    if (ca.state_precision != cb.state_precision) changed += " state_precision";
    if (ca.strategy != cb.strategy) changed += " strategy";
    if (ca.chunk_length != cb.chunk_length) changed += " chunk_length";
    CHECK(changed == " " + flip.fields);
    CHECK(KernelCache::key(a.scheduled) != KernelCache::key(b.scheduled));
    for (const test::CompiledCpu* c : {&a, &b}) {
      std::vector<Signal> inputs = test::noise_inputs(1, 1, static_cast<std::size_t>(flip.samples), flip.dtype, 17);
      auto want = interpret(c->designed, inputs);
      REQUIRE(want);
      auto got = execute_cpu(c->scheduled, *c->kernels, inputs);
      REQUIRE(got);
      double e = test::relative_rms_error(*got, *want);
      MESSAGE(flip.fields << ": " << (c == &a ? flip.from_hz : flip.to_hz) << " Hz, relative RMS error " << e);
      CHECK(e <= flip.tolerance);
    }
  }
}

}  // namespace
}  // namespace fxc

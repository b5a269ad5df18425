// SPDX-License-Identifier: Apache-2.0
// Fuzz target: reading a kernel cache entry from disk (driver/kernel_cache.cpp).
//
// Once per process, a small graph is compiled into a fresh cache directory, which leaves one
// entry, KEY.meta and KEY.o. Each input then rewrites that entry and asks the cache for the
// graph's kernels with the in-memory level cleared, so the entry is read from disk:
//
//   byte 0 % 4 == 0: KEY.meta = the rest of the input; KEY.o as compiled
//                 1: KEY.meta as written by the cache; KEY.o = the rest of the input
//                 2: KEY.meta = the rest of the input; no KEY.o
//                 3: KEY.meta = the rest of the input; KEY.o truncated to its first half
//
// In the .meta bytes, "@KEY_TEXT@", "@OBJECT_BYTES@" and "@OBJECT_SHA256@" are replaced by
// the real key text, object size and object checksum first, so that the seed corpus does not
// depend on the host's CPU and LLVM version (which the key text names) and the fuzzer can
// reach the checks that follow the key text's.
//
// Checks: cpu_kernels always returns kernels (it loads the entry or warns and recompiles),
// reports at most one warning, never crashes; and afterwards the entry is whole again: a
// second lookup from disk succeeds with no warning.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "frontend/fx_file.h"
#include "fuzz/fuzz_support.h"
#include "passes/pipeline.h"
#include "driver/kernel_cache.h"
#include "support/sha256.h"

namespace {

namespace fs = std::filesystem;

struct Fixture {
  fs::path directory;
  fxc::ir::Graph scheduled;
  std::string key;
  std::string key_text;
  std::string meta;    // as the cache wrote it
  std::string object;  // as the cache wrote it
};

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) fxc::fuzz::property_failed("cannot write the cache entry under test");
}

void replace_all(std::string& text, std::string_view from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

fs::path fixture_directory;
void remove_fixture_directory() {
  std::error_code ignored;
  fs::remove_all(fixture_directory, ignored);
}

const Fixture& fixture() {
  static const Fixture instance = [] {
    using namespace fxc;
    Fixture f;
    f.directory = fs::temp_directory_path() / ("fxc-fuzz-cache-" + std::to_string(::getpid()));
    fs::remove_all(f.directory);
    fixture_directory = f.directory;
    std::atexit(remove_fixture_directory);

    DiagnosticEngine diags;
    auto graph = frontend::compile_fx_source(
        "graph eq\ninput x : 2\noutput x | butter(2, 1 kHz) | gain(0.5) | tanh()\n", "eq.fx",
        diags);
    if (!graph) fuzz::property_failed("the fixture graph does not compile", diags.str());
    passes::PassContext context{diags, {48000.0, 2, DType::f32}};
    auto scheduled = passes::run_pipeline(*graph, context);
    if (!scheduled) fuzz::property_failed("the fixture graph does not schedule", diags.str());
    f.scheduled = *scheduled;
    f.key = KernelCache::key(f.scheduled);
    f.key_text = KernelCache::key_text(f.scheduled);

    clear_memory_cache();
    KernelCache cache(f.directory.string());
    auto kernels = cache.cpu_kernels(f.scheduled, diags);
    if (!kernels) fuzz::property_failed("the fixture graph does not compile to kernels", kernels.error());
    f.meta = read_bytes(f.directory / (f.key + ".meta"));
    f.object = read_bytes(f.directory / (f.key + ".o"));
    if (f.meta.empty() || f.object.empty())
      fuzz::property_failed("the cache wrote no entry for the fixture graph");
    return f;
  }();
  return instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fxc;
  const Fixture& f = fixture();
  if (size == 0) return 0;
  const int mode = data[0] % 4;
  std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  replace_all(rest, "@KEY_TEXT@", f.key_text);
  replace_all(rest, "@OBJECT_BYTES@", std::to_string(f.object.size()));
  replace_all(rest, "@OBJECT_SHA256@", sha256_hex(f.object));

  const fs::path meta_path = f.directory / (f.key + ".meta");
  const fs::path object_path = f.directory / (f.key + ".o");
  std::error_code ignored;
  fs::create_directories(f.directory, ignored);
  switch (mode) {
    case 0: write_bytes(meta_path, rest); write_bytes(object_path, f.object); break;
    case 1: write_bytes(meta_path, f.meta); write_bytes(object_path, rest); break;
    case 2: write_bytes(meta_path, rest); fs::remove(object_path, ignored); break;
    default:
      write_bytes(meta_path, rest);
      write_bytes(object_path, std::string_view(f.object).substr(0, f.object.size() / 2));
  }

  clear_memory_cache();
  KernelCache cache(f.directory.string());
  DiagnosticEngine diags;
  auto kernels = cache.cpu_kernels(f.scheduled, diags);
  if (!kernels) fuzz::property_failed("cpu_kernels failed on a damaged entry", kernels.error());
  if (diags.diagnostics().size() > 1)
    fuzz::property_failed("a damaged entry was reported more than once", diags.str());

  clear_memory_cache();
  DiagnosticEngine again;
  auto reloaded = cache.cpu_kernels(f.scheduled, again);
  if (!reloaded) fuzz::property_failed("cpu_kernels failed after rebuilding the entry", reloaded.error());
  if (!again.diagnostics().empty())
    fuzz::property_failed("the entry is still damaged after it was rebuilt", again.str());
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// The CUDA toolchain around the generated source: which NVRTC fxc finds and loads and why
// (codegen/cuda/nvrtc_search.h, nvrtc.h), when a cubin the driver refuses is retried as PTX
// (codegen::cuda_load_retries_with_ptx), and the registers and spills ptxas reports for the
// example graphs and the benchmark workloads on sm_80, sm_89 and sm_90.
//
// "NVRTC search: ..." cases need nothing installed (a fake tree of files in a temporary
// directory) and run with the unit tests. "CUDA toolkit: ..." cases need NVRTC (CTest
// cuda_toolkit): without it they skip, and fail where the toolkit is installed
// (/usr/local/cuda/bin/ptxas, or FXC_REQUIRE_NVRTC=1) but NVRTC does not load.
#ifdef FXC_HAS_CUDA_CODEGEN  // set by linking fxc_codegen_cuda (codegen/cuda/CMakeLists.txt)

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <unistd.h>

#include "codegen/cuda/cuda_driver.h"
#include "codegen/cuda/emit_cuda.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/nvrtc_search.h"
#include "driver/compile_request.h"
#include "expected_text.h"
#include "frontend/fx_file.h"
#include "passes/target.h"
#include "test_skip.h"

namespace fxc {
namespace {

namespace fs = std::filesystem;

const char* kPtxas = "/usr/local/cuda/bin/ptxas";

bool toolkit_expected() {
  const char* require = std::getenv("FXC_REQUIRE_NVRTC");
  return (require && std::string(require) == "1") || fs::exists(kPtxas);
}

// A temporary directory, removed with its contents at the end of the scope.
struct TempDir {
  fs::path path;
  TempDir() {
    char name[] = "/tmp/fxc_nvrtc_XXXXXX";
    const char* made = mkdtemp(name);
    REQUIRE(made);
    path = fs::canonical(made);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  // An empty file at `relative` (its directories made); returns its path.
  fs::path file(const std::string& relative) const {
    fs::path p = path / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "not a library\n";
    return p;
  }
  void link(const std::string& relative, const std::string& target) const {
    fs::path p = path / relative;
    fs::create_directories(p.parent_path());
    fs::create_symlink(target, p);
  }
};

std::vector<std::string> paths_of(const std::vector<codegen::NvrtcCandidate>& candidates, const fs::path& root) {
  std::vector<std::string> out;
  for (const codegen::NvrtcCandidate& c : candidates) {
    std::string p = c.path;
    if (p.compare(0, root.string().size(), root.string()) == 0) p = "ROOT" + p.substr(root.string().size());
    out.push_back(p);
  }
  return out;
}

codegen::NvrtcCandidate candidate(const std::string& path, int major, bool is_explicit = false) {
  codegen::NvrtcCandidate c;
  c.path = path;
  c.origin = "test";
  c.major = major;
  c.explicit_choice = is_explicit;
  return c;
}

std::vector<std::string> order(const std::vector<codegen::NvrtcCandidate>& candidates, int driver_version) {
  std::vector<std::string> out;
  for (const codegen::NvrtcCandidate& c : codegen::nvrtc_load_order(candidates, driver_version)) out.push_back(c.path);
  return out;
}

TEST_CASE("NVRTC search: the version in a library's file name") {
  using V = std::pair<int, int>;
  CHECK(codegen::nvrtc_name_version("libnvrtc.so.12.4.127") == V{12, 4});
  CHECK(codegen::nvrtc_name_version("libnvrtc.so.13") == V{13, -1});
  CHECK(codegen::nvrtc_name_version("libnvrtc.so") == V{-1, -1});
  CHECK(codegen::nvrtc_name_version("libnvrtc-builtins.so.13.0") == V{-1, -1});
  CHECK(codegen::nvrtc_name_version("libnvrtc.alt.so.13") == V{-1, -1});
  CHECK(codegen::nvrtc_name_version("libnvrtc.so.13.x") == V{-1, -1});
  CHECK(codegen::nvrtc_name_version("libnvrtc.so.") == V{-1, -1});
}

// The search order and the de-duplication over a fake tree: every place docs/cuda.md names,
// symlinks between them, and files that are not NVRTC.
TEST_CASE("NVRTC search: every place in order, each library once") {
  TempDir t;
  // Two toolkits and /usr/local/cuda -> cuda-13.0; a third, 12.10 (newer than 12.4 as a version).
  t.file("usr/local/cuda-12.4/lib64/libnvrtc.so.12.4.127");
  t.link("usr/local/cuda-12.4/lib64/libnvrtc.so.12", "libnvrtc.so.12.4.127");
  t.link("usr/local/cuda-12.4/lib64/libnvrtc.so", "libnvrtc.so.12");
  t.file("usr/local/cuda-12.4/lib64/libnvrtc-builtins.so.12.4");  // not NVRTC itself
  t.file("usr/local/cuda-12.4/lib64/libnvrtc.alt.so.12");         // nor this
  t.file("usr/local/cuda-12.10/lib64/libnvrtc.so.12");
  t.file("usr/local/cuda-13.0/lib64/libnvrtc.so.13");
  t.link("usr/local/cuda-13.0/lib64/libnvrtc.so", "libnvrtc.so.13");
  t.link("usr/local/cuda", "cuda-13.0");
  t.file("usr/local/cuda-old/lib64/libnvrtc.so.11");  // not a version: after the versioned ones
  // pip's wheels: CUDA 12 (nvidia/cuda_nvrtc/lib) and CUDA 13 (nvidia/cu13/lib) layouts.
  t.file("venv/lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
  fs::path venv13 = t.file("venv/lib/python3.9/site-packages/nvidia/cu13/lib/libnvrtc.so.13");
  t.link("home/.local/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13", venv13.string());  // the same file
  t.file("home/.local/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
  t.file("usr/local/lib/python3.11/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
  t.file("usr/lib/python3/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");

  codegen::NvrtcEnvironment env;
  env.root = t.path.string();
  env.explicit_library = (t.path / "usr/local/cuda-13.0/lib64/libnvrtc.so.13").string();
  env.cuda_home = (t.path / "usr/local/cuda-12.4").string();
  env.virtual_env = (t.path / "venv").string();
  env.home = (t.path / "home").string();

  auto dirs = codegen::nvrtc_search_directories(env);
  std::vector<std::string> origins;
  for (const auto& [origin, dir] : dirs) origins.push_back(origin);
  // /usr/local/cuda-13.0 is /usr/local/cuda, cuda-12.4 is $CUDA_HOME: each directory once.
  CHECK(origins == std::vector<std::string>{"$CUDA_HOME", "/usr/local/cuda", "/usr/local/cuda-12.10",
                                            "/usr/local/cuda-old", "pip ($VIRTUAL_ENV)", "pip ($VIRTUAL_ENV)",
                                            "pip (~/.local)", "pip (~/.local)", "pip (/usr/local/lib)",
                                            "pip (/usr/lib/python3)"});

  auto found = codegen::nvrtc_candidates(env);
  CHECK(paths_of(found, t.path) ==
        std::vector<std::string>{
            "ROOT/usr/local/cuda-13.0/lib64/libnvrtc.so.13",  // $FXC_NVRTC_LIBRARY
            "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",  // sonames
            "ROOT/usr/local/cuda-12.4/lib64/libnvrtc.so.12",    // $CUDA_HOME: three names, one file
            // /usr/local/cuda/lib64/libnvrtc.so.13 is $FXC_NVRTC_LIBRARY's file: not again
            "ROOT/usr/local/cuda-12.10/lib64/libnvrtc.so.12",
            "ROOT/usr/local/cuda-old/lib64/libnvrtc.so.11",
            "ROOT/venv/lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
            "ROOT/venv/lib/python3.9/site-packages/nvidia/cu13/lib/libnvrtc.so.13",
            // ~/.local's cu13 file is a link to the venv's: not again
            "ROOT/home/.local/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
            "ROOT/usr/local/lib/python3.11/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
            "ROOT/usr/lib/python3/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
        });
  REQUIRE(found.size() == 12);
  CHECK(found[0].explicit_choice);
  CHECK(found[0].origin == "$FXC_NVRTC_LIBRARY");
  CHECK(found[4].major == 12);
  CHECK(found[4].minor == 4);  // from the symlink's target, libnvrtc.so.12.4.127
  CHECK(found[4].origin == "$CUDA_HOME");
  CHECK(found[3].major == -1);  // the bare soname

  // The same search twice gives the same list (directory order does not leak through).
  CHECK(paths_of(codegen::nvrtc_candidates(env), t.path) == paths_of(found, t.path));

  // The load order: with a CUDA 12.4 driver, CUDA 12 and older first (search order within a
  // major), then unknown versions, then CUDA 13; without a driver, newest first.
  auto with_driver = paths_of(codegen::nvrtc_load_order(found, 12040), t.path);
  CHECK(with_driver ==
        std::vector<std::string>{
            "ROOT/usr/local/cuda-13.0/lib64/libnvrtc.so.13",  // explicit: first whatever its version
            "libnvrtc.so.12",
            "ROOT/usr/local/cuda-12.4/lib64/libnvrtc.so.12",
            "ROOT/usr/local/cuda-12.10/lib64/libnvrtc.so.12",
            "ROOT/venv/lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
            "ROOT/home/.local/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
            "ROOT/usr/local/lib/python3.11/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
            "ROOT/usr/lib/python3/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
            "ROOT/usr/local/cuda-old/lib64/libnvrtc.so.11",
            "libnvrtc.so",
            "libnvrtc.so.13",
            "ROOT/venv/lib/python3.9/site-packages/nvidia/cu13/lib/libnvrtc.so.13",
        });
  auto without = paths_of(codegen::nvrtc_load_order(found, 0), t.path);
  CHECK(std::vector<std::string>(without.begin(), without.begin() + 4) ==
        std::vector<std::string>{"ROOT/usr/local/cuda-13.0/lib64/libnvrtc.so.13", "libnvrtc.so.13",
                                 "ROOT/venv/lib/python3.9/site-packages/nvidia/cu13/lib/libnvrtc.so.13",
                                 "libnvrtc.so.12"});
  CHECK(without.back() == "libnvrtc.so");

  // Nothing here loads: every candidate is tried, the error lists them.
  codegen::NvrtcEnvironment fakes = env;
  fakes.sonames = {"libnvrtc-fxc-test-missing.so.12"};
  auto none = codegen::choose_nvrtc(codegen::nvrtc_load_order(codegen::nvrtc_candidates(fakes), 0), 0);
  CHECK_FALSE(none.found());
  CHECK(none.tried.size() == codegen::nvrtc_candidates(fakes).size());
  CHECK(none.error.find("NVRTC not found (" + t.path.string() + "/usr/local/cuda-13.0/lib64/libnvrtc.so.13, ") == 0);
  CHECK(none.error.find("install the CUDA toolkit or use --target cpu") != std::string::npos);
  CHECK(codegen::nvrtc_status(none) == "not found (install the CUDA toolkit to compile CUDA; --target cuda needs it)");
}

TEST_CASE("NVRTC search: the choice follows the driver's major version") {
  std::vector<codegen::NvrtcCandidate> c = {candidate("a11", 11), candidate("b13", 13), candidate("c12", 12),
                                            candidate("d?", -1), candidate("e12", 12)};
  using L = std::vector<std::string>;
  CHECK(order(c, 0) == L{"b13", "c12", "e12", "a11", "d?"});          // no driver: newest first
  CHECK(order(c, 13000) == L{"b13", "c12", "e12", "a11", "d?"});      // all usable
  CHECK(order(c, 12040) == L{"c12", "e12", "a11", "d?", "b13"});      // 13 last: too new
  CHECK(order(c, 11080) == L{"a11", "d?", "c12", "e12", "b13"});      // the nearest too-new first
  CHECK(order(c, 10020) == L{"d?", "a11", "c12", "e12", "b13"});
  c.push_back(candidate("explicit13", 13, true));
  CHECK(order(c, 12040).front() == "explicit13");                       // an explicit choice is kept
  CHECK(order({}, 12040).empty());
}

TEST_CASE("NVRTC search: a cubin the driver refuses is retried as PTX only where that can help") {
  const std::string cubin = std::string("\x7f" "ELF\x02\x01\x01", 7) + std::string(64, '\0');
  const std::string ptx = "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.5\n.target sm_90\n";
  for (int code : {200, 209, 222, 300}) {  // INVALID_IMAGE, NO_BINARY_FOR_GPU, UNSUPPORTED_PTX_VERSION, INVALID_SOURCE
    CAPTURE(code);
    CHECK(codegen::cuda_load_retries_with_ptx(code, cubin));
    CHECK_FALSE(codegen::cuda_load_retries_with_ptx(code, ptx));  // PTX already: nothing else to try
    CHECK(codegen::cuda_load_result_name(code).rfind("CUDA_ERROR_", 0) == 0);
  }
  CHECK(codegen::cuda_load_result_name(209) == "CUDA_ERROR_NO_BINARY_FOR_GPU");
  CHECK(codegen::cuda_load_result_name(222) == "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
  // Success, out of memory, an invalid context or value, no JIT compiler, an invalid PTX:
  // loading PTX instead would not help (or would fail the same way).
  for (int code : {0, 1, 2, 3, 201, 218, 221, 223, 400, 999}) {
    CAPTURE(code);
    CHECK_FALSE(codegen::cuda_load_retries_with_ptx(code, cubin));
  }
  CHECK(codegen::cuda_load_result_name(2) == "CUDA error 2");
  CHECK_FALSE(codegen::cuda_load_retries_with_ptx(209, ""));
  CHECK_FALSE(codegen::cuda_load_retries_with_ptx(209, "\x7f" "EL"));
  CHECK(codegen::cuda_version_text(12040) == "12.4");
  CHECK(codegen::cuda_version_text(13000) == "13.0");
  CHECK(codegen::cuda_driver_version({"libcuda-fxc-test-missing.so.1"}) == 0);
}

// The NVRTC files in /usr/local/cuda/lib64 (the search's $CUDA_HOME step alone).
std::vector<codegen::NvrtcCandidate> toolkit_nvrtcs(const fs::path& empty_root) {
  codegen::NvrtcEnvironment env;
  env.cuda_home = "/usr/local/cuda";
  env.root = empty_root.string();
  env.sonames = {};
  return codegen::nvrtc_candidates(env);
}

TEST_CASE("CUDA toolkit: the NVRTC under /usr/local/cuda is found and chosen for the driver") {
  TempDir t;
  std::vector<codegen::NvrtcCandidate> real = toolkit_nvrtcs(t.path);
  const codegen::NvrtcChoice& process = codegen::nvrtc_choice();
  if (real.empty() || !process.found()) {
    REQUIRE_MESSAGE(!toolkit_expected(), "the CUDA toolkit is installed (" << kPtxas << ") but NVRTC is "
                                                                            << (real.empty() ? "not in /usr/local/cuda/lib64" : "not loaded: " + process.error));
    CHECK_FALSE(codegen::nvrtc_version());
    test::skip("NVRTC is not installed under /usr/local/cuda: " + process.error);
    return;
  }
  MESSAGE("NVRTC: " << codegen::nvrtc_status(process));
  MESSAGE("default load order:");
  for (const std::string& name : codegen::default_nvrtc_libraries()) MESSAGE("  " << name);
  CHECK(codegen::nvrtc_version() == process.version);

  const codegen::NvrtcCandidate& toolkit = real.front();
  REQUIRE(toolkit.major > 0);
  fs::path toolkit_file = fs::canonical(toolkit.path);
  std::string major = std::to_string(toolkit.major);

  // Alone, without a driver: the newest found.
  codegen::NvrtcChoice alone = codegen::choose_nvrtc({toolkit}, 0);
  REQUIRE_MESSAGE(alone.found(), alone.error);
  CHECK(fs::canonical(alone.path) == toolkit_file);
  CHECK(alone.version.rfind(major + ".", 0) == 0);
  CHECK(alone.reason == "newest found, no driver to match");
  CHECK(alone.tried.empty());
  CHECK(codegen::nvrtc_status(alone) == alone.version + " (" + alone.path + "; newest found, no driver to match)");

  // A fake library of the previous major (not loadable) beside it: with a driver of that
  // major, the fake is tried first and fails; the toolkit's is newer than the driver.
  fs::path fake = t.file("lib/libnvrtc.so." + std::to_string(toolkit.major - 1));
  std::vector<codegen::NvrtcCandidate> both = {toolkit, candidate(fake.string(), toolkit.major - 1)};
  int older_driver = (toolkit.major - 1) * 1000 + 40;
  auto ordered = codegen::nvrtc_load_order(both, older_driver);
  REQUIRE(ordered.size() == 2);
  CHECK(ordered[0].path == fake.string());
  codegen::NvrtcChoice older = codegen::choose_nvrtc(ordered, older_driver);
  REQUIRE(older.found());
  REQUIRE(older.tried.size() == 1);
  CHECK(older.tried[0].rfind(fake.string() + ": ", 0) == 0);
  CHECK(older.reason.rfind("newer than driver " + std::to_string(toolkit.major - 1) + ".4", 0) == 0);

  // A driver of the toolkit's own major: it matches, and the fake is not tried.
  codegen::NvrtcChoice same = codegen::choose_nvrtc(codegen::nvrtc_load_order(both, toolkit.major * 1000), toolkit.major * 1000);
  REQUIRE(same.found());
  CHECK(same.reason == "matches driver " + major + ".0");
  CHECK(same.tried.empty());
  CHECK(same.others == std::vector<std::string>{fake.string() + " (" + std::to_string(toolkit.major - 1) + ")"});

  // $FXC_NVRTC_LIBRARY naming something that does not load: the next one, and it says so.
  codegen::NvrtcCandidate bad = candidate(fake.string(), toolkit.major - 1, true);
  codegen::NvrtcChoice fallback = codegen::choose_nvrtc(codegen::nvrtc_load_order({toolkit, bad}, 0), 0);
  REQUIRE(fallback.found());
  CHECK(fallback.reason == "newest that loads, no driver to match; $FXC_NVRTC_LIBRARY (" + fake.string() +
                               ") did not load");
  codegen::NvrtcCandidate good = toolkit;
  good.explicit_choice = true;
  CHECK(codegen::choose_nvrtc({good}, 12040).reason == "set by $FXC_NVRTC_LIBRARY");
}

// ---- Registers and spills ----------------------------------------------------------------

struct EntryResources {
  int registers = -1;
  int stack_bytes = 0, spill_store_bytes = 0, spill_load_bytes = 0;
};

// ptxas -v's report, per entry:
//   ptxas info    : Compiling entry function 'fxc_chain_3' for 'sm_90'
//   ptxas info    : Function properties for fxc_chain_3
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 24 registers, used 0 barriers, 400 bytes cmem[0]
// Device functions that are not inlined get a "Function properties" block of their own; only
// entries are kept.
std::map<std::string, EntryResources> parse_ptxas(const std::string& log) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  std::map<std::string, EntryResources> functions, entries;
  std::string current, described;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      current = m[1];
      entries[current];
    } else if (std::regex_search(line, m, properties)) {
      described = m[1];
    } else if (std::regex_search(line, m, frame) && !described.empty()) {
      EntryResources& r = functions[described];
      r.stack_bytes = std::stoi(m[1]);
      r.spill_store_bytes = std::stoi(m[2]);
      r.spill_load_bytes = std::stoi(m[3]);
    } else if (std::regex_search(line, m, used) && !current.empty()) {
      functions[current].registers = std::stoi(m[1]);
    }
  }
  for (auto& [name, r] : entries) r = functions[name];
  return entries;
}

std::pair<int, std::string> ptxas_verbose(const std::string& ptx, const std::string& arch) {
  TempDir t;
  fs::path in = t.path / "kernels.ptx";
  std::ofstream(in, std::ios::binary) << ptx;
  fs::path log = t.path / "log.txt";
  std::string command = std::string(kPtxas) + " -v -arch=" + arch + " " + in.string() + " -o " +
                        (t.path / "kernels.cubin").string() + " > " + log.string() + " 2>&1";
  int status = std::system(command.c_str());
  std::ifstream l(log);
  std::stringstream s;
  s << l.rdbuf();
  return {status, s.str()};
}

struct Workload {
  std::string file;  // relative to the repository
  int channels;
  DType dtype;
  std::int64_t length;  // guides select_strategy
  double fs = 48000;
  double f64_rate = 0.5;  // the device's float64 rate: 1:64 does float64 arithmetic in float pairs
};

std::string dtype_name(DType d) { return d == DType::f64 ? "f64" : "f32"; }

// Spills ptxas reports today, accepted: "graph shape arch entry" -> spill store bytes. A new
// spill, or a larger one, fails the test; one that goes away is reported so the list shrinks.
const std::map<std::string, int> kKnownSpills = {};

TEST_CASE("CUDA toolkit: registers and spills for sm_80, sm_89 and sm_90") {
  if (!codegen::nvrtc_version() || !fs::exists(kPtxas)) {
    REQUIRE_MESSAGE(!toolkit_expected(), "the CUDA toolkit is installed (" << kPtxas << ") but NVRTC does not load");
    test::skip("NVRTC or ptxas is not installed: registers are not measured");
    return;
  }
  fs::path repo = fs::path(FXC_TEST_DATA_DIR) / ".." / "..";
  std::vector<Workload> workloads;
  std::vector<fs::path> examples;
  for (const auto& e : fs::directory_iterator(repo / "examples"))
    if (e.path().extension() == ".fx") examples.push_back(e.path().filename());
  std::sort(examples.begin(), examples.end());
  for (const fs::path& e : examples) workloads.push_back({"examples/" + e.string(), 2, DType::f32, 480000});
  // W1 (bench/workloads/w1_api.fx) at its 44.1 kHz: the chunked scan on 8 channels x 120 s and
  // on 4096 x 1 s (float32: state_precision mixed).
  workloads.push_back({"bench/workloads/w1_api.fx", 8, DType::f32, 5292000, 44100});
  workloads.push_back({"bench/workloads/w1_api.fx", 8, DType::f64, 5292000, 44100});
  workloads.push_back({"bench/workloads/w1_api.fx", 4096, DType::f32, 44100, 44100});
  // W3's five FIRs fuse into one of 511 taps: FFT overlap-save (fir_fft), 2048 points.
  workloads.push_back({"bench/workloads/w3_fir.fx", 1, DType::f32, 2646000, 44100});
  workloads.push_back({"bench/workloads/w3_fir.fx", 1, DType::f64, 2646000, 44100});
  // 24001 taps: the partitioned FFT convolution (fir_partitioned), 4096 / 2048 points.
  workloads.push_back({"bench/workloads/long_fir.fx", 2, DType::f32, 480000, 48000});
  workloads.push_back({"bench/workloads/long_fir.fx", 2, DType::f64, 480000, 48000});
  // A device with float64 at 1:64 (sm_89: an L4): W1 and W5 in float pairs.
  workloads.push_back({"bench/workloads/w1_api.fx", 8, DType::f32, 5292000, 44100, 1.0 / 64});
  workloads.push_back({"bench/workloads/w5_long_mono.fx", 1, DType::f32, 28800000, 48000, 1.0 / 64});

  std::ostringstream table;
  table << "| graph | shape | entry (count) | sm_80 | sm_89 | sm_90 |\n|---|---|---|---|---|---|\n";
  int new_spills = 0, entries = 0;
  std::vector<std::string> gone;
  std::map<std::string, bool> known_seen;
  for (const Workload& w : workloads) {
    CAPTURE(w.file);
    DiagnosticEngine diags;
    auto graph = frontend::compile_fx_file((repo / w.file).string(), diags);
    REQUIRE_MESSAGE(graph, diags.str());
    CompileRequest request;
    request.channels = w.channels;
    request.dtype = w.dtype;
    request.length_samples = w.length;
    request.sample_rate_hz = w.fs;
    passes::GpuProperties gpu;
    gpu.f64_rate = w.f64_rate;
    auto scheduled = schedule_graph(*graph, request, passes::cuda_target(gpu), diags);
    REQUIRE_MESSAGE(scheduled, diags.str());
    auto source = codegen::emit_cuda_source(*scheduled);
    REQUIRE(source);
    std::string shape = std::to_string(w.channels) + " ch " + dtype_name(w.dtype) +
                        (w.f64_rate < 0.5 ? " (float64 1:" + std::to_string(static_cast<int>(1 / w.f64_rate)) + ")" : "");
    std::map<std::string, std::map<std::string, EntryResources>> by_entry;  // entry -> arch -> resources
    for (const char* arch : {"sm_80", "sm_89", "sm_90"}) {
      CAPTURE(arch);
      auto ptx = codegen::compile_cuda(*source, arch, false);
      REQUIRE(ptx);
      auto [status, log] = ptxas_verbose(*ptx, arch);
      REQUIRE_MESSAGE(status == 0, "ptxas -v -arch=" << arch << ":\n" << log);
      auto parsed = parse_ptxas(log);
      REQUIRE_MESSAGE(!parsed.empty(), "no entry in ptxas -v's report:\n" << log);
      for (const auto& [entry, r] : parsed) {
        by_entry[entry][arch] = r;
        CHECK_MESSAGE(r.registers > 0, entry << ": no register count in\n" << log);
        std::string key = fs::path(w.file).stem().string() + " " + shape + " " + arch + " " + entry;
        auto known = kKnownSpills.find(key);
        if (known != kKnownSpills.end()) {
          known_seen[key] = true;
          if (r.spill_store_bytes > known->second) ++new_spills;
          CHECK_MESSAGE(r.spill_store_bytes <= known->second, key << " spills more than known: " << r.spill_store_bytes);
          if (r.spill_store_bytes == 0) gone.push_back(key);
        } else {
          if (r.spill_store_bytes + r.spill_load_bytes > 0) ++new_spills;
          CHECK_MESSAGE(r.spill_store_bytes + r.spill_load_bytes == 0,
                        key << " spills " << r.spill_store_bytes << " bytes stored, " << r.spill_load_bytes << " loaded");
        }
      }
    }
    // One row per kind of entry (fxc_chain_N_chunk_states): how many, and the most registers
    // any of them uses on each architecture.
    std::map<std::string, std::pair<int, std::map<std::string, EntryResources>>> by_kind;
    for (const auto& [entry, archs] : by_entry) {
      ++entries;
      auto& [n, worst] = by_kind[std::regex_replace(entry, std::regex("_[0-9]+"), "_N")];
      ++n;
      for (const auto& [arch, r] : archs) {
        EntryResources& m = worst[arch];
        m.registers = std::max(m.registers, r.registers);
        m.stack_bytes = std::max(m.stack_bytes, r.stack_bytes);
        m.spill_store_bytes += r.spill_store_bytes;
        m.spill_load_bytes += r.spill_load_bytes;
      }
    }
    for (const auto& [kind, counted] : by_kind) {
      const auto& [n, worst] = counted;
      table << "| " << fs::path(w.file).stem().string() << " | " << shape << " | " << kind
            << (n > 1 ? " (" + std::to_string(n) + ")" : std::string());
      for (const char* arch : {"sm_80", "sm_89", "sm_90"}) {
        auto it = worst.find(arch);
        table << " | ";
        if (it == worst.end()) {
          table << "-";
          continue;
        }
        const EntryResources& r = it->second;
        table << r.registers << ", " << r.spill_store_bytes << "/" << r.spill_load_bytes;
        if (r.stack_bytes > 0) table << " (stack " << r.stack_bytes << ")";
      }
      table << " |\n";
    }
  }
  for (const auto& [key, bytes] : kKnownSpills)
    if (!known_seen.count(key)) gone.push_back(key + " (not compiled any more)");
  MESSAGE("NVRTC " << *codegen::nvrtc_version() << ", ptxas -v; " << entries << " entries\n" << table.str());
  for (const std::string& g : gone) MESSAGE("known spill gone, remove it from kKnownSpills: " << g);
  CHECK(new_spills == 0);
}

}  // namespace
}  // namespace fxc

#else
#pragma message("cuda_toolchain_test.cpp: fxc_codegen_cuda is not linked into this test binary; its tests are compiled out")
#endif

// SPDX-License-Identifier: Apache-2.0
// The CUDA backend without a GPU: the emitted CUDA C++ (deterministic, one kernel per chain
// and sum, golden files), NVRTC compiling it for sm_80 and sm_90 to PTX and cubin, ptxas
// accepting the PTX, and the clear errors when NVRTC or the driver cannot be loaded.
//
// Golden files: tests/unit/cuda_golden/<case>.cu, compared exactly; FXC_UPDATE_GOLDEN=1
// rewrites them. Where the CUDA toolkit is installed (/usr/local/cuda/bin/ptxas exists, or
// FXC_REQUIRE_NVRTC=1), NVRTC must load: the compile checks cannot be skipped silently there.
#ifdef FXC_HAS_CUDA_CODEGEN  // set by linking fxc_codegen_cuda (codegen/cuda/CMakeLists.txt)

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

#include "codegen/chain_layout.h"
#include "codegen/cuda/cuda_driver.h"
#include "codegen/cuda/emit_cuda.h"
#include "codegen/cuda/nvrtc.h"
#include "cuda_loop_graphs.h"
#include "expected_text.h"
#include "occurrences.h"
#include "frontend/dsl.h"
#include "passes/pipeline.h"
#include "runtime/gpu_device.h"
#include "support/trace.h"
#include "test_graphs.h"
#include "test_skip.h"

namespace fxc {
namespace {

using namespace fxc::literals;
namespace fs = std::filesystem;

const char* kPtxas = "/usr/local/cuda/bin/ptxas";

ir::Graph w1_graph() {
  Flow x = input("x");
  return make_graph("w1_api", {output("", x | cheby1(4, 0.1_dB, 20_Hz, highpass) | cheby1(4, 0.1_dB, 60_Hz, highpass) |
                                              cheby1(4, 0.1_dB, 65_Hz, highpass) | butter(5, 5000_Hz) |
                                              butter(5, 4900_Hz) | butter(5, 4850_Hz))});
}

// Every stage kind in one chain, after a sum (fan-in) so the chain starts at the sum.
ir::Graph stages_graph() {
  Flow a = input("a");
  Flow b = input("b");
  Flow mixed = 0.5 * a + 0.25 * b;
  return make_graph("stages", {output("y", mixed | sos({{1, 2, 1, 1, -0.5, 0.25}, {0.5, 0, -0.5, 1, 0.1, 0.2}}) |
                                                fir({0.25, 0.5, 0.25}) | delay(3_samples) | clip(-0.5, 0.5) |
                                                tanh() | gain(0.1) | delay(7_samples))});
}

ir::Graph long_fir_graph() {  // 300 taps: FFT overlap-save (fir_fft), 2048 points
  std::vector<double> taps(300);
  for (std::size_t i = 0; i < taps.size(); ++i) taps[i] = 1.0 / (1.0 + static_cast<double>(i));
  Flow x = input("x");
  return make_graph("long_fir", {output("y", x | fir(taps))});
}

// 5000 taps: more than half the longest FFT a block holds (4096 points in float32, 2048 in
// float64), so partitioned (fir_partitioned) in segments of 2048 (float32) or 1024 samples.
ir::Graph very_long_fir_graph() {
  std::vector<double> taps(5000);
  for (std::size_t i = 0; i < taps.size(); ++i) taps[i] = std::cos(0.01 * static_cast<double>(i)) / (1.0 + 0.01 * i);
  Flow x = input("x");
  return make_graph("very_long_fir", {output("y", x | fir(taps))});
}

ir::Graph fir_graph() {
  Flow x = input("x");
  return make_graph("fir", {output("y", x | fir({0.1, 0.2, 0.3, 0.2, 0.1, -0.05, 0.02}))});
}

// A 5 Hz lowpass in float32: poles so close to the unit circle that select_strategy keeps its
// state in float64 (state_precision f64).
ir::Graph close_pole_graph() {
  Flow x = input("x");
  return make_graph("close_pole", {output("y", x | butter(2, 5_Hz) | gain(2.0))});
}

struct Case {
  const char* name;
  ir::Graph (*graph)();
  int channels;
  DType dtype;
  std::int64_t length;  // guides select_strategy
  double f64_rate = 0.5;  // the device's float64 rate: 1:64 does float64 arithmetic in float pairs
  int wavefront_max_steps = 0;  // thresholds.gpu_wavefront_max_steps: off by default
};

const Case kCases[] = {
    {"vocal_f64_2ch", test::vocal_graph, 2, DType::f64, 480000},
    {"vocal_f32_4096ch", test::vocal_graph, 4096, DType::f32, 48000},
    {"w1_f32_8ch", w1_graph, 8, DType::f32, 441000},
    {"w1_f64_4096ch", w1_graph, 4096, DType::f64, 441000},
    {"every_kind_f64_1ch", test::every_kind_graph, 1, DType::f64, 48000},  // input a has 1 channel
    {"stages_f32_1ch", stages_graph, 1, DType::f32, 480000},
    {"stages_f64_8192ch", stages_graph, 8192, DType::f64, 4800},
    {"fir_f32_64ch", fir_graph, 64, DType::f32, 48000},
    {"long_fir_f32_2ch", long_fir_graph, 2, DType::f32, 480000},
    {"long_fir_f64_2ch", long_fir_graph, 2, DType::f64, 480000},
    {"close_pole_f32_1ch", close_pole_graph, 1, DType::f32, 480000},
    // Feedback loops and channel routing (cuda_loop_graphs.h).
    {"echo_f64_2ch", test::echo_graph, 2, DType::f64, 48000},
    {"tangle_f32_2ch", test::tangle_graph, 2, DType::f32, 48000},
    {"routed_f32_2ch", test::routed_graph, 2, DType::f32, 48000},
    {"wide_routed_loop_f64_2ch", test::wide_routed_loop_graph, 2, DType::f64, 48000},
    {"fused_loops_f32_2ch", test::fused_loops_graph, 2, DType::f32, 48000},
    {"dynamics_f32_2ch", test::dynamics_graph, 2, DType::f32, 48000},
    {"dynamics_f64_2ch", test::dynamics_graph, 2, DType::f64, 48000},
    {"side_chain_f32_2ch", test::side_chain_graph, 2, DType::f32, 48000},
    {"very_long_fir_f32_2ch", very_long_fir_graph, 2, DType::f32, 480000},
    {"very_long_fir_f64_2ch", very_long_fir_graph, 2, DType::f64, 480000},
    // A device with float64 at 1:64 (an L4, a consumer part): float pairs, in the chunked scan
    // (W1: state_precision pairs) and one thread per channel (mixed_pairs after split-precision).
    {"w1_f32_8ch_pairs", w1_graph, 8, DType::f32, 441000, 1.0 / 64},
    {"vocal_f32_4096ch_pairs", test::vocal_graph, 4096, DType::f32, 48000, 1.0 / 64},
    // The chunk passes' wavefront, asked for (off by default): its output pass's ring tile.
    {"w1_f32_8ch_wavefront", w1_graph, 8, DType::f32, 441000, 0.5, 48},
};

ir::Graph schedule(const Case& c) {
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, c.channels, c.dtype}};
  context.binding.length_samples = c.length;
  passes::GpuProperties gpu;
  gpu.f64_rate = c.f64_rate;
  context.target = passes::cuda_target(gpu);
  context.thresholds.gpu_wavefront_max_steps = c.wavefront_max_steps;
  auto scheduled = passes::run_pipeline(c.graph(), context);
  REQUIRE_MESSAGE(scheduled, diags.str());
  return std::move(*scheduled);
}

using test::occurrences;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path golden_dir() { return fs::path(FXC_TEST_DATA_DIR) / ".." / "unit" / "cuda_golden"; }

bool toolkit_expected() {
  const char* require = std::getenv("FXC_REQUIRE_NVRTC");
  return (require && std::string(require) == "1") || fs::exists(kPtxas);
}

// Runs ptxas on `ptx` for `arch`; returns its exit status and output.
std::pair<int, std::string> run_ptxas(const std::string& ptx, const std::string& arch) {
  char dir_template[] = "/tmp/fxc_ptxas_XXXXXX";
  const char* dir = mkdtemp(dir_template);
  REQUIRE(dir);
  fs::path in = fs::path(dir) / "kernels.ptx";
  std::ofstream(in, std::ios::binary) << ptx;
  fs::path log = fs::path(dir) / "log.txt";
  std::string command = std::string(kPtxas) + " -arch=" + arch + " " + in.string() + " -o " +
                        (fs::path(dir) / "kernels.cubin").string() + " > " + log.string() + " 2>&1";
  int status = std::system(command.c_str());
  std::string output = read_file(log);
  fs::remove_all(dir);
  return {status, output};
}

TEST_CASE("CUDA source: deterministic, one kernel per chain and sum, golden") {
  bool update = std::getenv("FXC_UPDATE_GOLDEN") && std::string(std::getenv("FXC_UPDATE_GOLDEN")) == "1";
  int chunked = 0, per_channel = 0;
  for (const Case& c : kCases) {
    std::string name = c.name;
    CAPTURE(name);
    ir::Graph g = schedule(c);
    auto source = codegen::emit_cuda_source(g);
    REQUIRE(source);
    auto again = codegen::emit_cuda_source(schedule(c));
    REQUIRE(again);
    CHECK(*source == *again);
    // Kernels are counted by their definitions, a launch bound aside (the carry's walks have one).
    const std::string text = std::regex_replace(*source, std::regex(R"(__launch_bounds__\(\d+\) )"), "");

    int chains = 0, sums = 0, routes = 0, feedbacks = 0;
    for (const ir::Node& node : g.nodes()) {
      chains += ir::holds<ir::Chain>(node);
      sums += ir::holds<ir::Sum>(node);
      routes += ir::is_routing(node.op);
      feedbacks += ir::holds<ir::Feedback>(node);
    }
    CHECK(chains + routes > 0);
    auto kernels = codegen::cuda_kernels(g);
    REQUIRE(kernels);
    CHECK(kernels->size() == static_cast<std::size_t>(chains + sums + routes + feedbacks));
    int chain_entries = 0;
    bool wide = false;  // float64 in a float32 source: the chunked scan's carries, state_precision f64
    for (const codegen::CudaKernelInfo& k : *kernels) {
      chunked += k.kind == codegen::CudaKernelKind::chain_chunked_scan;
      per_channel += k.kind == codegen::CudaKernelKind::chain_thread_per_channel;
      wide = wide || k.kind == codegen::CudaKernelKind::chain_chunked_scan || k.state_dtype != k.dtype;
      if (k.kind != codegen::CudaKernelKind::sum && k.kind != codegen::CudaKernelKind::route &&
          k.kind != codegen::CudaKernelKind::feedback)
        chain_entries += static_cast<int>(k.entries.size());
      for (const codegen::CudaEntry& e : k.entries)
        CHECK(occurrences(text, "__global__ void " + e.symbol + "(") == 1);
      if (k.kind == codegen::CudaKernelKind::chain_chunked_scan)  // narrow states: the walks need no bound
        CHECK(codegen::cuda_launch(k, 1, 1, 1 << 20).block <= 256);
    }
    CHECK(occurrences(text, "extern \"C\" __global__ void fxc_chain_") == chain_entries);
    CHECK(occurrences(text, "extern \"C\" __global__ void fxc_sum_") == sums);
    CHECK(occurrences(text, "extern \"C\" __global__ void fxc_route_") == routes);
    CHECK(occurrences(text, "extern \"C\" __global__ void fxc_feedback_") == 2 * feedbacks);  // read, write
    for (std::uint32_t id : codegen::kernel_node_ids(g))
      if (ir::holds<ir::Chain>(g.node(id)))
        CHECK(occurrences(text, "__global__ void fxc_chain_" + std::to_string(id) + "(") == 1);
    // A 16-byte async copy faults on the GPU unless its shared destination is 16-byte aligned,
    // which the host emulation cannot see (its arrays of 16 bytes or more are aligned anyway).
    static const std::regex copy16(R"(fxc_copy_async<16>\(&(\w+)\[)");
    for (auto m = std::sregex_iterator(text.begin(), text.end(), copy16); m != std::sregex_iterator(); ++m) {
      CAPTURE((*m)[1].str());
      CHECK(std::regex_search(text, std::regex(R"(__shared__ __align__\(16\) \w+ )" + (*m)[1].str() + R"(\[)")));
    }
    if (c.dtype == DType::f64) CHECK(occurrences(*source, "float") == occurrences(*source, "float64"));  // comments say float64
    else if (!wide) CHECK(occurrences(*source, "double") == 0);

    fs::path golden = golden_dir() / (std::string(c.name) + ".cu");
    if (update) {
      fs::create_directories(golden_dir());
      std::ofstream(golden, std::ios::binary) << *source;
      MESSAGE("rewrote " << golden.string());
    } else {
      REQUIRE_MESSAGE(fs::exists(golden), golden.string() << " is missing: run with FXC_UPDATE_GOLDEN=1");
      CHECK_MESSAGE(read_file(golden) == *source, golden.string() << " differs: run with FXC_UPDATE_GOLDEN=1 and review the diff");
    }
  }
  CHECK(chunked > 0);      // W1 on 8 channels, sections only
  CHECK(per_channel > 0);  // many channels, and chains the chunked scan does not apply to
}

TEST_CASE("CUDA source: the kernel kinds follow the strategy") {
  ir::Graph w1 = schedule(kCases[2]);  // 8 channels: gpu_chunked_scan, sections only
  auto k = codegen::cuda_kernels(w1);
  REQUIRE(k);
  REQUIRE(k->size() == 1);
  CHECK((*k)[0].kind == codegen::CudaKernelKind::chain_chunked_scan);
  CHECK((*k)[0].chunk_length == 256);  // 8 x 441000 samples: too few for longer chunks (choose_gpu_chunk)
  CHECK((*k)[0].entries.size() == 5);     // chunk states, group sums, group scan, chunk starts, output
  CHECK((*k)[0].state_dimension == 30);  // W1: 15 sections
  CHECK(!(*k)[0].wavefront);             // off by default (measured no faster on an H200)
  CHECK(codegen::cuda_launch((*k)[0], 0, 8, 441000).block == codegen::kCudaBlockThreads);
  // At 48 kHz its sections all run in float64 (state_precision f64; at W1's 44.1 kHz the
  // lowpasses run in float32, mixed): the zero-state pass sums with a table of L x 30, its rows
  // through shared memory with the samples.
  CHECK((*k)[0].state_table);
  CHECK((*k)[0].entries[0].parameters.size() == 7);  // in, the signal's 4, state_table, chunk_state
  {
    auto source = codegen::emit_cuda_source(w1);
    REQUIRE(source);
    CHECK(occurrences(*source, "const double* __restrict__ state_table, double* __restrict__ chunk_state) {") == 1);
    // The table's rows padded to 8s (D = 30: 32); on sm_80 and sm_90 the planar sums are
    // matrix products of 4 blocks of 8 rows by 4 of 8 columns a warp (FXC_F64_MMA, in both loops
    // of the halves), elsewhere the FMA loop below.
    CHECK(occurrences(*source, "__shared__ __align__(16) double table[32][32];") == 1);
    CHECK(occurrences(*source, "#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900)") == 1);
    CHECK(occurrences(*source, "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64") == 1);
    CHECK(occurrences(*source, "double sums[4][4][2];") == 1);
    CHECK(occurrences(*source, "fxc_mma_f64(sums[m][n], &tile[warp_row + 8 * m][h + i], 36, &table[h + i][0], 32, 8 * n);") == 2);
    // The table's columns swizzled by row, the same way where it is written and read.
    CHECK(occurrences(*source, "fxc_copy_async<16>(&table[h + row][fxc_table_column(h + row, col, 32)]") == 2);
    CHECK(occurrences(*source, "y = b[q * padded + fxc_table_column(q, n0 + g, padded)];") == 1);
    CHECK(occurrences(*source, "reinterpret_cast<const double2*>(&table[h + i + 0][0] + fxc_table_column(h + i + 0, r, 32));") == 2);
    CHECK(occurrences(*source, "if (row < rows && r < D) {") == 1);
    // The table's copies and sums in both loops of the halves (wide rows, any rows).

    CHECK(occurrences(*source, "e[r] = fma(a.x, x, e[r]);") == 8);  // 4 samples a float4 of the tile, twice
    CHECK(occurrences(*source, "e[r] = fma(a.x, u, e[r]);") == 1);  // interleaved: a sample at a time
  }
  // Where it does not apply: float pairs (a device with slow float64), more than
  // kCudaStateTableMaxRows state rows or kCudaStateTableMaxCells cells, a float32 chain.
  for (const Case& c : kCases)
    if (std::string(c.name) == "w1_f32_8ch_pairs") {
      auto pairs = codegen::cuda_kernels(schedule(c));
      REQUIRE(pairs);
      CHECK((*pairs)[0].kind == codegen::CudaKernelKind::chain_chunked_scan);
      CHECK(!(*pairs)[0].state_table);
    }
  {
    ir::Chain chain;
    chain.state_precision = ir::StatePrecision::f64;
    ir::SosCascade sos;
    sos.sections.assign(24, design::Section{1, 0, 0, 0.5, 0});
    chain.stages.push_back(sos);
    CHECK(codegen::cuda_state_table_applies(chain, DType::f32, 1024));  // 48 rows
    CHECK(!codegen::cuda_state_table_applies(chain, DType::f32, (1 << 20) / 48 + 1));  // too many cells
    chain.state_precision = ir::StatePrecision::signal;
    CHECK(!codegen::cuda_state_table_applies(chain, DType::f32, 1024));  // float32 sections
    CHECK(codegen::cuda_state_table_applies(chain, DType::f64, 1024));
    chain.state_precision = ir::StatePrecision::pairs;
    CHECK(!codegen::cuda_state_table_applies(chain, DType::f32, 1024));
    chain.state_precision = ir::StatePrecision::f64;
    std::get<ir::SosCascade>(chain.stages[0]).sections.emplace_back(design::Section{1, 0, 0, 0.5, 0});
    CHECK(!codegen::cuda_state_table_applies(chain, DType::f32, 1024));  // 50 rows
  }
  {
    // The planar tile's halves take turns: each pass copies the next half in (one helper for
    // both), 16 bytes a lane where the rows are aligned and 4 where not, in two loops, and waits
    // for all but the newest group; a thread reads its row 4 samples at a time and the output
    // pass stores 16 bytes a lane where it can, through its wide rows' pointers read once; a
    // whole half in the wide loop runs without a bound a vector; interleaved, a thread's inputs a
    // block ahead through its row of 33 in the same shared memory.
    auto source = codegen::emit_cuda_source(w1);
    REQUIRE(source);
    CHECK(occurrences(*source, "__device__ inline void fxc_copy_async(") == 1);
    CHECK(occurrences(*source, "fxc_copy_async<16>(&tile[i][h + c0]") == 2);
    CHECK(occurrences(*source, "fxc_copy_async<sizeof(float)>(&tile[i][h + lane % 16]") == 2);
    CHECK(occurrences(*source, "fxc_copy_wait<1>();") == 4);
    CHECK(occurrences(*source, "j += " + std::to_string(codegen::kCudaTileHalf) + ")") == 4);
    // chunk_states' table sums in both loops (2); the output pass's whole half, the wide loop's
    // last half and the narrow loop (3).
    CHECK(occurrences(*source, "const float4 q = *reinterpret_cast<const float4*>(&tile[threadIdx.x][h + i]);") == 5);
    CHECK(occurrences(*source, "if (count == " + std::to_string(codegen::kCudaTileHalf) + ") {") == 1);
    CHECK(occurrences(*source, "wide_in[r] = fxc_global_pointer(in + row_at[i]);") == 2);
    CHECK(occurrences(*source, "wide_out[r] = fxc_global_pointer(out + row_at[i]);") == 1);
    CHECK(occurrences(*source, "*reinterpret_cast<float4*>(wide_out[r] + m)") == 1);
    CHECK(occurrences(*source, "if (m < row_count[i]) out[row_at[i] + m] = tile[i][h + lane % 16];") == 1);
    CHECK(occurrences(*source, "__shared__ __align__(16) float tile[128][36];") == 2);
    // 16 bytes a lane only where every row and every group of 4 is 16-byte aligned.
    CHECK(occurrences(*source, "const bool wide = ((unsigned long long)in & 15) == 0 && ((unsigned long long)out & 15) == 0 && "
                               "channel_stride % 4 == 0 && samples % 4 == 0 && L % 4 == 0;") == 1);
    CHECK(occurrences(*source, "inputs " + std::to_string(codegen::kCudaSampleAhead) + " samples ahead") == 2);
    CHECK(occurrences(*source, "ahead[threadIdx.x][n - n0]") == 2);
  }
  for (const Case& c : kCases) {
    // float64 signals: a thread's 8 wide rows keep their input pointers, not their output ones
    // (16 more registers).
    if (std::string(c.name) != "w1_f64_4096ch") continue;
    auto source = codegen::emit_cuda_source(schedule(c));
    REQUIRE(source);
    CHECK(occurrences(*source, "const double* wide_in[8];") == 2);
    CHECK(occurrences(*source, "wide_out") == 0);
    CHECK(occurrences(*source, "*reinterpret_cast<double2*>(out + row_at[i] + m)") == 1);
  }
  for (const Case& c : kCases) {
    if (std::string(c.name) != "w1_f32_8ch_wavefront") continue;
    auto wave = codegen::cuda_kernels(schedule(c));
    REQUIRE(wave);
    REQUIRE(wave->size() == 1);
    CHECK((*wave)[0].wavefront);
    CHECK((*wave)[0].state_table);  // the zero-state pass sums with its table whatever the wavefront
    CHECK(codegen::cuda_launch((*wave)[0], 0, 8, 441000).block == codegen::kCudaBlockThreads);
    CHECK(codegen::cuda_launch((*wave)[0], 4, 8, 441000).block == codegen::kCudaWavefrontThreads);
    auto source = codegen::emit_cuda_source(schedule(c));  // a whole tile's copies, then the wait
    REQUIRE(source);
    CHECK(occurrences(*source, "fxc_copy_wait<0>();") == 1);  // the output pass
    CHECK(occurrences(*source, "fxc_copy_wait<1>();") == 2);  // the table's halves, in both loops
  }
  ir::Graph stages = schedule(kCases[5]);  // 1 channel, but tanh and clip: not chunked
  auto s = codegen::cuda_kernels(stages);
  REQUIRE(s);
  for (const codegen::CudaKernelInfo& info : *s)
    if (info.kind != codegen::CudaKernelKind::sum) CHECK(info.kind == codegen::CudaKernelKind::chain_thread_per_channel);
  {
    auto source = codegen::emit_cuda_source(stages);  // one thread per channel: inputs ahead too
    REQUIRE(source);
    CHECK(occurrences(*source, "ahead[threadIdx.x][n - n0]") >= 1);
  }

  // Loops through one mix: one chain kernel each (fuse-loops), a thread per channel, no
  // feedback kernels; a short line lives in registers, a longer one is loaded kCudaLoopAhead
  // cells at a time, a block ahead.
  {
    const Case* loops = nullptr;
    for (const Case& c : kCases)
      if (std::string(c.name) == "fused_loops_f32_2ch") loops = &c;
    REQUIRE(loops);
    ir::Graph g = schedule(*loops);
    auto kernels = codegen::cuda_kernels(g);
    REQUIRE(kernels);
    int fused = 0;
    for (const codegen::CudaKernelInfo& info : *kernels) {
      CHECK(info.kind != codegen::CudaKernelKind::feedback);
      const auto* chain = std::get_if<ir::Chain>(&g.node(info.node).op);
      if (!chain || !ir::has_loop(chain->stages)) continue;
      ++fused;
      CHECK(info.kind == codegen::CudaKernelKind::chain_thread_per_channel);
      CHECK(chain->reason.find("the loop runs in this kernel") != std::string::npos);
    }
    CHECK(fused == 3);
    auto source = codegen::emit_cuda_source(g);
    REQUIRE(source);
    CHECK(occurrences(*source, "if (len0 < " + std::to_string(2 * codegen::kCudaLoopAhead) + ") {") == 3);
    // The L2 prefetch is nothing on the emulation: its guard keeps it inside the signal (the
    // 8 samples kCudaLoopPrefetch on), in both of a loop's forms.
    const std::string later = std::to_string(codegen::kCudaLoopPrefetch), ahead = std::to_string(codegen::kCudaLoopAhead);
    CHECK(occurrences(*source, "if (n + " + later + " + " + ahead + " <= samples) {") == 3 * 2);
    CHECK(occurrences(*source, "fxc_prefetch_l2(x + (n + " + later + " + " + std::to_string(codegen::kCudaLoopAhead - 1) +
                             ") * sample_stride);") == 3 * 2);
    CHECK(occurrences(*source, "if (sample_stride == 1) fxc_prefetch_l2(x + n + " + later + ");") == 3 * 2);
    // The shift into the registers: each loop's 8 samples of a block and its last ones.
    CHECK(occurrences(*source, "cell14 = shift14 ? cell14 : (newest14 ? mix : cell14);") == 3 * (codegen::kCudaLoopAhead + 1));
    // The three loops read x alone: one launch runs them side by side, each loop's body a
    // __device__ function that the side kernel and the loop's own entry call.
    const std::vector<codegen::CudaSideBySide> sides = codegen::cuda_side_by_side(g, *kernels);
    REQUIRE(sides.size() == 1);
    CHECK(sides[0].members.size() == 3);
    CHECK(sides[0].entry.parameters.size() == 3 * (*kernels)[sides[0].members[0]].entries[0].parameters.size());
    CHECK(occurrences(*source, "extern \"C\" __global__ void " + sides[0].symbol + "(") == 1);
    CHECK(occurrences(*source, "__device__ __noinline__ void fxc_chain_") == 3);
    CHECK(occurrences(*source, "_run(b * blockDim.x + threadIdx.x, nullptr, in_") == 3);  // loops: no row ahead
    CHECK(occurrences(*source, "_run((long long)blockIdx.x * blockDim.x + threadIdx.x, nullptr, in, out,") == 3);
    CHECK(occurrences(*source, "(void)ahead;  // a loop keeps no row of inputs ahead") == 3);
    CHECK(codegen::cuda_side_launch({130, 3, 0}).grid == 3);  // 2 + 1 + none
    CHECK(codegen::cuda_side_launch({130, 3, 0}).block == codegen::kCudaBlockThreads);

    // gpu_fuse_loops=0 keeps the loops' feedback nodes: a read and a write kernel each.
    DiagnosticEngine diags;
    passes::PassContext context{diags, {48000.0, 2, DType::f32}};
    context.target = passes::cuda_target();
    REQUIRE_FALSE(context.thresholds.set("gpu_fuse_loops", "0"));
    auto unfused = passes::run_pipeline(test::fused_loops_graph(), context);
    REQUIRE_MESSAGE(unfused, diags.str());
    auto apart = codegen::cuda_kernels(*unfused);
    REQUIRE(apart);
    int feedbacks = 0;
    for (const codegen::CudaKernelInfo& info : *apart) {
      feedbacks += info.kind == codegen::CudaKernelKind::feedback;
      if (const auto* chain = std::get_if<ir::Chain>(&unfused->node(info.node).op)) CHECK_FALSE(ir::has_loop(chain->stages));
    }
    CHECK(feedbacks == 3);
  }

  // A FIR of 300 taps alone in its chain: FFT overlap-save, 2048 points (4x the taps, rounded
  // up), the spectrum in the tables argument; forced direct, the tiled kernel.
  for (const Case& c : kCases) {
    if (std::string(c.name).rfind("long_fir", 0) != 0) continue;
    auto fft = codegen::cuda_kernels(schedule(c));
    REQUIRE(fft);
    REQUIRE(fft->size() == 1);
    CHECK((*fft)[0].kind == codegen::CudaKernelKind::fir_fft);
    CHECK((*fft)[0].fft_length == 2048);
    CHECK((*fft)[0].fir_taps == 300);
    CHECK((*fft)[0].entries[0].synchronizes);
    CHECK(codegen::cuda_launch((*fft)[0], 0, 2, 480000).grid == 2 * 138);  // 275 segments of 2048 - 299, in pairs
    CHECK(codegen::cuda_launch((*fft)[0], 0, 2, 480000).block == codegen::kCudaFftThreads);
  }

  // 5000 taps: partitioned, with the longest FFT; the spectra pass takes the pairs of the
  // segments 1 - PARTS .. the last output pair's end, the inverse pass the output pairs.
  for (const Case& c : kCases) {
    if (std::string(c.name).rfind("very_long_fir", 0) != 0) continue;
    CAPTURE(c.name);
    auto kernels = codegen::cuda_kernels(schedule(c));
    REQUIRE(kernels);
    REQUIRE(kernels->size() == 1);
    const codegen::CudaKernelInfo& k = (*kernels)[0];
    const bool f32 = c.dtype == DType::f32;
    CHECK(k.kind == codegen::CudaKernelKind::fir_partitioned);
    CHECK(k.fft_length == (f32 ? 4096 : 2048));
    CHECK(codegen::cuda_fir_partitions(k) == (f32 ? 3 : 5));
    REQUIRE(k.entries.size() == 3);
    CHECK(k.entries[1].symbol == k.symbol);  // the entry that writes the output
    // 480000 samples: 235 segments of 2048 (float32), 469 of 1024 (float64).
    CHECK(codegen::cuda_fir_spectra(k, 480000) == (f32 ? 236 + 2 : 470 + 4));
    CHECK(codegen::cuda_launch(k, 0, 2, 480000).grid == 2 * (f32 ? 119 : 237));
    CHECK(codegen::cuda_launch(k, 1, 2, 480000).grid == 2 * (f32 ? 118 : 235));
    CHECK(codegen::cuda_launch(k, 2, 2, 480000).grid == 2);
    CHECK(codegen::cuda_launch(k, 1, 2, 1).grid == 2);
    CHECK(codegen::cuda_fir_spectra(k, 1) == (f32 ? 4 : 6));
  }

  // The same 300-tap FIR inside a loop of 400 samples runs direct: the loop's passes are
  // shorter than one FFT segment (1749 outputs).
  {
    ir::Graph looped = test::looped_fir_graph();
    DiagnosticEngine diags;
    passes::PassContext context{diags, {48000.0, 2, DType::f32}};
    context.target = passes::cuda_target();
    auto scheduled = passes::run_pipeline(looped, context);
    REQUIRE_MESSAGE(scheduled, diags.str());
    auto kinds = codegen::cuda_kernels(*scheduled);
    REQUIRE(kinds);
    int firs = 0;
    for (const codegen::CudaKernelInfo& info : *kinds) {
      CHECK(info.kind != codegen::CudaKernelKind::fir_fft);
      firs += info.kind == codegen::CudaKernelKind::fir_tiled;
    }
    CHECK(firs == 1);
    for (const ir::Node& node : scheduled->nodes())
      if (const auto* chain = std::get_if<ir::Chain>(&node.op); chain && chain->stages.size() == 1)
        CHECK(chain->reason.find("FIR 300 taps: direct: inside a loop") != std::string::npos);
  }

  // A graph scheduled for the CPU is refused with a reason, not miscompiled.
  DiagnosticEngine diags;
  passes::PassContext context{diags, {48000.0, 2, DType::f64}};
  context.target = passes::host_target();
  auto cpu = passes::run_pipeline(test::vocal_graph(), context);
  REQUIRE(cpu);
  auto refused = codegen::emit_cuda_source(*cpu);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("--target cuda") != std::string::npos);
}

ir::Graph wide_state_graph() {
  Flow y = input("x");
  for (int i = 0; i < 130; ++i) y = y | peaking(Frequency{200.0 + 13.0 * i}, 2.0, 1_dB);
  return make_graph("wide_state", {output("y", y)});
}

// Which kernels go side by side: independent chains of one thread per channel, none that reads
// another's output, at most kCudaSideByMaxMembers; the side kernel's one shared row a thread.
TEST_CASE("CUDA source: side-by-side groups hold independent kernels, the readers of a member after them") {
  DiagnosticEngine diags;
  auto scheduled_in = [&](const ir::Graph& graph, DType dtype) {
    passes::PassContext context{diags, {48000.0, 2, dtype}};
    context.target = passes::cuda_target();
    auto scheduled = passes::run_pipeline(graph, context);
    REQUIRE_MESSAGE(scheduled, diags.str());
    return std::move(*scheduled);
  };
  // a, b and e read x; m reads a (a sum), c reads m: launched after the group, which runs
  // where a comes, before m.
  const ir::Graph mix = test::fx_graph(
      "input x : 2\n"
      "a = x | compressor(-10 dB, 4, 1 ms, 10 ms)\n"
      "m = x + a\n"
      "b = x | compressor(-12 dB, 4, 1 ms, 10 ms)\n"
      "c = m | compressor(-14 dB, 4, 1 ms, 10 ms)\n"
      "e = x | compressor(-18 dB, 4, 1 ms, 10 ms)\n"
      "output c + b + e\n",
      "mix");
  for (DType dtype : {DType::f64, DType::f32}) {
    CAPTURE(name(dtype));
    const ir::Graph scheduled = scheduled_in(mix, dtype);
    auto kernels = codegen::cuda_kernels(scheduled);
    REQUIRE(kernels);
    const auto sides = codegen::cuda_side_by_side(scheduled, *kernels);
    REQUIRE(sides.size() == 1);
    CHECK(sides[0].members.size() == 3);
    for (std::size_t i : sides[0].members) {
      CHECK((*kernels)[i].kind == codegen::CudaKernelKind::chain_thread_per_channel);
      CHECK(ir::holds<ir::Input>(scheduled.node(scheduled.node((*kernels)[i].node).operands[0])));
    }
    auto source = codegen::emit_cuda_source(scheduled);
    REQUIRE(source);
    CHECK(occurrences(*source, "__device__ __noinline__ void fxc_chain_") == 3);
    // A row of inputs ahead: in each member's own entry, once in the side kernel for all three,
    // and in c's kernel.
    const std::string t = dtype == DType::f64 ? "double" : "float";
    CHECK(occurrences(*source, "__shared__ " + t + " ahead[" + std::to_string(codegen::kCudaBlockThreads) + "][") == 5);
  }
  // Forty on one input: groups of at most kCudaSideByMaxMembers.
  std::string fx = "input x : 2\n", sum;
  for (int i = 0; i < 40; ++i) {
    fx += "c" + std::to_string(i) + " = x | compressor(" + std::to_string(-10 - i) + " dB, 4, 1 ms, 10 ms)\n";
    sum += (i ? " + c" : "c") + std::to_string(i);
  }
  const ir::Graph forty = scheduled_in(test::fx_graph(fx + "output " + sum + "\n", "forty"), DType::f32);
  auto kernels = codegen::cuda_kernels(forty);
  REQUIRE(kernels);
  const auto sides = codegen::cuda_side_by_side(forty, *kernels);
  REQUIRE(sides.size() == 2);
  CHECK(sides[0].members.size() == codegen::kCudaSideByMaxMembers);
  CHECK(sides[1].members.size() == 40 - codegen::kCudaSideByMaxMembers);
}

TEST_CASE("CUDA source: a wide state's carry walks are bounded by their block, so their registers fit it") {
  // 130 sections: 260 state rows, blocks of 288 threads (at most 227 registers each). ptxas,
  // unbounded, gave a 640-row walk 127 registers, more than a block of 640 has (102).
  ir::Graph g = schedule({"wide_state_f64_2ch", wide_state_graph, 2, DType::f64, 1 << 20});
  auto kernels = codegen::cuda_kernels(g);
  REQUIRE(kernels);
  auto source = codegen::emit_cuda_source(g);
  REQUIRE(source);
  int bounded = 0;
  for (const codegen::CudaKernelInfo& k : *kernels) {
    if (k.kind != codegen::CudaKernelKind::chain_chunked_scan) continue;
    CHECK(k.state_dimension == 260);
    for (std::size_t entry : {1, 3}) {
      CHECK(codegen::cuda_launch(k, entry, 2, 1 << 20).block == 288);
      bounded += occurrences(*source, "__launch_bounds__(288) " + k.entries[entry].symbol + "(");
    }
  }
  CHECK(bounded == 2);
}

// Cases named "CUDA toolkit: ..." need NVRTC (CTest cuda_toolkit, label cuda): without it
// they check the error, then skip, and CTest shows "Skipped".
TEST_CASE("CUDA toolkit: NVRTC compiles every case for sm_80 and sm_90, and ptxas accepts the PTX") {
  std::optional<std::string> version = codegen::nvrtc_version();
  if (!version) {
    REQUIRE_MESSAGE(!toolkit_expected(), "the CUDA toolkit is installed (" << kPtxas
                                                                            << ") but NVRTC does not load");
    auto r = codegen::compile_cuda("extern \"C\" __global__ void k() {}", "sm_90", false);
    REQUIRE_FALSE(r);
    CHECK(r.error().find("NVRTC not found (") == 0);
    test::skip("NVRTC is not installed: " + r.error());
    return;
  }
  MESSAGE("NVRTC " << *version);
  bool ptxas = fs::exists(kPtxas);
  if (!ptxas) MESSAGE(kPtxas << " not found: PTX is not assembled");
  for (const Case& c : kCases) {
    std::string name = c.name;
    CAPTURE(name);
    ir::Graph g = schedule(c);
    auto source = codegen::emit_cuda_source(g);
    REQUIRE(source);
    auto kernels = codegen::cuda_kernels(g);
    REQUIRE(kernels);
    for (const char* arch : {"sm_80", "sm_90"}) {
      CAPTURE(arch);
      auto ptx = codegen::compile_cuda(*source, arch, false);
      REQUIRE(ptx);
      CHECK(ptx->find(std::string(".target ") + arch) != std::string::npos);
      for (const codegen::CudaKernelInfo& k : *kernels)
        for (const codegen::CudaEntry& e : k.entries)
          CHECK_MESSAGE(ptx->find(".entry " + e.symbol + "(") != std::string::npos, e.symbol);
      auto cubin = codegen::compile_cuda(*source, arch, true);
      REQUIRE(cubin);
      CHECK(cubin->compare(0, 4, "\x7f" "ELF") == 0);
      for (const codegen::CudaKernelInfo& k : *kernels)
        for (const codegen::CudaEntry& e : k.entries) CHECK(cubin->find(e.symbol) != std::string::npos);
      if (ptxas) {
        auto [status, output] = run_ptxas(*ptx, arch);
        CHECK_MESSAGE(status == 0, "ptxas -arch=" << arch << ":\n" << output);
      }
    }
  }
}

TEST_CASE("a missing NVRTC and a bad architecture are clear errors") {
  auto missing = codegen::compile_cuda_with({"libnvrtc-fxc-test-missing.so"}, "extern \"C\" __global__ void k() {}",
                                            "sm_90", true);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().find("NVRTC not found (libnvrtc-fxc-test-missing.so") == 0);
  CHECK(missing.error().find("install the CUDA toolkit or use --target cpu") != std::string::npos);
  CHECK_FALSE(codegen::nvrtc_version_with({"libnvrtc-fxc-test-missing.so"}));

  auto bad_arch = codegen::compile_cuda("extern \"C\" __global__ void k() {}", "gfx90a", false);
  REQUIRE_FALSE(bad_arch);
  CHECK(bad_arch.error().find("invalid CUDA architecture 'gfx90a'") == 0);

}

TEST_CASE("CUDA toolkit: NVRTC's errors carry its log") {
  if (!codegen::nvrtc_version()) {
    CHECK_FALSE(toolkit_expected());
    test::skip("NVRTC is not installed: the compile-error log is not checked");
    return;
  }
  auto broken = codegen::compile_cuda("extern \"C\" __global__ void k(float* p) { p[0] = undeclared_name; }",
                                      "sm_90", false);
  REQUIRE_FALSE(broken);
  CHECK(broken.error().find("NVRTC failed to compile the CUDA source for sm_90") == 0);
  CHECK_MESSAGE(broken.error().find("undeclared_name") != std::string::npos, broken.error());
}

TEST_CASE("the CUDA driver status") {
  codegen::CudaDriverInfo none = codegen::query_cuda_driver({"libcuda-fxc-test-missing.so.1"});
  CHECK_FALSE(none.loaded);
  CHECK(codegen::cuda_status(none) == "no CUDA driver (libcuda-fxc-test-missing.so.1 not found)");

  std::string status = codegen::cuda_status();
  MESSAGE("cuda_status(): " << status);
  codegen::CudaDriverInfo info = codegen::query_cuda_driver();
  if (!info.loaded) {
    CHECK(status == "no CUDA driver (libcuda.so.1 not found)");
    CHECK_FALSE(codegen::cuda_device_arch());
    // --target cuda's error: the reason and what to do instead.
    auto device = open_cuda_device();
    REQUIRE_FALSE(device);
    CHECK(device.error() ==
          "no CUDA driver (libcuda.so.1 not found): --target cuda needs an NVIDIA GPU and its driver; use --target cpu");
  } else {
    CHECK(status.rfind("CUDA driver ", 0) == 0);
    for (const codegen::CudaDevice& d : info.devices) CHECK(d.major >= 1);
  }
}

// fxc run opens the device while it reads its inputs (open_cuda_device_early): the next open
// of that ordinal takes that device, or the error a direct open gives; an open of another
// ordinal opens its own, and a second early start while one waits does nothing. A device that
// opened is the process's: every later open of its ordinal gives it, and an early start for
// it does nothing. The trace tells a take (its wait) from an open.
TEST_CASE("open_cuda_device takes the device open_cuda_device_early opened") {
  auto waits = [] {
    std::string json = Trace::global().to_json();
    return static_cast<std::size_t>(occurrences(json, "\"wait for CUDA device\""));
  };
  Trace::global().enable();
  auto direct = open_cuda_device();
  const std::size_t before = waits();
  open_cuda_device_early();
  open_cuda_device_early();  // one is under way: nothing
  auto other = open_cuda_device(7);
  CHECK(waits() == before);
  // Without a driver nothing opened: the early start's error is taken (a wait). With one, the
  // device opened first is the process's, and the early start did nothing.
  const std::size_t taken = direct ? 0 : 1;
  auto early = open_cuda_device();
  CHECK(waits() == before + taken);
  auto again = open_cuda_device();  // taken already, or the process's device
  CHECK(waits() == before + taken);
  Trace::global().disable();
  REQUIRE(early.has_value() == direct.has_value());
  CHECK(again.has_value() == direct.has_value());
  CHECK_FALSE(other);
  if (!direct) {
    CHECK(early.error() == direct.error());
  } else {
    CHECK(early->get() == direct->get());
    CHECK(again->get() == direct->get());
  }
}

}  // namespace
}  // namespace fxc

#else
#pragma message("cuda_codegen_test.cpp: fxc_codegen_cuda is not linked into this test binary; its tests are compiled out")
#endif

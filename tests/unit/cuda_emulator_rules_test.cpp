// SPDX-License-Identifier: Apache-2.0
// The host emulation keeps the GPU's rules where its kernels could break them unseen
// (cuda_emulation_shim.h): an async copy (cp.async, the chunk passes' planar tile) lands only
// at the wait that covers its group; a misaligned one fails the launch; a block's shared memory
// holds nothing of the block before it; a kernel that reads past its buffer faults; barriers
// that a block's threads do not all reach fail the launch; a warp's matrix product (mma.sync,
// the state table's sums) takes each lane's one element of its operands. Each case is a small kernel with the generated
// source's own fxc_copy_async (codegen/cuda/emit_chunked_scan.cpp), right and wrong: without
// these rules every wrong one passed.
#include <doctest/doctest.h>

#include <csignal>
#include <cmath>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "codegen/cuda/kernel_emitters.h"
#include "expected_text.h"
#include "tests/unit/cuda_emulator.h"

namespace fxc::test {
namespace {

// `body` inside `__global__ void k(const float* in, float* out)`, after the generated async
// copies, on 2 blocks of 4 threads, with `in` the samples 1, 2, 3, ... from `in_offset` floats
// into a 16-byte aligned buffer; returns out[0 .. 8) or the launch's error. One source is one
// module (the emulator compiles each source once per process).
Expected<std::vector<float>, std::string> run_kernel(const std::string& body, bool synchronizes = true,
                                                     std::size_t in_offset = 0) {
  codegen::cuda_source::Writer w;
  codegen::cuda_source::emit_async_copy(w);
  const std::string source = w.str() + "__global__ void k(const float* in, float* out) {\n" + body + "\n}\n";
  EmulatedDevice device;
  auto module = device.load_module(source, {}, {{"k", {"const float*", "float*"}, synchronizes}});
  if (!module) return Unexpected{module.error()};
  auto function = device.function(*module, "k");
  if (!function) return Unexpected{function.error()};
  std::vector<float> samples(40, 0.0f);
  for (std::size_t i = in_offset; i < samples.size(); ++i) samples[i] = static_cast<float>(i - in_offset + 1);
  auto in = device.allocate(samples.size() * sizeof(float));
  auto out = device.allocate(8 * sizeof(float));
  REQUIRE(in);
  REQUIRE(out);
  REQUIRE(device.copy_to_device(*in, samples.data(), samples.size() * sizeof(float)));
  REQUIRE(device.fill_zero(*out, 8 * sizeof(float)));
  auto launched = device.launch(*function, {.grid = 2, .block = 4}, {*in + in_offset * sizeof(float), *out});
  std::vector<float> result(8);
  REQUIRE(device.copy_to_host(result.data(), *out, result.size() * sizeof(float)));
  device.release(*in);
  device.release(*out);
  if (!launched) return Unexpected{launched.error()};
  return result;
}

// Each thread copies in[4 * t + 4 * blockIdx.x] (16 bytes at once when `bytes` is 16) into its
// row, and thread t writes row t's first sample to out[4 * blockIdx.x + t].
std::string copy_then(const std::string& wait, int bytes = 4, const std::string& source = "in + 4 * (threadIdx.x + blockIdx.x)") {
  return "  __shared__ __align__(16) float row[4][4];\n"
         "  const int t = threadIdx.x;\n"
         "  fxc_copy_async<" + std::to_string(bytes) + ">(&row[t][0], " + source + ", true);\n"
         "  fxc_copy_commit();\n" +
         wait +
         "  __syncthreads();\n"
         "  out[4 * blockIdx.x + t] = row[t][0];\n";
}

// `body` inside `__global__ void k(const double* in, double* out)` after the generated state
// table's helpers (fxc_mma_f64), on one block of `block` threads, with in[i] = `in`'s; returns
// out[0 .. 2 block) or the launch's error.
Expected<std::vector<double>, std::string> run_mma_kernel(const std::string& body, const std::vector<double>& in_values,
                                                          int block = 64, bool synchronizes = true) {
  codegen::cuda_source::Writer w;
  codegen::cuda_source::emit_state_table_helpers(w);
  const std::string source = w.str() + "__global__ void k(const double* in, double* out) {\n" + body + "\n}\n";
  EmulatedDevice device;
  auto module = device.load_module(source, {}, {{"k", {"const double*", "double*"}, synchronizes}});
  if (!module) return Unexpected{module.error()};
  auto function = device.function(*module, "k");
  if (!function) return Unexpected{function.error()};
  const std::size_t outputs = 2 * static_cast<std::size_t>(block);
  auto in = device.allocate(in_values.size() * sizeof(double));
  auto out = device.allocate(outputs * sizeof(double));
  REQUIRE(in);
  REQUIRE(out);
  REQUIRE(device.copy_to_device(*in, in_values.data(), in_values.size() * sizeof(double)));
  REQUIRE(device.fill_zero(*out, outputs * sizeof(double)));
  auto launched = device.launch(*function, {.grid = 1, .block = block}, {*in, *out});
  std::vector<double> result(outputs);
  REQUIRE(device.copy_to_host(result.data(), *out, outputs * sizeof(double)));
  device.release(*in);
  device.release(*out);
  if (!launched) return Unexpected{launched.error()};
  return result;
}

// Two warps' matrix products: A (16 x 4, warp w's rows 8 w ..) in a shared tile, B (4 x 16,
// warp w's columns 8 w ..) in a state table of 16 columns laid out as the generated kernels lay
// it (fxc_table_column), C = 1000 t + (0, 1) for thread t; out[2 t], out[2 t + 1] = thread t's
// two of D = A B + C. `product` is the call that thread t makes.
std::string mma_kernel(const std::string& product) {
  return "  __shared__ double tile[16][4];\n"
         "  __shared__ double table[4][16];\n"
         "  const int t = threadIdx.x;\n"
         "  tile[t / 4][t % 4] = in[t];\n"
         "  table[t / 16][fxc_table_column(t / 16, t % 16, 16)] = in[64 + t];\n"
         "  __syncthreads();\n"
         "  double c[2] = {1000.0 * t, 1000.0 * t + 1};\n" +
         product +
         "  out[2 * t] = c[0];\n"
         "  out[2 * t + 1] = c[1];\n";
}

// A's and B's elements (small integers: every product and sum exact), and D as the PTX ISA
// lays out mma.m8n8k4's fragments: thread t of warp w = t / 32, lane l = t % 32, holds row
// l / 4 and columns 2 (l % 4) and the next.
std::vector<double> mma_inputs() {
  std::vector<double> in(128);
  for (int i = 0; i < 64; ++i) in[static_cast<std::size_t>(i)] = (i * 7) % 11 - 5;        // A[i / 4][i % 4]
  for (int i = 0; i < 64; ++i) in[static_cast<std::size_t>(64 + i)] = (i * 5) % 13 - 6;  // B[i / 16][i % 16]
  return in;
}
std::vector<double> mma_expected(const std::vector<double>& in) {
  std::vector<double> d(128);
  for (int t = 0; t < 64; ++t) {
    const int w = t / 32, g = t % 32 / 4, q = t % 4;
    for (int i = 0; i < 2; ++i) {
      double sum = 1000.0 * t + i;
      for (int k = 0; k < 4; ++k)
        sum += in[static_cast<std::size_t>(4 * (8 * w + g) + k)] * in[static_cast<std::size_t>(64 + 16 * k + 8 * w + 2 * q + i)];
      d[static_cast<std::size_t>(2 * t + i)] = sum;
    }
  }
  return d;
}

}  // namespace

TEST_CASE("CUDA emulation: a warp's float64 matrix product takes each lane's elements, as mma.sync does") {
  const std::vector<double> in = mma_inputs();
  const std::string generated = "  fxc_mma_f64(c, &tile[8 * (t / 32)][0], 4, &table[0][0], 16, 8 * (t / 32));\n";
  SUBCASE("the generated kernels' call (fxc_mma_f64): A B + C, laid out as the PTX ISA says") {
    auto out = run_mma_kernel(mma_kernel(generated), in);
    REQUIRE(out);
    CHECK(*out == mma_expected(in));
  }
  SUBCASE("a lane that gives the wrong element of A (its transpose's) gets a wrong product") {
    // What the host's own loop of the whole row and column (the emulation before) could not see.
    auto out = run_mma_kernel(
        mma_kernel("  fxc_emu_mma_m8n8k4_f64(c, tile[8 * (t / 32) + t % 4][t % 32 / 4 % 4],\n"
                   "                         table[t % 4][fxc_table_column(t % 4, 8 * (t / 32) + t % 32 / 4, 16)]);\n"),
        in);
    REQUIRE(out);
    CHECK(*out != mma_expected(in));
  }
  SUBCASE("a lane that does not reach it fails the launch, not hangs") {
    auto out = run_mma_kernel(mma_kernel("  if (t == 5) return;\n" + generated), in);
    REQUIRE_FALSE(out);
    CHECK(out.error().find("wait at different barriers") != std::string::npos);
    auto next = run_mma_kernel(mma_kernel(generated), in);  // the next launch is not blamed
    REQUIRE(next);
    CHECK(*next == mma_expected(in));
  }
  SUBCASE("a block whose last warp is not whole fails the launch") {
    auto out = run_mma_kernel(mma_kernel(generated), in, 48);
    REQUIRE_FALSE(out);
    CHECK(out.error().find("fewer than 32 threads") != std::string::npos);
  }
  SUBCASE("in a kernel launched as one that does not synchronize, it fails the launch") {
    auto out = run_mma_kernel("  const int t = threadIdx.x;\n  double c[2] = {0, 0};\n"
                              "  fxc_emu_mma_m8n8k4_f64(c, in[t], in[64 + t]);\n  out[2 * t] = c[0];\n",
                              in, 64, false);
    REQUIRE_FALSE(out);
    CHECK(out.error().find("does not synchronize") != std::string::npos);
  }
}

TEST_CASE("CUDA emulation: an async copy lands at its wait, and reads as NaN before it") {
  SUBCASE("waited for: the samples") {
    auto out = run_kernel(copy_then("  fxc_copy_wait<0>();\n"));
    REQUIRE(out);
    CHECK(*out == std::vector<float>{1, 5, 9, 13, 5, 9, 13, 17});
  }
  SUBCASE("16 bytes at once, aligned") {
    auto out = run_kernel(copy_then("  fxc_copy_wait<0>();\n", 16));
    REQUIRE(out);
    CHECK(*out == std::vector<float>{1, 5, 9, 13, 5, 9, 13, 17});
  }
  SUBCASE("not waited for: NaN, where the host's load and store would have hidden it") {
    auto out = run_kernel(copy_then(""));
    REQUIRE(out);
    for (float x : *out) CHECK(std::isnan(x));
  }
  SUBCASE("a wait that leaves the newest group under way: that group's copy reads as NaN") {
    auto out = run_kernel(copy_then("  fxc_copy_wait<1>();\n"));
    REQUIRE(out);
    for (float x : *out) CHECK(std::isnan(x));
  }
  SUBCASE("two groups, the older waited for") {
    auto out = run_kernel(
        "  __shared__ float row[4][2];\n"
        "  const int t = threadIdx.x;\n"
        "  fxc_copy_async<4>(&row[t][0], in + t, true);\n"
        "  fxc_copy_commit();\n"
        "  fxc_copy_async<4>(&row[t][1], in + 8 + t, true);\n"
        "  fxc_copy_commit();\n"
        "  fxc_copy_wait<1>();\n"
        "  out[4 * blockIdx.x + t] = blockIdx.x == 0 ? row[t][0] : row[t][1];\n",
        false);
    REQUIRE(out);
    CHECK((*out)[0] == 1);
    CHECK((*out)[3] == 4);
    for (int i = 4; i < 8; ++i) CHECK(std::isnan((*out)[static_cast<std::size_t>(i)]));
  }
  SUBCASE("a copy not committed is not waited for") {
    auto out = run_kernel(
        "  __shared__ float row[4];\n"
        "  fxc_copy_async<4>(&row[threadIdx.x], in + threadIdx.x, true);\n"
        "  fxc_copy_wait<0>();\n"
        "  out[4 * blockIdx.x + threadIdx.x] = row[threadIdx.x];\n",
        false);
    REQUIRE(out);
    for (float x : *out) CHECK(std::isnan(x));
  }
  SUBCASE("a destination written before the copy reads as NaN until the wait, not as before") {
    auto out = run_kernel(
        "  __shared__ float row[4];\n"
        "  row[threadIdx.x] = 42;\n"
        "  fxc_copy_async<4>(&row[threadIdx.x], in + threadIdx.x, true);\n"
        "  fxc_copy_commit();\n"
        "  out[4 * blockIdx.x + threadIdx.x] = row[threadIdx.x];\n",
        false);
    REQUIRE(out);
    for (float x : *out) CHECK(std::isnan(x));
  }
  SUBCASE("a copy that is not valid writes zeros") {
    auto out = run_kernel(
        "  __shared__ float row[4];\n"
        "  fxc_copy_async<4>(&row[threadIdx.x], in + threadIdx.x, threadIdx.x < 2);\n"
        "  fxc_copy_commit();\n"
        "  fxc_copy_wait<0>();\n"
        "  out[4 * blockIdx.x + threadIdx.x] = row[threadIdx.x];\n",
        false);
    REQUIRE(out);
    CHECK(*out == std::vector<float>{1, 2, 0, 0, 1, 2, 0, 0});
  }
}

TEST_CASE("CUDA emulation: a misaligned async copy fails the launch, as the GPU faults") {
  const std::string body = copy_then("  fxc_copy_wait<0>();\n", 16);
  SUBCASE("the source") {
    auto out = run_kernel(body, true, 1);  // `in` 4 bytes past a 16-byte boundary
    REQUIRE_FALSE(out);
    CHECK(out.error().find("misaligned address") != std::string::npos);
    // The next launch of the same module is not blamed for it.
    auto next = run_kernel(body, true, 0);
    REQUIRE(next);
    CHECK(*next == std::vector<float>{1, 5, 9, 13, 5, 9, 13, 17});
  }
  SUBCASE("the destination") {
    auto out = run_kernel(
        "  __shared__ __align__(16) float row[4][8];\n"
        "  fxc_copy_async<16>(&row[threadIdx.x][1], in + 4 * threadIdx.x, true);\n"
        "  fxc_copy_commit();\n"
        "  fxc_copy_wait<0>();\n"
        "  out[4 * blockIdx.x + threadIdx.x] = row[threadIdx.x][1];\n",
        false);
    REQUIRE_FALSE(out);
    CHECK(out.error().find("misaligned address") != std::string::npos);
  }
}

TEST_CASE("CUDA emulation: a block's shared memory holds nothing of the block before it") {
  // Block 0 writes its row; block 1 reads without writing: NaN (a GPU gives it whatever was there).
  for (bool synchronizes : {true, false}) {
    CAPTURE(synchronizes);
    auto out = run_kernel(
        "  __shared__ float row[4];\n"
        "  if (blockIdx.x == 0) row[threadIdx.x] = in[threadIdx.x];\n"
        "  out[4 * blockIdx.x + threadIdx.x] = row[threadIdx.x];\n",
        synchronizes);
    REQUIRE(out);
    CHECK((*out)[0] == 1);
    CHECK((*out)[3] == 4);
    for (int i = 4; i < 8; ++i) CHECK(std::isnan((*out)[static_cast<std::size_t>(i)]));
  }
}

TEST_CASE("CUDA emulation: a kernel that reads past its buffer's end faults") {
  // In a child process, which the fault stops: a read 32 bytes past an 8-float buffer.
  EmulatedDevice device;
  auto in = device.allocate(8 * sizeof(float)), out = device.allocate(8 * sizeof(float));
  REQUIRE(in);
  REQUIRE(out);
  for (int reach : {0, 16}) {  // within the buffer, then past it
    CAPTURE(reach);
    const std::string source = "__global__ void k(const float* in, float* out) { out[threadIdx.x] = in[threadIdx.x + " +
                               std::to_string(reach) + "]; }\n";
    auto m = device.load_module(source, {}, {{"k", {"const float*", "float*"}, false}});
    REQUIRE(m);
    auto f = device.function(*m, "k");
    REQUIRE(f);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      std::signal(SIGSEGV, SIG_DFL);  // not doctest's crash handler, nor a sanitizer's report
      (void)device.launch(*f, {.grid = 1, .block = 8}, {*in, *out});
      _exit(0);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    if (reach == 0) CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    else CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV));
  }
  device.release(*in);
  device.release(*out);
}

TEST_CASE("CUDA emulation: barriers its threads do not all reach fail the launch, and a missing one shows") {
  SUBCASE("a thread that returns before the barrier the others wait at") {
    auto out = run_kernel(
        "  if (threadIdx.x == 2) return;\n"
        "  __syncthreads();\n"
        "  out[4 * blockIdx.x + threadIdx.x] = 1;\n");
    REQUIRE_FALSE(out);
    CHECK(out.error().find("a thread ended while others of its block waited at __syncthreads") != std::string::npos);
    auto next = run_kernel(copy_then("  fxc_copy_wait<0>();\n"));  // the next launch is not blamed
    REQUIRE(next);
  }
  SUBCASE("__syncthreads in a kernel launched as one that does not synchronize") {
    auto out = run_kernel("  __syncthreads();\n  out[threadIdx.x] = 1;\n", false);
    REQUIRE_FALSE(out);
    CHECK(out.error().find("does not synchronize") != std::string::npos);
  }
  SUBCASE("a value read without a barrier after its write, whichever thread writes it") {
    // Thread `writer` writes v again after the barrier, and every thread reads v without
    // another: a thread whose turn comes before the writer's reads the old value, in every
    // run (the turns' order is fixed; it moves round the block from barrier to barrier and
    // block to block, and goes up the block in one launch and down it in the next).
    for (int writer = 0; writer < 4; ++writer) {
      CAPTURE(writer);
      auto body = [&](bool barrier) {
        const std::string w = std::to_string(writer);
        return "  __shared__ float v;\n  const int t = threadIdx.x;\n  if (t == " + w + ") v = 1;\n  __syncthreads();\n" +
               "  if (t == " + w + ") v = 10;\n" + (barrier ? "  __syncthreads();\n" : "") +
               "  out[4 * blockIdx.x + t] = v;\n";
      };
      int stale = 0;
      for (int launch = 0; launch < 2; ++launch) {
        auto out = run_kernel(body(false));
        REQUIRE(out);
        for (float v : *out) stale += v == 1;
      }
      CHECK(stale > 0);
      for (int launch = 0; launch < 2; ++launch) {  // with the barrier, every launch reads 10
        auto out = run_kernel(body(true));
        REQUIRE(out);
        for (float v : *out) CHECK(v == 10);
      }
    }
  }
}

}  // namespace fxc::test

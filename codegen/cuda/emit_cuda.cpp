// SPDX-License-Identifier: Apache-2.0
#include "codegen/cuda/emit_cuda.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "codegen/chain_layout.h"
#include "codegen/cuda/kernel_emitters.h"
#include "codegen/cuda/kernel_source.h"

namespace fxc::codegen {
namespace {

using namespace cuda_source;  // the emitters' shared pieces (kernel_source.h)

// fxc_prefetch_l2: brings the cache line at `p` into L2 (PTX prefetch.L2 on a generic
// address), for a serial kernel whose next block would otherwise wait a DRAM latency for its
// inputs. It returns nothing, so host C++ (the emulation) compiles it as nothing.
void emit_prefetch(Writer& w) {
  w.line("// A fused loop's thread reads its inputs a few samples at a time, each block after the last:");
  w.line("// the inputs of a later block are brought into L2 first, so that its loads wait an L2");
  w.line("// latency, not a DRAM one.");
  w.open("__device__ inline void fxc_prefetch_l2(const void* p) {");
  w.line("#if defined(__CUDACC__)");
  w.line("asm volatile(\"prefetch.L2 [%0];\" : : \"l\"(p));");
  w.line("#else");
  w.line("(void)p;");
  w.line("#endif");
  w.close();
}

// A fused loop's samples in blocks of kCudaLoopAhead, from `n` while a whole block remains; the
// caller runs the rest one at a time. Each sample reads the line's cell that was written a delay
// ago, then writes it. One sample at a time through memory, every sample would wait a memory
// latency for its cell and its input (ptxas cannot tell the next cell from the one just
// written), on top of the body's own serial latency. Here each block's inputs are loaded while
// the block before computes, and brought into L2 kCudaLoopPrefetch samples before that. The
// line's cells: with `registers` (a line shorter than two blocks, emit_loop_registers) they are
// in registers; else they are loaded with the inputs, a block ahead: the next block's cells lie
// past the ones this block writes, so no write of this block reaches them.
template <class OneSample>
void emit_loop_blocks(Writer& w, const Types& ty, std::size_t read, int registers, const OneSample& one_sample) {
  const int ahead = kCudaLoopAhead;
  const std::string len = ChainBody::delay_len(read), ring = ChainBody::ring(read), pos = ChainBody::pos(read);
  const std::string& T = ty.compute.t;  // the line's cells
  const std::string& S = ty.signal.t;
  const bool cells_ahead = registers == 0;
  auto load = [&](const std::string& prefix, const std::string& first_sample, const std::string& first_cell) {
    if (cells_ahead) w.line("long long at = " + first_cell + ";");
    for (int j = 0; j < ahead; ++j) {
      if (cells_ahead) {
        if (j > 0) w.line("at = at + 1 >= " + len + " ? 0 : at + 1;");
        w.line(prefix + "line" + str(j) + " = " + ring + "[at];");
      }
      w.line(prefix + "in" + str(j) + " = x[(" + first_sample + " + " + str(j) + ") * sample_stride];");
    }
  };
  auto declare = [&](const std::string& type, const std::string& name, const std::string& init) {
    std::string line = type + " ";
    for (int j = 0; j < ahead; ++j) line += std::string(j ? ", " : "") + name + str(j) + init;
    w.line(line + ";");
  };
  w.open("if (samples >= " + str(ahead) + ") {");
  w.line("// blocks of " + str(ahead) + " samples: the next block's inputs" + (cells_ahead ? " and line cells" : "") +
         " load while this one computes");
  if (cells_ahead) declare(T, "line", "");
  declare(S, "in", "");
  w.open("{");
  load("", "n", pos);
  w.close();
  w.open("for (; n + " + str(ahead) + " <= samples; n += " + str(ahead) + ") {");
  if (cells_ahead) declare(T, "next_line", " = 0");
  declare(S, "next_in", " = 0");
  const std::string later = str(kCudaLoopPrefetch);
  // A planar block of 8 samples lies in one or two cache lines; an interleaved one in 8 rows.
  w.open("if (n + " + later + " + " + str(ahead) + " <= samples) {  // the block " + later + " samples on, into L2");
  w.line("if (sample_stride == 1) fxc_prefetch_l2(x + n + " + later + ");");
  w.open("else {");
  for (int j = 0; j < ahead; ++j) w.line("fxc_prefetch_l2(x + (n + " + later + " + " + str(j) + ") * sample_stride);");
  w.close();
  w.close();
  w.open("if (n + " + str(2 * ahead) + " <= samples) {  // the next block");
  load("next_", "n + " + str(ahead),
       pos + " + " + str(ahead) + " >= " + len + " ? " + pos + " + " + str(ahead) + " - " + len + " : " + pos + " + " +
           str(ahead));
  w.close();
  for (int j = 0; j < ahead; ++j) {
    w.open("{");
    one_sample("(n + " + str(j) + ")", "in" + str(j),
               cells_ahead ? LoopAccess{"line" + str(j)} : LoopAccess{"", registers});
    w.close();
  }
  for (int j = 0; j < ahead; ++j)
    w.line((cells_ahead ? "line" + str(j) + " = next_line" + str(j) + ", " : std::string()) + "in" + str(j) +
           " = next_in" + str(j) + ";");
  w.close();
  w.close();
}

// A fused loop whose line is shorter than two blocks of kCudaLoopAhead: a block's cells cannot
// be loaded a block ahead (some are written within the block before), and through memory a
// sample would wait for the write before it every `len` samples. The whole line lives in
// registers instead, loaded at the start and stored at the end; each sample reads the oldest and
// shifts the mix in (LoopAccess): 2 x kCudaLoopAhead - 1 registers. Blocks as emit_loop_blocks,
// then the last samples one at a time.
template <class OneSample>
void emit_loop_registers(Writer& w, const Types& ty, std::size_t read, const OneSample& one_sample) {
  const int cells = 2 * kCudaLoopAhead - 1;
  const std::string len = ChainBody::delay_len(read), ring = ChainBody::ring(read), pos = ChainBody::pos(read);
  const std::string& T = ty.compute.t;
  w.line("// the line's " + len + " cells in registers, oldest first");
  for (int j = 0; j < cells; ++j)
    w.line(T + " cell" + str(j) + " = 0;  const bool shift" + str(j) + " = " + str(j + 1) + " < " + len + ", newest" +
           str(j) + " = " + str(j + 1) + " == " + len + ";");
  auto walk = [&](bool store) {
    w.open("{");
    w.line("long long at = " + pos + ";");
    for (int j = 0; j < cells; ++j) {
      w.open("if (" + str(j) + " < " + len + ") {");
      w.line(store ? ring + "[at] = cell" + str(j) + ";" : "cell" + str(j) + " = " + ring + "[at];");
      w.line("at = at + 1 >= " + len + " ? 0 : at + 1;");
      w.close();
    }
    w.close();
  };
  walk(false);
  emit_loop_blocks(w, ty, read, cells, one_sample);
  w.open("for (; n < samples; ++n) {");
  one_sample("n", "", LoopAccess{"", cells});
  w.close();
  walk(true);
}


// A chain_thread_per_channel kernel's parameters (entry 0), as (type, name), each name with
// `suffix` (a side-by-side kernel's member m: "_m"). The one list that entries_of, the
// kernel's signature and a side-by-side kernel's take.
using Parameters = std::vector<std::pair<std::string, std::string>>;
Parameters thread_per_channel_params(const CudaKernelInfo& k, const std::string& suffix = {}) {
  const std::string t = scalar_of(k.dtype).t, s = scalar_of(k.state_dtype).t;
  Parameters out = {{"const " + t + "*", "in"},          {t + "*", "out"},
                    {"long long", "channels"},           {"long long", "samples"},
                    {"long long", "channel_stride"},     {"long long", "sample_stride"},
                    {"const " + s + "*", "params"},      {"const long long*", "delay_lengths"},
                    {s + "*", "state"},                  {s + "* const*", "delay_lines"},
                    {"long long*", "positions"}};
  for (auto& parameter : out) parameter.second += suffix;
  return out;
}

// `parameters` one a line, each pointer __restrict__ (no two of a kernel's buffers overlap),
// the last followed by `end` (", " between lists, ") {" to open the body).
void emit_parameters(Writer& w, const Parameters& parameters, const std::string& end) {
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const auto& [type, name] = parameters[i];
    w.line(type + (type.back() == '*' ? " __restrict__ " : " ") + name + (i + 1 < parameters.size() ? "," : end));
  }
}

// The names of `parameters`, each after ", " (the arguments of a call that passes them on).
std::string argument_names(const Parameters& parameters) {
  std::string names;
  for (const auto& parameter : parameters) names += ", " + parameter.second;
  return names;
}

// `beside`: the kernel is a member of a side-by-side launch (CudaSideBySide): its body is the
// __device__ function <symbol>_run(c, ...) for channel c, and its __global__ calls it.
void emit_thread_per_channel(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain, bool beside) {
  Types ty = types_of(k, chain);
  const Scalar& s = ty.compute;
  ChainBody body(chain, s);
  const ChainLayout& l = body.layout();
  header(w, k, chain, l, ty);
  if (beside) {
    // Not inlined: the side-by-side kernel and this kernel's own entry call one body, which
    // ptxas then compiles once (Freeverb's 8 combs: 5.0 s of nvcc against 6.9 inlined, 80
    // registers against 92; a call a thread, not a sample). Its row of inputs ahead comes from
    // the caller's shared memory, which the side-by-side kernel declares once for all of its
    // members (declared here, each member's would add up in the side kernel's blocks).
    w.line("// It runs beside other kernels (" + k.symbol + "_run is called by a side-by-side kernel);");
    w.line("// `ahead`: this thread's row of " + str(kCudaSampleAhead + 1) + " in the caller's shared memory.");
    w.open("__device__ __noinline__ void " + k.symbol + "_run(const long long c, " + ty.signal.t + "* const ahead,");
    emit_parameters(w, thread_per_channel_params(k), ") {");
  } else {
    w.open("extern \"C\" __global__ void " + k.symbol + "(");
    emit_parameters(w, thread_per_channel_params(k), ") {");
    w.line("const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
  }
  w.line("if (c >= channels) return;");
  body.load_params(w);
  if (l.state_per_channel > 0) w.line(s.t + "* const st = state + c * " + str(l.state_per_channel) + ";");
  body.load_state(w, ChainBody::Start::state);
  w.line("const " + ty.signal.t + "* const x = in + c * channel_stride;");
  w.line(ty.signal.t + "* const y = out + c * channel_stride;");
  // Sample `n` from the input `input` (a read of x by default).
  auto one_sample = [&](const std::string& n, const std::string& input, const LoopAccess& loop) {
    w.line(ty.value.t + " v = " + ty.load(input.empty() ? "x[" + n + " * sample_stride]" : input) + ";");
    body.sample(w, static_cast<std::size_t>(-1), loop);
    w.line("y[" + n + " * sample_stride] = " + ty.store(body.result()) + ";");
  };
  const int read = body.loop_read_stage();
  if (read < 0) {
    // A row per thread of the block cuda_launch launches (kCudaBlockThreads).
    if (!beside)
      w.line("__shared__ " + ty.signal.t + " ahead[" + str(kCudaBlockThreads) + "][" + str(kCudaSampleAhead + 1) +
             "];  // padded: no bank conflicts");
    emit_samples_ahead(w, ty, "0", "samples", beside ? "ahead" : "ahead[threadIdx.x]",
                       [&](const std::string& n, const std::string& input) { one_sample(n, input, {}); });
  } else {
    if (beside) w.line("(void)ahead;  // a loop keeps no row of inputs ahead");
    // A fused loop: its line in registers where it is short, else in blocks that load ahead,
    // then the last samples of a call one at a time (in registers for a short line, through
    // memory otherwise).
    const auto r = static_cast<std::size_t>(read);
    w.line("long long n = 0;");
    w.open("if (" + ChainBody::delay_len(r) + " < " + str(2 * kCudaLoopAhead) + ") {");
    emit_loop_registers(w, ty, r, one_sample);
    w.close();
    w.open("else {");
    emit_loop_blocks(w, ty, r, 0, one_sample);
    w.close();
    w.open("for (; n < samples; ++n) {");
    one_sample("n", "", {});
    w.close();
  }
  body.store_state(w, "st");
  w.close();
  if (beside) {
    w.open("extern \"C\" __global__ void " + k.symbol + "(");
    const Parameters params = thread_per_channel_params(k);
    emit_parameters(w, params, ") {");
    if (read < 0)
      w.line("__shared__ " + ty.signal.t + " ahead[" + str(kCudaBlockThreads) + "][" + str(kCudaSampleAhead + 1) +
             "];  // padded: no bank conflicts");
    w.line(k.symbol + "_run((long long)blockIdx.x * blockDim.x + threadIdx.x, " +
           (read < 0 ? "ahead[threadIdx.x]" : "nullptr") + argument_names(params) + ");");
    w.close();
  }
}

// A side-by-side kernel (CudaSideBySide): block b runs the member whose blocks it falls in,
// each member's ceil(channels / blockDim.x) in turn (the same for every thread of a block).
void emit_side_by_side(Writer& w, const CudaSideBySide& side, const std::vector<CudaKernelInfo>& kernels,
                       const ir::Graph& g) {
  w.line("// " + str(static_cast<long long>(side.members.size())) +
         " kernels side by side, independent of each other, each one thread per channel: one launch");
  w.line("// whose blocks go to each member in turn.");
  w.open("extern \"C\" __global__ void " + side.symbol + "(");
  std::vector<Parameters> params;  // each member's
  for (std::size_t m = 0; m < side.members.size(); ++m) {
    params.push_back(thread_per_channel_params(kernels[side.members[m]], "_" + str(static_cast<long long>(m))));
    emit_parameters(w, params.back(), m + 1 < side.members.size() ? "," : ") {");
  }
  // A member without a loop keeps a row of inputs ahead a thread (emit_thread_per_channel).
  auto keeps_rows = [&](std::size_t i) { return !ir::has_loop(std::get<ir::Chain>(g.node(kernels[i].node).op).stages); };
  if (std::any_of(side.members.begin(), side.members.end(), keeps_rows)) {
    const std::string& T = scalar_of(kernels[side.members[0]].dtype).t;  // every member's (cuda_side_by_side)
    w.line("// The members' rows of inputs ahead, one block's for all of them (a block runs one member).");
    w.line("__shared__ " + T + " ahead[" + str(kCudaBlockThreads) + "][" + str(kCudaSampleAhead + 1) +
           "];  // padded: no bank conflicts");
  }
  w.line("long long b = blockIdx.x;  // the block among the current member's");
  for (std::size_t m = 0; m < side.members.size(); ++m) {
    const CudaKernelInfo& k = kernels[side.members[m]];
    const std::string M = str(static_cast<long long>(m));
    w.open("{  // " + k.symbol);
    w.line("const long long blocks = (channels_" + M + " + blockDim.x - 1) / blockDim.x;");
    w.open("if (b < blocks) {");
    w.line(k.symbol + "_run(b * blockDim.x + threadIdx.x, " + (keeps_rows(side.members[m]) ? "ahead[threadIdx.x]" : "nullptr") +
           argument_names(params[m]) + ");");
    w.line("return;");
    w.close();
    w.line("b -= blocks;");
    w.close();
  }
  w.close();
}


// The grid-stride loop of the elementwise kernels (sum, route, a feedback read) over sample n
// of channel c, opened; `planar` is the source of a bool saying the layout is [channel][sample].
void open_elementwise_loop(Writer& w, const std::string& planar) {
  w.line("const long long total = channels * samples;");
  w.line("if (total == 0) return;");
  w.line("// Consecutive threads take consecutive addresses in either layout.");
  w.line("const bool planar = " + planar + ";");
  w.line("const long long step = (long long)gridDim.x * blockDim.x;");
  w.line("// Element i is (outer, inner) = (i / width, i % width): planar (c, n), interleaved (n, c).");
  w.line("// Divided once here, for the first element and for the step; the loop then only adds");
  w.line("// (a 64-bit division per element cost more than a sum's arithmetic).");
  w.line("const long long width = planar ? samples : channels;");
  w.line("const long long i0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
  w.line("const long long step_outer = step / width, step_inner = step % width;");
  w.line("long long outer = i0 / width, inner = i0 % width;");
  w.open("for (long long i = i0; i < total; i += step, inner += step_inner,");
  w.line("     outer += step_outer + (inner >= width ? (inner -= width, 1) : 0)) {");
  w.line("const long long c = planar ? outer : inner;");
  w.line("const long long n = planar ? inner : outer;");
}

// A chain of delays and memoryless stages: no recursion, so each output sample stands alone.
// Walking back from the last stage, each delay of length D either moves the time D samples
// earlier (t >= D) or hands over the cell of its line written before the block (t < D; the
// line holds the last D values before the delay in time order: cell t is time t - D). The
// stages after that point then run on the value.
void emit_chain_walk(Writer& w, const ChainBody& body, const ir::Chain& chain, const Types& ty, std::size_t end,
                     const std::string& time) {
  const Scalar& s = ty.compute;
  const ChainLayout& l = body.layout();
  w.line("long long t = " + time + ";");
  w.line("long long start = 0;  // the first stage v has not been through");
  w.line(s.t + " v = " + s.t + "(0);");
  w.line("bool held = false;  // v is a delay line's cell");
  for (std::size_t i = end; i-- > 0;) {
    if (!std::holds_alternative<ir::Delay>(chain.stages[i])) continue;
    const std::string len = ChainBody::delay_len(i);
    w.open("if (!held) {  // stage " + str(static_cast<long long>(i)) + " (delay)");
    w.open("if (t < " + len + ") {");
    w.line("v = delay_lines[c * " + str(l.delay_count) + " + " + str(l.stages[i].delay_index) + "][t];");
    w.line("start = " + str(static_cast<long long>(i + 1)) + ";");
    w.line("held = true;");
    w.reopen("} else {");
    w.line("t -= " + len + ";");
    w.close();
    w.close();
  }
  w.line("if (!held) v = " + ty.load("x[t * sample_stride]") + ";");
  for (std::size_t i = 0; i < end; ++i) {
    if (std::holds_alternative<ir::Delay>(chain.stages[i])) continue;
    w.open("if (start <= " + str(static_cast<long long>(i)) + ") {");
    body.stage(w, i);
    w.close();
  }
}

void emit_elementwise(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain) {
  Types ty = types_of(k);
  const Scalar& s = ty.compute;
  const std::string& T = ty.signal.t;
  ChainBody body(chain, s);
  const ChainLayout& l = body.layout();
  header(w, k, chain, l, ty);
  w.line("// Delays and memoryless stages, elementwise over (channel, sample): each delay's line holds");
  w.line("// its last D inputs in time order (cell j: time j - D), so the block's first samples read it.");
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + T + "* __restrict__ in, " + T + "* __restrict__ out, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ params, const long long* __restrict__ delay_lengths, " + s.t +
         "* const* __restrict__ delay_lines) {");
  body.load_params(w);
  open_elementwise_loop(w, "sample_stride == 1");
  w.line("const " + T + "* const x = in + c * channel_stride;");
  emit_chain_walk(w, body, chain, ty, chain.stages.size(), "n");
  w.line("out[c * channel_stride + n * sample_stride] = " + ty.store("v") + ";");
  w.close();
  w.close();
  w.line();
  w.line("// Each delay's line after the block, into next_lines (the runtime then copies it over the lines):");
  w.line("// cell j is the value before the delay at block time samples - D + j, from the block, or for");
  w.line("// a block shorter than D, the line's cell j + samples.");
  w.open("extern \"C\" __global__ void " + k.entries[1].symbol + "(");
  w.line("const " + T + "* __restrict__ in, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ params, const long long* __restrict__ delay_lengths, " + s.t +
         "* const* __restrict__ delay_lines, " + s.t + "* const* __restrict__ next_lines) {");
  body.load_params(w);
  std::string cells;
  for (std::size_t i = 0; i < chain.stages.size(); ++i)
    if (std::holds_alternative<ir::Delay>(chain.stages[i]))
      cells += std::string(cells.empty() ? "" : " + ") + ChainBody::delay_len(i);
  w.line("const long long cells = " + (cells.empty() ? std::string("0") : cells) + ";  // per channel (no delay: nothing to do)");
  w.line("const long long step = (long long)gridDim.x * blockDim.x;");
  w.open("for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < channels * cells; i += step) {");
  w.line("const long long c = i / cells;");
  w.line("long long j = i % cells;");
  w.line("const " + T + "* const x = in + c * channel_stride;");
  for (std::size_t i = 0; i < chain.stages.size(); ++i) {
    if (!std::holds_alternative<ir::Delay>(chain.stages[i])) continue;
    const std::string len = ChainBody::delay_len(i);
    const std::string line = "[c * " + str(l.delay_count) + " + " + str(l.stages[i].delay_index) + "]";
    w.open("if (j < " + len + ") {  // stage " + str(static_cast<long long>(i)) + " (delay)");
    w.line("const long long when = samples - " + len + " + j;");
    w.open("if (when < 0) {");
    w.line("next_lines" + line + "[j] = delay_lines" + line + "[j + samples];");
    w.reopen("} else {");
    emit_chain_walk(w, body, chain, ty, i, "when");
    w.line("next_lines" + line + "[j] = v;");
    w.close();
    w.line("continue;");
    w.close();
    w.line("j -= " + len + ";");
  }
  w.close();
  w.close();
}

void emit_sum(Writer& w, const CudaKernelInfo& k, const ir::Sum& sum) {
  Scalar s = scalar_of(k.dtype);
  w.line("// sum %" + str(k.node) + ": " + str(static_cast<long long>(sum.weights.size())) +
         " operands; out = 0, then out += weights[i] * operands[i] in operand order");
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + s.t + "* const* __restrict__ operands, " + s.t + "* out, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ weights) {");
  open_elementwise_loop(w, "sample_stride == 1");
  w.line("const long long at = c * channel_stride + n * sample_stride;");
  w.line(s.t + " acc = " + s.t + "(0);");
  for (std::size_t i = 0; i < sum.weights.size(); ++i)
    w.line("acc = acc + weights[" + str(static_cast<long long>(i)) + "] * operands[" +
           str(static_cast<long long>(i)) + "][at];");
  w.line("out[at] = acc;");
  w.close();
  w.close();
}

std::string int_list(const std::vector<long long>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + str(values[i]);
  return out;
}

// A select, matrix or concat: the CPU runtime's run_route, elementwise. Where each output
// channel comes from is shape (indices, channel counts), so it is compiled in: a table of
// (operand, channel) pairs for select and concat, the operand's channel count for matrix.
void emit_route(Writer& w, const CudaKernelInfo& k, const ir::Graph& g) {
  const ir::Node& node = g.node(k.node);
  Scalar s = scalar_of(k.dtype);
  std::vector<long long> widths;
  for (ir::NodeId operand : node.operands) widths.push_back(g.node(operand).type.channels);
  const auto* matrix = std::get_if<ir::Matrix>(&node.op);
  const auto* link = std::get_if<ir::Link>(&node.op);
  const bool multiply = std::holds_alternative<ir::Multiply>(node.op);
  const std::string from = k.symbol + "_from", width = k.symbol + "_widths";
  if (multiply) {
    w.line("// multiply %" + str(k.node) + ": out[c] = a[c] * b[c * " + str(widths[1]) + " / " + str(widths[0]) + "]");
  } else if (link) {
    w.line("// link %" + str(k.node) + ": " + str(link->groups) + " group(s) of " + str(widths[0] / link->groups) +
           " channels; out[g] = the " + std::string(link->mode == design::LinkMode::max ? "largest" : "mean") +
           " |x_c| of group g, in channel order as the CPU runtime");
  } else if (matrix) {
    w.line("// matrix %" + str(k.node) + ": " + str(matrix->rows) + " x " + str(widths[0]) +
           "; out[r] = 0, then out[r] += gains[r * C + c] * x[c] for each nonzero gain, in column order");
  } else {
    std::vector<long long> sources;  // (operand, channel) per output channel
    if (const auto* select = std::get_if<ir::Select>(&node.op)) {
      w.line("// select %" + str(k.node) + ": channel k of out is channel indices[k] of the operand");
      for (int index : select->indices) sources.insert(sources.end(), {0, index});
    } else {
      w.line("// concat %" + str(k.node) + ": the operands' channels side by side, in order");
      for (std::size_t o = 0; o < widths.size(); ++o)
        for (long long c = 0; c < widths[o]; ++c) sources.insert(sources.end(), {static_cast<long long>(o), c});
    }
    w.line("__device__ const long long " + from + "[] = {" + int_list(sources) +
           "};  // (operand, channel) of each output channel");
    w.line("__device__ const long long " + width + "[] = {" + int_list(widths) + "};  // each operand's channel count");
  }
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + s.t + "* const* __restrict__ operands, " + s.t + "* out, " + kSignalArgs + ",");
  w.line("long long interleaved, const " + s.t + "* __restrict__ gains) {");
  open_elementwise_loop(w, "interleaved == 0");
  if (multiply) {
    w.line("const " + s.t + "* const a = operands[0];");
    w.line("const " + s.t + "* const b = operands[1];");
    w.line("const long long j = c * " + str(widths[1]) + " / " + str(widths[0]) + ";");
    w.line("const long long a_stride = interleaved ? " + str(widths[0]) + " : sample_stride;");
    w.line("const long long b_stride = interleaved ? " + str(widths[1]) + " : sample_stride;");
    w.line("out[c * channel_stride + n * sample_stride] = a[c * channel_stride + n * a_stride] * b[j * channel_stride + n * b_stride];");
  } else if (link) {
    const long long size = widths[0] / link->groups;
    w.line("const " + s.t + "* const x = operands[0];");
    w.line("const long long x_stride = interleaved ? " + str(widths[0]) + " : sample_stride;");
    w.line(s.t + " level = " + s.t + "(0);");
    w.open("for (long long k = c * " + str(size) + "; k < (c + 1) * " + str(size) + "; ++k) {");
    w.line("const " + s.t + " v = " + s.fabs + "(x[k * channel_stride + n * x_stride]);");
    w.line(link->mode == design::LinkMode::max ? "level = level < v ? v : level;" : "level = level + v;");
    w.close();
    w.line("out[c * channel_stride + n * sample_stride] = " +
           (link->mode == design::LinkMode::max ? std::string("level") : "level / " + s.t + "(" + str(size) + ")") + ";");
  } else if (matrix) {
    w.line("const long long C = " + str(widths[0]) + ";");
    w.line("const " + s.t + "* const x = operands[0];");
    w.line("const long long x_stride = interleaved ? C : sample_stride;  // the operand's sample stride");
    w.line(s.t + " acc = " + s.t + "(0);");
    w.open("for (long long k = 0; k < C; ++k) {");
    w.line("const " + s.t + " g = gains[c * C + k];");
    w.line("if (g != " + s.t + "(0)) acc = acc + g * x[k * channel_stride + n * x_stride];");
    w.close();
    w.line("out[c * channel_stride + n * sample_stride] = acc;");
  } else {
    w.line("const long long o = " + from + "[2 * c], j = " + from + "[2 * c + 1];");
    w.line("const long long o_stride = interleaved ? " + width + "[o] : sample_stride;  // the operand's sample stride");
    w.line("out[c * channel_stride + n * sample_stride] = operands[o][j * channel_stride + n * o_stride];");
  }
  w.close();
  w.close();
}

// A feedback node's read (y[n] = the line from the position on) and write (the operand into
// the line, the position on): the CPU runtime's read_feedback and write_feedback.
void emit_feedback(Writer& w, const CudaKernelInfo& k) {
  Scalar s = scalar_of(k.dtype);
  w.line("// feedback %" + str(k.node) + ": y[n] = x[n - length]; the line is line[cell * channels + c], length");
  w.line("// cells per channel. A pass of its loop, samples <= length: " + k.symbol + " at the node's place,");
  w.line("// then " + k.entries[1].symbol + " after the loop's other kernels.");
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + s.t + "* __restrict__ line, " + s.t + "* __restrict__ out, " + kSignalArgs + ",");
  w.line("const long long* __restrict__ positions, long long length) {");
  open_elementwise_loop(w, "sample_stride == 1");
  w.line("const long long cell = (positions[c] + n) % length;");
  w.line("out[c * channel_stride + n * sample_stride] = line[cell * channels + c];");
  w.close();
  w.close();
  w.line();
  w.open("extern \"C\" __global__ void " + k.entries[1].symbol + "(");
  w.line("const " + s.t + "* __restrict__ in, " + kSignalArgs + ",");
  w.line(s.t + "* __restrict__ line, long long* __restrict__ positions, long long length) {");
  w.line("const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
  w.line("if (c >= channels) return;");
  w.line("long long p = positions[c];");
  w.open("for (long long n = 0; n < samples; ++n) {");
  w.line("line[p * channels + c] = in[c * channel_stride + n * sample_stride];");
  w.line("p = p + 1 >= length ? 0 : p + 1;");
  w.close();
  w.line("positions[c] = p;");
  w.close();
}

// The entries of a kernel, with their parameter types.
std::vector<CudaEntry> entries_of(const CudaKernelInfo& k) {
  std::string t = scalar_of(k.dtype).t, s = scalar_of(k.state_dtype).t;
  auto signal = [](std::vector<std::string> head) {
    head.insert(head.end(), kSignalParams.begin(), kSignalParams.end());
    return head;
  };
  auto with = [](std::vector<std::string> v, std::initializer_list<std::string> more) {
    v.insert(v.end(), more);
    return v;
  };
  switch (k.kind) {
    case CudaKernelKind::chain_thread_per_channel: {
      std::vector<std::string> types;
      for (const auto& parameter : thread_per_channel_params(k)) types.push_back(parameter.first);
      return {{k.symbol, types, false}};
    }
    case CudaKernelKind::chain_chunked_scan:
      return {{k.symbol + "_chunk_states",
               k.state_table ? with(signal({"const " + t + "*"}), {"const double*", "double*"})
                             : with(signal({"const " + t + "*"}), {"const " + s + "*", "double*"}),
               true},
              {k.symbol + "_group_sums", {"long long", "long long", "const double*", "const double*", "double*"}, true},
              {k.symbol + "_group_scan",
               {"long long", "long long", "long long", "const double*", "const double*", "double*", "const " + s + "*"},
               true},
              {k.symbol + "_chunk_starts", {"long long", "long long", "const double*", "const double*", "double*"}, true},
              {k.symbol, with(signal({"const " + t + "*", t + "*"}), {"const " + s + "*", "const double*", s + "*"}), true}};
    case CudaKernelKind::chain_elementwise:
      return {{k.symbol, with(signal({"const " + t + "*", t + "*"}), {"const " + s + "*", "const long long*", s + "* const*"}), false},
              {k.symbol + "_next_lines",
               with(signal({"const " + t + "*"}), {"const " + s + "*", "const long long*", s + "* const*", s + "* const*"}),
               false}};
    case CudaKernelKind::fir_tiled:
    case CudaKernelKind::fir_fft:  // params or tables first
      return {{k.symbol, with(signal({"const " + t + "*", t + "*"}), {"const " + s + "*", "const " + s + "*", "const long long*"}), true},
              {k.symbol + "_ring", with(signal({"const " + t + "*"}), {s + "*", "long long*"}), true}};
    case CudaKernelKind::fir_partitioned:
      return {{k.symbol + "_spectra", with(signal({"const " + t + "*"}), {"const " + s + "*", "const " + s + "*", "const long long*", s + "*"}), true},
              {k.symbol, with(signal({"const " + t + "*", t + "*"}), {"const " + s + "*", "const " + s + "*", "const long long*", "const " + s + "*"}), true},
              {k.symbol + "_ring", with(signal({"const " + t + "*"}), {s + "*", "long long*"}), true}};
    case CudaKernelKind::sum:
      return {{k.symbol, with(signal({"const " + t + "* const*", t + "*"}), {"const " + t + "*"}), false}};
    case CudaKernelKind::route:
      return {{k.symbol, with(signal({"const " + t + "* const*", t + "*"}), {"long long", "const " + t + "*"}), false}};
    case CudaKernelKind::feedback:
      return {{k.symbol, with(signal({"const " + t + "*", t + "*"}), {"const long long*", "long long"}), false},
              {k.symbol + "_write", with(signal({"const " + t + "*"}), {t + "*", "long long*", "long long"}), false}};
  }
  return {};
}

// No recursion and no FIR: delays, gains, clips and tanh only.
bool is_elementwise(const ir::Chain& chain) {
  for (const ir::Stage& stage : chain.stages)
    if (!std::holds_alternative<ir::Delay>(stage) && !std::holds_alternative<ir::Gain>(stage) &&
        !std::holds_alternative<ir::Clip>(stage) && !std::holds_alternative<ir::Tanh>(stage))
      return false;
  return true;
}

bool is_lone_fir(const ir::Chain& chain) {
  return chain.stages.size() == 1 && std::holds_alternative<ir::FirFilter>(chain.stages[0]);
}

}  // namespace

bool cuda_chunked_scan_applies(const ir::Chain& chain) {
  return ir::scanned_prefix(chain.stages) > 0 && layout_of(chain).state_per_channel <= 1024;
}

bool cuda_state_table_applies(const ir::Chain& chain, DType signal, int chunk_length) {
  const bool float64_sections =
      !ir::float_pairs(chain.state_precision) && (ir::float64_state(chain.state_precision) || signal == DType::f64);
  const int rows = layout_of(chain).state_per_channel;
  // Rows in pairs: the table's 16-byte copies and the matrix products' stores take two at a time
  // (sections have two each).
  return float64_sections && cuda_chunked_scan_applies(chain) && rows <= kCudaStateTableMaxRows && rows % 2 == 0 &&
         static_cast<long long>(chunk_length) * rows <= kCudaStateTableMaxCells;
}

int cuda_carry_steps(long long chunks) {
  const long long groups = (chunks + kCudaCarryGroup - 1) / kCudaCarryGroup;
  int steps = 1;
  while ((1LL << steps) < groups) ++steps;
  return steps;
}

long long cuda_fir_partitions(const CudaKernelInfo& k) {
  const long long half = k.fft_length / 2;
  return (k.fir_taps + half - 1) / half;
}

namespace {

// fir_partitioned: the pairs of output segments of a block of `samples` (emit_partition_sizes'
// `output_pairs`), a block of its inverse pass each.
long long fir_output_pairs(const CudaKernelInfo& k, long long samples) {
  const long long half = k.fft_length / 2;
  return ((samples + half - 1) / half + 1) / 2;
}

}  // namespace

long long cuda_fir_spectra(const CudaKernelInfo& k, long long samples) {
  return (2 * fir_output_pairs(k, samples) + cuda_fir_partitions(k)) / 2 * 2;  // emit_partition_sizes' `stored`
}

CudaLaunch cuda_launch(const CudaKernelInfo& k, std::size_t entry, long long channels, long long samples) {
  if (channels <= 0 || samples <= 0) return {};
  auto blocks = [](long long threads) { return (threads + kCudaBlockThreads - 1) / kCudaBlockThreads; };
  switch (k.kind) {
    case CudaKernelKind::chain_thread_per_channel:
      return {blocks(channels), kCudaBlockThreads};
    case CudaKernelKind::chain_chunked_scan: {
      const long long chunks = (samples + k.chunk_length - 1) / k.chunk_length;
      const long long groups = (chunks + kCudaCarryGroup - 1) / kCudaCarryGroup;
      if (entry == 1 || entry == 3) return {channels * groups, carry_block_threads(k.state_dimension)};
      if (entry == 2) return {(channels * groups * k.state_dimension + kCudaScanThreads - 1) / kCudaScanThreads, kCudaScanThreads};
      const bool wavefront = k.wavefront && !(entry == 0 && k.state_table);
      const int block = wavefront ? kCudaWavefrontThreads : kCudaBlockThreads;  // the chunk passes
      return {(channels * chunks + block - 1) / block, block};
    }
    case CudaKernelKind::fir_tiled:
      if (entry == 0) return {channels * ((samples + kCudaFirTile - 1) / kCudaFirTile), kCudaFirTile};
      return {channels, kCudaBlockThreads};  // the ring: a block per channel
    case CudaKernelKind::fir_fft:
      if (entry == 0) {
        const long long step = k.fft_length - (k.fir_taps - 1);
        const long long pairs = ((samples + step - 1) / step + 1) / 2;
        return {channels * pairs, std::min(kCudaFftThreads, k.fft_length / 2)};
      }
      return {channels, kCudaBlockThreads};  // the ring: a block per channel
    case CudaKernelKind::fir_partitioned: {
      const int threads = std::min(kCudaFftThreads, k.fft_length / 2);
      if (entry == 0) return {channels * (cuda_fir_spectra(k, samples) / 2), threads};
      if (entry == 1) return {channels * fir_output_pairs(k, samples), threads};
      return {channels, kCudaBlockThreads};  // the ring: a block per channel
    }
    case CudaKernelKind::feedback:
      if (entry == 1) return {blocks(channels), kCudaBlockThreads};
      [[fallthrough]];
    case CudaKernelKind::chain_elementwise:
    case CudaKernelKind::sum:
    case CudaKernelKind::route: {
      long long grid = (channels * samples + 255) / 256;
      return {grid < 4096 ? grid : 4096, 256};
    }
  }
  return {};
}

Expected<std::vector<CudaKernelInfo>, std::string> cuda_kernels(const ir::Graph& g) {
  std::vector<CudaKernelInfo> out;
  using S = ir::IirStrategy;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& node = g.node(id);
    std::string where = "node %" + str(id) + " (" + std::string(ir::kind_name(node.op)) + ")";
    if (ir::holds<ir::Input>(node) || ir::holds<ir::Output>(node)) continue;
    if (auto* sum = std::get_if<ir::Sum>(&node.op)) {
      CudaKernelInfo k;
      k.symbol = "fxc_sum_" + str(id);
      k.node = id;
      k.kind = CudaKernelKind::sum;
      k.dtype = k.state_dtype = node.type.dtype;
      k.note = "elementwise weighted sum of " + str(static_cast<long long>(sum->weights.size())) + " operands";
      k.entries = entries_of(k);
      out.push_back(std::move(k));
      continue;
    }
    if (ir::is_routing(node.op) || ir::holds<ir::Feedback>(node)) {
      CudaKernelInfo k;
      k.node = id;
      k.dtype = k.state_dtype = node.type.dtype;
      if (ir::holds<ir::Feedback>(node)) {
        k.symbol = "fxc_feedback_" + str(id);
        k.kind = CudaKernelKind::feedback;
        k.note = "a feedback node's delay line: read at its place, written after each pass of its loop";
      } else {
        k.symbol = "fxc_route_" + str(id);
        k.kind = CudaKernelKind::route;
        k.note = "channel routing (" + std::string(ir::kind_name(node.op)) + "), elementwise";
        bool known = node.type.channels > 0;
        for (ir::NodeId operand : node.operands) known = known && g.node(operand).type.channels > 0;
        const auto* matrix = std::get_if<ir::Matrix>(&node.op);
        if (!known || (matrix && (matrix->rows != node.type.channels ||
                                  matrix->gains.size() != static_cast<std::size_t>(matrix->rows) *
                                                              static_cast<std::size_t>(g.node(node.operands[0]).type.channels))))
          return Unexpected{where + " has no known channel counts: run the pass pipeline (infer-types) first"};
      }
      k.entries = entries_of(k);
      out.push_back(std::move(k));
      continue;
    }
    auto* chain = std::get_if<ir::Chain>(&node.op);
    if (!chain)
      return Unexpected{where + " was not scheduled into a kernel: run the pass pipeline (fuse-chains) first"};
    const bool fft = chain->fir_method == ir::FirMethod::fft_overlap_save;
    if (fft && !is_lone_fir(*chain))
      return Unexpected{where + ": an FFT overlap-save FIR must be alone in its chain on the GPU; schedule with --target cuda"};
    CudaKernelInfo k;
    k.symbol = cuda_chain_symbol(id);
    k.node = id;
    k.dtype = node.type.dtype;
    k.state_dtype = ir::float64_state(chain->state_precision) ? DType::f64 : node.type.dtype;
    switch (chain->strategy) {
      case S::gpu_thread_per_channel:
        k.note = "one thread per channel (gpu_thread_per_channel)";
        break;
      case S::none:
        k.note = "no IIR stage: one thread per channel";
        break;
      case S::gpu_chunked_scan:
      case S::gpu_chunked_wavefront:
        if (cuda_chunked_scan_applies(*chain)) {
          k.kind = CudaKernelKind::chain_chunked_scan;
          k.chunk_length = chain->chunk_length;
          k.state_dimension = layout_of(*chain).state_per_channel;
          k.wavefront = chain->strategy == S::gpu_chunked_wavefront;
          k.state_table = cuda_state_table_applies(*chain, k.dtype, k.chunk_length);
          k.note = std::string(ir::name(chain->strategy)) + ", L=" + str(chain->chunk_length) +
                   ": one thread per (channel, chunk)";
          if (k.state_table) k.note += ", each chunk's end state summed with a table";
          if (k.wavefront) {
            const int steps = ir::wavefront_steps(chain->stages);
            if (steps < 2)
              return Unexpected{where + ": a wavefront of " + str(steps) + " step; the chunk passes pipeline 2 or "
                                "more (schedule with --target cuda)"};
            k.note += ", its " + str(steps) + " steps as a wavefront" +
                      (ir::wavefront_group(steps) > 1 ? " of " + str(ir::wavefront_stages(steps)) + " stages" : std::string());
          }
        } else {
          k.note = "gpu_chunked_scan does not apply (a delay, FIR or dynamics stage, or a section after a clip or tanh): one thread per channel";
        }
        break;
      default:
        return Unexpected{where + " has the CPU strategy " + std::string(ir::name(chain->strategy)) +
                          ": schedule the graph with --target cuda"};
    }
    if (fft) {
      const long long taps = static_cast<long long>(std::get<ir::FirFilter>(chain->stages[0]).taps.size());
      const long long bytes = 2LL * chain->fft_block * static_cast<long long>(size_of(k.state_dtype));
      if (chain->fft_block < 4 || (chain->fft_block & (chain->fft_block - 1)) != 0)
        return Unexpected{where + ": FFT block " + str(chain->fft_block) + " is not a power of two of 4 or more"};
      if (bytes > kCudaFftSharedBytes)
        return Unexpected{where + ": an FFT of " + str(chain->fft_block) + " points needs " + str(bytes) +
                          " bytes of shared memory, more than the " + str(kCudaFftSharedBytes) +
                          " the kernel may take; schedule with --target cuda"};
      k.fft_length = chain->fft_block;
      k.fir_taps = static_cast<int>(taps);
      if (2 * taps <= chain->fft_block) {  // at least as many new samples as taps per FFT
        k.kind = CudaKernelKind::fir_fft;
        k.note = "a lone FIR stage of " + str(taps) + " taps: FFT overlap-save, " + str(chain->fft_block) +
                 " points, two segments per complex FFT";
      } else {
        k.kind = CudaKernelKind::fir_partitioned;
        k.note = "a lone FIR stage of " + str(taps) + " taps: partitioned FFT overlap-save, " +
                 str(cuda_fir_partitions(k)) + " partitions of " + str(chain->fft_block / 2) + " taps, " +
                 str(chain->fft_block) + "-point FFTs";
      }
    }
    if (k.kind == CudaKernelKind::chain_thread_per_channel && is_lone_fir(*chain)) {
      k.kind = CudaKernelKind::fir_tiled;
      k.note = "a lone FIR stage: direct form, shared-memory tiles of " + str(kCudaFirTile) + " samples";
    }
    if (k.kind == CudaKernelKind::chain_thread_per_channel && is_elementwise(*chain)) {
      k.kind = CudaKernelKind::chain_elementwise;
      k.note = "delays and memoryless stages: elementwise over (channel, sample), lines read for the first samples";
    }
    if (k.kind == CudaKernelKind::chain_chunked_scan && k.chunk_length < 1)
      return Unexpected{where + ": gpu_chunked_scan without a chunk length"};
    k.entries = entries_of(k);
    out.push_back(std::move(k));
  }
  return out;
}

namespace {

// fxc_interleave and fxc_deinterleave (cuda_layout_entries): a block moves one 32 x 32 tile,
// 8 rows of 32 threads at a time; it reads along its source's rows and writes along its
// destination's, through a padded tile (no bank conflicts in either direction).
void emit_layout_kernels(Writer& w, DType signal) {
  const std::string T = scalar_of(signal).t;
  w.line("// Layout: planar rows <-> frames of channels, for the copies of an interleaved stream.");
  for (bool interleave : {true, false}) {
    w.open(std::string("extern \"C\" __global__ void ") + (interleave ? "fxc_interleave" : "fxc_deinterleave") + "(");
    w.line("const " + T + "* __restrict__ from, " + T + "* __restrict__ to, long long channels, long long frames) {");
    w.line("__shared__ " + T + " tile[32][33];");
    w.line("const long long frame_tiles = (frames + 31) / 32;");
    w.line("const long long c0 = blockIdx.x / frame_tiles * 32, f0 = blockIdx.x % frame_tiles * 32;");
    w.line("const int x = threadIdx.x % 32, y = threadIdx.x / 32;");
    if (interleave) {
      w.line("for (int r = y; r < 32; r += 8)  // tile[channel][frame], along the planar rows");
      w.line("  if (c0 + r < channels && f0 + x < frames) tile[r][x] = from[(c0 + r) * frames + f0 + x];");
      w.line("__syncthreads();");
      w.line("for (int r = y; r < 32; r += 8)  // along the frames");
      w.line("  if (f0 + r < frames && c0 + x < channels) to[(f0 + r) * channels + c0 + x] = tile[x][r];");
    } else {
      w.line("for (int r = y; r < 32; r += 8)  // tile[frame][channel], along the frames");
      w.line("  if (f0 + r < frames && c0 + x < channels) tile[r][x] = from[(f0 + r) * channels + c0 + x];");
      w.line("__syncthreads();");
      w.line("for (int r = y; r < 32; r += 8)  // along the planar rows");
      w.line("  if (c0 + r < channels && f0 + x < frames) to[(c0 + r) * frames + f0 + x] = tile[x][r];");
    }
    w.close();
  }
}

}  // namespace

DType cuda_signal_dtype(const ir::Graph& g) {
  return g.outputs().empty() ? DType::f32 : g.node(g.outputs()[0]).type.dtype;
}

std::vector<CudaEntry> cuda_layout_entries(DType signal) {
  const std::string T = scalar_of(signal).t;
  const std::vector<std::string> parameters = {"const " + T + "*", T + "*", "long long", "long long"};
  return {{"fxc_interleave", parameters, true}, {"fxc_deinterleave", parameters, true}};
}

CudaLaunch cuda_layout_launch(long long channels, long long frames) {
  if (channels <= 0 || frames <= 0) return {};
  return {((channels + 31) / 32) * ((frames + 31) / 32), 256};
}

// The float pair type and its arithmetic, for the chains whose float64 arithmetic runs in
// pairs (state_precision pairs and mixed_pairs; float_pair_scalar).
void emit_float_pairs(Writer& w) {
  const char* lines[] = {
      "// Float pairs (state_precision pairs and mixed_pairs), for GPUs whose float64 is slow: a value is",
      "// hi + lo, two floats with |lo| <= ulp(hi) / 2, about 48 bits of significand. Built from error-free",
      "// transforms (TwoSum, Fast2Sum, a product's error by fmaf) as in Joldes, Muller and Popescu, \"Tight",
      "// and rigorous error bounds for basic building blocks of double-word arithmetic\" (ACM TOMS 44(2),",
      "// 2017): their AccurateDWPlusDW (relative error about 3u^2, u = 2^-24) and DWTimesDW1 (below 7u^2).",
      "// --fmad=false keeps every rounding where it is written. A pair's range is float's: an infinity or a",
      "// NaN in hi makes lo a NaN, and the value (hi + lo) is not finite where float64's would not be",
      "// (whether NaN or infinite may differ, as it may between fused and unfused float64 arithmetic).",
      "struct fxc_ff {",
      "  float hi, lo;",
      "  fxc_ff() = default;",
      "  __device__ fxc_ff(int v) : hi(float(v)), lo(0.0f) {}",
      "  __device__ fxc_ff(float v) : hi(v), lo(0.0f) {}",
      "  // From float64 buffers (coefficients, state): hi is v rounded, lo what that left (0 for an",
      "  // infinity or a NaN, whose difference would be a NaN).",
      "  __device__ fxc_ff(double v) : hi(float(v)), lo(0.0f) {",
      "    if (fabsf(hi) <= 3.40282347e38f) lo = float(v - double(hi));",
      "  }",
      "  __device__ explicit operator float() const { return hi + lo; }",
      "  __device__ explicit operator double() const { return double(hi) + double(lo); }",
      "};",
      "__device__ inline fxc_ff fxc_ff_of(float hi, float lo) {",
      "  fxc_ff r;",
      "  r.hi = hi;",
      "  r.lo = lo;",
      "  return r;",
      "}",
      "// Fast2Sum: hi + lo == a + b exactly, for |a| >= |b|.",
      "__device__ inline fxc_ff fxc_fast_two_sum(float a, float b) {",
      "  const float s = a + b;",
      "  return fxc_ff_of(s, b - (s - a));",
      "}",
      "// TwoSum: hi + lo == a + b exactly, in either order.",
      "__device__ inline fxc_ff fxc_two_sum(float a, float b) {",
      "  const float s = a + b, bb = s - a;",
      "  return fxc_ff_of(s, (a - (s - bb)) + (b - bb));",
      "}",
      "__device__ inline fxc_ff operator-(fxc_ff x) { return fxc_ff_of(-x.hi, -x.lo); }",
      "// AccurateDWPlusDW: 20 float operations.",
      "__device__ inline fxc_ff operator+(fxc_ff x, fxc_ff y) {",
      "  const fxc_ff s = fxc_two_sum(x.hi, y.hi), t = fxc_two_sum(x.lo, y.lo);",
      "  const fxc_ff v = fxc_fast_two_sum(s.hi, s.lo + t.hi);",
      "  return fxc_fast_two_sum(v.hi, t.lo + v.lo);",
      "}",
      "// DWTimesDW1: 8 float operations.",
      "__device__ inline fxc_ff operator*(fxc_ff x, fxc_ff y) {",
      "  const float ch = x.hi * y.hi;",
      "  const float cl1 = fmaf(x.hi, y.hi, -ch);",
      "  const float cl2 = fmaf(x.lo, y.hi, x.hi * y.lo);",
      "  return fxc_fast_two_sum(ch, cl1 + cl2);",
      "}",
      "__device__ inline fxc_ff fxc_ff_fma(fxc_ff a, fxc_ff b, fxc_ff c) { return a * b + c; }",
  };
  for (const char* line : lines) w.line(line);
}

Expected<std::string, std::string> emit_cuda_source(const ir::Graph& g) {
  auto kernels = cuda_kernels(g);
  if (!kernels) return Unexpected{kernels.error()};
  Writer w;
  w.line("// CUDA C++ generated by fxc for graph \"" + g.name + "\". Compile with NVRTC and the options of");
  w.line("// codegen::cuda_compile_options (--fmad=false: only the fma() calls below are fused).");
  w.line("// Sample (c, n) of a signal is at base[c * channel_stride + n * sample_stride]:");
  w.line("//   planar [channel][sample]: channel_stride = samples, sample_stride = 1;");
  w.line("//   interleaved [sample][channel]: channel_stride = 1, sample_stride = channels (coalesced");
  w.line("//   for one thread per channel: a warp's 32 loads of sample n are adjacent).");
  // Helpers go in once, before the first kernel that uses them.
  auto any_chain = [&](auto holds) {
    return std::any_of(kernels->begin(), kernels->end(), [&](const CudaKernelInfo& k) {
      const auto* chain = std::get_if<ir::Chain>(&g.node(k.node).op);
      return chain && holds(*chain);
    });
  };
  if (any_chain([](const ir::Chain& c) { return ir::float_pairs(c.state_precision); })) {
    w.line();
    emit_float_pairs(w);
  }
  if (any_chain([](const ir::Chain& c) { return ir::has_loop(c.stages); })) {
    w.line();
    emit_prefetch(w);
  }
  if (std::any_of(kernels->begin(), kernels->end(),
                  [](const CudaKernelInfo& k) { return k.kind == CudaKernelKind::chain_chunked_scan; })) {
    w.line();
    emit_async_copy(w);
  }
  if (std::any_of(kernels->begin(), kernels->end(), [](const CudaKernelInfo& k) { return k.state_table; })) {
    w.line();
    emit_state_table_helpers(w);
  }
  const std::vector<CudaSideBySide> sides = cuda_side_by_side(g, *kernels);
  std::vector<bool> beside(kernels->size(), false);
  for (const CudaSideBySide& side : sides)
    for (std::size_t i : side.members) beside[i] = true;
  for (std::size_t i = 0; i < kernels->size(); ++i) {
    const CudaKernelInfo& k = (*kernels)[i];
    w.line();
    const ir::Node& node = g.node(k.node);
    switch (k.kind) {
      case CudaKernelKind::chain_thread_per_channel:
        emit_thread_per_channel(w, k, std::get<ir::Chain>(node.op), beside[i]);
        break;
      case CudaKernelKind::chain_chunked_scan:
        emit_chunked_scan(w, k, std::get<ir::Chain>(node.op));
        break;
      case CudaKernelKind::fir_tiled:
        emit_fir_tiled(w, k, std::get<ir::Chain>(node.op));
        break;
      case CudaKernelKind::fir_fft:
        emit_fir_fft(w, k, std::get<ir::Chain>(node.op));
        break;
      case CudaKernelKind::fir_partitioned:
        emit_fir_partitioned(w, k, std::get<ir::Chain>(node.op));
        break;
      case CudaKernelKind::chain_elementwise:
        emit_elementwise(w, k, std::get<ir::Chain>(node.op));
        break;
      case CudaKernelKind::sum:
        emit_sum(w, k, std::get<ir::Sum>(node.op));
        break;
      case CudaKernelKind::route:
        emit_route(w, k, g);
        break;
      case CudaKernelKind::feedback:
        emit_feedback(w, k);
        break;
    }
  }
  for (const CudaSideBySide& side : sides) {
    w.line();
    emit_side_by_side(w, side, *kernels, g);
  }
  w.line();
  emit_layout_kernels(w, cuda_signal_dtype(g));
  return w.str();
}

}  // namespace fxc::codegen

// SPDX-License-Identifier: Apache-2.0
// The chunked scan's kernels (docs/cuda.md, "Kernels" and "The carry"): the chunk passes over
// the signal, the carry's group walks and log-depth scan, the planar tile's async copies and the
// state table's helpers.
#include "codegen/cuda/kernel_emitters.h"

namespace fxc::codegen::cuda_source {

// fxc_copy_async and its group calls: a copy of Bytes (4, 8 or 16) from global to shared memory
// that runs while the thread goes on (PTX cp.async, sm_80 and later: no register holds the
// value, and nothing waits until fxc_copy_wait), the chunk passes' planar tile. A copy that is
// not `valid` (past its chunk's end) reads nothing and writes zeros (ignore-src; `from` must
// still point into the signal), so that every copy is issued unpredicated: a branch around
// each made ptxas recompute its addresses. fxc_copy_commit closes the thread's copies since the
// last into a group; fxc_copy_wait<N> waits until at most the N newest groups are still under
// way (a __syncthreads after it shows them to the block). An async copy acts as if a new thread
// made it when it is issued, so it never overtakes the thread's own earlier accesses (the
// wavefront's output pass reads a ring column, then copies into it). Before sm_80 the copy is a
// load and a store, and the rest nothing. The host emulation (FXC_EMULATION,
// tests/unit/cuda_emulation_shim.h) runs cp.async's rules instead: the copy lands at the wait
// that covers its group, its destination reads as NaN until then, and a misaligned address
// fails the launch, as on the GPU. With them fxc_global_pointer, for the wide copies' rows.
void emit_async_copy(Writer& w) {
  w.line("// A global pointer the compiler keeps as one 64-bit value (an opaque asm operand), and may");
  w.line("// reach with global (not generic) loads and stores: the wide tile copies' rows, whose offsets it");
  w.line("// would otherwise add again at every access.");
  w.line("template <class T>");
  w.open("__device__ inline T* fxc_global_pointer(T* p) {");
  w.line("#ifdef __CUDA_ARCH__");
  w.line("asm(\"\" : \"+l\"(p));");
  w.line("__builtin_assume(__isGlobal(p));");
  w.line("#endif");
  w.line("return p;");
  w.close();
  w.line();
  w.line("// The chunk passes copy their planar tile's samples in while they compute from the last ones.");
  w.line("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800");
  w.line("#define FXC_COPY_ASYNC 1");
  w.line("#endif");
  w.line("template <int Bytes, class T>");
  w.open("__device__ inline void fxc_copy_async(T* to, const T* from, bool valid) {");
  w.line("#ifdef FXC_COPY_ASYNC");
  w.line("const unsigned shared = (unsigned)__cvta_generic_to_shared(to);");
  w.line("asm volatile(\"{ .reg .pred ignore; setp.eq.u32 ignore, %3, 0; cp.async.ca.shared.global [%0], [%1], %2, ignore; }\"");
  w.line("             : : \"r\"(shared), \"l\"(from), \"n\"(Bytes), \"r\"((unsigned)valid) : \"memory\");");
  w.line("#elif defined(FXC_EMULATION)");
  w.line("fxc_emu_copy_async<Bytes>(to, from, valid);");
  w.line("#else");
  w.line("for (unsigned e = 0; e < Bytes / sizeof(T); ++e) to[e] = valid ? from[e] : T(0);");
  w.line("#endif");
  w.close();
  w.open("__device__ inline void fxc_copy_commit() {");
  w.line("#ifdef FXC_COPY_ASYNC");
  w.line("asm volatile(\"cp.async.commit_group;\" : : : \"memory\");");
  w.line("#elif defined(FXC_EMULATION)");
  w.line("fxc_emu_copy_commit();");
  w.line("#endif");
  w.close();
  w.line("template <int N>");
  w.open("__device__ inline void fxc_copy_wait() {");
  w.line("#ifdef FXC_COPY_ASYNC");
  w.line("asm volatile(\"cp.async.wait_group %0;\" : : \"n\"(N) : \"memory\");");
  w.line("#elif defined(FXC_EMULATION)");
  w.line("fxc_emu_copy_wait(N);");
  w.line("#endif");
  w.close();
}

// The chunked scan's state-table helpers, once in a source whose chunk_states sum with a table
// (CudaKernelInfo::state_table): the table's swizzled columns (fxc_table_column) and, on GPUs
// with float64 tensor cores, the warp's matrix product (fxc_mma_f64, FXC_F64_MMA).
void emit_state_table_helpers(Writer& w) {
  w.line("// float64 tensor cores (A100, H100, H200: sm_80 and sm_90, twice the float64 FMA rate): the");
  w.line("// chunked scan's zero-state pass sums its table's products as 8 x 8 x 4 matrix products");
  w.line("// (fxc_mma_f64). The emulation runs them too (FXC_EMULATION_NO_F64_MMA: the FMA loop instead).");
  w.line("#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900)");
  w.line("#define FXC_F64_MMA 1");
  w.line("#elif defined(FXC_EMULATION) && !defined(FXC_EMULATION_NO_F64_MMA)");
  w.line("#define FXC_F64_MMA 1");
  w.line("#endif");
  w.line("// Where column `column` of the chunked scan's shared state table (rows `padded` doubles apart,");
  w.line("// a multiple of 8) keeps row `row`'s value: swizzled within blocks of 16 (8) columns, so that 4");
  w.line("// consecutive rows' same columns (a matrix product's operand) fall on different banks. Pairs");
  w.line("// of columns stay together and 16-byte aligned.");
  w.open("__device__ inline int fxc_table_column(int row, int column, int padded) {");
  w.line("return column ^ (padded % 16 == 0 ? 4 * (row & 3) : 4 * ((row >> 1) & 1));");
  w.close();
  w.line("#ifdef FXC_F64_MMA");
  w.line("// c += a b for a warp: a is 8 x 4 (row r at a + r * a_stride, the signal's type, taken as a");
  w.line("// double), b the state table's 4 rows from `b` (its first row a multiple of 4) and its columns");
  w.line("// n0 .. n0 + 7, c 8 x 8 of which this lane holds row lane / 4, columns 2 (lane % 4) and the");
  w.line("// next (PTX mma.m8n8k4.f64: every lane of the warp calls it, and each loads its one element");
  w.line("// of a and of b). The emulation passes the lanes' elements between them as the GPU does.");
  w.line("template <class T>");
  w.open("__device__ inline void fxc_mma_f64(double (&c)[2], const T* a, int a_stride, const double* b, int padded, int n0) {");
  w.line("const int g = threadIdx.x % 32 / 4, q = threadIdx.x % 4;");
  w.line("const double x = double(a[g * a_stride + q]), y = b[q * padded + fxc_table_column(q, n0 + g, padded)];");
  w.line("#ifdef FXC_EMULATION");
  w.line("fxc_emu_mma_m8n8k4_f64(c, x, y);");
  w.line("#else");
  w.line("asm volatile(\"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\"");
  w.line("             : \"+d\"(c[0]), \"+d\"(c[1]) : \"d\"(x), \"d\"(y));");
  w.line("#endif");
  w.close();
  w.line("#endif");
}

namespace {

// The chunked scan's matrix `from` (float64, transposed: a[q * D + r] is row r, column q) as
// `a`: copied into shared memory when it fits (the caller synchronizes before reading it),
// else read through the cache.
void emit_scan_matrix(Writer& w, int d, const std::string& from) {
  if (d * d <= kCudaSharedMatrixCells) {
    w.line("__shared__ double a[" + str(static_cast<long long>(d) * d) + "];  // " + from + ", transposed");
    w.line("for (int i = threadIdx.x; i < D * D; i += blockDim.x) a[i] = " + from + "[i];");
  } else {
    w.line("const double* const a = " + from + ";  // too large for shared memory: read through the cache");
  }
}

// The chunk passes' wavefront (CudaKernelInfo::wavefront): in iteration n, stage q of the
// pipeline works on sample n - q of the chunk, taking stage q - 1's result of the previous
// iteration from pipeline register p<q>. A stage is one step of the chain (a section, or a
// gain, clip or tanh stage), or past ir::kGpuWavefrontMaxStages steps a group of
// ir::wavefront_group consecutive ones run one after another. The stages of one iteration are
// independent, so a thread's FMA latencies overlap instead of adding up (the CPU backend's
// section wavefront, codegen/cpu/emit_chain.cpp, in the same order). Each section still sees
// exactly the chunk's samples in order, with the same arithmetic: the outputs and states are
// those of the sample-by-sample loop, bit for bit.
class Wavefront {
 public:
  Wavefront(const ChainBody& body, const Types& ty, std::size_t end, bool output)
      : body_(body), ty_(ty), output_(output) {
    const std::vector<ChainBody::Step> steps = body.steps(end);
    const std::size_t group = static_cast<std::size_t>(ir::wavefront_group(static_cast<int>(steps.size())));
    for (std::size_t i = 0; i < steps.size(); i += group)
      stages_.emplace_back(steps.begin() + static_cast<std::ptrdiff_t>(i),
                           steps.begin() + static_cast<std::ptrdiff_t>(std::min(i + group, steps.size())));
  }

  /// Samples between a sample's entry into the first stage and its result leaving the last.
  long long lag() const { return static_cast<long long>(stages_.size()) - 1; }

  /// The pipeline registers, zero (the first iterations' unused stages read them).
  void declare(Writer& w) const {
    for (std::size_t q = 1; q < stages_.size(); ++q)
      w.line(body_.step_type(stages_[q - 1].back()) + " p" + str(static_cast<long long>(q)) + " = 0;  // stage " +
             str(static_cast<long long>(q)) + "'s next input");
  }

  /// Iteration `n` (a long long variable): `load` gives input sample `n` (source), `store`
  /// writes a result (source) as output sample `m` (source). `predicated`: the chunk's first
  /// and last `lag` iterations, where a stage whose sample m = n - q lies outside [0, count)
  /// leaves its state alone and writes nothing.
  template <class Load, class Store>
  void iteration(Writer& w, bool predicated, const Load& load, const Store& store) const {
    const long long last = lag();
    for (long long q = last; q >= 0; --q) {
      const std::vector<ChainBody::Step>& stage = stages_[static_cast<std::size_t>(q)];
      bool stateful = false;
      for (const ChainBody::Step& step : stage)
        stateful = stateful || std::holds_alternative<ir::SosCascade>(body_.stage_of(step));
      const bool checks = predicated && (q == 0 || stateful || (q == last && output_));
      w.open("{  // stage " + str(q) + (predicated ? "" : " on sample n - " + str(q)));
      if (checks) w.line("const bool ok = n - " + str(q) + " >= 0 && n - " + str(q) + " < count;");
      // The stage's steps one after another, each on its own variable (v, then v1, v2, ...: the
      // steps of a mixed chain change type).
      std::string value;
      for (std::size_t j = 0; j < stage.size(); ++j) {
        const std::string type = body_.step_type(stage[j]);
        const std::string name = j == 0 ? "v" : "v" + str(static_cast<long long>(j));
        std::string input;
        if (j > 0) {
          input = body_.step_type(stage[j - 1]) == type ? value : type + "(" + value + ")";
        } else if (q == 0) {
          input = checks ? "ok ? " + load("n") + " : " + type + "(0)" : load("n");
        } else {
          const std::string from = body_.step_type(stages_[static_cast<std::size_t>(q - 1)].back());
          input = from == type ? "p" + str(q) : type + "(p" + str(q) + ")";
        }
        w.line(type + " " + name + " = " + input + ";");
        body_.step(w, stage[j], name, checks ? "ok" : "");
        value = name;
      }
      if (q < last) w.line("p" + str(q + 1) + " = " + value + ";");
      else if (output_) w.line((checks ? "if (ok) " : "") + store("n - " + str(last), ty_.store(value)) + ";");
      w.close();
    }
  }

 private:
  const ChainBody& body_;
  const Types& ty_;
  std::vector<std::vector<ChainBody::Step>> stages_;
  bool output_;
};

// The planar tile of the chunk passes without the wavefront: two halves of kCudaTileHalf
// samples per chunk that take turns. While the block computes from one half, the next samples
// copy into the other (fxc_copy_async), so only a chunk's first step waits for memory.
class HalfTile {
 public:
  /// A row's stride in samples of `bytes` (4 or 8): 16 bytes of banks apart (kCudaTileBytes).
  static constexpr int stride(int bytes) { return bytes == 4 ? 36 : 34; }
  /// The tile's bytes and its row tables' (row_at, row_count) for samples of `bytes`.
  static constexpr int tile_bytes(int bytes) { return kCudaBlockThreads * stride(bytes) * bytes; }
  static constexpr int row_table_bytes() { return kCudaBlockThreads * (8 + 4); }

  explicit HalfTile(const Types& ty) : ty_(ty), v_(kCudaTileBytes / ty.signal.bytes) {}

  /// The shared tile: kCudaBlockThreads rows (chunks), 16 bytes of banks apart.
  void declare(Writer& w) const {
    const std::string stride = str(HalfTile::stride(ty_.signal.bytes));
    w.line("// Planar: a tile of 32 samples per chunk, rows 16-byte aligned and 16 bytes of banks apart.");
    w.line("// Interleaved: a thread's next samples, in its row of 33 (no bank conflicts).");
    w.line("__shared__ __align__(16) " + ty_.signal.t + " tile[" + str(kCudaBlockThreads) + "][" + stride + "];");
  }

  /// Emits the loop over the chunk's halves (j: the first sample of the half to compute), once
  /// for the wide layout (every row 16-byte aligned, whole groups of V samples) and once for any
  /// other: a half step is a barrier, the next half's copies (then `more_copies()`, which may use
  /// h, that half's first column, and j), the wait for this half's, `compute(wide)` from columns
  /// h .. h + kCudaTileHalf - 1 (wide: this thread's samples in the half are a multiple of V),
  /// and, for an output pass, the half's stores to `out` (16-byte aligned for wide stores too).
  /// Needs `lane`, `L`, `row_at` and `row_count`. Two loops instead of a test of `wide` at every
  /// copy and store: ptxas then keeps the wide loop's addresses simple (about 3 SASS
  /// instructions a sample fewer in W1's output pass, docs/cuda-performance-model.md).
  template <class MoreCopies, class Compute>
  void emit_loops(Writer& w, bool output, const MoreCopies& more_copies, const Compute& compute) const {
    const std::string half = str(kCudaTileHalf), V = str(v_), vec = ty_.signal.t + str(v_);
    const std::string T = ty_.signal.t, wide_rows = str(kCudaTileHalf / v_);
    // The output rows' pointers too where a thread has 4 rows (float32). Its 8 rows in float64
    // would take 16 registers more for 3 instructions a sample: W1's output pass on float64
    // signals 254 registers (ptxas's limit 255) against 222, a longer chain would spill.
    const bool out_pointers = output && kCudaTileHalf / v_ <= 4;
    w.line("// The tile's two halves of " + half + " samples take turns: while the block computes from one, the");
    w.line("// next samples copy into the other, so only a chunk's first step waits for memory. Where");
    w.line("// every row starts 16-byte aligned and holds whole groups of " + V + " samples, a lane copies, reads and");
    w.line("// stores " + V + " at a time.");
    w.line("const bool wide = ((unsigned long long)in & 15) == 0 && " +
           std::string(output ? "((unsigned long long)out & 15) == 0 && " : "") + "channel_stride % " + V +
           " == 0 && samples % " + V + " == 0 && L % " + V + " == 0;");
    auto half_step = [&](const auto& copies, const auto& stores, bool wide) {
      w.open("for (int j = -" + half + "; j < L; j += " + half + ") {  // samples j + " + half +
             " on copy in, samples j on are computed");
      w.line(std::string("__syncthreads();  // the half they copy into is done with") +
             (wide ? "" : " (the first time: the row tables are written)"));
      w.open("if (j + " + half + " < L) {");
      w.line("const int h = (j + " + half + ") & " + half + ";  // that half's first column");
      copies();
      more_copies();
      w.close();
      w.line("fxc_copy_commit();");
      w.line("if (j < 0) continue;");
      w.line("fxc_copy_wait<1>();  // this thread's copies of samples j on are in (those of the next half may not be)");
      w.line("__syncthreads();  // and every thread's");
      w.line("const int h = j & " + half + ";");
      compute(wide);
      if (output) {
        w.line("__syncthreads();");
        stores();
      }
      w.close();
    };
    w.open("if (wide) {");
    w.line("__syncthreads();  // the row tables are written");
    w.line("// This thread's " + wide_rows + " rows of the wide copies" + (out_pointers ? " and stores" : "") +
           ", read once: where each starts and how");
    w.line("// many samples it has. fxc_global_pointer keeps each address one 64-bit value.");
    w.line("const int c0 = (lane % " + wide_rows + ") * " + V + ";  // the copies' first column in a half");
    w.line("int wide_count[" + wide_rows + "];");
    w.line("const " + T + "* wide_in[" + wide_rows + "];");
    if (out_pointers) w.line(T + "* wide_out[" + wide_rows + "];");
    w.line("#pragma unroll");
    w.open("for (int r = 0; r < " + wide_rows + "; ++r) {");
    wide_row(w);
    w.line("wide_count[r] = row_count[i];");
    w.line("wide_in[r] = fxc_global_pointer(in + row_at[i]);");
    if (out_pointers) w.line("wide_out[r] = fxc_global_pointer(out + row_at[i]);");
    w.close();
    half_step(
        [&] {
          w.line("#pragma unroll");
          w.open("for (int r = 0; r < " + wide_rows + "; ++r) {");
          wide_row(w);
          w.line("const int m = j + " + half + " + c0;  // the copy's first sample in its chunk: all " + V + " in it, or none");
          w.line("const bool valid = m < wide_count[r];");
          w.line("fxc_copy_async<16>(&tile[i][h + c0], wide_in[r] + (valid ? m : 0), valid);");
          w.close();
        },
        [&] {
          w.line("#pragma unroll");
          w.open("for (int r = 0; r < " + wide_rows + "; ++r) {");
          wide_row(w);
          w.line("const int m = j + c0;");
          w.line("if (m < wide_count[r]) *reinterpret_cast<" + vec + "*>(" + (out_pointers ? "wide_out[r]" : "out + row_at[i]") +
                 " + m) = *reinterpret_cast<const " + vec + "*>(&tile[i][h + c0]);");
          w.close();
        },
        true);
    w.reopen("} else {");
    w.line("const int i0 = threadIdx.x / 32 + (lane / 16) * 4;  // this thread's first row");
    half_step(
        [&] {
          w.line("#pragma unroll");
          w.open("for (int r = 0; r < " + half + "; ++r) {");
          pair_row(w);
          w.line("const int m = j + " + half + " + lane % 16;  // the sample in its chunk");
          w.line("const bool valid = m < row_count[i];");
          w.line("fxc_copy_async<sizeof(" + T + ")>(&tile[i][h + lane % 16], in + row_at[i] + (valid ? m : 0), valid);");
          w.close();
        },
        [&] {
          w.line("#pragma unroll");
          w.open("for (int r = 0; r < " + half + "; ++r) {");
          pair_row(w);
          w.line("const int m = j + lane % 16;");
          w.line("if (m < row_count[i]) out[row_at[i] + m] = tile[i][h + lane % 16];");
          w.close();
        },
        false);
    w.close();
  }

  /// Samples a thread reads from its row with one vector access (float4, double2).
  int samples_per_access() const { return v_; }

 private:
  // Narrow copies (4 or 8 bytes a lane, any alignment): copy r of warp w takes rows
  // i0 + (r % 4) * 8 + (r / 4) * 32, i0 = w + (lane / 16) * 4: the two half warps' rows 4 apart,
  // which at a row stride of 36 float32 samples puts their halves on different banks (16 apart
  // put them on the same ones: a review found it), all of the block's rows over the 16 copies,
  // at offsets from i0 that unrolling makes constants.
  static void pair_row(Writer& w) {
    static_assert(kCudaBlockThreads / 32 == 4, "the narrow copies' rows assume 4 warps a block");
    w.line("const int i = i0 + (r % 4) * 8 + (r / 4) * 32;");
  }
  // Wide copies (16 bytes a lane, V samples, where every row starts 16-byte aligned): a row's
  // half is 16 / V lanes, so a copy takes 2V rows, and a thread 16 / V copies. Copy r of warp
  // w takes rows 2V (w + warps r) + the lane's slot; in float32 the slots are permuted so that
  // the two rows of a quarter warp (whose 16-byte accesses go together) are 4 apart, 64 bytes
  // of banks apart at the row stride of 144 bytes.
  void wide_row(Writer& w) const {
    const std::string lanes_per_row = str(kCudaTileHalf / v_), slot = "lane / " + lanes_per_row;
    w.line("const int i = " + str(2 * v_) + " * (threadIdx.x / 32 + r * " + str(kCudaBlockThreads / 32) + ") + " +
           (v_ == 4 ? "(" + slot + ") / 2 + ((" + slot + ") % 2) * 4" : slot) + ";");
  }

  const Types& ty_;
  int v_;  // samples in 16 bytes
};

// The planar chunk passes' start: this thread's (channel, chunk) and the block's row tables.
void emit_planar_rows(Writer& w, const std::string& threads) {
  w.line("// Planar: the block's threads take neighbouring chunks, and their samples go through a shared");
  w.line("// tile that warps fill (and empty) with neighbouring samples of one chunk, one transaction,");
  w.line("// instead of loads L samples apart.");
  w.line("const long long first = (long long)blockIdx.x * blockDim.x;");
  w.line("const long long t = first + threadIdx.x;");
  w.line("const long long c = t / chunks, k = t % chunks;");
  w.line("const long long begin = k * L, end = begin + L < samples ? begin + L : samples;");
  w.line("const int lane = threadIdx.x % 32;");
  w.line("// Each tile row's chunk, from the thread that runs it: where it starts in the signal and how");
  w.line("// many samples it has (none past the last row). Read at every step instead of dividing by");
  w.line("// `chunks` for every row a thread copies.");
  w.line("__shared__ long long row_at[" + threads + "];");
  w.line("__shared__ int row_count[" + threads + "];");
  w.line("row_at[threadIdx.x] = t < rows ? c * channel_stride + begin : 0;");
  w.line("row_count[threadIdx.x] = t < rows ? (int)(end - begin) : 0;");
}

// Passes 0 and 4 share the chunk loop: pass 0 runs the scanned prefix from zero state and
// stores only its final state; pass 4 runs the whole chain from the chunk's true start state,
// writes the output and, for a channel's last chunk, the stream's new state.
void emit_chunk_pass(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain, bool output) {
  Types ty = types_of(k, chain);
  const Scalar& s = ty.compute;
  const std::string& T = ty.signal.t;
  ChainBody body(chain, s);
  const ChainLayout& l = body.layout();
  const std::size_t stop = output ? chain.stages.size() : ir::scanned_prefix(chain.stages);
  const std::string& symbol = output ? k.symbol : k.entries[0].symbol;
  const Wavefront wave(body, ty, stop, output);
  const std::string threads = str(k.wavefront ? kCudaWavefrontThreads : kCudaBlockThreads);
  const std::string lag = str(wave.lag());
  w.open("extern \"C\" __global__ void " + symbol + "(");
  if (output) {
    w.line("const " + T + "* __restrict__ in, " + T + "* __restrict__ out, " + kSignalArgs + ",");
    w.line("const " + s.t + "* __restrict__ params, const double* __restrict__ chunk_state, " + s.t +
           "* __restrict__ state) {");
  } else {
    w.line("const " + T + "* __restrict__ in, " + kSignalArgs + ",");
    w.line("const " + s.t + "* __restrict__ params, double* __restrict__ chunk_state) {");
  }
  w.line("const long long L = " + str(k.chunk_length) + ";");
  w.line("const long long D = " + str(l.state_per_channel) + ";");
  w.line("const long long chunks = (samples + L - 1) / L;");
  w.line("const long long rows = channels * chunks;  // (channel, chunk) pairs");
  body.load_params(w);
  // The chunk's start and end: the true start state (pass 4) or zero (pass 0).
  auto start = [&](const std::string& row) {
    if (output) {
      w.line("const double* const st = chunk_state + (" + row + ") * D;  // the chunk's true start state");
      body.load_state(w, ChainBody::Start::chunk);
    } else {
      body.load_state(w, ChainBody::Start::zero);
    }
  };
  auto finish = [&]() {
    if (output) {
      w.open("if (k == chunks - 1) {  // the channel's last chunk ends where the stream goes on");
      w.line(s.t + "* const fin = state + c * D;");
      body.store_state(w, "fin");
      w.close();
    } else {
      w.line("double* const e = chunk_state + (c * chunks + k) * D;");
      body.store_state(w, "e");
    }
  };
  // The wavefront's iterations from `from` up to (not including) `below` (sources; the loop
  // variable n is declared before), predicated or not.
  auto iterations = [&](const std::string& from, const std::string& below, bool predicated, const auto& load,
                        const auto& store) {
    w.open("for (" + from + "; " + below + "; ++n) {");
    wave.iteration(w, predicated, load, store);
    w.close();
  };

  // A wavefront's output pass keeps a ring of 64 samples per chunk (sample m at column m % 64);
  // its chunk_states pass, which writes no output, the tile of 32 (column m % 32). Without the
  // wavefront the tile's two halves of kCudaTileHalf samples take turns.
  const HalfTile halves(ty);
  const bool ring = k.wavefront && output;
  const std::string mask = ring ? "63" : "31";
  if (ring) {
    w.line("// Planar: a ring of 64 samples per chunk: sample m at column m % 64. A result leaves the");
    w.line("// wavefront " + lag + " samples after its input came in, into its input's column; it leaves the");
    w.line("// ring before that column takes sample m + 64.");
    w.line("__shared__ " + T + " tile[" + threads + "][65];  // padded: a thread's row has no bank conflicts");
  } else if (k.wavefront) {
    w.line("// Planar: a tile of 32 samples per chunk. Interleaved: a thread's next samples, in its row.");
    w.line("__shared__ " + T + " tile[" + threads + "][33];  // padded: a thread's row has no bank conflicts");
  } else {
    halves.declare(w);
  }
  static_assert(kCudaSampleAhead <= 32, "the interleaved passes stage a thread's samples in its row of the tile");
  static_assert(2 * kCudaTileHalf == 32 && kCudaBlockThreads % 32 == 0 && kCudaWavefrontThreads % 32 == 0);
  // `warps` is the launch's (cuda_launch launches exactly `threads` a block): every row's table
  // entry is written.
  const std::string warps = str((k.wavefront ? kCudaWavefrontThreads : kCudaBlockThreads) / 32);
  const std::string half = str(kCudaTileHalf);
  w.open("if (sample_stride == 1) {");
  emit_planar_rows(w, threads);
  start("t < rows ? t : 0");
  if (k.wavefront) {
    w.line("const long long count = t < rows ? end - begin : 0;  // this thread's samples");
    wave.declare(w);
    w.open("for (long long j = 0; j < L; j += 32) {  // every thread takes every step: they synchronize");
    w.line("__syncthreads();  // the last tile is done with (and, the first time, the row tables are written)");
    w.line("// Warp w takes rows w, w + " + warps + ", ...: its 32 rows' copies are all in flight before it waits.");
    w.line("#pragma unroll");
    w.open("for (int r = 0; r < 32; ++r) {");
    w.line("const int i = threadIdx.x / 32 + r * " + warps + ";");
    w.line("const long long at = row_at[i];");
    if (output) {
      w.line("// Samples j - 64 .. j - 33 left the wavefront by iteration j - 33 + " + lag + " < j: out, before");
      w.line("// their columns take samples j .. j + 31 (the same thread reads a column, then copies into it).");
      w.line("if (j >= 64 && j - 64 + lane < row_count[i]) out[at + j - 64 + lane] = tile[i][(j + lane) & 63];");
    }
    w.line("const bool valid = j + lane < row_count[i];");
    w.line("fxc_copy_async<sizeof(" + T + ")>(&tile[i][(j + lane) & " + mask + "], in + at + (valid ? j + lane : 0), valid);");
    w.close();
    w.line("fxc_copy_commit();");
    w.line("fxc_copy_wait<0>();  // this thread's copies are in");
    w.line("__syncthreads();  // and every thread's");
    auto load = [&](const std::string& n) { return ty.load("tile[threadIdx.x][(" + n + ") & " + mask + "]"); };
    auto store = [&](const std::string& m, const std::string& v) { return "tile[threadIdx.x][(" + m + ") & " + mask + "] = " + v; };
    w.open("if (count > j) {  // the thread's chunk has samples in this tile");
    w.line("long long n = j;");
    w.line("// The first iterations: steps beyond the first sample wait (predicated).");
    iterations("", "n < j + 32 && n < " + lag, true, load, store);
    iterations("", "n < j + 32 && n < count", false, load, store);
    w.open("if (count <= j + 32) {  // the chunk ends in this tile: its last samples through the later steps");
    iterations("n = count > " + lag + " ? count : " + lag, "n < count + " + lag, true, load, store);
    w.close();
    w.close();
    w.close();
    if (output) {
      const long long tiles_end = (static_cast<long long>(k.chunk_length) + 31) / 32 * 32;
      w.line("__syncthreads();");
      w.open("for (int i = threadIdx.x / 32; i < blockDim.x; i += blockDim.x / 32) {  // the ring's last 64 samples out");
      w.line("const long long at = row_at[i];");
      w.open("for (long long m = " + str(tiles_end - 64) + " + lane; m < " + str(tiles_end) + "; m += 32) {");
      w.line("if (m >= 0 && m < row_count[i]) out[at + m] = tile[i][m & 63];");
      w.close();
      w.close();
    }
  } else {
    const int v = halves.samples_per_access();
    const std::string V = str(v), vec = ty.signal.t + str(v);  // float4, double2
    const char* const member[] = {"x", "y", "z", "w"};
    w.line("const int n_this = t < rows ? (int)(end - begin) : 0;  // this thread's samples");
    // The half's samples while `below`, V at a time, from column i (`init` declares it, or it
    // goes on from the last loop).
    auto by_vectors = [&](const std::string& init, const std::string& below) {
      w.open("for (" + init + "; " + below + "; i += " + V + ") {  // " + V + " samples a shared-memory access");
      w.line("const " + vec + " q = *reinterpret_cast<const " + vec + "*>(&tile[threadIdx.x][h + i]);");
      if (output) w.line(vec + " r;");
      for (int e = 0; e < v; ++e) {
        w.open("{");
        w.line(ty.value.t + " v = " + ty.load(std::string("q.") + member[e]) + ";");
        body.sample(w, stop);
        if (output) w.line(std::string("r.") + member[e] + " = " + ty.store(body.result()) + ";");
        w.close();
      }
      if (output) w.line("*reinterpret_cast<" + vec + "*>(&tile[threadIdx.x][h + i]) = r;");
      w.close();
    };
    halves.emit_loops(w, output, [] {}, [&](bool wide) {
      w.line("const int left = n_this - j;");
      w.line("const int count = left < 0 ? 0 : left < " + half + " ? left : " + half + ";  // this thread's samples in the half");
      if (wide) {
        w.line("// A multiple of " + V + ". A whole half (all but a chunk's last) as a loop of known trips, unrolled:");
        w.line("// no bound to test a vector.");
        w.open("if (count == " + half + ") {");
        w.line("#pragma unroll 2");
        by_vectors("int i = 0", "i < " + half);
        w.reopen("} else {");
        by_vectors("int i = 0", "i < count");
        w.close();
      } else {
        w.line("int i = 0;");
        by_vectors("", "i + " + V + " <= count");
        w.open("for (; i < count; ++i) {  // the chunk's last samples");
        w.line(ty.value.t + " v = " + ty.load("tile[threadIdx.x][h + i]") + ";");
        body.sample(w, stop);
        if (output) w.line("tile[threadIdx.x][h + i] = " + ty.store(body.result()) + ";");
        w.close();
      }
    });
  }
  w.open("if (t < rows) {");
  finish();
  w.close();
  w.reopen("} else {");
  w.line("// Interleaved: neighbouring threads take neighbouring channels of one chunk, so a warp's loads");
  w.line("// of sample n are adjacent.");
  w.line("const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
  w.line("if (t >= rows) return;");
  w.line("const long long c = t % channels, k = t / channels;");
  w.line("const long long begin = k * L, end = begin + L < samples ? begin + L : samples;");
  start("c * chunks + k");
  w.line("const " + T + "* const x = in + c * channel_stride;");
  if (output) w.line(T + "* const y = out + c * channel_stride;");
  if (k.wavefront) {
    auto load = [&](const std::string& n) { return ty.load("x[(begin + " + n + ") * sample_stride]"); };
    auto store = [&](const std::string& m, const std::string& v) { return "y[(begin + " + m + ") * sample_stride] = " + v; };
    w.line("const long long count = end - begin;");
    wave.declare(w);
    w.line("long long n = 0;");
    iterations("", "n < " + lag, true, load, store);
    iterations("", "n < count", false, load, store);
    iterations("n = count > " + lag + " ? count : " + lag, "n < count + " + lag, true, load, store);
  } else {
    w.line(T + " (* const ahead)[33] = reinterpret_cast<" + T + " (*)[33]>(&tile[0][0]);  // rows of 33");
    emit_samples_ahead(w, ty, "begin", "end", "ahead[threadIdx.x]", [&](const std::string& n, const std::string& input) {
      w.line(ty.value.t + " v = " + ty.load(input) + ";");
      body.sample(w, stop);
      if (output) w.line("y[" + n + " * sample_stride] = " + ty.store(body.result()) + ";");
    });
  }
  finish();
  w.close();
  w.close();
}

// Pass 0 with CudaKernelInfo::state_table: each chunk's end state from zero state as a sum over
// its samples, e = sum_n R[n] x[n], R[n] = A^(L - 1 - n) B (state_table, double[L][D]). The
// sections' recurrence took 5 dependent operations a section and sample; the sum takes D = 2 x
// sections independent FMAs a sample in float64, whatever the sections' precision (the carry is
// float64 anyway). Planar: R's rows come through shared memory with the samples, a half at a
// time, and every thread of a block reads the same row (a broadcast). Interleaved: the warp's
// threads are on one chunk, so they read the same row of R through the cache.
void emit_chunk_states_by_table(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain) {
  // Static shared memory, at most 48 KiB a block: the float64 tile, the table's two halves at
  // the most rows, the row tables (48640 bytes, as ptxas reports for 24 float64 sections).
  static_assert(HalfTile::tile_bytes(8) + 2 * kCudaTileHalf * kCudaStateTableMaxRows * 8 + HalfTile::row_table_bytes() <=
                48 * 1024);
  static_assert(kCudaStateTableMaxRows % 8 == 0, "the padded table fits as the largest one does");
  Types ty = types_of(k, chain);
  const std::string& T = ty.signal.t;
  const int d = k.state_dimension;
  const std::string D = str(d), half = str(kCudaTileHalf), threads = str(kCudaBlockThreads);
  const HalfTile halves(ty);
  const int v = halves.samples_per_access();
  const std::string vec = T + str(v);
  const char* const member[] = {"x", "y", "z", "w"};
  // The shared table's rows padded to whole blocks of 8 for the matrix products (the padding is
  // never written: it reaches only their columns past D, which are not stored), its columns
  // swizzled (fxc_table_column).
  const int padded = (d + 7) / 8 * 8, blocks = padded / 8;
  auto as_double = [&](const std::string& x) { return T == "double" ? x : "double(" + x + ")"; };
  w.open("extern \"C\" __global__ void " + k.entries[0].symbol + "(");
  w.line("const " + T + "* __restrict__ in, " + kSignalArgs + ",");
  w.line("const double* __restrict__ state_table, double* __restrict__ chunk_state) {");
  w.line("const long long L = " + str(k.chunk_length) + ";");
  w.line("const int D = " + D + ";");
  w.line("const long long chunks = (samples + L - 1) / L;");
  w.line("const long long rows = channels * chunks;  // (channel, chunk) pairs");
  w.line("// The chunk's end state from zero: D sums, independent of each other (registers: every index");
  w.line("// below is a constant once unrolled).");
  w.line("double e[D];");
  w.line("#pragma unroll");
  w.line("for (int r = 0; r < D; ++r) e[r] = 0;");
  // One sample `x` (a double) into the sums with R's row `row` (a pointer to D doubles, 16-byte
  // aligned): in the shared table, its row `shared_row`, whose columns are swizzled.
  auto accumulate = [&](const std::string& row, const std::string& x, const std::string& shared_row) {
    w.line("#pragma unroll");
    w.open("for (int r = 0; r < D; r += 2) {");
    const std::string column = shared_row.empty() ? "r" : "fxc_table_column(" + shared_row + ", r, " + str(padded) + ")";
    w.line("const double2 a = *reinterpret_cast<const double2*>(" + row + " + " + column + ");");
    w.line("e[r] = fma(a.x, " + x + ", e[r]);");
    w.line("e[r + 1] = fma(a.y, " + x + ", e[r + 1]);");
    w.close();
  };
  auto store_sums = [&]() {
    w.line("double* const to = chunk_state + (c * chunks + k) * D;  // (a last chunk shorter than L: unread)");
    w.line("#pragma unroll");
    w.line("for (int r = 0; r < D; ++r) to[r] = e[r];");
  };
  halves.declare(w);
  static_assert(2 * kCudaTileHalf == 32, "the table's rows for both halves");
  w.line("__shared__ __align__(16) double table[32][" + str(padded) +
         "];  // R's rows for the tile's two halves (column m: row m % 32), padded to 8s, swizzled");
  w.open("if (sample_stride == 1) {");
  emit_planar_rows(w, threads);
  const std::string stride = str(HalfTile::stride(ty.signal.bytes)), B = str(blocks), P = str(padded);
  w.line("#ifdef FXC_F64_MMA");
  w.line("// The block's sums as matrix products: E (128 chunks x D) += X (128 chunks x 4 samples) R (4 x D)");
  w.line("// every 4 samples. Warp w takes chunks 32 w .. 32 w + 31: 4 blocks of 8 rows x " + B + " of 8 columns,");
  w.line("// 2 sums of each a lane.");
  w.line("const int warp_row = 32 * (threadIdx.x / 32);");
  w.line("double sums[4][" + B + "][2];");
  w.line("#pragma unroll");
  w.line("for (int m = 0; m < 4; ++m)");
  w.line("  #pragma unroll");
  w.line("  for (int n = 0; n < " + B + "; ++n) sums[m][n][0] = sums[m][n][1] = 0;");
  w.line("#endif");
  halves.emit_loops(
      w, false,
      [&] {
        w.line("// R's rows for that half, to the same columns of `table` (zeros past L), 16 bytes a copy.");
        w.line("#pragma unroll");
        w.open("for (int q0 = 0; q0 < " + half + " * D / 2; q0 += " + threads + ") {");
        w.line("const int q = q0 + threadIdx.x, row = q / (D / 2), col = q % (D / 2) * 2;");
        w.line("const bool valid = j + " + half + " + row < L;");
        w.line("if (q < " + half + " * D / 2) fxc_copy_async<16>(&table[h + row][fxc_table_column(h + row, col, " + P +
               ")], state_table + (valid ? (j + " + half + " + row) * D + col : 0), valid);");
        w.close();
      },
      [&](bool) {
        w.line("// Every sample of the half, the chunk's or not: the copies left zeros past its end.");
        w.line("#ifdef FXC_F64_MMA");
        w.line("#pragma unroll");
        w.open("for (int i = 0; i < " + half + "; i += 4) {");
        w.line("#pragma unroll");
        w.open("for (int m = 0; m < 4; ++m) {");
        w.line("#pragma unroll");
        w.line("for (int n = 0; n < " + B + "; ++n)");
        w.line("  fxc_mma_f64(sums[m][n], &tile[warp_row + 8 * m][h + i], " + stride + ", &table[h + i][0], " + P + ", 8 * n);");
        w.close();
        w.close();
        w.line("#else");
        w.line("#pragma unroll");
        w.open("for (int i = 0; i < " + half + "; i += " + str(v) + ") {");
        w.line("const " + vec + " q = *reinterpret_cast<const " + vec + "*>(&tile[threadIdx.x][h + i]);");
        for (int e = 0; e < v; ++e) {
          w.open("{");
          w.line("const double x = " + as_double(std::string("q.") + member[e]) + ";");
          accumulate("&table[h + i + " + str(e) + "][0]", "x", "h + i + " + str(e));
          w.close();
        }
        w.close();
        w.line("#endif");
      });
  w.line("#ifdef FXC_F64_MMA");
  w.line("#pragma unroll");
  w.open("for (int m = 0; m < 4; ++m) {");
  w.line("#pragma unroll");
  w.open("for (int n = 0; n < " + B + "; ++n) {");
  w.line("const long long row = first + warp_row + 8 * m + lane / 4;  // (a last chunk shorter than L: unread)");
  w.line("const int r = 8 * n + 2 * (lane % 4);  // D is even");
  w.open("if (row < rows && r < D) {");
  w.line("chunk_state[row * D + r] = sums[m][n][0];");
  w.line("chunk_state[row * D + r + 1] = sums[m][n][1];");
  w.close();
  w.close();
  w.close();
  w.line("#else");
  w.open("if (t < rows) {");
  store_sums();
  w.close();
  w.line("#endif");
  w.reopen("} else {");
  w.line("// Interleaved: neighbouring threads take neighbouring channels of one chunk, so a warp's loads");
  w.line("// of sample n are adjacent, and its reads of R's row n are one.");
  w.line("const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
  w.line("if (t >= rows) return;");
  w.line("const long long c = t % channels, k = t / channels;");
  w.line("const long long begin = k * L, end = begin + L < samples ? begin + L : samples;");
  w.line("const " + T + "* const x = in + c * channel_stride;");
  w.line(T + " (* const ahead)[33] = reinterpret_cast<" + T + " (*)[33]>(&tile[0][0]);  // rows of 33");
  emit_samples_ahead(w, ty, "begin", "end", "ahead[threadIdx.x]", [&](const std::string& n, const std::string& input) {
    w.line("const double u = " + as_double(input) + ";");
    accumulate("state_table + (" + n + " - begin) * D", "u", "");
  });
  store_sums();
  w.close();
  w.close();
}

// Passes 1 and 3: one block per (channel, group), a thread per state row, walking the group's
// chunks in turn with A^L. Pass 1 sums the group from a zero start; pass 3 starts from the
// group's true start and writes each chunk's true start state over its zero-state end.
void emit_group_walk(Writer& w, const CudaKernelInfo& k, bool starts) {
  const int d = k.state_dimension;
  // A block of more than 256 threads has fewer than 255 registers a thread (65536 an SM): the
  // launch's block size as a bound keeps a wide state's walk within them (spilling if it must;
  // without it ptxas took 127 for 640 rows, and the launch would fail for want of registers).
  const int threads = carry_block_threads(d);
  w.open("extern \"C\" __global__ void " + (threads > 256 ? "__launch_bounds__(" + str(threads) + ") " : std::string()) +
         k.entries[starts ? 3 : 1].symbol + "(");
  if (starts)
    w.line("long long channels, long long samples, const double* __restrict__ a_chunk, "
           "const double* __restrict__ group_starts, double* __restrict__ chunk_state) {");
  else
    w.line("long long channels, long long samples, const double* __restrict__ a_chunk, "
           "const double* __restrict__ chunk_state, double* __restrict__ totals) {");
  w.line("const long long L = " + str(k.chunk_length) + ", G = " + str(kCudaCarryGroup) + ";");
  w.line("const long long chunks = (samples + L - 1) / L, groups = (chunks + G - 1) / G;");
  w.line("const long long c = blockIdx.x / groups, g = blockIdx.x % groups;  // one block per (channel, group)");
  w.line("const int r = threadIdx.x;  // the state row this thread carries");
  w.line("const int D = " + str(d) + ";");
  emit_scan_matrix(w, d, "a_chunk");
  w.line("__shared__ double s[" + str(d) + "];");
  w.line(starts ? "if (r < D) s[r] = group_starts[(c * groups + g) * D + r];"
                : "if (r < D) s[r] = 0;  // the group's sum from a zero start");
  w.line("__syncthreads();");
  w.line(std::string(starts ? "" : "const ") + "double* const e = chunk_state + c * chunks * D;");
  w.line("const long long last = (g + 1) * G < chunks ? (g + 1) * G : chunks;");
  w.line("// The group's zero-state ends, loaded before the walk: G independent loads in flight instead");
  w.line("// of one DRAM round trip per step (unrolled, so they stay in registers).");
  w.line("double ahead[" + str(kCudaCarryGroup) + "];");
  w.line("#pragma unroll");
  w.line("for (int j = 0; j < G; ++j) ahead[j] = r < D && g * G + j < last ? e[(g * G + j) * D + r] : 0.0;");
  const bool row_in_registers = d <= kCudaCarryRowRegisters;
  if (row_in_registers) {
    w.line("// This thread's row of A^L in registers: the matrix is the same at every step, so a step");
    w.line("// loads only s, and its loads do not wait on its FMAs.");
    w.line("double row[D];");
    w.line("#pragma unroll");
    w.line("for (int q = 0; q < D; ++q) row[q] = r < D ? a[q * D + r] : 0.0;");
  }
  const std::string P = str(kCudaCarryPartialSums);
  w.line("#pragma unroll");
  w.open("for (int j = 0; j < G; ++j) {");
  w.line("const long long k = g * G + j;");
  w.line("if (k >= last) break;  // the same for every thread of the block");
  w.line("double next = 0;");
  w.open("if (r < D) {");
  w.line("// A^L s + e[k] in " + P + " independent chains of FMAs (a step waits on D / " + P + " FMA latencies,");
  w.line("// not D); chunk k's end state from zero starts the first.");
  w.line("double part[" + P + "] = {ahead[j]};");
  static_assert(kCudaCarryPartialSums == 4, "the lines below take four partial sums");
  if (row_in_registers) {
    w.line("#pragma unroll");
    w.line("for (int q = 0; q < D; ++q) part[q % 4] = fma(row[q], s[q], part[q % 4]);");
  } else {
    // A wide state: a loop of four products a round, not D unrolled ones (ptxas took minutes
    // over hundreds of rows), the rest after it; part[] keeps constant indices, so registers.
    w.open("for (int q = 0; q + 3 < D; q += 4) {");
    for (int p = 0; p < 4; ++p)
      w.line("part[" + str(p) + "] = fma(a[(q + " + str(p) + ") * D + r], s[q + " + str(p) + "], part[" + str(p) + "]);");
    w.close();
    for (int q = d / 4 * 4; q < d; ++q)
      w.line("part[" + str(q % 4) + "] = fma(a[" + str(q) + " * D + r], s[" + str(q) + "], part[" + str(q % 4) + "]);");
  }
  w.line("next = (part[0] + part[1]) + (part[2] + part[3]);");
  w.close();
  w.line("__syncthreads();  // every row has read s");
  if (starts) {
    w.open("if (r < D) {");
    w.line("e[k * D + r] = s[r];  // chunk k's true start state replaces its zero-state end");
    w.line("s[r] = next;");
    w.close();
  } else {
    w.line("if (r < D) s[r] = next;");
  }
  w.line("__syncthreads();");
  w.close();
  if (!starts) w.line("if (r < D) totals[(c * groups + g) * D + r] = s[r];");
  w.close();
}

// Pass 2: one step of a Kogge-Stone scan over each channel's groups, a thread per (channel,
// group, state row). After the steps, group g holds sum_h (A^(L G))^(g - h) x[h] over h <= g,
// where x[0] is the stream's state and x[h] group h - 1's sum: group g's true start state.
void emit_group_scan(Writer& w, const CudaKernelInfo& k) {
  const std::string S = types_of(k).compute.t;
  const int d = k.state_dimension;
  w.open("extern \"C\" __global__ void " + k.entries[2].symbol + "(");
  w.line("long long channels, long long samples, long long step, const double* __restrict__ a_step,");
  w.line("const double* __restrict__ from, double* __restrict__ to, const " + S + "* __restrict__ state) {");
  w.line("const long long L = " + str(k.chunk_length) + ", G = " + str(kCudaCarryGroup) + ";");
  w.line("const long long chunks = (samples + L - 1) / L, groups = (chunks + G - 1) / G;");
  w.line("const int D = " + str(d) + ";");
  emit_scan_matrix(w, d, "a_step");
  w.line("__syncthreads();");
  w.line("const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
  w.line("if (t >= channels * groups * D) return;");
  w.line("const int r = t % D;");
  w.line("const long long g = t / D % groups, c = t / D / groups;");
  w.line("const long long offset = 1LL << step;");
  w.line("// Step 0 reads x itself (the state, then the sums shifted by one group), later steps the");
  w.line("// previous step's partial sums.");
  w.line("const double* const x = from + c * groups * D;");
  w.line("const " + S + "* const s0 = state + c * D;");
  w.line("double acc = step > 0 ? x[g * D + r] : g == 0 ? double(s0[r]) : x[(g - 1) * D + r];");
  w.open("if (g >= offset) {  // acc += (A^(L G))^(2^step) x[g - offset]");
  w.line("const long long h = g - offset;");
  w.line("if (step > 0) for (int q = 0; q < D; ++q) acc = fma(a[q * D + r], x[h * D + q], acc);");
  w.line("else if (h == 0) for (int q = 0; q < D; ++q) acc = fma(a[q * D + r], double(s0[q]), acc);");
  w.line("else for (int q = 0; q < D; ++q) acc = fma(a[q * D + r], x[(h - 1) * D + q], acc);");
  w.close();
  w.line("to[(c * groups + g) * D + r] = acc;");
  w.close();
}

}  // namespace

void emit_chunked_scan(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain) {
  Types ty = types_of(k);
  ChainBody body(chain, ty.compute);
  header(w, k, chain, body.layout(), ty);
  const std::string d = str(k.state_dimension);
  w.line("// Chunked scan over time, chunks of L = " + str(k.chunk_length) + " samples in groups of " +
         str(kCudaCarryGroup) + " (chunk_state: double[channels][chunks][" + d + "]):");
  w.line("// 0. " + k.entries[0].symbol + ": each chunk from zero state, its final state e[k] only" +
         std::string(k.state_table ? " (a sum with the table R)" : "") + ";");
  w.line("// 1. " + k.entries[1].symbol + ": each group's sum from a zero start, t = A^L t + e[k];");
  w.line("// 2. " + k.entries[2].symbol + ": log-depth scan over the groups from the stream's state;");
  w.line("// 3. " + k.entries[3].symbol + ": each chunk's true start state s[k] within its group;");
  w.line("// 4. " + k.symbol + ": each chunk again from s[k], writing the output" +
         std::string(ir::scanned_prefix(chain.stages) < chain.stages.size() ? " (the memoryless tail too)" : "") + ".");
  if (k.state_table)
    emit_chunk_states_by_table(w, k, chain);
  else
    emit_chunk_pass(w, k, chain, false);
  w.line();
  emit_group_walk(w, k, false);
  w.line();
  emit_group_scan(w, k);
  w.line();
  emit_group_walk(w, k, true);
  w.line();
  emit_chunk_pass(w, k, chain, true);
}

}  // namespace fxc::codegen::cuda_source

// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's code generation: CUDA C++ source for a scheduled graph (passes run with
// passes::cuda_target()). The source needs no header beyond what NVRTC provides, so it
// compiles on a machine without a GPU (codegen/cuda/nvrtc.h); this file needs no CUDA toolkit.
//
// One kernel per chain node (`fxc_chain_<id>`, the same symbol as the CPU backend's), one
// per sum node (`fxc_sum_<id>`), one per routing node (select, matrix, concat: `fxc_route_<id>`)
// and a pair per feedback node (`fxc_feedback_<id>`, `fxc_feedback_<id>_write`). Every
// coefficient arrives as a kernel argument, in the order of codegen::layout_of / values_of,
// so a new cutoff or sample rate reuses the code; what is shape (a select's indices, channel
// counts) is compiled in.
// docs/cuda.md describes the kernels' arguments and how the runtime is to launch them.
#pragma once

#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "support/expected.h"

namespace fxc::codegen {

/// Threads per block of the one-dimensional kernels, and the sample tile (= threads per
/// block = taps per shared-memory tile) of the tiled FIR.
inline constexpr int kCudaBlockThreads = 128;
inline constexpr int kCudaFirTile = 128;
/// Chunks per group of the chunked scan's carry (walked in turn by one block), and the
/// threads per block of its log-depth scan over groups.
inline constexpr int kCudaCarryGroup = 32;
inline constexpr int kCudaScanThreads = 256;
/// The chunked scan's matrices go through shared memory up to this many float64 cells (32 KiB,
/// 32 sections); larger ones are read through the cache.
inline constexpr int kCudaSharedMatrixCells = 4096;
/// The carry's group walks hold a thread's row of A^L in registers up to this many state rows
/// (16 sections), and sum each row's products in kCudaCarryPartialSums independent chains.
inline constexpr int kCudaCarryRowRegisters = 32;
inline constexpr int kCudaCarryPartialSums = 4;
/// The FFT convolution's threads per block (at most; FFT / 2 for shorter FFTs) and the most
/// shared memory its two arrays of FFT points may take: 32 KiB, so 4096 points in float32
/// and 2048 in float64 (passes::cuda_max_fft_length chooses within that).
inline constexpr int kCudaFftThreads = 256;
inline constexpr int kCudaFftSharedBytes = 32768;
/// Threads per block of a wavefront's chunk passes (CudaKernelInfo::wavefront): each thread's
/// row of the ring tile holds 64 samples (ir::kGpuWavefrontMaxStages - 1 of lag, then 32 being
/// loaded), 32 KiB in float64 at 64 threads.
inline constexpr int kCudaWavefrontThreads = 64;
/// The chunk passes' planar tile (without the wavefront) is two halves of this many samples
/// per chunk that take turns: while a block computes from one half, the next samples copy into
/// the other (fxc_copy_async: cp.async from sm_80 on, no registers held), so a step waits for no
/// memory round trip but its chunk's first. Loaded a row at a time, each store to the tile
/// waited out its load, 32 a step: the chunk passes' long-scoreboard stalls on an H200
/// (docs/cuda-performance-model.md, "What the H200 run said").
inline constexpr int kCudaTileHalf = 16;
/// Where every row of a planar signal starts 16-byte aligned (the base, and the channel stride a
/// multiple of the samples in 16 bytes), the tile's lanes copy, read and store this many bytes at
/// a time: a thread's copies and stores of a half step go from 16 to 4 (float32) or 8 (float64).
/// Its rows are then 144 (float32) or 272 (float64) bytes apart: 16-byte aligned, and 16 bytes of
/// banks apart, so that a quarter warp's 16-byte reads of 8 rows share no bank.
inline constexpr int kCudaTileBytes = 16;
/// The chunked scan's zero-state pass takes each chunk's end state as a sum over its samples,
/// e = sum_n R[n] x[n] with R[n] = A^(L - 1 - n) B (a table the runtime computes in float64,
/// LinearChain::input_to_state), instead of running the chain's sections over them, where the
/// chain's first sections run in float64 (state_precision f64, or mixed: the first stage's, then
/// float32; or a float64 signal) and the state has at most this many
/// rows: D fused multiply-adds a sample (D = 2 x sections) against 5 a section, and no
/// recurrence, so nothing waits on an FMA's latency. Past 24 sections the sums' registers
/// would crowd out the rest.
inline constexpr int kCudaStateTableMaxRows = 48;
/// ... and the table (L x D float64) at most this many cells (8 MiB).
inline constexpr long long kCudaStateTableMaxCells = 1LL << 20;
/// A thread that walks its own channel's samples (one thread per channel, and the interleaved
/// chunk passes) loads them this many ahead: the next block's inputs into registers while this
/// block computes from the thread's row of shared memory, so that a sample waits on shared
/// memory, not on a DRAM round trip (docs/cuda-performance-model.md, "What the H200 run said").
inline constexpr int kCudaSampleAhead = 8;
/// A fused loop's kernel (a chain with loop_read ... loop_write, one thread per channel) runs
/// blocks of this many samples: it loads the next block's inputs while this block computes, and
/// where its line holds two blocks the next block's line cells with them (written a delay ago,
/// past this block's writes), so that one memory latency serves a block and overlaps it. A
/// shorter line lives in 2 x kCudaLoopAhead - 1 registers for the call.
inline constexpr int kCudaLoopAhead = 8;
/// It also brings the inputs this many samples on into L2: a block of a one-section body takes
/// some 200 cycles, a DRAM load some 900, an L2 hit some 270 (docs/cuda-performance-model.md).
inline constexpr int kCudaLoopPrefetch = 64;

/// What a node's generated kernels compute, and so how they are launched. Each kind has one
/// or more entry points (CudaKernelInfo::entries), launched in order on one stream.
enum class CudaKernelKind {
  /// One thread per channel, the whole chain per sample, state in registers.
  /// Entry: fxc_chain_N(in, out, channels, samples, channel_stride, sample_stride, params,
  /// delay_lengths, state, delay_lines, positions). `in != out` (the runtime gives every node
  /// its own buffer; the pointers are __restrict__).
  chain_thread_per_channel,
  /// The chunked scan over time (sos and gain stages only): chunks of L samples, groups of
  /// kCudaCarryGroup chunks, five entries (chunk_state, totals and scan: double[channels][..][D],
  /// D the state rows):
  /// 0. fxc_chain_N_chunk_states(in, channels, samples, channel_stride, sample_stride, params,
  ///   chunk_state): one thread per (channel, chunk) runs its chunk from zero state and writes
  ///   only its final state e[k], no output. With CudaKernelInfo::state_table,
  ///   fxc_chain_N_chunk_states(in, channels, samples, channel_stride, sample_stride,
  ///   state_table, chunk_state) sums e[k] = sum_n R[n] x[k L + n] instead, R = state_table
  ///   (double[L][D], row n A^(L - 1 - n) B), in blocks of kCudaBlockThreads whatever the
  ///   wavefront. A channel's last
  ///   chunk, when shorter than L, then holds A^(L - count) times its end state; nothing reads
  ///   it (the carry needs every chunk's end but the last's);
  /// 1. fxc_chain_N_group_sums(channels, samples, a_chunk, chunk_state, totals): one block per
  ///   (channel, group), a thread per state row: the group's end state from a zero start,
  ///   t = A^L t + e[k] over its chunks (a_chunk: A^L);
  /// 2. fxc_chain_N_group_scan(channels, samples, step, a_step, from, to, state): launched
  ///   cuda_carry_steps(chunks) times, step = 0, 1, ...: a log-depth (Kogge-Stone) scan over
  ///   the groups with a_step = (A^(L G))^(2^step); step 0 reads the totals and the stream's
  ///   state, the others the previous step's `to`; the last writes each group's true start;
  /// 3. fxc_chain_N_chunk_starts(channels, samples, a_chunk, group_starts, chunk_state): one
  ///   block per (channel, group) walks its chunks from the group's start, writing each chunk's
  ///   true start state over its e[k];
  /// 4. fxc_chain_N(in, out, channels, samples, channel_stride, sample_stride, params,
  ///   chunk_state, state): each (channel, chunk) reruns its chunk from its true start state and
  ///   writes the output; the last chunk's final state is the stream's new state.
  /// Matrices are float64 and transposed (a[q * D + r] is row r, column q), so a warp's threads
  /// (rows) read neighbouring words. Planar signals go through shared-memory tiles of
  /// kCudaBlockThreads chunks x 32 samples (each warp load reads 32 neighbouring samples of one
  /// chunk); interleaved ones put neighbouring channels on neighbouring threads. `in != out`.
  /// With CudaKernelInfo::wavefront, entries 0 and 4 run the chain's steps as a wavefront
  /// (step q on sample n - q in iteration n) in blocks of kCudaWavefrontThreads, planar tiles
  /// as a ring of 64 samples per chunk; the samples and states are the same, bit for bit.
  chain_chunked_scan,
  /// A chain of delays and memoryless stages (gain, clip, tanh), no recursion: elementwise
  /// over (channel, sample), two entries:
  /// fxc_chain_N(in, out, channels, samples, channel_stride, sample_stride, params,
  ///   delay_lengths, delay_lines): a grid-stride loop; each sample walks back through the
  ///   delays to the input D samples earlier, or to a delay line's cell for the block's first
  ///   samples. A line holds its delay's last D inputs in time order (cell j: time j - D; the
  ///   positions stay 0);
  /// fxc_chain_N_next_lines(in, channels, samples, channel_stride, sample_stride, params,
  ///   delay_lengths, delay_lines, next_lines): the lines after the block into a second set,
  ///   which the runtime copies over the lines (only where the chain has a delay).
  chain_elementwise,
  /// A lone FIR stage, direct form with shared-memory tiles, two entries:
  /// fxc_chain_N(in, out, channels, samples, channel_stride, sample_stride, params, state,
  ///   positions): one block per (channel, tile of kCudaFirTile samples); the taps and the
  ///   input tile with its history go through shared memory; history before the block's
  ///   first sample comes from the ring in `state`;
  /// fxc_chain_N_ring(in, channels, samples, channel_stride, sample_stride, state,
  ///   positions): writes the block's last inputs into the ring, one CUDA block per channel
  ///   and a thread per input.
  /// `in` must not equal `out` (blocks read inputs that others would overwrite).
  fir_tiled,
  /// A lone FIR stage by FFT overlap-save (ir::FirMethod::fft_overlap_save), two entries:
  /// fxc_chain_N(in, out, channels, samples, channel_stride, sample_stride, tables, state,
  ///   positions): one block per (channel, pair of segments). A segment is the
  ///   FFT - (taps - 1) outputs that one FFT of FFT points gives; the pair's two segments go in
  ///   as the real and imaginary parts of one complex FFT (the filter is real, so the inverse
  ///   transform gives the first's outputs in its real part and the second's in its imaginary
  ///   one). Forward by decimation in frequency (natural order in, bit-reversed out), times the
  ///   filter's spectrum, inverse by decimation in time (bit-reversed in, natural out), all in
  ///   shared memory. `tables` (the compute type): the taps' spectrum divided by FFT, in
  ///   bit-reversed order, then the twiddles exp(-2 pi i k / FFT) for k < FFT / 2, each complex
  ///   number as (re, im), then the taps; the runtime computes them in float64 when the taps
  ///   are set. A block whose inputs hold a NaN or an infinity convolves them directly with
  ///   the taps, so that it reaches only the outputs whose sums include it. History
  ///   before the block's first sample comes from the ring in `state`, as for fir_tiled;
  /// fxc_chain_N_ring: as fir_tiled's.
  /// `in` must not equal `out`.
  fir_fft,
  /// A lone FIR stage too long for one block's FFT, by uniformly partitioned overlap-save
  /// (the schedule's FFT block, FFT points, less than twice the taps): the taps split into
  /// PARTS = ceil(taps / HALF) partitions of HALF = FFT / 2, and segment m of HALF outputs
  /// is sum_p IFFT(S[m - p] H[p]), S[m] the spectrum of the inputs [(m - 1) HALF, (m + 1) HALF)
  /// and H[p] that of partition p padded to FFT. Three entries:
  /// 0. fxc_chain_N_spectra(in, channels, samples, channel_stride, sample_stride, tables, state,
  ///   positions, spectra): one block per (channel, pair of segments), the two segments' inputs
  ///   as the real and imaginary parts of one complex FFT, separated into each one's half
  ///   spectrum (HALF + 1 complex points, natural order) in `spectra`
  ///   ([channel][cuda_fir_spectra(kernel, samples)][HALF + 1] complex numbers of the
  ///   compute type), for segments -(PARTS - 1) on: the first ones hold the ring's history;
  /// 1. fxc_chain_N(in, out, channels, samples, channel_stride, sample_stride, tables, state,
  ///   positions, spectra): one block per (channel, pair of output segments): the two sums of
  ///   products, as one complex spectrum (each segment's output is real), one inverse FFT,
  ///   outputs written; a pair whose sums hold a NaN or an infinity convolves its inputs
  ///   directly instead, as fir_fft's blocks;
  /// 2. fxc_chain_N_ring: as fir_tiled's.
  /// `tables`: H[p] / FFT for each partition (HALF + 1 points, natural order), then the
  /// twiddles and the taps as fir_fft's. The transforms are fir_fft's. `in` must not equal `out`.
  fir_partitioned,
  /// out = sum_i weights[i] * operands[i], elementwise; a grid-stride loop.
  /// Entry: fxc_sum_N(operands, out, channels, samples, channel_stride, sample_stride, weights).
  sum,
  /// A select, matrix or concat: each output channel from its operands' channels (the CPU
  /// runtime's run_route), elementwise; a grid-stride loop. Entry: fxc_route_N(operands, out,
  /// channels, samples, channel_stride, sample_stride, interleaved, gains). `operands` holds
  /// each operand's base pointer; an operand has the output's layout with its own channel
  /// count: its channel stride is channel_stride, its sample stride that count when
  /// `interleaved` is 1, else sample_stride.
  /// `gains`: a matrix's, row-major rows x operand channels (select and concat ignore it).
  route,
  /// A feedback node's delay line, `length` cells per channel laid out [cell][channel] in the
  /// signal type, and its ring position per channel. Two entries, not launched one after the
  /// other: a loop's kernels run in passes of at most its shortest feedback delay, and in each
  /// pass
  /// fxc_feedback_N(line, out, channels, samples, channel_stride, sample_stride, positions,
  ///   length) runs at the node's place among the loop's kernels: out[n] = line[pos + n],
  ///   elementwise (a grid-stride loop; positions are only read);
  /// fxc_feedback_N_write(in, channels, samples, channel_stride, sample_stride, line,
  ///   positions, length) runs after the loop's other kernels, one thread per channel:
  ///   line[pos + n] = in[n] (`in` is the node's operand), then pos += samples (mod length).
  /// `samples` <= `length`, so no cell is written before it is read.
  feedback,
};

/// One __global__ function: its symbol and its parameters' C types, in order (every
/// parameter is 8 bytes: a pointer or a long long).
struct CudaEntry {
  std::string symbol;
  std::vector<std::string> parameters;
  bool synchronizes = false;  ///< uses __syncthreads (shared memory that threads share)
};

struct CudaKernelInfo {
  /// The entry that writes the node's output: fxc_chain_<id>, fxc_sum_<id>, fxc_route_<id> or
  /// fxc_feedback_<id>.
  std::string symbol;
  ir::NodeId node = 0;
  CudaKernelKind kind = CudaKernelKind::chain_thread_per_channel;
  DType dtype = DType::f64;        ///< the signal's type
  DType state_dtype = DType::f64;  ///< params, state and arithmetic (f64 for state_precision f64; for mixed the buffers, and the first stage's arithmetic)
  int chunk_length = 0;            ///< chain_chunked_scan: samples per chunk
  int state_dimension = 0;         ///< chain_chunked_scan: 2 x sections
  /// chain_chunked_scan: the chunk passes pipeline the chain's steps (ir::IirStrategy::
  /// gpu_chunked_wavefront), in blocks of kCudaWavefrontThreads.
  bool wavefront = false;
  /// chain_chunked_scan: entry 0 sums each chunk's end state with a table (kCudaStateTableMaxRows).
  bool state_table = false;
  int fft_length = 0;              ///< fir_fft: points per FFT (a power of two >= 2 x taps); fir_partitioned: < 2 x taps
  int fir_taps = 0;                ///< fir_fft, fir_partitioned: the FIR's taps
  std::string note;                ///< why this kind, for people (and the source's comment)
  std::vector<CudaEntry> entries;  ///< in launch order
};

/// A launch: `grid` blocks of `block` threads (one-dimensional). grid 0: nothing to launch.
struct CudaLaunch {
  long long grid = 0;
  int block = 1;
};

/// Independent kernels that one launch runs side by side: chains of one thread per channel
/// (a reverb's combs, a multiband compressor's bands), each as narrow as its channels, whose
/// inputs are all ready where the first of them would launch. The launch's blocks go to the
/// members in turn, each member's ceil(channels / kCudaBlockThreads) of them; a member's
/// kernel is then a __device__ function (`<symbol>_run`, its __global__ a call of it) that
/// the side kernel calls with the member's arguments and its thread's row of inputs ahead
/// (one shared array for every member: a block runs one member). Members come from one
/// stretch of ir::loop_order outside loops (the CUDA runtime's regions), have one sample type,
/// and are at most kCudaSideByMaxMembers.
struct CudaSideBySide {
  std::string symbol;                ///< fxc_side_<the first member's node>
  std::vector<std::size_t> members;  ///< indices into the kernel list, in launch order
  CudaEntry entry;                   ///< the members' entry 0 parameters, one member after another
};
inline constexpr std::size_t kCudaSideByMaxMembers = 32;  ///< 11 parameters of 8 bytes each: 2.8 KiB of 4

/// The side-by-side groups of `kernels` (cuda_kernels of `scheduled`), in launch order; none
/// where ir::loop_order has no order.
std::vector<CudaSideBySide> cuda_side_by_side(const ir::Graph& scheduled, const std::vector<CudaKernelInfo>& kernels);
/// Its launch: the members' blocks one after another, member m's for `channels[m]` channels.
CudaLaunch cuda_side_launch(const std::vector<long long>& channels);

/// The chunked scan's log-depth steps (launches of its group_scan entry) for `chunks` chunks
/// of one channel: ceil(log2(groups)), at least 1 (step 0 also brings in the stream's state).
int cuda_carry_steps(long long chunks);

/// fir_partitioned: the partitions of its taps (ceil(taps / (fft_length / 2))), and the input
/// segments whose spectra a channel's block of `samples` stores (its spectra buffer holds
/// channels x that many x (fft_length / 2 + 1) complex numbers): one per output segment, an
/// even count, and PARTS - 1 before them, rounded up to pairs.
long long cuda_fir_partitions(const CudaKernelInfo& kernel);
long long cuda_fir_spectra(const CudaKernelInfo& kernel, long long samples);

/// The launch of `kernel`'s entry `entry` for a signal of `channels` x `samples`.
CudaLaunch cuda_launch(const CudaKernelInfo& kernel, std::size_t entry, long long channels,
                       long long samples);

/// The sample type of a scheduled graph's signals on the GPU, which its module's layout
/// kernels and the runtime's buffers use: its outputs' (float32 for a graph without one).
DType cuda_signal_dtype(const ir::Graph& scheduled);

/// The layout kernels every module holds, after the graph's: fxc_interleave (planar rows of
/// `channels` x `frames` into frames of channels) and fxc_deinterleave (back), for signals of
/// `signal`, each through 32 x 32 tiles in shared memory so that both its reads and its writes
/// are coalesced. A stream whose device signals are interleaved copies planar staging in and
/// out and transposes on the GPU (runtime/cuda_executor.cpp).
std::vector<CudaEntry> cuda_layout_entries(DType signal);
/// Their launch for `channels` x `frames`: a block of 256 threads per 32 x 32 tile.
CudaLaunch cuda_layout_launch(long long channels, long long frames);

/// The kernels emit_cuda_source generates for `scheduled`, in increasing node order.
/// A chain whose strategy is gpu_chunked_scan but to which the scan does not apply runs one
/// thread per channel; a chain of one FIR stage runs tiled, or by FFT where the schedule says
/// so (fir_fft, or fir_partitioned where the FFT block is less than twice the taps).
/// Fails for a node that no CUDA kernel can run (an unscheduled specification, a chain with a
/// CPU strategy, a FIR by FFT that is not alone in its chain or whose FFT does not fit in
/// kCudaFftSharedBytes, a routing node whose channel counts are not known).
Expected<std::vector<CudaKernelInfo>, std::string> cuda_kernels(const ir::Graph& scheduled);

/// True when `chain` can run as a GPU chunked scan: sos and gain stages through its last
/// section, then only memoryless ones (ir::scanned_prefix), and a state of at most 1024 rows
/// (a carry block's threads).
bool cuda_chunked_scan_applies(const ir::Chain& chain);

/// True when a chunked scan of `chain` on a signal of type `signal` in chunks of `chunk_length`
/// sums its chunks' end states with a table (CudaKernelInfo::state_table): its sections run in
/// float64 (not float pairs), and the state and table are within kCudaStateTableMaxRows and
/// kCudaStateTableMaxCells.
bool cuda_state_table_applies(const ir::Chain& chain, DType signal, int chunk_length);

/// Readable, deterministic CUDA C++ for every kernel of `scheduled` (what
/// `fxc dump --emit cuda` prints). Compile it with codegen::compile_cuda, whose options
/// (cuda_compile_options) the arithmetic relies on.
Expected<std::string, std::string> emit_cuda_source(const ir::Graph& scheduled);

}  // namespace fxc::codegen

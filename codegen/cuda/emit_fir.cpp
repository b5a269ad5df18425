// SPDX-License-Identifier: Apache-2.0
// A lone FIR's kernels (docs/cuda.md): direct convolution in tiles, FFT overlap-save, and
// uniformly partitioned FFT convolution, each with the ring that carries its last inputs.
#include "codegen/cuda/kernel_emitters.h"

namespace fxc::codegen::cuda_source {
namespace {

// Where a lone FIR's ring (its last inputs, for the next block's first outputs) and the
// ring's position are, in the source of fir_tiled's and fir_fft's kernels (channel `c`).
struct FirRing {
  std::string taps, ring_at, pos_at;
};
FirRing fir_ring_of(const ChainLayout& l, const ir::Chain& chain) {
  const auto& fir = std::get<ir::FirFilter>(chain.stages[0]);
  const StageLayout& at = l.stages[0];
  return {str(static_cast<long long>(fir.taps.size())),
          "state + c * " + str(l.state_per_channel) + " + " + str(at.state_offset),
          "positions[c * " + str(l.positions_per_channel()) + " + " + str(l.delay_count + at.ring_index) + "]"};
}

// The source of input sample m of channel c for a lone FIR (into `v`): the signal, the ring
// for the TAPS - 1 samples before it (what an output reads; the ring's oldest cell, x[-TAPS],
// meets only the FFT kernels' zero-padded taps, and read would move their rounding with a
// value a saved stream state does not keep: docs/streaming.md), zeros before and after.
void emit_fir_input(Writer& w, const Types& ty, const std::string& m, const std::string& v) {
  w.line("if (" + m + " >= 0 && " + m + " < samples) " + v + " = " + ty.load("x[" + m + " * sample_stride]") + ";");
  w.line("else if (" + m + " < 0 && " + m + " > -TAPS) " + v + " = ring[pos + " + m + " < 0 ? pos + " + m +
         " + TAPS : pos + " + m + "];");
}

// What emit_fir_input reads for channel c: its input `x`, and its `ring` and `pos` for the
// inputs before sample 0.
void emit_fir_history(Writer& w, const Types& ty, const FirRing& r) {
  w.line("const " + ty.signal.t + "* const x = in + c * channel_stride;");
  w.line("const " + ty.compute.t + "* const ring = " + r.ring_at + ";  // the inputs before sample 0");
  w.line("const long long pos = " + r.pos_at + ";  // x[-1] is ring[pos - 1]");
}

// The last entry of a lone FIR's kernels (fir_tiled, fir_fft, fir_partitioned): the block's
// last inputs into the ring, one CUDA block per channel and a thread per input (input m goes to
// ring[(pos + m) % TAPS], so no two threads write the same cell). Every thread reads the
// position before thread 0 moves it: a walk of TAPS dependent steps by one thread cost a cache
// latency per tap.
void emit_fir_ring(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain, const Types& ty) {
  const Scalar& s = ty.compute;
  const FirRing r = fir_ring_of(layout_of(chain), chain);
  w.open("extern \"C\" __global__ void " + k.entries.back().symbol + "(");
  w.line("const " + ty.signal.t + "* __restrict__ in, " + kSignalArgs + ",");
  w.line(s.t + "* __restrict__ state, long long* __restrict__ positions) {");
  w.line("const long long c = blockIdx.x;  // one block per channel");
  w.line("if (c >= channels) return;");
  w.line("const long long TAPS = " + r.taps + ";");
  w.line(s.t + "* const ring = " + r.ring_at + ";");
  w.line("const " + ty.signal.t + "* const x = in + c * channel_stride;");
  w.line("const long long first = samples > TAPS ? samples - TAPS : 0;  // earlier inputs are overwritten anyway");
  w.line("const long long pos = " + r.pos_at + ";");
  w.line("for (long long m = first + threadIdx.x; m < samples; m += blockDim.x) ring[(pos + m) % TAPS] = " +
         ty.load("x[m * sample_stride]") + ";");
  w.line("__syncthreads();  // every thread has read pos");
  w.line("if (threadIdx.x == 0) " + r.pos_at + " = (pos + samples) % TAPS;");
  w.close();
}

}  // namespace

void emit_fir_tiled(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain) {
  Types ty = types_of(k);
  const Scalar& s = ty.compute;
  const ChainLayout l = layout_of(chain);
  const FirRing r = fir_ring_of(l, chain);
  header(w, k, chain, l, ty);
  w.line("// Direct form in shared-memory tiles: a block computes " + str(kCudaFirTile) +
         " samples of one channel, " + str(kCudaFirTile) + " taps at a time,");
  w.line("// from tap 0 up with fma (the thread-per-channel kernel's order). Then " + k.entries[1].symbol);
  w.line("// writes the last inputs into the ring. in != out.");
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + ty.signal.t + "* __restrict__ in, " + ty.signal.t + "* __restrict__ out, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ params, const " + s.t + "* __restrict__ state, const long long* __restrict__ positions) {");
  w.line("const long long TAPS = " + r.taps + ";");
  w.line("const int TILE = " + str(kCudaFirTile) + ";  // = blockDim.x = taps per shared tile");
  w.line("__shared__ " + s.t + " h[" + str(kCudaFirTile) + "];");
  w.line("__shared__ " + s.t + " xs[" + str(2 * kCudaFirTile - 1) + "];  // samples n0 - t0 - (TILE - 1) ...");
  w.line("const long long tiles = (samples + TILE - 1) / TILE;");
  w.line("const long long c = blockIdx.x / tiles;");
  w.line("const long long n0 = (blockIdx.x % tiles) * TILE;");
  w.line("const int i = threadIdx.x;");
  emit_fir_history(w, ty, r);
  w.line(s.t + " acc = " + s.t + "(0);");
  w.open("for (long long t0 = 0; t0 < TAPS; t0 += TILE) {");
  w.line("__syncthreads();  // the previous tile is read");
  w.line("if (t0 + i < TAPS) h[i] = params[" + str(l.stages[0].param_offset) + " + t0 + i];");
  w.open("for (int j = i; j < 2 * TILE - 1; j += TILE) {");
  w.line("const long long m = n0 - t0 - (TILE - 1) + j;");
  w.line(s.t + " v = " + s.t + "(0);");
  emit_fir_input(w, ty, "m", "v");
  w.line("xs[j] = v;");
  w.close();
  w.line("__syncthreads();");
  w.line("const long long count = TAPS - t0 < TILE ? TAPS - t0 : TILE;");
  w.line("for (int k = 0; k < count; ++k) acc = " + s.fma + "(h[k], xs[i + TILE - 1 - k], acc);");
  w.close();
  w.line("const long long n = n0 + i;");
  w.line("if (n < samples) out[c * channel_stride + n * sample_stride] = " + ty.store("acc") + ";");
  w.close();
  w.line();
  emit_fir_ring(w, k, chain, ty);
}

namespace {

// A stage loop of fir_fft's transforms (`stages` opens it: which spans, in which order), then
// each thread's butterflies of the stage: the pair (i, j = i + 2^b) and its twiddle (wr, wi).
// Both loops are left open for the butterfly's body.
void open_butterflies(Writer& w, const Scalar& s, const std::string& stages) {
  w.open(stages);
  w.line("__syncthreads();");
  w.open("for (int t = threadIdx.x; t < FFT / 2; t += blockDim.x) {");
  w.line("const int q = t & ((1 << b) - 1), i = ((t >> b) << (b + 1)) | q, j = i + (1 << b);");
  w.line("const " + s.t + " wr = twiddles[2 * (q << (LOG2 - 1 - b))], wi = twiddles[2 * (q << (LOG2 - 1 - b)) + 1];");
}

// log2 of fir_fft's and fir_partitioned's FFT length (a power of two).
int fft_log2(const CudaKernelInfo& k) {
  int log2 = 0;
  while ((1 << log2) < k.fft_length) ++log2;
  return log2;
}

// The forward transform of the FFT points in shared `re` and `im`, in place: decimation in
// frequency, natural order in and bit-reversed out. Ends with the block synchronized.
void emit_forward_fft(Writer& w, const Scalar& s) {
  open_butterflies(w, s, "for (int b = LOG2 - 1; b >= 0; --b) {  // butterflies of span 2^b");
  w.line("const " + s.t + " ar = re[i], ai = im[i], br = re[j], bi = im[j];");
  w.line("const " + s.t + " dr = ar - br, di = ai - bi;");
  w.line("re[i] = ar + br;");
  w.line("im[i] = ai + bi;");
  w.line("re[j] = dr * wr - di * wi;");
  w.line("im[j] = dr * wi + di * wr;");
  w.close();
  w.close();
  w.line("__syncthreads();");
}

// The inverse transform (unnormalized, conjugate twiddles) of `re` and `im` in place:
// decimation in time, bit-reversed in and natural out. Ends with the block synchronized.
void emit_inverse_fft(Writer& w, const Scalar& s) {
  open_butterflies(w, s, "for (int b = 0; b < LOG2; ++b) {  // butterflies of span 2^b, conjugate twiddles");
  w.line("const " + s.t + " br = re[j], bi = im[j];");
  w.line("const " + s.t + " tr = br * wr + bi * wi, ti = bi * wr - br * wi;  // conj(w) (br + i bi)");
  w.line("const " + s.t + " ar = re[i], ai = im[i];");
  w.line("re[i] = ar + tr;");
  w.line("im[i] = ai + ti;");
  w.line("re[j] = ar - tr;");
  w.line("im[j] = ai - ti;");
  w.close();
  w.close();
  w.line("__syncthreads();");
}

// The shared arrays of an FFT's points, `re` and `im`.
void emit_fft_points(Writer& w, const Scalar& s, const CudaKernelInfo& k) {
  w.line("__shared__ " + s.t + " re[" + str(k.fft_length) + "];");
  w.line("__shared__ " + s.t + " im[" + str(k.fft_length) + "];");
}

// Two windows of FFT inputs of channel c into `re` and `im`, the first from input `first`, the
// second `gap` later (the ring before sample 0, zeros after the block).
// With `check`, `nonfinite` (declared here) says whether this thread loaded a NaN or an
// infinity (for emit_direct_if_nonfinite).
void emit_window_pair(Writer& w, const Types& ty, const std::string& first, const std::string& gap, bool check) {
  const Scalar& s = ty.compute;
  if (check) w.line("int nonfinite = 0;");
  w.open("for (int j = threadIdx.x; j < FFT; j += blockDim.x) {");
  w.line("const long long m = " + first + " + j, m2 = m + " + gap + ";");
  w.line(s.t + " v = " + s.t + "(0), v2 = " + s.t + "(0);");
  emit_fir_input(w, ty, "m", "v");
  emit_fir_input(w, ty, "m2", "v2");
  w.line("re[j] = v;");
  w.line("im[j] = v2;");
  if (check) w.line("nonfinite |= !isfinite(v) || !isfinite(v2);");
  w.close();
}

// Where any thread of the block has `nonfinite`: outputs `first` .. `first` + `count` - 1 of
// channel c (those inside the block) by direct convolution with `taps`, from tap 0 up with
// fma as fir_tiled, and the kernel returns. A NaN or an infinity would spread through a
// transform to every output of its segments; convolved directly it reaches only the outputs
// whose sums include it, as on the CPU (docs/errors.md).
void emit_direct_if_nonfinite(Writer& w, const Types& ty, const std::string& first, const std::string& count) {
  const Scalar& s = ty.compute;
  w.open("if (__syncthreads_or(nonfinite)) {  // the same for every thread of the block");
  w.line(ty.signal.t + "* const y = out + c * channel_stride;");
  w.open("for (long long j = threadIdx.x; j < " + count + " && " + first + " + j < samples; j += blockDim.x) {");
  w.line("const long long n = " + first + " + j;");
  w.line(s.t + " acc = " + s.t + "(0);");
  w.open("for (long long k = 0; k < TAPS; ++k) {");
  w.line("const long long m = n - k;");
  w.line(s.t + " v = " + s.t + "(0);");
  emit_fir_input(w, ty, "m", "v");
  w.line("acc = " + s.fma + "(taps[k], v, acc);");
  w.close();
  w.line("y[n * sample_stride] = " + ty.store("acc") + ";");
  w.close();
  w.line("return;");
  w.close();
}

// The outputs of an inverse transform of two windows (emit_window_pair's): its points from
// `from` on, free of wrap-around, are outputs `first` on (the real parts) and `gap` later (the
// imaginary parts), each written where it lies inside the block.
void emit_output_pair(Writer& w, const Types& ty, const std::string& from, const std::string& first,
                      const std::string& gap) {
  w.line(ty.signal.t + "* const y = out + c * channel_stride;");
  w.open("for (int j = " + from + " + threadIdx.x; j < FFT; j += blockDim.x) {");
  w.line("const long long n = " + first + " + (j - " + from + ");");
  w.line("if (n < samples) y[n * sample_stride] = " + ty.store("re[j]") + ";");
  w.line("if (n + " + gap + " < samples) y[(n + " + gap + ") * sample_stride] = " + ty.store("im[j]") + ";");
  w.close();
}

// `to` = `from` (an int below FFT) with its LOG2 bits reversed: where point `from` of a
// spectrum sits between the forward and the inverse transforms.
void emit_bit_reverse(Writer& w, const std::string& from, const std::string& to) {
  w.line("int " + to + " = 0;");
  w.line("for (int b = 0; b < LOG2; ++b) " + to + " |= (((" + from + ") >> b) & 1) << (LOG2 - 1 - b);");
}

}  // namespace

void emit_fir_fft(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain) {
  Types ty = types_of(k);
  const Scalar& s = ty.compute;
  const ChainLayout l = layout_of(chain);
  const FirRing r = fir_ring_of(l, chain);
  header(w, k, chain, l, ty);
  w.line("// FFT overlap-save: a block convolves two segments of one channel, each FFT - (TAPS - 1)");
  w.line("// outputs, as the real and imaginary parts of one complex FFT of FFT points (the taps are");
  w.line("// real: the inverse gives the first segment's outputs in the real part, the second's in the");
  w.line("// imaginary one). Forward by decimation in frequency, natural order in and bit-reversed out;");
  w.line("// times the taps' spectrum / FFT (tables[0, 2 FFT), bit-reversed); inverse by decimation in");
  w.line("// time, bit-reversed in and natural out; twiddles exp(-2 pi i k / FFT) at tables[2 FFT, 3 FFT),");
  w.line("// the taps after them (a block with a NaN or an infinity convolves directly).");
  w.line("// A segment's first TAPS - 1 points wrap around and are dropped. Then " + k.entries[1].symbol);
  w.line("// writes the last inputs into the ring. in != out.");
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + ty.signal.t + "* __restrict__ in, " + ty.signal.t + "* __restrict__ out, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ tables, const " + s.t + "* __restrict__ state, const long long* __restrict__ positions) {");
  w.line("const long long TAPS = " + r.taps + ";");
  w.line("const int FFT = " + str(k.fft_length) + ", LOG2 = " + str(fft_log2(k)) + ";");
  w.line("const long long STEP = FFT - (TAPS - 1);  // outputs per segment");
  emit_fft_points(w, s, k);
  w.line("const long long pairs = ((samples + STEP - 1) / STEP + 1) / 2;");
  w.line("const long long c = blockIdx.x / pairs;");
  w.line("const long long n0 = (blockIdx.x % pairs) * 2 * STEP;  // the first segment's first output");
  emit_fir_history(w, ty, r);
  w.line("const " + s.t + "* const spectrum = tables;");
  w.line("const " + s.t + "* const twiddles = tables + 2 * FFT;");
  w.line("const " + s.t + "* const taps = tables + 3 * FFT;");
  emit_window_pair(w, ty, "n0 - (TAPS - 1)", "STEP", true);
  emit_direct_if_nonfinite(w, ty, "n0", "2 * STEP");
  emit_forward_fft(w, s);
  w.open("for (int j = threadIdx.x; j < FFT; j += blockDim.x) {");
  w.line("const " + s.t + " hr = spectrum[2 * j], hi = spectrum[2 * j + 1], zr = re[j], zi = im[j];");
  w.line("re[j] = zr * hr - zi * hi;");
  w.line("im[j] = zr * hi + zi * hr;");
  w.close();
  emit_inverse_fft(w, s);
  emit_output_pair(w, ty, "(int)(TAPS - 1)", "n0", "STEP");
  w.close();
  w.line();
  emit_fir_ring(w, k, chain, ty);
}

namespace {

// The constants of fir_partitioned's two transform kernels: the sizes, and the segment counts of
// a block of `samples` (cuda_fir_spectra's rule).
void emit_partition_sizes(Writer& w, const CudaKernelInfo& k) {
  w.line("const int FFT = " + str(k.fft_length) + ", LOG2 = " + str(fft_log2(k)) + ", HALF = FFT / 2;  // HALF: a partition's taps, a segment's outputs");
  w.line("const long long PARTS = " + str(cuda_fir_partitions(k)) + ";");
  w.line("const long long output_pairs = ((samples + HALF - 1) / HALF + 1) / 2;");
  w.line("const long long stored = (2 * output_pairs + PARTS) / 2 * 2;  // spectra per channel: segments -(PARTS - 1) on");
  w.line("const long long BINS = HALF + 1;  // a real segment's half spectrum");
}

}  // namespace

void emit_fir_partitioned(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain) {
  Types ty = types_of(k);
  const Scalar& s = ty.compute;
  const ChainLayout l = layout_of(chain);
  const FirRing r = fir_ring_of(l, chain);
  header(w, k, chain, l, ty);
  w.line("// Uniformly partitioned overlap-save: the taps in PARTS partitions of HALF, the input in");
  w.line("// segments of HALF. Segment m's output is the last HALF points of the inverse FFT of");
  w.line("// sum_p S[m - p] H[p], with S[m] the FFT of the inputs [(m - 1) HALF, (m + 1) HALF) and H[p]");
  w.line("// that of partition p padded to FFT (tables[0, 2 PARTS BINS), divided by FFT). " + k.entries[0].symbol);
  w.line("// stores every S, " + k.symbol + " sums and transforms back, " + k.entries[2].symbol);
  w.line("// writes the last inputs into the ring. Two real segments share each complex FFT. in != out.");
  w.open("extern \"C\" __global__ void " + k.entries[0].symbol + "(");
  w.line("const " + ty.signal.t + "* __restrict__ in, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ tables, const " + s.t + "* __restrict__ state, const long long* __restrict__ positions,");
  w.line(s.t + "* __restrict__ spectra) {");
  w.line("const long long TAPS = " + r.taps + ";");
  emit_partition_sizes(w, k);
  emit_fft_points(w, s, k);
  w.line("const long long pairs = stored / 2;");
  w.line("const long long c = blockIdx.x / pairs;");
  w.line("const long long first = (blockIdx.x % pairs) * 2;  // the pair's first stored segment: m = first - (PARTS - 1)");
  emit_fir_history(w, ty, r);
  w.line("const " + s.t + "* const twiddles = tables + 2 * PARTS * BINS;");
  emit_window_pair(w, ty, "(first - PARTS) * HALF", "HALF", false);  // the inverse pass checks its sums
  emit_forward_fft(w, s);
  w.line("// Z = S1 + i S2 for real segments: S1[f] = (Z[f] + conj Z[FFT - f]) / 2, S2[f] = (Z[f] - conj Z[FFT - f]) / 2i.");
  w.line(s.t + "* const to = spectra + (c * stored + first) * 2 * BINS;");
  w.open("for (int f = threadIdx.x; f < BINS; f += blockDim.x) {");
  emit_bit_reverse(w, "f", "rf");
  emit_bit_reverse(w, "(FFT - f) & (FFT - 1)", "rg");
  w.line("const " + s.t + " zr = re[rf], zi = im[rf], gr = re[rg], gi = im[rg];");
  w.line("to[2 * f] = " + s.t + "(0.5) * (zr + gr);");
  w.line("to[2 * f + 1] = " + s.t + "(0.5) * (zi - gi);");
  w.line("to[2 * (BINS + f)] = " + s.t + "(0.5) * (zi + gi);");
  w.line("to[2 * (BINS + f) + 1] = " + s.t + "(0.5) * (gr - zr);");
  w.close();
  w.close();
  w.line();
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + ty.signal.t + "* __restrict__ in, " + ty.signal.t + "* __restrict__ out, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ tables, const " + s.t + "* __restrict__ state, const long long* __restrict__ positions,");
  w.line("const " + s.t + "* __restrict__ spectra) {");
  w.line("const long long TAPS = " + r.taps + ";");
  emit_partition_sizes(w, k);
  emit_fft_points(w, s, k);
  w.line("const long long c = blockIdx.x / output_pairs;");
  w.line("const long long k0 = (blockIdx.x % output_pairs) * 2;  // the pair's first output segment");
  w.line("const " + s.t + "* const twiddles = tables + 2 * PARTS * BINS;");
  w.line("const " + s.t + "* const taps = twiddles + FFT;");
  w.line("const " + s.t + "* const from = spectra + c * stored * 2 * BINS;");
  w.line("int nonfinite = 0;  // a sum holds a NaN or an infinity: an input segment did");
  w.open("for (int f = threadIdx.x; f < BINS; f += blockDim.x) {");
  w.line(s.t + " ar = 0, ai = 0, br = 0, bi = 0;  // segment k0's sum, segment k0 + 1's");
  w.line("// Input segment k0 + 1 - q (stored at k0 + PARTS - q) meets partition q in output segment");
  w.line("// k0 + 1 and partition q - 1 in output segment k0.");
  w.open("for (long long q = 0; q <= PARTS; ++q) {");
  w.line("const " + s.t + "* const z = from + (k0 + PARTS - q) * 2 * BINS + 2 * f;");
  w.line("const " + s.t + " xr = z[0], xi = z[1];");
  // (re, im) += (xr + i xi) H[partition][f]
  auto multiply_add = [&](const std::string& when, const std::string& partition, const std::string& re,
                          const std::string& im) {
    w.open("if (" + when + ") {");
    w.line("const " + s.t + " hr = tables[2 * (" + partition + " * BINS + f)], hi = tables[2 * (" + partition +
           " * BINS + f) + 1];");
    w.line(re + " = " + s.fma + "(xr, hr, " + s.fma + "(-xi, hi, " + re + "));");
    w.line(im + " = " + s.fma + "(xr, hi, " + s.fma + "(xi, hr, " + im + "));");
    w.close();
  };
  multiply_add("q < PARTS", "q", "br", "bi");
  multiply_add("q > 0", "(q - 1)", "ar", "ai");
  w.close();
  w.line("nonfinite |= !isfinite(ar) || !isfinite(ai) || !isfinite(br) || !isfinite(bi);");
  w.line("// Both outputs are real: the spectrum A + i B, whose inverse is a + i b, at bit-reversed places.");
  emit_bit_reverse(w, "f", "rf");
  w.line("re[rf] = ar - bi;");
  w.line("im[rf] = ai + br;");
  w.open("if (f > 0 && f < HALF) {  // Z[FFT - f] = conj A[f] + i conj B[f]");
  emit_bit_reverse(w, "FFT - f", "rg");
  w.line("re[rg] = ar + bi;");
  w.line("im[rg] = br - ai;");
  w.close();
  w.close();
  emit_fir_history(w, ty, r);
  emit_direct_if_nonfinite(w, ty, "k0 * HALF", "2 * HALF");
  emit_inverse_fft(w, s);
  emit_output_pair(w, ty, "HALF", "k0 * HALF", "HALF");
  w.close();
  w.line();
  emit_fir_ring(w, k, chain, ty);
}

}  // namespace fxc::codegen::cuda_source

// SPDX-License-Identifier: Apache-2.0
// The node kinds of the fxc IR, listed once.
//
// Semantics. A graph is a dataflow graph, acyclic but for feedback edges (below). Each node produces one planar
// signal of `channels` channels and `length` samples, where `length` is the common length of
// the graph's inputs; every stage except `sum` works on each channel independently, and all
// filter state starts at zero. Operands are the signals a node reads, in order.
//
//   input       a graph input (no operands).
//   output      a graph output (one operand), equal to its operand.
//   iir_design  an IIR filter by specification (SciPy's butter/cheby1/cheby2/ellip/bessel).
//   biquad      an Audio EQ Cookbook biquad by specification.
//   fir_design  an FIR filter by specification (SciPy's firwin).
//   sos         a cascade of second-order sections, normalized so a0 = 1.
//   tf          a transfer function b(z)/a(z), as lfilter(b, a, x).
//   fir         FIR taps, as lfilter(taps, [1], x).
//   gain        y = gain * x.
//   sum         y = sum_i weights[i] * operand_i; operands have equal channel counts.
//   delay       y[n] = x[n - d]; zeros shift in. `amount` is in samples or seconds (`unit`).
//   tanh        y = tanh(x).
//   clip        y = min(max(x, lo), hi).
//   dynamics    an envelope follower, compressor, expander, gate or limiter: a nonlinear
//               recursion per channel (docs/fx-language.md gives its equations).
//   select      channel k of y is channel indices[k] of x: picks, reorders, repeats or
//               splits channels. `of` > 0: x must have exactly that many channels (a split
//               into names, a swap); 0: any count above every index.
//   matrix      y[r] = sum_c gains[r * C + c] * x[c]: mixes channels through a rows x C
//               matrix, C = x's channel count (gains.size() / rows). Empty gains, before
//               infer_types, mean one row of ones (the sum of however many channels x has).
//   concat      the operands' channels side by side, in order.
//   multiply    y = a * b per sample; b has a's channel count or a divisor of it (broadcast).
//   link        one level per group of channels: max or mean of |x_c|.
//   feedback    y[n] = x[n - d] where x may be computed after y: the one edge that may close a
//               cycle (a back edge). Every cycle of the graph passes through a feedback node,
//               and d >= 1 sample, so y[n] needs only samples of x before n. `amount` and
//               `unit` are as delay's. Each loop runs in blocks of at most its shortest
//               feedback delay: within a block, every feedback output is known before the
//               block starts (see runtime/run_graph.h).
//   chain       a kernel: the stages (sos, fir, gain, delay, tanh, clip, dynamics) applied in order in
//               one pass over memory, with the execution strategy select_strategy chose.
//
// Specifications (iir_design, biquad, fir_design, delay in seconds) need a sample rate; the
// design_filters pass replaces them with concrete sos, fir and delay-in-samples nodes.
//
// Structure and values. Every field of a payload is either part of the node's *shape* (what a
// compiled kernel depends on: kinds, orders, counts, types) or a *value* (a kernel argument:
// coefficients, gains, cutoffs, delay lengths). For a list-valued value field the length is
// shape and the contents are values. The structural hash covers shapes only, so a new cutoff
// or sample rate reuses a compiled kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "design/filter_types.h"

namespace fxc::ir {

/// How a field takes part in hashing and kernel compilation.
enum class FieldRole {
  shape,  ///< the kernel is compiled from it
  value,  ///< passed to the kernel as an argument; list lengths still count as shape
  label,  ///< a name for people (input and output names); no effect on computation
};

enum class DelayUnit { samples, seconds };

// Each payload declares:
//   kKind   its name in the text IR,
//   kArity  its operand count (-1: one or more),
//   fields  every field once, with its role, for the printer, parser, hasher and exporters.

struct Input {
  static constexpr std::string_view kKind = "input";
  static constexpr int kArity = 0;
  std::string name;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::label, "name", self.name);
  }
};

struct Output {
  static constexpr std::string_view kKind = "output";
  static constexpr int kArity = 1;
  std::string name;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::label, "name", self.name);
  }
};

struct IirDesign {
  static constexpr std::string_view kKind = "iir_design";
  static constexpr int kArity = 1;
  design::IirFamily family = design::IirFamily::butter;
  int order = 1;
  design::BandType btype = design::BandType::lowpass;
  std::vector<double> cutoff_hz;
  double rp_db = 0;
  double rs_db = 0;
  design::BesselNorm norm = design::BesselNorm::phase;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::shape, "family", self.family);
    v(FieldRole::shape, "order", self.order);
    v(FieldRole::shape, "btype", self.btype);
    v(FieldRole::value, "cutoff_hz", self.cutoff_hz);
    v(FieldRole::value, "rp_db", self.rp_db);
    v(FieldRole::value, "rs_db", self.rs_db);
    v(FieldRole::value, "norm", self.norm);
  }
};

struct Biquad {
  static constexpr std::string_view kKind = "biquad";
  static constexpr int kArity = 1;
  design::BiquadType type = design::BiquadType::lowpass;
  double f0_hz = 1000;
  double q = 0.7071067811865476;
  double gain_db = 0;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::shape, "type", self.type);
    v(FieldRole::value, "f0_hz", self.f0_hz);
    v(FieldRole::value, "q", self.q);
    v(FieldRole::value, "gain_db", self.gain_db);
  }
};

struct FirDesign {
  static constexpr std::string_view kKind = "fir_design";
  static constexpr int kArity = 1;
  int numtaps = 1;
  std::vector<double> cutoff_hz;
  design::Window window = design::Window::hamming;
  double kaiser_beta = 0;
  bool pass_zero = true;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::shape, "numtaps", self.numtaps);
    v(FieldRole::value, "cutoff_hz", self.cutoff_hz);
    v(FieldRole::value, "window", self.window);
    v(FieldRole::value, "kaiser_beta", self.kaiser_beta);
    v(FieldRole::value, "pass_zero", self.pass_zero);
  }
};

struct SosCascade {
  static constexpr std::string_view kKind = "sos";
  static constexpr int kArity = 1;
  std::vector<design::Section> sections;
  bool allow_unstable = false;  ///< a pole on or outside the unit circle is an error otherwise
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::value, "sections", self.sections);
    v(FieldRole::label, "allow_unstable", self.allow_unstable);
  }
};

struct TransferFunction {
  static constexpr std::string_view kKind = "tf";
  static constexpr int kArity = 1;
  std::vector<double> b;
  std::vector<double> a;
  bool allow_unstable = false;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::value, "b", self.b);
    v(FieldRole::value, "a", self.a);
    v(FieldRole::label, "allow_unstable", self.allow_unstable);
  }
};

struct FirFilter {
  static constexpr std::string_view kKind = "fir";
  static constexpr int kArity = 1;
  std::vector<double> taps;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::value, "taps", self.taps);
  }
};

struct Gain {
  static constexpr std::string_view kKind = "gain";
  static constexpr int kArity = 1;
  double gain = 1;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::value, "gain", self.gain);
  }
};

struct Sum {
  static constexpr std::string_view kKind = "sum";
  static constexpr int kArity = -1;
  std::vector<double> weights;  ///< one per operand
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::value, "weights", self.weights);
  }
};

struct Delay {
  static constexpr std::string_view kKind = "delay";
  static constexpr int kArity = 1;
  /// The longest delay, in samples (about 240 days at 48 kHz): lengths stay exact in a double
  /// and in the kernels' 64-bit positions.
  static constexpr double kMaxSamples = 1e12;
  double amount = 0;
  DelayUnit unit = DelayUnit::samples;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::value, "amount", self.amount);
    v(FieldRole::shape, "unit", self.unit);
  }
};

struct Tanh {
  static constexpr std::string_view kKind = "tanh";
  static constexpr int kArity = 1;
  template <class Self, class V>
  static void fields(Self&, V&&) {}
};

struct Clip {
  static constexpr std::string_view kKind = "clip";
  static constexpr int kArity = 1;
  double lo = -1;
  double hi = 1;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::value, "lo", self.lo);
    v(FieldRole::value, "hi", self.hi);
  }
};

/// A dynamics stage (docs/fx-language.md, "Dynamics", is the contract: the equations, per
/// channel, from zero state). `type` says which; the fields a type does not use keep their
/// defaults. Times (attack, release, hold, lookahead) are in `unit`: seconds as written,
/// samples once design_filters has bound the graph to a sample rate (not rounded, except hold
/// and lookahead, which count whole samples). The lookahead is shape: it sizes the kernel's
/// rings.
struct Dynamics {
  static constexpr std::string_view kKind = "dynamics";
  static constexpr int kArity = 1;
  /// The longest lookahead, in samples (over 20 s at 48 kHz): its rings are kernel state.
  static constexpr double kMaxLookaheadSamples = 1 << 20;
  design::DynamicsType type = design::DynamicsType::compressor;
  design::Detector detector = design::Detector::peak;
  double threshold_db = 0;
  double ratio = 1;
  double knee_db = 0;
  double makeup_db = 0;
  double attack = 0;
  double release = 0;
  double hold = 0;
  double range_db = -80;
  double lookahead = 0;
  DelayUnit unit = DelayUnit::seconds;
  /// Outputs the gain c[n] instead of c[n] times the input: a side-chain or linked stage is a
  /// `multiply` of the signal by this stage on the key (or the link of the channels).
  bool output_gain = false;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::shape, "type", self.type);
    v(FieldRole::shape, "detector", self.detector);
    v(FieldRole::value, "threshold_db", self.threshold_db);
    v(FieldRole::value, "ratio", self.ratio);
    v(FieldRole::value, "knee_db", self.knee_db);
    v(FieldRole::value, "makeup_db", self.makeup_db);
    v(FieldRole::value, "attack", self.attack);
    v(FieldRole::value, "release", self.release);
    v(FieldRole::value, "hold", self.hold);
    v(FieldRole::value, "range_db", self.range_db);
    v(FieldRole::shape, "lookahead", self.lookahead);
    v(FieldRole::shape, "unit", self.unit);
    v(FieldRole::shape, "output_gain", self.output_gain);
  }
};

/// y = a * b, sample by sample. b has a's channel count (channel by channel) or `groups`
/// channels, one for each of a's equal groups of channels (1: one gain for every channel; in a
/// batch, one per item): channel c of a takes channel c * B / A of b either way.
struct Multiply {
  static constexpr std::string_view kKind = "multiply";
  static constexpr int kArity = 2;
  int groups = 1;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::shape, "groups", self.groups);
  }
};

/// One level from each group of channels: the operand's C channels in `groups` equal groups
/// (1, or one per item of a batch); y[g][n] = max |x_c[n]| or the mean of |x_c[n]| over group g.
struct Link {
  static constexpr std::string_view kKind = "link";
  static constexpr int kArity = 1;
  design::LinkMode mode = design::LinkMode::max;
  int groups = 1;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::shape, "mode", self.mode);
    v(FieldRole::shape, "groups", self.groups);
  }
};

struct Select {
  static constexpr std::string_view kKind = "select";
  static constexpr int kArity = 1;
  std::vector<int> indices;
  int of = 0;
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::shape, "indices", self.indices);
    v(FieldRole::shape, "of", self.of);
  }
};

struct Matrix {
  static constexpr std::string_view kKind = "matrix";
  static constexpr int kArity = 1;
  int rows = 1;
  std::vector<double> gains;  ///< row-major, rows x (operand channels)
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::shape, "rows", self.rows);
    v(FieldRole::value, "gains", self.gains);
  }
};

struct Concat {
  static constexpr std::string_view kKind = "concat";
  static constexpr int kArity = -1;
  template <class Self, class V>
  static void fields(Self&, V&&) {}
};

struct Feedback {
  static constexpr std::string_view kKind = "feedback";
  static constexpr int kArity = 1;
  double amount = 1;
  DelayUnit unit = DelayUnit::samples;
  std::string reason;  ///< how the loop runs, and why (select_strategy), for people
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::value, "amount", self.amount);
    v(FieldRole::shape, "unit", self.unit);
    v(FieldRole::label, "reason", self.reason);
  }
};

/// A loop fused into a chain (the fuse-loops pass): `loop_read` outputs w = line[pos], the
/// value the line got `amount` samples ago, and keeps the stage's input x; the stages after it
/// work on w; `loop_write` then puts s = input_weight x + loop_weight v into the line where w
/// was (v: its own input) and moves on; it outputs s, or w with `output_read`, and with
/// `dry_mix` that output times `wet_weight` plus `dry_weight` x (an allpass's `past - in`, a
/// mix the fuse-loops pass takes into the kernel). One read and one write per chain, in that
/// order, with only sos, gain, tanh and clip between.
struct LoopRead {
  static constexpr std::string_view kKind = "loop_read";
  double amount = 1;  ///< in samples, at least 1
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::value, "amount", self.amount);
  }
};

struct LoopWrite {
  static constexpr std::string_view kKind = "loop_write";
  double input_weight = 1;
  double loop_weight = 1;
  bool output_read = false;
  bool dry_mix = false;
  double wet_weight = 1;  ///< with dry_mix
  double dry_weight = 0;  ///< with dry_mix
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::value, "input_weight", self.input_weight);
    v(FieldRole::value, "loop_weight", self.loop_weight);
    v(FieldRole::shape, "output_read", self.output_read);
    v(FieldRole::shape, "dry_mix", self.dry_mix);
    v(FieldRole::value, "wet_weight", self.wet_weight);
    v(FieldRole::value, "dry_weight", self.dry_weight);
  }
};

/// The stages a chain kernel can hold: the concrete single-operand kinds, and a fused loop.
using Stage = std::variant<SosCascade, FirFilter, Gain, Delay, Tanh, Clip, Dynamics, LoopRead, LoopWrite>;

/// True when the chain holds a fused loop (loop_read ... loop_write).
bool has_loop(const std::vector<Stage>& stages);

/// True when a CPU kernel of these stages runs the channels past its last whole group of SIMD
/// lanes as one more vector, its spare lanes idle (codegen/cpu/emit_chain.cpp), rather than one
/// channel at a time: when all its state lives in registers (no FIR, delay, fused loop or
/// lookahead, whose rings are per channel in memory), and, computing in float64, no stage calls
/// the C library once per lane, idle lanes too (dynamics, tanh), unless `vector_calls` (its
/// vector functions: one call per vector, codegen/vector_math.h). The cost model gives such
/// chains lanes from two channels.
bool partial_lanes_vectorize(const std::vector<Stage>& stages, bool float64, bool vector_calls = false);

/// True for a FIR or a memoryless stage (gain, clip, tanh): its outputs depend on its inputs
/// alone, none on another output.
bool fir_or_memoryless(const Stage& stage);

/// True when the stages are FIRs (at least one) and memoryless stages (fir_or_memoryless) and
/// nothing else: no output sample depends on another, so the CPU kernel runs a channel's
/// consecutive samples as SIMD lanes (passes::fir_time_lanes), where its FIRs run direct to
/// many more taps than in a chain with state (passes/fuse_chains.cpp).
bool fir_and_memoryless(const std::vector<Stage>& stages);

/// The stages a scan over time chunks carries from chunk to chunk: the length of the prefix
/// of sections and gains that ends with the chain's last section, when every stage after it is
/// memoryless (gain, clip, tanh: they run on the scan's output, sample by sample); 0 when
/// there is no section, or a delay, FIR, dynamics stage or fused loop, or a section after a
/// clip or tanh (time cannot be split there).
std::size_t scanned_prefix(const std::vector<Stage>& stages);

/// The steps a wavefront pipelines (IirStrategy::gpu_chunked_wavefront; the CPU's
/// section_wavefront steps alike): each section of an sos stage, and each other stage.
int wavefront_steps(const std::vector<Stage>& stages);

/// How a kernel runs its IIR sections.
enum class IirStrategy {
  none,               ///< the chain has no IIR stage
  sequential,         ///< one channel at a time, sample by sample
  channel_lanes,      ///< channels across SIMD lanes, all sections per sample
  section_wavefront,  ///< section k on sample n while section k+1 is on n-1
  chunked_scan,       ///< zero-state chunks in parallel, then exact carry with A^L (float64)
  gpu_thread_per_channel,
  gpu_chunked_scan,
  /// gpu_chunked_scan whose chunk passes pipeline the chain's steps in each thread: step k
  /// on sample n while step k+1 is on n-1 (docs/cuda.md)
  gpu_chunked_wavefront,
};

/// The most stages gpu_chunked_wavefront's pipeline has: its output lags its input by
/// stages - 1 samples, and the CUDA output pass's ring tile holds 32 samples of lag
/// (codegen/cuda). A chain of more steps groups them (wavefront_group).
inline constexpr int kGpuWavefrontMaxStages = 33;

/// The steps each stage of gpu_chunked_wavefront's pipeline runs one after another for a
/// chain of `steps` steps: 1 up to kGpuWavefrontMaxStages steps, then as few as keep the
/// stages within it (the last stage may have fewer).
inline int wavefront_group(int steps) {
  return steps <= kGpuWavefrontMaxStages ? 1 : (steps + kGpuWavefrontMaxStages - 1) / kGpuWavefrontMaxStages;
}

/// The stages of that pipeline: `steps` in groups of wavefront_group(steps).
inline int wavefront_stages(int steps) {
  const int group = wavefront_group(steps);
  return (steps + group - 1) / group;
}

/// The GPU's chunked scans, with or without the wavefront in their chunk passes.
inline bool gpu_chunked(IirStrategy s) {
  return s == IirStrategy::gpu_chunked_scan || s == IirStrategy::gpu_chunked_wavefront;
}

/// How a kernel runs its FIR stages.
enum class FirMethod { none, direct, fft_overlap_save };

/// The type a chain's coefficients, state and arithmetic use. `f64` on a float32 chain: the
/// signal is read and written as float32, everything between in float64, for filters whose
/// poles sit so close to the unit circle that float32 state loses the signal (docs/errors.md).
/// `mixed` (a float32 chain on a GPU, set by split-precision): the chain's first stage, a
/// cascade of the sections that need float64, computes in float64 and every later stage in
/// float32; the state buffers, the chunked scan's carry and snapshots hold float64 as for
/// `f64` (a CPU kernel runs such a chain wholly in float64).
/// `pairs` and `mixed_pairs` (a float32 chain on a GPU whose float64 is slow: select_strategy,
/// `gpu_float_pairs_max_f64_rate`) are `f64` and `mixed` with the float64 arithmetic done in
/// pairs of floats instead (hi + lo, about 48 bits of significand: codegen/cuda/emit_cuda.cpp),
/// the buffers still float64; `pairs` only for chains of sos cascades and gains. Where no such
/// arithmetic exists (the CPU, the interpreter) they are `f64` and `mixed`.
enum class StatePrecision { signal, f64, mixed, pairs, mixed_pairs };

/// True when a chain's state buffers are float64 on a float32 signal: every precision but
/// `signal`.
inline bool float64_state(StatePrecision precision) { return precision != StatePrecision::signal; }
/// True for `mixed` and `mixed_pairs`: the first stage in float64 (or pairs), float32 after.
inline bool mixed_precision(StatePrecision precision) {
  return precision == StatePrecision::mixed || precision == StatePrecision::mixed_pairs;
}
/// True for `pairs` and `mixed_pairs`: float64 arithmetic as float pairs on the GPU.
inline bool float_pairs(StatePrecision precision) {
  return precision == StatePrecision::pairs || precision == StatePrecision::mixed_pairs;
}

struct Chain {
  static constexpr std::string_view kKind = "chain";
  static constexpr int kArity = 1;
  std::vector<Stage> stages;
  IirStrategy strategy = IirStrategy::none;  // until select_strategy chooses
  int chunk_length = 0;  ///< samples per chunk, for the chunked strategies
  FirMethod fir_method = FirMethod::none;
  int fft_block = 0;     ///< FFT length, for fft_overlap_save (on the GPU, below twice the taps: partitioned)
  StatePrecision state_precision = StatePrecision::signal;
  std::string reason;    ///< why select_strategy chose this, for people
  template <class Self, class V>
  static void fields(Self& self, V&& v) {
    v(FieldRole::shape, "stages", self.stages);
    v(FieldRole::shape, "strategy", self.strategy);
    v(FieldRole::shape, "chunk_length", self.chunk_length);
    v(FieldRole::shape, "fir_method", self.fir_method);
    v(FieldRole::shape, "fft_block", self.fft_block);
    v(FieldRole::shape, "state_precision", self.state_precision);
    v(FieldRole::label, "reason", self.reason);
  }
};

/// Every node kind. Code that must handle each kind uses std::visit, so a new kind that is
/// not handled does not compile.
using Op = std::variant<Input, Output, IirDesign, Biquad, FirDesign, SosCascade,
                        TransferFunction, FirFilter, Gain, Sum, Delay, Tanh, Clip, Dynamics, Chain, Select, Matrix,
                        Concat, Multiply, Link, Feedback>;

/// The text-IR name of the node kind held by `op`.
std::string_view kind_name(const Op& op);
/// The operand count of `op`'s kind; -1 means one or more.
int arity(const Op& op);
/// A default-constructed payload of the kind named `kind`; false if no kind has that name.
/// `V` is Op or Stage.
template <class V>
bool make_op(std::string_view kind, V& out);
/// Every kind name, in declaration order.
std::vector<std::string_view> kind_names();

std::string_view name(DelayUnit unit);
std::string_view name(IirStrategy strategy);
std::string_view name(FirMethod method);
std::string_view name(StatePrecision precision);
/// Inverse of name() for DelayUnit, IirStrategy, FirMethod and StatePrecision.
template <class E>
std::optional<E> parse_ir_enum(std::string_view word);
template <class E>
std::vector<std::string_view> ir_enum_names();

/// True for kinds that are filter specifications, replaced by design_filters.
bool is_specification(const Op& op);

/// True for the routing kinds (select, matrix, concat, multiply, link): their channel count is
/// not simply their operands', and the runtime runs them itself (run_route, emit_route).
bool is_routing(const Op& op);

/// True when the operand edges of `op` are ordinary ones: false only for a feedback node, whose
/// operand edge is a back edge that topological orders and cycle checks leave out.
bool has_forward_operands(const Op& op);

}  // namespace fxc::ir

// SPDX-License-Identifier: Apache-2.0
// fxc::Program: a graph compiled for a sample rate, a sample type and a target, with live
// parameters. Runs whole signals; makes Processors for real-time streams.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fxc/dsl.h>
#include <fxc/param_value.h>
#include <fxc/signal.h>
#include <fxc/types.h>

namespace fxc {

class Processor;

/// How a Program is compiled.
struct Options {
  double sample_rate_hz = 48000;
  DType dtype = DType::f32;  ///< the computation's sample type (float32 keeps float64 state where needed)
  Target target = Target::cpu;
  /// The channel count of inputs declared without one (`input x`); 0: taken from the first
  /// signal run (a Program then compiles once per new channel count).
  int channels = 0;
  /// The longest block a Processor made from this Program will get; guides the strategy of
  /// streams (0: 4096).
  std::size_t max_block = 0;
  /// The kernel cache on disk. Empty: $FXC_CACHE_DIR, else $XDG_CACHE_HOME/fxc, else
  /// ~/.cache/fxc. "none": in memory only.
  std::string cache_directory{};
  /// Cost-model thresholds by name (docs/passes.md), e.g. {"f64_state_pole_radius", 2}.
  std::vector<std::pair<std::string, double>> thresholds{};
  /// Starting values of live parameters by name, in their units (Hz, dB, s, samples).
  std::vector<std::pair<std::string, double>> params{};
  /// Starting values as text with units, "NAME=VALUE" ("fc=500Hz", "g=-3dB", "n=6"), as
  /// `fxc run --set` takes them: each replaces the constant's value in the source before
  /// anything is compiled, so it may also set what cannot change live (a filter order), and
  /// errors point at the constant. Applied before `params`.
  std::vector<std::string> settings{};
  /// The length, in frames, of the signals run() will mostly get; 0: none given (on the CPU a
  /// run of at least 2^16 frames is then scheduled for the shortest length of its class, the
  /// lengths within a factor of two, made at the class's first run; shorter runs take no
  /// length; docs/api.md "Signal length"). Only the strategy depends on it: a long signal with few channels may be cut into
  /// time chunks that run side by side in SIMD lanes (the chunked scan), which pays only on
  /// long signals. Runs of any length stay correct.
  std::size_t signal_length = 0;
  /// true: every constant is a live parameter, and a constant without a declared range is
  /// compiled for any value it could take (at float32 a filter whose poles it moves keeps
  /// float64 state, and no time chunks). false: constants without a declared range are fixed
  /// at their values here, compiled as plain constants (the fastest kernels for those values);
  /// set() refuses them. Declared ranges are live either way.
  bool live_unranged_params = true;
  /// false: construction checks and schedules the graph but compiles no kernels; the first
  /// run() or processor() compiles them, once for every copy of the Program at the same
  /// values (a Program made again from the same text is such a copy). For dumps, which need
  /// no kernels (nor a GPU), and for many Processors of one graph (a corpus's files).
  bool compile_kernels = true;
  /// Target::cuda: the GPU architecture to compile for ("sm_90"); empty: the device's. A
  /// Program for a named architecture compiles its kernels into the cache without a device
  /// (ahead of time, for machines that have one) and cannot run.
  std::string cuda_architecture{};
  /// false: every stage gets a kernel of its own, and no pass merges or folds stages: the
  /// graph as written, for measuring what fusion gains (slower; results equal to rounding).
  bool fuse = true;
  /// With time_passes, a table of each pass's time goes to `log` at every compile.
  bool time_passes = false;
  std::ostream* log = nullptr;
};

/// One output's response to one input: H(e^{jw}) at each frequency asked for.
struct FrequencyResponse {
  std::string output{};  ///< the output's name ("" for an unnamed one)
  std::string input{};   ///< the input's name
  std::size_t output_index = 0, input_index = 0;  ///< in Program::outputs() and inputs()
  std::vector<std::complex<double>> response{};
};

/// What Program::dump prints: the graph at a stage, as `fxc dump` does.
struct DumpOptions {
  /// "ir" (lowered and designed), "ir-opt" (after every pass: fused, with strategies), "llvm"
  /// (the CPU kernels' LLVM IR) or "cuda" (the kernels' CUDA C++).
  std::string emit = "ir-opt";
  /// For "ir" and "ir-opt": "text", "dot" (Graphviz) or "json".
  std::string format = "text";
  /// For "ir" and "ir-opt": run only these passes, in this order (as fxc dump --passes).
  std::vector<std::string> passes{};
  /// The text IR after every pass ("(unchanged)" where a pass changed nothing), before the
  /// final one.
  bool print_after_all = false;
  bool locations = true;       ///< source locations in the text IR
  bool time_passes = false;     ///< a table of each pass's time, before the dump
  bool llvm_optimized = false;  ///< "llvm": after LLVM's optimization (its O1 pipeline)
  /// Where print_after_all's and time_passes's output goes; nullptr: into the returned text,
  /// before the dump.
  std::ostream* log = nullptr;
};

/// A live parameter of a Program: a named constant of a .fx file (`fc = 200 Hz`) or an
/// fxc::param of the DSL.
struct ParamInfo {
  std::string name{};
  int id = 0;              ///< its index in params(): set(id, v) is set(name, v)
  std::string unit{};        ///< "Hz", "dB", "s", "samples" or "" (a plain number)
  double value = 0;        ///< in `unit`
  double min = 0, max = 0;  ///< the declared range; -inf and +inf where none was declared
  bool has_range = false;
};

/// A graph input or output as the Program binds it.
struct PortInfo {
  std::string name{};
  int channels = 0;  ///< 0: not known until a signal is run (Options::channels was 0)
  /// Outputs: how many samples late the output is, from the limiters' lookaheads on the way
  /// to it (the largest sum over its paths); a host delays its other signals by this much.
  /// 0 for inputs, and until the graph is compiled.
  std::int64_t latency = 0;
};

/// Forgets the kernels compiled in this process (Programs and Processors keep the ones they
/// hold); the next compile of a graph reads the disk cache or compiles again. For measuring
/// compile times, and for long-lived hosts that compile many graphs once.
void clear_kernel_memory_cache();

/// Threads a whole-signal run may use: the process's worker pool, the calling thread included,
/// made at the first run that can use it and kept (no run starts a thread). `threads` >= 1, or
/// 0 for the default: FXC_THREADS if set, else the cores this process may use (its affinity
/// mask and cgroup quota). A chain runs on several threads when its channels split into parts
/// of about a million section-samples each; results are the same bit for bit. Streams and
/// Processors always run on the caller's thread.
void set_threads(int threads);
int threads();

/// A graph's interface, read without compiling: what a host needs to know before it picks a
/// sample rate or opens its inputs.
struct GraphInfo {
  std::vector<PortInfo> inputs{};   ///< channels 0 where the input declares none
  std::vector<PortInfo> outputs{};  ///< channels 0 where they follow an undeclared input
  std::vector<ParamInfo> params{};
};

/// Parses and lowers `.fx` text (`settings` as in Options::settings) without compiling it.
/// Throws Error for a graph that does not parse or lower; errors that depend on the sample
/// rate (a cutoff above Nyquist) come only when a Program is made, or, for a graph with an
/// input declared without a channel count and no Options::channels, at its first run (the
/// filters are designed once the count is known).
GraphInfo inspect_source(std::string_view fx_text, std::string name = "<source>",
                         const std::vector<std::string>& settings = {});
GraphInfo inspect_file(const std::string& path, const std::vector<std::string>& settings = {});

/// Samples in GPU memory the caller owns, for Program::run_device: `data` is a CUdeviceptr to
/// a C-order (channels, frames) array of the Program's sample type, channel rows one after
/// another (a contiguous PyTorch or CuPy CUDA tensor of that shape: `tensor.data_ptr()`).
struct DeviceArray {
  std::uintptr_t data = 0;
  std::size_t channels = 0;
  std::size_t frames = 0;
};

/// A graph compiled for one sample rate, sample type and target. Copies share the compiled
/// kernels; run() may be called from several threads at once; set() changes the values every
/// later run() uses (thread-safe too).
class Program {
 public:
  /// Compiles `.fx` text; `name` is the file name diagnostics show.
  static Program from_source(std::string_view fx_text, const Options& options = {},
                             std::string name = "<source>");
  /// Compiles a `.fx` file.
  static Program from_file(const std::string& path, const Options& options = {});
  /// Compiles a DSL graph reaching `outputs`.
  Program(std::vector<Output> outputs, const Options& options = {}, std::string name = "graph");

  Program(const Program&);
  Program& operator=(const Program&);
  Program(Program&&) noexcept;
  Program& operator=(Program&&) noexcept;
  ~Program();

  const Options& options() const;
  std::vector<PortInfo> inputs() const;
  std::vector<PortInfo> outputs() const;

  // ---- live parameters ----
  std::vector<ParamInfo> params() const;
  /// The id of a parameter; throws Error for an unknown name (with the nearest one).
  int param_id(std::string_view name) const;
  /// A new value, in the parameter's unit. Never recompiles; throws Error for a value outside
  /// the declared range or one the stage refuses (a cutoff above Nyquist), and for a
  /// constant that shapes the graph (a filter order, a tap count) or that
  /// Options::live_unranged_params fixed: give those in Options::settings.
  void set(std::string_view name, double value);
  void set(int id, double value);
  /// A value with its unit, as `fxc run --set` takes it: "500Hz", "-3 dB", "20ms".
  void set(std::string_view name, std::string_view value_with_unit);
  /// Several values at once (`set({{"fc", 300.0}, {"q", 2.0}})`): a run on another thread
  /// sees all of them or none, and a value refused (as one set() refuses it) keeps every
  /// value as it was. A name given twice takes its last value.
  void set(const std::vector<ParamValue>& values);
  double get(std::string_view name) const;

  // ---- whole signals ----
  /// Runs whole signals from zero state into caller memory: for each graph input a planar
  /// pointer array (one pointer per channel), for each output likewise, all `frames` long.
  /// float32 or float64 (converted when not the Program's dtype); an output may be its
  /// input's memory (in place).
  void run(std::span<const float* const* const> inputs, std::span<float* const* const> outputs,
           std::size_t frames) const;
  void run(std::span<const double* const* const> inputs, std::span<double* const* const> outputs,
           std::size_t frames) const;
  /// One input, one output.
  void run(const float* const* input, float* const* output, std::size_t frames) const;
  void run(const double* const* input, double* const* output, std::size_t frames) const;
  /// Owning conveniences: one signal per input in, one per output back (in the Program's dtype).
  std::vector<Signal> run(const std::vector<Signal>& inputs) const;
  Signal run(const Signal& input) const;
  /// The same run on inputs the caller gives up (std::move): each output takes the memory of
  /// an input of its channel count, if one is left, and is computed over it in place, so that
  /// the run allocates no new signal there (for a long signal, fresh memory is a large part of
  /// the time: the system zeroes every page on first touch). The results are run()'s. After
  /// an Error the inputs are gone (moved from).
  std::vector<Signal> run(std::vector<Signal>&& inputs) const;
  Signal run(Signal&& input) const;
  /// Many signals through the graph at once, one dispatch per kernel for all of them: each
  /// item is one signal per input; items may differ in length.
  std::vector<std::vector<Signal>> run_batch(const std::vector<std::vector<Signal>>& items) const;
  /// A batch in caller memory, every item `frames` long: for each graph input a pointer
  /// array of items x channels pointers, item b's channel c at b x channels + c (the rows of a
  /// C-order (items, channels, frames) array); for each output likewise. One dispatch per
  /// kernel for all items, on that memory without a copy where the Program computes in the
  /// caller's sample type on the CPU (else through owning signals). Needs every input's
  /// channel count (declared, or Options::channels).
  void run_batch(std::span<const float* const* const> inputs, std::span<float* const* const> outputs,
                 std::size_t items, std::size_t frames) const;
  void run_batch(std::span<const double* const* const> inputs, std::span<double* const* const> outputs,
                 std::size_t items, std::size_t frames) const;

  /// Whole signals run as a stream would run them, `block` frames at a time with the state
  /// carried across (target cpu: a Processor; cuda: a CUDA graph recorded per block length and
  /// replayed). The result equals run()'s up to the rounding docs/streaming.md bounds.
  std::vector<Signal> run_in_blocks(const std::vector<Signal>& inputs, std::size_t block) const;

  /// Target::cuda: whole signals from zero state on GPU memory the caller owns, with no copy
  /// through the host: one DeviceArray per graph input and per output, all with the same
  /// frames, in the Program's sample type, channel counts as the graph's. The work goes on
  /// `cuda_stream`, a CUstream of device 0's primary context (PyTorch's
  /// `torch.cuda.current_stream().cuda_stream`); 0: fxc's own stream. Returns when the work is
  /// done. An output may be an input's memory. Throws Error for another target, a count or
  /// length that does not match, or a null pointer.
  void run_device(std::span<const DeviceArray> inputs, std::span<const DeviceArray> outputs,
                  std::uintptr_t cuda_stream = 0) const;
  /// Target::cuda: a batch on GPU memory the caller owns, every item from zero state and
  /// `frames` long: for each graph input one DeviceArray whose rows are the items' channels one
  /// item after another (`channels` = items x the input's channels: a contiguous (items,
  /// channels, frames) tensor), outputs likewise. One launch per kernel entry for all the items
  /// (docs/cuda.md), on `cuda_stream` as run_device; an item's output depends on that item
  /// alone. The batch's compiled kernels are kept for the next call of the same shape and
  /// values. Throws Error as run_device does, and for rows that are not a multiple of `items`.
  void run_batch_device(std::span<const DeviceArray> inputs, std::span<const DeviceArray> outputs,
                        std::size_t items, std::uintptr_t cuda_stream = 0) const;

  // ---- streams ----
  /// A real-time processor of this Program's graph and current parameter values, prepared
  /// for blocks of up to Options::max_block frames.
  Processor processor() const;

  // ---- what the graph does ----
  /// The exact frequency response of each output to each input it depends on (the others
  /// held at zero), at the current parameter values, at each of `frequencies_hz`: what an
  /// equaliser's display draws. Designed in float64 for one channel per undeclared input.
  /// Throws Error for a non-linear stage (tanh, clip) on a path, which has no response.
  std::vector<FrequencyResponse> frequency_response(const std::vector<double>& frequencies_hz) const;
  /// The graph's name (a .fx file's `graph NAME`, else its file name's stem; a DSL graph's
  /// name).
  std::string name() const;

  // ---- what the compiler made ----
  /// The graph at a stage, as `fxc dump --emit` prints it: "ir" (lowered and designed),
  /// "ir-opt" (scheduled: fused, with strategies), "dot", "json", "llvm" (CPU kernels) or
  /// "cuda" (CUDA C++). Throws Error for another name. Dumps compile no kernels.
  std::string dump(std::string_view emit = "ir-opt") const;
  std::string dump(const DumpOptions& options) const;
  /// Warnings from compiling (a damaged cache entry rebuilt, ...), rendered; empty if none.
  std::string warnings() const;

  struct Impl;

 private:
  explicit Program(std::shared_ptr<Impl> impl);
  /// *impl_; throws Error on a Program moved from, whose impl_ is gone.
  Impl& impl() const;
  std::shared_ptr<Impl> impl_;
  friend class Processor;
};

}  // namespace fxc

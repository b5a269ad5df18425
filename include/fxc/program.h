// SPDX-License-Identifier: Apache-2.0
// fxc::Program: a graph compiled for a sample rate, a sample type and a target, with live
// parameters. Runs whole signals; makes Processors for real-time streams.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fxc/dsl.h>
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
  std::string cache_directory;
  /// Cost-model thresholds by name (docs/passes.md), e.g. {"f64_state_pole_radius", 2}.
  std::vector<std::pair<std::string, double>> thresholds;
  /// Starting values of live parameters by name, in their units (Hz, dB, s, samples).
  std::vector<std::pair<std::string, double>> params;
};

/// A live parameter of a Program: a named constant of a .fx file (`fc = 200 Hz`) or an
/// fxc::param of the DSL.
struct ParamInfo {
  std::string name;
  int id = 0;              ///< its index in params(): set(id, v) is set(name, v)
  std::string unit;        ///< "Hz", "dB", "s", "samples" or "" (a plain number)
  double value = 0;        ///< in `unit`
  double min = 0, max = 0;  ///< the declared range; -inf and +inf where none was declared
  bool has_range = false;
};

/// A graph input or output as the Program binds it.
struct PortInfo {
  std::string name;
  int channels = 0;  ///< 0: not known until a signal is run (Options::channels was 0)
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
  /// the declared range or one the stage refuses (a cutoff above Nyquist).
  void set(std::string_view name, double value);
  void set(int id, double value);
  /// A value with its unit, as `fxc run --set` takes it: "500Hz", "-3 dB", "20ms".
  void set(std::string_view name, std::string_view value_with_unit);
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
  /// Many signals through the graph at once, one dispatch per kernel for all of them: each
  /// item is one signal per input; items may differ in length.
  std::vector<std::vector<Signal>> run_batch(const std::vector<std::vector<Signal>>& items) const;

  // ---- streams ----
  /// A real-time processor of this Program's graph and current parameter values, prepared
  /// for blocks of up to Options::max_block frames.
  Processor processor() const;

  // ---- what the compiler made ----
  /// The graph at a stage, as `fxc dump --emit` prints it: "ir" (lowered and designed),
  /// "ir-opt" (scheduled: fused, with strategies), "dot", "json", "llvm" (CPU kernels) or
  /// "cuda" (CUDA C++). Throws Error for another name.
  std::string dump(std::string_view emit = "ir-opt") const;
  /// Warnings from compiling (a damaged cache entry rebuilt, ...), rendered; empty if none.
  std::string warnings() const;

  struct Impl;

 private:
  explicit Program(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
  friend class Processor;
};

}  // namespace fxc

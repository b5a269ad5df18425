// SPDX-License-Identifier: Apache-2.0
// The inside of fxc::Program: a graph source, its live parameters' current values, and what
// was compiled from them, per channel count.
#pragma once

#include <fxc/program.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "driver/graph_source.h"
#include "driver/live_parameters.h"
#include "driver/compile_cpu.h"
#include "runtime/cpu_executor.h"
#include "runtime/cuda_executor.h"

namespace fxc {

/// What one set of parameter values compiled to, for one channel binding. Immutable: a run
/// holds it while set() makes the next one.
struct CompiledValues {
  ir::Graph lowered;    ///< the lowered graph, live nodes marked, channels not yet bound
  ir::Graph scheduled;  ///< after the whole pipeline (the reference target: only bound)
  std::shared_ptr<const codegen::CpuKernels> kernels;  ///< target cpu
  std::shared_ptr<const CpuRunner> cpu_runner;         ///< target cpu: whole signals of `scheduled`
  std::shared_ptr<const CudaProgram> cuda;             ///< target cuda
  ParamValues values;
};

/// The kernels of a specialisation's first values, where Options::compile_kernels left them
/// out, compiled at the first run of its Program or of any copy: copies of a Specialization
/// share this, so that the Program cache's copies (a corpus's files, each a Processor) compile
/// and load them once, not once each (a module load per file on the GPU).
struct FirstKernels {
  std::mutex mutex;
  std::shared_ptr<const CompiledValues> from;      ///< the specialisation's first values, without kernels
  std::shared_ptr<const CompiledValues> compiled;  ///< `from` with its kernels, once a run compiled them
};

/// The compilation for one channel count of undeclared inputs (0: every input declares its).
struct Specialization {
  int channels = 0;
  CompileRequest request;  ///< with the live chains' bounds
  driver::LiveAnalysis live;
  std::shared_ptr<const CompiledValues> now;
  std::shared_ptr<FirstKernels> first_kernels = std::make_shared<FirstKernels>();
};

/// Whole signals as the planar pointer arrays a runner takes, in `dtype`: the inputs (copies
/// converted where of the other type) and new outputs of `scheduled`'s output channel counts,
/// `frames` long.
struct PlanarRun {
  std::vector<Signal> converted, outputs;
  std::vector<std::vector<const void*>> in;
  std::vector<std::vector<void*>> out;
  std::vector<const void* const*> in_ports;
  std::vector<void* const*> out_ports;
};
PlanarRun planar_run(std::span<const Signal> inputs, const ir::Graph& scheduled, DType dtype, std::size_t frames);

struct Program::Impl {
  Impl(driver::GraphSource source, const Options& options);
  Impl(const Impl& other);

  const Options& options() const { return options_; }
  std::vector<PortInfo> ports(bool inputs) const;

  std::vector<ParamInfo> param_infos() const;
  int param_id(std::string_view name) const;  ///< throws Error for an unknown name
  double value(int id) const;
  double parse_value(int id, std::string_view text) const;  ///< throws Error
  /// Checks each value against its range, compiles the new values of every specialisation
  /// (never new kernels), then makes them current together; throws Error and changes nothing
  /// if a stage refuses one.
  void set(const std::vector<std::pair<int, double>>& values);
  void set(int id, double value) { set({{id, value}}); }
  /// Ids and numbers for set(), text values parsed in their parameters' units.
  std::vector<std::pair<int, double>> resolve(const std::vector<ParamValue>& values) const;

  /// Binds `inputs` to the current values' graph (throwing the diagnostics of inputs that do
  /// not fit it) and runs them where the compiled kernels do not take them as they are: on the
  /// interpreter, or compiled for their channel counts (run_bound). Returns those outputs, or
  /// the values whose kernels take the inputs (run() and run_consuming() then run them).
  std::variant<std::vector<Signal>, std::shared_ptr<const CompiledValues>> run_unless_compiled(
      std::span<const Signal> inputs) const;
  std::vector<Signal> run(std::span<const Signal> inputs) const;
  /// run() on inputs the caller gives up: each output takes the memory of an input left over
  /// of its channel count (converted to the run's sample type first), and the run writes it
  /// in place; the other outputs are allocated.
  std::vector<Signal> run_consuming(std::vector<Signal> inputs) const;
  /// A run whose inputs' channel counts differ from the compiled ones' (two inputs declared
  /// without a count, given signals of different counts): `bound` compiled for them, once.
  std::vector<Signal> run_bound(const ir::Graph& bound, const Specialization& spec,
                                std::span<const Signal> inputs) const;
  /// The current values of the specialisation for `channels` and `length_class` (as
  /// specialization() takes them), with their kernels.
  std::shared_ptr<const CompiledValues> current(int channels, int length_class = 0) const;
  /// Which schedule a whole run of `frames` frames takes where Options::signal_length gives
  /// none (on the CPU): 0 below kLongRunFrames (no length: no time chunks, as for any length
  /// before 2026-12-02), else 1 + floor(log2(frames / kLongRunFrames)), a class scheduled for
  /// its shortest length (class_frames), so that whatever it chooses for that length pays for
  /// every run in it. With signal_length, or on the GPU: always 0.
  int length_class(std::size_t frames) const;
  static constexpr std::size_t kLongRunFrames = std::size_t{1} << 16;
  static std::int64_t class_frames(int length_class) {
    return static_cast<std::int64_t>(kLongRunFrames) << (length_class - 1);
  }
  std::vector<Signal> run_cuda_in_blocks(std::span<const Signal> inputs, std::size_t block) const;
  void run_device(std::span<const DeviceArray> inputs, std::span<const DeviceArray> outputs,
                  std::uintptr_t cuda_stream) const;
  void run_batch_device(std::span<const DeviceArray> inputs, std::span<const DeviceArray> outputs,
                        std::size_t items, std::uintptr_t cuda_stream) const;
  std::vector<std::vector<Signal>> run_batch(const std::vector<std::vector<Signal>>& items) const;
  /// A same-length batch in caller memory of the Program's sample type (Program::run_batch's
  /// planar form) on the CPU: run on that memory. false: another target, for the caller to
  /// run through owning signals.
  bool run_batch_into(std::span<const void* const* const> inputs, std::span<void* const* const> outputs,
                      std::size_t items, std::size_t frames) const;
  std::string dump(const DumpOptions& options) const;
  std::vector<FrequencyResponse> frequency_response(const std::vector<double>& frequencies_hz) const;
  std::string name() const { return source_.name_of(declared_); }
  std::string warnings() const;

  /// The specialisation for `channels` (compiled now if new) and its current values.
  /// `kernels` false: a new one is scheduled without its kernels, for callers that compile
  /// their own from its lowered graph (batches, dumps); current() compiles them when a run
  /// needs them.
  std::shared_ptr<const Specialization> specialization(int channels, bool kernels = true, int length_class = 0) const;
  /// The values of `spec` compiled at `values`: errors go to `diags`. Checks that the
  /// shape is the one compiled (an InternalError otherwise: never a silent recompile).
  /// `kernels` false leaves a new specialisation's kernels for later (as
  /// Options::compile_kernels false does).
  std::optional<CompiledValues> compile_values(const Specialization& spec, const ParamValues& values,
                                               DiagnosticEngine& diags, bool kernels = true) const;
  /// `now` with its kernels compiled (Options::compile_kernels false leaves them out until a
  /// run needs them); errors go to `diags`.
  bool compile_kernels(const Specialization& spec, CompiledValues& now, DiagnosticEngine& diags) const;
  const driver::GraphSource& source() const { return source_; }
  /// The graph as lowered at construction, its inputs' declared counts (0: undeclared).
  const ir::Graph& declared() const { return declared_; }
  /// The channel count a run with `inputs` binds undeclared inputs to (0 if none is undeclared).
  int channels_for(std::span<const Signal> inputs) const;

 private:
  CompileRequest base_request(int channels, int length_class) const;
  /// Throws for a CUDA Program compiled ahead of time for a named architecture.
  void refuse_if_ahead_of_time() const;

  Options options_;
  driver::GraphSource source_;
  ir::Graph declared_;  ///< lowered once, for ports
  passes::Target target_;
  mutable std::mutex mutex_;
  ParamValues values_;
  /// By (channels, length class).
  mutable std::map<std::pair<int, int>, std::shared_ptr<Specialization>> specs_;
  /// run_batch_device's programs by (items, frames), each for the values it was compiled at
  /// (a set() makes new ones); at most kDeviceBatches, the least recently used dropped first.
  struct DeviceBatch {
    std::size_t items = 0, frames = 0;
    std::shared_ptr<const CompiledValues> values;
    std::shared_ptr<const CudaProgram> program;
  };
  static constexpr std::size_t kDeviceBatches = 8;
  mutable std::deque<DeviceBatch> device_batches_;
  mutable std::string warnings_;
};

}  // namespace fxc

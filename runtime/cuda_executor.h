// SPDX-License-Identifier: Apache-2.0
// Runs a graph scheduled for CUDA on a GPU (runtime/gpu_device.h): one launch per kernel
// entry (codegen/cuda/emit_cuda.h), signals kept on the device between nodes, host-device
// copies through page-locked staging buffers on the device's own stream. Blocks of a stream
// are recorded once as a CUDA graph (copies in, launches, copies out) and replayed.
//
// A graph with feedback runs as the CPU runtime runs it (runtime/run_graph.h), in the order of
// ir::loop_order: each loop's kernels go in passes of at most the loop's shortest feedback
// delay over the block's buffers, each feedback node's line read at its place and written
// after the loop's other kernels of the pass; the other kernels run over the whole block. The
// lines stay on the device with the chains' state (snapshots, reset and update_values carry
// them), so a block is still copies in, launches, copies out. Select, matrix and concat run
// as kernels.
//
// Layout: on the device, every signal of a graph is interleaved [sample][channel] when the
// graph has a signal of 32 channels or more (one thread per channel then reads a warp's 32
// samples in one transaction), else planar [channel][sample]. The host side and its staging
// are planar (Signal); an interleaved stream transposes on the GPU as it copies in and out. A batch (compile_batch_for_cuda, run_batch_cuda) is laid out as
// channels side by side (runtime/batch.h), so it is one launch per kernel entry for the lot.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "codegen/cuda/emit_cuda.h"
#include "ir/graph.h"
#include "runtime/batch.h"
#include "passes/pipeline.h"
#include "runtime/gpu_device.h"
#include "runtime/signal.h"
#include "support/diagnostics.h"
#include "support/expected.h"

namespace fxc {

struct CudaRunPool;

/// A program's pool of streams for whole runs (execute_cuda, execute_cuda_into and
/// execute_cuda_on_device). Every program has its own, a
/// copy too: a copy of a program is made for other values (Program::set), and the original's
/// pooled streams hold the original's values and point at it.
class CudaRunPoolRef {
 public:
  CudaRunPoolRef();
  CudaRunPoolRef(const CudaRunPoolRef&) : CudaRunPoolRef() {}
  CudaRunPoolRef& operator=(const CudaRunPoolRef&) = delete;
  CudaRunPool& operator*() const { return *pool_; }

 private:
  std::shared_ptr<CudaRunPool> pool_;
};

/// A scheduled graph's kernels loaded on a device. A copy has the same kernels, for other
/// values (`scheduled` set after the copy), and a run pool of its own.
struct CudaProgram {
  ir::Graph scheduled;
  std::vector<codegen::CudaKernelInfo> kernels;
  std::shared_ptr<GpuDevice> device;
  GpuDevice::Handle module = 0;
  /// Unloads `module` when the last program that uses it goes: programs of the same machine
  /// code share a module (copies, and programs of one kernel shape for other lengths or
  /// values), and the device outlives them (open_cuda_device keeps it for the process).
  std::shared_ptr<const void> module_unload;
  std::vector<std::vector<GpuDevice::Handle>> functions;  ///< [kernel][entry]
  /// Kernels launched side by side (codegen::cuda_side_by_side), each group's function, and
  /// for each kernel its group or -1.
  std::vector<codegen::CudaSideBySide> side_by_side;
  std::vector<GpuDevice::Handle> side_functions;
  std::vector<int> side_of;
  /// codegen::cuda_layout_entries: fxc_interleave, fxc_deinterleave.
  std::array<GpuDevice::Handle, 2> layout_functions{};
  /// Streams that whole runs reuse, with their staging and device buffers. Last: it goes first.
  CudaRunPoolRef run_pool;
};

/// The page-locked staging of a whole run from host memory, per set (execute_cuda keeps two).
inline constexpr std::size_t kCudaStagingBytes = std::size_t{128} << 20;

/// The frames of a whole run's pieces for `program`: as many as kCudaStagingBytes holds for
/// its inputs and outputs together, at least 4096.
std::size_t cuda_piece_frames(const CudaProgram& program);

/// Loads `scheduled`'s kernels on `device` from `cubin`, compiled for its architecture
/// (driver/compile_cuda.h gets it from the kernel cache); empty for a device without an
/// architecture (the emulation), which takes the CUDA source, emitted here.
Expected<std::shared_ptr<const CudaProgram>, std::string> load_cuda_program(std::shared_ptr<GpuDevice> device,
                                                                            const ir::Graph& scheduled,
                                                                            const std::string& cubin);

/// Runs the whole signal once from zero state, as execute_cpu: in pieces of `piece_frames`
/// (0: cuda_piece_frames) through two sets of page-locked staging, the host staging one piece
/// while the device runs the other, so the pinned memory does not grow with the signal and a
/// signal larger than the GPU's memory streams through. The program keeps the staging and
/// device buffers for its next run. Pieces carry the state as a stream's blocks do (the
/// chunked scan's chunks then start at each piece: equal to one whole piece within rounding).
Expected<std::vector<Signal>, std::string> execute_cuda(std::shared_ptr<const CudaProgram> program,
                                                        std::span<const Signal> inputs, std::size_t piece_frames = 0);

/// execute_cuda between caller memory in the program's sample type: per graph input and
/// output an array of a pointer per channel, `frames` long, staged straight from and to it
/// (no Signal in between).
Expected<std::monostate, std::string> execute_cuda_into(std::shared_ptr<const CudaProgram> program,
                                                        std::span<const void* const* const> inputs,
                                                        std::span<void* const* const> outputs, std::size_t frames,
                                                        std::size_t piece_frames = 0);

/// Runs whole signals from zero state on device memory the caller owns, without a host copy:
/// for each graph input and output a device pointer to `frames` samples per channel of the
/// program's dtype, planar rows (a C-order (channels, frames) array), on `stream` (a CUstream
/// of the device's primary context; 0: the device's own). Returns when the work is done. An
/// output may overlap an input (it is then written by a copy after every kernel).
Expected<std::monostate, std::string> execute_cuda_on_device(std::shared_ptr<const CudaProgram> program,
                                                             std::span<const DevicePtr> inputs,
                                                             std::span<const DevicePtr> outputs, std::size_t frames,
                                                             GpuDevice::Handle stream = 0);

/// Runs `items` through a program compiled for widen_batch's graph (driver/compile_cuda.h) (for as many items with the same
/// channel counts; lengths may differ from those it was compiled for) in one launch per kernel
/// entry (a loop's per pass): the items side by side as channels, zero-padded to the longest, every chain from
/// zero state (an item's state never reaches another's: they are other channels). Returns
/// each item's outputs, cut to its length.
Expected<std::vector<std::vector<Signal>>, std::string> execute_cuda_batch(std::shared_ptr<const CudaProgram> program,
                                                                           const std::vector<BatchItem>& items);

/// The device state of every chain between blocks, copied to the host (opaque).
struct CudaStreamState;

/// A loaded graph run block by block, with CpuStream's contract (runtime/cpu_executor.h):
/// the outputs of consecutive blocks equal those of the whole signal (bit for bit, except the
/// chunked scan, whose chunks depend on where blocks begin). The first block of each length
/// is recorded as a CUDA graph; later blocks of that length replay it.
/// How a stream lays signals out on the device. planar: as caller memory is (process_device).
enum class DeviceLayout { automatic, planar };

class CudaStream {
 public:
  explicit CudaStream(std::shared_ptr<const CudaProgram> program, bool use_graphs = true);
  /// A stream for caller device memory (DeviceLayout::planar; no CUDA graphs, since the
  /// caller's pointers change from call to call).
  CudaStream(std::shared_ptr<const CudaProgram> program, DeviceLayout layout);
  ~CudaStream();
  CudaStream(CudaStream&&) noexcept;
  CudaStream& operator=(CudaStream&&) noexcept;

  Expected<std::vector<Signal>, std::string> process(std::span<const Signal> block);
  /// Makes now what blocks of up to `frames` frames need (device buffers, page-locked staging,
  /// the tables of that length), so that such a block allocates nothing but, for a length not
  /// seen before, its CUDA graph and tables.
  Expected<std::monostate, std::string> reserve(std::size_t frames);
  /// The same between caller channel pointers in the program's sample type: per graph input
  /// and output, an array of a pointer per channel, `frames` long, in blocks of at most
  /// `block` frames (0: one block), each as process runs one (a CUDA graph per length).
  Expected<std::monostate, std::string> process_into(std::span<const void* const* const> inputs,
                                                     std::span<void* const* const> outputs, std::size_t frames,
                                                     std::size_t block = 0);
  /// A whole signal from the current state in pieces of at most `piece_frames` (execute_cuda).
  Expected<std::vector<Signal>, std::string> process_whole(std::span<const Signal> inputs, std::size_t piece_frames);
  /// The same between caller channel pointers in the program's sample type: per graph input
  /// and output, an array of a pointer per channel, `frames` long; staged straight from and to
  /// them.
  Expected<std::monostate, std::string> process_whole_into(std::span<const void* const* const> inputs,
                                                           std::span<void* const* const> outputs, std::size_t frames,
                                                           std::size_t piece_frames);
  /// The next block in caller device memory (execute_cuda_on_device's contract), the state
  /// carried as by process. Needs a DeviceLayout::planar stream. Returns the kernel launches.
  Expected<long long, std::string> process_device(std::span<const DevicePtr> inputs, std::span<const DevicePtr> outputs,
                                            std::size_t frames, GpuDevice::Handle stream = 0);

  /// Back to zero state, as before the first block.
  Expected<std::monostate, std::string> reset();
  /// Gives the page-locked staging back to the device, which keeps it for the next stream
  /// that needs about as much (runtime/pinned_host_cache.h); the next call takes staging
  /// again. Waits for the stream's work first (the device lends the blocks on at once); a
  /// failed wait keeps them. Drops the recorded CUDA graphs, which copy through it. Only
  /// between calls.
  Expected<std::monostate, std::string> give_back_staging();
  /// A copy of the device state, to restore later.
  Expected<std::shared_ptr<const CudaStreamState>, std::string> snapshot() const;
  /// Every buffer's size is checked before any is written: a snapshot that does not fit leaves
  /// the state as it was; an error after that is the device's.
  Expected<std::monostate, std::string> restore(const CudaStreamState& state);
  /// The state as bytes in the CPU streams' format (runtime/stream_state_bytes.h), so that it
  /// loads into a stream of the same graph shape on either target (runtime/cuda_stream_state.h).
  Expected<std::string, std::string> save_state() const;
  /// The device state that bytes from save_state (a GPU's or a CPU stream's) for this graph's
  /// shape and delay lengths give, for restore(). Touches no device: an error is about the
  /// bytes, and the stream is as it was.
  Expected<CudaStreamState, std::string> state_from_bytes(std::string_view bytes) const;
  /// New values for the same shape; the state is kept (a delay or feedback line whose length
  /// changes restarts from zeros, as on the CPU). Values are written into the buffers the
  /// recorded graphs read, so they keep replaying; a line of a new length drops them.
  Expected<std::monostate, std::string> update_values(const ir::Graph& scheduled);

  const ir::Graph& graph() const;
  /// True when device signals are interleaved [sample][channel].
  bool interleaved() const;
  /// CUDA graphs recorded so far (one per block length).
  int graphs_recorded() const;
  /// CUDA graphs held now: at most 16, the least recently used block lengths' go.
  std::size_t graphs_held() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fxc

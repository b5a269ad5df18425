// SPDX-License-Identifier: Apache-2.0
#include "runtime/cuda_executor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "codegen/chain_layout.h"
#include "ir/graph_algorithms.h"
#include "ir/hash.h"
#include "passes/target.h"
#include "runtime/counters.h"
#include "runtime/cuda_stream_state.h"
#include "runtime/stream_state_bytes.h"
#include "runtime/execution_plan.h"
#include "runtime/gpu_resources.h"
#include "runtime/graph_values.h"
#include "runtime/host_staging.h"
#include "runtime/linear_chain.h"
#include "runtime/real_fft.h"
#include "support/trace.h"

namespace fxc {
namespace {

using codegen::CudaKernelInfo;
using codegen::CudaKernelKind;

#define FXC_TRY(expr)                                     \
  do {                                                    \
    if (auto fxc_status_ = (expr); !fxc_status_)          \
      return Unexpected{std::move(fxc_status_.error())};  \
  } while (0)

// A node's kernels' device memory: values, state, scratch.
struct KernelMemory {
  DeviceBuffer params, delay_lengths, state, lines, line_ptrs, positions;  // chains; lines and positions: feedback
  DeviceBuffer next_lines, next_line_ptrs;  // chain_elementwise: its lines after a block, before the copy back
  /// The chunked scan: its matrices (A^L, then (A^(L G))^(2^t) for t < scan_steps, each
  /// transposed), each chunk's state, each group's sum and the scan's second buffer.
  DeviceBuffer scan_matrices, chunk_state, group_totals, group_scan;
  int scan_steps = 0;
  /// CudaKernelInfo::state_table: what each of a chunk's samples adds to its end state
  /// (LinearChain::input_to_state, L x D).
  DeviceBuffer state_table;
  DeviceBuffer fft_tables;  // fir_fft, fir_partitioned: the taps' spectra and the twiddles
  DeviceBuffer fft_spectra;  // fir_partitioned: the input segments' spectra of a block
  DeviceBuffer weights;                      // a sum's weights, a matrix's gains
  /// Sums and routes: their operands' base pointers for each pass of a block, by block length
  /// ([pass][operand]: a pass starts at another sample of the same buffers).
  std::map<long long, DeviceBuffer> operand_tables;
  std::vector<std::int64_t> delay_lengths_host;  // a chain's delays, a feedback node's one
  std::size_t channels = 0;
};

constexpr std::size_t kNoKernel = static_cast<std::size_t>(-1);

// Ends `span` and, when tracing, opens the next step of a run from host memory in it ("stage
// in", "wait for GPU", "stage out"), so that a trace splits a GPU run's wall time into the
// host's copies and the device's work. Made only when tracing: a Processor's every block goes
// through here, and a span's strings would allocate.
void next_host_step(std::optional<TraceSpan>& span, const char* step, long long samples) {
  span.reset();
  if (Trace::global().enabled()) span.emplace(step, "cuda", Trace::Args{{"samples", std::to_string(samples)}});
}

std::vector<std::uint8_t> as_bytes(const std::vector<double>& values, DType dtype) {
  std::vector<std::uint8_t> out(values.size() * size_of(dtype));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::f32) {
      float v = static_cast<float>(values[i]);
      std::memcpy(out.data() + 4 * i, &v, 4);
    } else {
      std::memcpy(out.data() + 8 * i, &values[i], 8);
    }
  }
  return out;
}

}  // namespace

struct CudaStream::Impl {
  std::shared_ptr<const CudaProgram> program;
  GpuDevice* device;
  ir::Graph g;
  DType dtype = DType::f32;
  bool use_graphs = true;
  bool interleaved = false;
  std::vector<KernelMemory> memory;                 // by kernel index
  /// The kernels in ir::loop_order (the CPU's ExecutionPlan order), in regions: each loop's
  /// kernels together, run in passes of at most the loop's shortest feedback delay (its
  /// feedback kernels' lines written after each pass); between loops, kernels that run over
  /// the whole block at once.
  struct Region {
    std::vector<std::size_t> kernels;    // in order
    std::vector<std::size_t> feedbacks;  // the loop's feedback nodes' kernels; none: no loop
  };
  std::vector<Region> regions;
  std::vector<std::size_t> region_of;               // by kernel index
  std::vector<DeviceBuffer> signals;                // by node id (every node but outputs)
  /// An interleaved stream's planar copies of its inputs and outputs, by input / output index:
  /// staging goes through them and a transpose on the GPU (enqueue_copies_in, _out).
  std::vector<DeviceBuffer> layout_in, layout_out;
  /// Page-locked staging by input / output index, two sets: a whole run stages the next piece
  /// into one while the device works on the other (a stream's blocks use set 0).
  std::array<std::vector<HostBuffer>, 2> staging_in, staging_out;
  int staging_sets = 0;
  /// A whole run in pieces (run_pieces_overlapped) copies each piece's inputs in on a stream
  /// of their own, into device buffers of their own by staging set (piece_in), and its outputs
  /// out on a third, while the kernels of the piece between run on own_stream (created on the
  /// first such run). By staging set: `loaded` marks a piece's copies in done, `computed` its
  /// kernels done, `copied` its copies out.
  GpuDevice::Handle copy_stream = 0, in_stream = 0;
  std::array<std::vector<DeviceBuffer>, 2> piece_in;
  long long piece_in_capacity = 0;
  /// The stream all of this stream's other work goes on (StreamScope): a CUDA stream of its
  /// own, so that another CudaStream's work, on another thread, never lands in this one's
  /// CUDA graph capture, nor in the waits between its two streams.
  GpuDevice::Handle own_stream = 0;
  std::array<GpuDevice::Handle, 2> computed{}, copied{}, loaded{};
  bool has_copy_stream = false;
  long long capacity = 0;                           // the samples the buffers hold
  long long staging_capacity = 0;                   // the samples the staging holds
  bool planar_only = false;                         // runs on caller memory: planar, no staging
  /// A run on caller memory (process_device): the caller's buffer for each node bound to one
  /// (graph inputs, and operands that only an output reads), 0 elsewhere. Empty otherwise.
  std::vector<DevicePtr> bound;
  /// CUDA graphs recorded per block length, at most kMaxGraphs (the least recently used goes),
  /// with the launches each replays.
  struct Recorded {
    GpuDevice::Handle graph = 0;
    long long launches = 0;
    std::uint64_t last_use = 0;
  };
  static constexpr std::size_t kMaxGraphs = 16;
  std::map<long long, Recorded> graphs;
  std::uint64_t uses = 0;
  int recorded = 0;
  std::string broken;                               // a setup error, reported by process
  /// process_into's pointers for one block of a longer call, by input / output and channel.
  std::vector<std::vector<const void*>> step_in;
  std::vector<std::vector<void*>> step_out;

  Impl(std::shared_ptr<const CudaProgram> p, bool graphs_on, bool planar)
      : program(std::move(p)), device(program->device.get()), g(program->scheduled), use_graphs(graphs_on),
        planar_only(planar) {
    dtype = codegen::cuda_signal_dtype(g);
    for (const ir::Node& node : g.nodes()) interleaved = !planar && (interleaved || node.type.channels >= 32);
    memory.resize(program->kernels.size());
    if (!plan_regions()) broken = "the graph has a cycle without a feedback node";
    else if (!side_by_side_in_regions())
      broken = "internal error: kernels side by side span the runtime's regions (codegen::cuda_side_by_side)";
    if (auto stream = device->create_stream(); !stream) broken = stream.error();
    else own_stream = *stream;
    if (broken.empty()) {
      StreamScope on(device, own_stream);
      if (auto ok = setup(); !ok) broken = ok.error();
    }
  }

  ~Impl() {
    drop_graphs();
    if (has_copy_stream) {
      device->destroy_stream(in_stream);  // waits for its copies
      device->destroy_stream(copy_stream);
      for (const auto* set : {&computed, &copied, &loaded})
        for (GpuDevice::Handle e : *set) device->destroy_event(e);
    }
    device->destroy_stream(own_stream);  // waits for its work; the buffers go after it
  }

  // Recorded graphs hold the buffers' addresses: whatever replaces a buffer they use drops them
  // first, so that no error on the way can leave one pointing at freed memory. The operand
  // tables go too (they hold signal addresses and pass lengths).
  void drop_graphs() {
    destroy_graphs();
    for (KernelMemory& m : memory) m.operand_tables.clear();
  }
  void destroy_graphs() {
    for (auto& [length, r] : graphs) device->destroy_graph(r.graph);
    graphs.clear();
  }

  // Keeps at most kMaxGraphs recorded graphs and operand tables: a stream fed blocks of ever
  // new lengths must not grow without bound.
  void evict_graphs(long long in_use) {
    while (graphs.size() > kMaxGraphs) {
      auto oldest = graphs.begin();
      for (auto it = graphs.begin(); it != graphs.end(); ++it)
        if (it->second.last_use < oldest->second.last_use) oldest = it;
      device->destroy_graph(oldest->second.graph);
      for (KernelMemory& m : memory) m.operand_tables.erase(oldest->first);
      graphs.erase(oldest);
    }
    for (KernelMemory& m : memory)
      if (m.operand_tables.size() > kMaxGraphs + 1)  // without graphs: only the block length in use stays
        for (auto it = m.operand_tables.begin(); it != m.operand_tables.end();)
          it = graphs.count(it->first) || it->first == in_use ? std::next(it) : m.operand_tables.erase(it);
  }

  // Writes `bytes` into `buffer` where it has that size (recorded graphs stay valid), else
  // replaces it (dropping them).
  GpuStatus write_or_replace(DeviceBuffer& buffer, const void* data, std::size_t bytes) {
    if (buffer.get() && buffer.bytes() == bytes) return device->copy_to_device(buffer.get(), data, bytes);
    drop_graphs();
    auto fresh = upload(data, bytes);
    if (!fresh) return Unexpected{fresh.error()};
    buffer = std::move(*fresh);
    return std::monostate{};
  }

  // Regions from ir::loop_order: a loop's kernels are contiguous there, and a kernel of no loop
  // joins the region before it when that is no loop either.
  bool plan_regions() {
    auto loop_order = ir::loop_order(g);
    if (!loop_order) return false;
    std::vector<std::size_t> kernel_of(g.size(), kNoKernel);
    for (std::size_t i = 0; i < program->kernels.size(); ++i) kernel_of[program->kernels[i].node] = i;
    region_of.assign(program->kernels.size(), 0);
    int last_loop = -2;  // the loop of the last region's kernels, -1 for none
    for (ir::NodeId id : loop_order->order) {
      const std::size_t i = kernel_of[id];
      if (i == kNoKernel) continue;
      const int loop = loop_order->loop[id];
      if (regions.empty() || loop != last_loop) regions.emplace_back();
      last_loop = loop;
      regions.back().kernels.push_back(i);
      if (program->kernels[i].kind == CudaKernelKind::feedback) regions.back().feedbacks.push_back(i);
      region_of[i] = regions.size() - 1;
    }
    return true;
  }

  // Each side-by-side group within one region without feedback kernels, so that its launch
  // at the first member's place runs once per block, as each member's would.
  bool side_by_side_in_regions() const {
    for (const codegen::CudaSideBySide& side : program->side_by_side) {
      const std::size_t r = region_of[side.members.front()];
      if (!regions[r].feedbacks.empty()) return false;
      for (std::size_t i : side.members)
        if (region_of[i] != r) return false;
    }
    return true;
  }

  Expected<DeviceBuffer, std::string> allocate(std::size_t bytes) {
    auto p = device->allocate(bytes);
    if (!p) return Unexpected{p.error()};
    return DeviceBuffer(device, *p, bytes);
  }

  Expected<DeviceBuffer, std::string> upload(const void* data, std::size_t bytes) {
    auto b = allocate(bytes);
    if (!b) return b;
    FXC_TRY(device->copy_to_device(b->get(), data, bytes));
    return b;
  }

  std::size_t channels_of(ir::NodeId id) const { return static_cast<std::size_t>(std::max(1, g.node(id).type.channels)); }

  // Values and zero state of every kernel.
  GpuStatus setup() {
    const GraphValues values = graph_values(g);
    for (std::size_t i = 0; i < program->kernels.size(); ++i) {
      const CudaKernelInfo& k = program->kernels[i];
      KernelMemory& m = memory[i];
      m.channels = channels_of(k.node);
      const ir::Node& node = g.node(k.node);
      if (k.kind == CudaKernelKind::feedback) {
        FXC_TRY(set_feedback_length(i, values.nodes[k.node].delay_lengths.at(0), true));
        continue;
      }
      if (k.kind == CudaKernelKind::sum || k.kind == CudaKernelKind::route) {
        // A sum's weights or a matrix's gains, in the signal type (select and concat have none).
        auto bytes = weights_of(node);
        if (bytes.empty()) bytes.resize(8);
        auto w = upload(bytes.data(), bytes.size());
        if (!w) return Unexpected{w.error()};
        m.weights = std::move(*w);
        continue;
      }
      const auto& chain = std::get<ir::Chain>(node.op);
      codegen::ChainLayout layout = codegen::layout_of(chain);
      std::size_t s = size_of(k.state_dtype);
      auto state = allocate(m.channels * layout.state_per_channel * s);
      auto positions = allocate(m.channels * layout.positions_per_channel() * sizeof(std::int64_t));
      if (!state) return Unexpected{state.error()};
      if (!positions) return Unexpected{positions.error()};
      m.state = std::move(*state);
      m.positions = std::move(*positions);
      FXC_TRY(device->fill_zero(m.state.get(), m.state.bytes()));
      FXC_TRY(device->fill_zero(m.positions.get(), m.positions.bytes()));
      FXC_TRY(set_values(i, chain, true));
    }
    return device->synchronize();
  }

  std::vector<std::uint8_t> weights_of(const ir::Node& node) const {
    if (const auto* sum = std::get_if<ir::Sum>(&node.op)) return as_bytes(sum->weights, dtype);
    if (const auto* matrix = std::get_if<ir::Matrix>(&node.op)) return as_bytes(matrix->gains, dtype);
    return {};
  }

  // A feedback node's line at `length` samples (the value graph_values gives it, as the CPU's
  // ready_chain_states): allocated and zeroed at first, and again, with the positions back to
  // 0, when the length changes (the CPU's restart_changed_delays). The line lives on the
  // device, beside the chains' state: it is read and written there every pass, so keeping it
  // on the host would cost two copies per pass, and a block replays as one CUDA graph.
  GpuStatus set_feedback_length(std::size_t i, std::int64_t length, bool first) {
    KernelMemory& m = memory[i];
    if (!first && m.delay_lengths_host == std::vector<std::int64_t>{length}) return std::monostate{};
    drop_graphs();  // a new line, and passes of another length
    m.delay_lengths_host = {length};
    const auto cells = static_cast<std::size_t>(std::max<std::int64_t>(length, 1));
    auto lines = allocate(m.channels * cells * size_of(dtype));
    if (!lines) return Unexpected{lines.error()};
    m.lines = std::move(*lines);
    FXC_TRY(device->fill_zero(m.lines.get(), m.lines.bytes()));
    if (first) {
      auto positions = allocate(m.channels * sizeof(std::int64_t));
      if (!positions) return Unexpected{positions.error()};
      m.positions = std::move(*positions);
    }
    FXC_TRY(device->fill_zero(m.positions.get(), m.positions.bytes()));
    return device->synchronize();
  }

  // A feedback node's line length, in samples (a delay of 0 would hold one cell, as a chain's).
  long long feedback_cells(std::size_t i) const {
    return std::max<long long>(memory[i].delay_lengths_host.at(0), 1);
  }

  // The samples of each pass over region r's kernels in a block of `n`: for a loop at most its
  // shortest feedback delay, so that every feedback value of a pass was written before the
  // pass began (the CPU runtime's rule, runtime/run_graph.cpp run_loop); else the whole block.
  long long pass_length(std::size_t r, long long n) const {
    const auto& feedbacks = regions[r].feedbacks;
    return static_cast<long long>(loop_block_length(static_cast<std::size_t>(n), feedbacks.size(),
                                                    [&](std::size_t k) { return feedback_cells(feedbacks[k]); }));
  }

  // Uploads a chain's values; (re)allocates its delay lines when their lengths change.
  GpuStatus set_values(std::size_t i, const ir::Chain& chain, bool first) {
    const CudaKernelInfo& k = program->kernels[i];
    KernelMemory& m = memory[i];
    codegen::ChainValues values = codegen::values_of(chain);
    auto params = as_bytes(values.params, k.state_dtype);
    if (params.empty()) params.resize(8);
    FXC_TRY(write_or_replace(m.params, params.data(), params.size()));
    if (first || values.delay_lengths != m.delay_lengths_host) {
      drop_graphs();  // new delay lines
      std::size_t delays = values.delay_lengths.size();
      codegen::ChainLayout layout = codegen::layout_of(chain);
      // A delay whose length changes restarts its line (zeros, position 0); the others keep
      // theirs, as on the CPU (restart_changed_delays).
      const std::vector<std::int64_t> old_lengths = std::move(m.delay_lengths_host);
      const DeviceBuffer old_lines = std::move(m.lines);
      auto kept = [&](std::size_t d) { return !first && d < old_lengths.size() && old_lengths[d] == values.delay_lengths[d]; };
      m.delay_lengths_host = values.delay_lengths;
      std::vector<std::int64_t> padded = values.delay_lengths;
      if (padded.empty()) padded.push_back(0);  // no zero-byte buffers
      auto lengths = upload(padded.data(), padded.size() * sizeof(std::int64_t));
      if (!lengths) return Unexpected{lengths.error()};
      m.delay_lengths = std::move(*lengths);
      std::size_t per_channel = 0;
      for (std::int64_t length : values.delay_lengths) per_channel += std::max<std::int64_t>(length, 1);
      auto lines = allocate(m.channels * per_channel * size_of(k.state_dtype));
      if (!lines) return Unexpected{lines.error()};
      m.lines = std::move(*lines);
      FXC_TRY(device->fill_zero(m.lines.get(), m.lines.bytes()));
      if (!first) {
        // The kept lines from the old buffer: [channel][delay][cells] in both.
        std::size_t from = 0, to = 0;
        for (std::size_t c = 0; c < m.channels; ++c)
          for (std::size_t d = 0; d < delays; ++d) {
            const std::size_t cells = static_cast<std::size_t>(std::max<std::int64_t>(values.delay_lengths[d], 1));
            const std::size_t old_cells =
                d < old_lengths.size() ? static_cast<std::size_t>(std::max<std::int64_t>(old_lengths[d], 1)) : 0;
            const std::size_t bytes = cells * size_of(k.state_dtype);
            if (kept(d))
              FXC_TRY(device->copy_on_device(m.lines.get() + to, old_lines.get() + from, bytes));
            from += old_cells * size_of(k.state_dtype);
            to += bytes;
          }
      }
      std::vector<DevicePtr> pointers;
      DevicePtr at = m.lines.get();
      for (std::size_t c = 0; c < m.channels; ++c)
        for (std::int64_t length : values.delay_lengths) {
          pointers.push_back(at);
          at += std::max<std::int64_t>(length, 1) * size_of(k.state_dtype);
        }
      if (pointers.empty()) pointers.push_back(0);
      auto table = upload(pointers.data(), pointers.size() * sizeof(DevicePtr));
      if (!table) return Unexpected{table.error()};
      m.line_ptrs = std::move(*table);
      if (k.kind == CudaKernelKind::chain_elementwise) {  // the same lay-out, a second time
        auto next = allocate(m.lines.bytes());
        if (!next) return Unexpected{next.error()};
        m.next_lines = std::move(*next);
        for (DevicePtr& p : pointers)
          if (p) p = p - m.lines.get() + m.next_lines.get();
        auto next_table = upload(pointers.data(), pointers.size() * sizeof(DevicePtr));
        if (!next_table) return Unexpected{next_table.error()};
        m.next_line_ptrs = std::move(*next_table);
      }
      if (!first && delays > 0) {  // a changed delay's ring position restarts; the rest stay
        auto ok = device->synchronize();
        if (!ok) return ok;
        std::vector<std::int64_t> positions(m.channels * layout.positions_per_channel());
        FXC_TRY(device->copy_to_host(positions.data(), m.positions.get(), positions.size() * sizeof(std::int64_t)));
        FXC_TRY(device->synchronize());
        for (std::size_t c = 0; c < m.channels; ++c)
          for (std::size_t d = 0; d < delays; ++d)
            if (!kept(d)) positions[c * layout.positions_per_channel() + d] = 0;
        FXC_TRY(device->copy_to_device(m.positions.get(), positions.data(), positions.size() * sizeof(std::int64_t)));
      }
    }
    if (k.kind == CudaKernelKind::chain_chunked_scan) FXC_TRY(upload_scan_matrices(i, chain, std::max(m.scan_steps, 1)));
    if (k.kind == CudaKernelKind::fir_fft || k.kind == CudaKernelKind::fir_partitioned) FXC_TRY(upload_fft_tables(i, chain));
    return device->synchronize();
  }

  // The FFT convolutions' tables (codegen/cuda/emit_cuda.h, fir_fft and fir_partitioned),
  // computed in float64 and stored in the kernel's type: the taps' spectrum / FFT in
  // bit-reversed order (fir_fft), or each partition's half spectrum / FFT in natural order
  // (fir_partitioned); then the twiddles; then the taps (a block with a NaN or an infinity
  // convolves directly).
  GpuStatus upload_fft_tables(std::size_t i, const ir::Chain& chain) {
    const CudaKernelInfo& k = program->kernels[i];
    const auto n = static_cast<std::size_t>(k.fft_length);
    const std::vector<double>& taps = std::get<ir::FirFilter>(chain.stages[0]).taps;
    RealFft<double> fft(n);
    std::vector<double> padded(n);
    std::vector<std::complex<double>> bins(fft.bins());
    std::vector<double> tables;
    const double scale = 1.0 / static_cast<double>(n);
    if (k.kind == CudaKernelKind::fir_fft) {
      std::copy(taps.begin(), taps.end(), padded.begin());
      fft.forward(padded, bins);
      int bits = 0;
      while ((std::size_t{1} << bits) < n) ++bits;
      for (std::size_t j = 0; j < n; ++j) {
        std::size_t r = 0;  // j with its `bits` bits reversed
        for (int b = 0; b < bits; ++b) r |= ((j >> b) & 1) << (bits - 1 - b);
        // A real filter's spectrum is conjugate-symmetric: H[n - r] = conj(H[r]).
        const std::complex<double> h = r < bins.size() ? bins[r] : std::conj(bins[n - r]);
        tables.push_back(h.real() * scale);
        tables.push_back(h.imag() * scale);
      }
    } else {
      const std::size_t half = n / 2;
      for (std::size_t first = 0; first < taps.size(); first += half) {
        std::fill(padded.begin(), padded.end(), 0.0);
        std::copy(taps.begin() + first, taps.begin() + std::min(first + half, taps.size()), padded.begin());
        fft.forward(padded, bins);
        for (const std::complex<double>& h : bins) {
          tables.push_back(h.real() * scale);
          tables.push_back(h.imag() * scale);
        }
      }
    }
    const double pi = 3.14159265358979323846;
    for (std::size_t q = 0; q < n / 2; ++q) {
      const double angle = -2 * pi * static_cast<double>(q) / static_cast<double>(n);
      tables.push_back(std::cos(angle));
      tables.push_back(std::sin(angle));
    }
    tables.insert(tables.end(), taps.begin(), taps.end());
    auto bytes = as_bytes(tables, k.state_dtype);
    return write_or_replace(memory[i].fft_tables, bytes.data(), bytes.size());
  }

  // The chunked scan's matrices for `steps` steps of its scan over groups, transposed as the
  // kernels read them (codegen/cuda/emit_cuda.h): A^L, then (A^(L G))^(2^t); and its state
  // table where the zero-state pass sums with one.
  GpuStatus upload_scan_matrices(std::size_t i, const ir::Chain& chain, int steps) {
    const CudaKernelInfo& k = program->kernels[i];
    KernelMemory& m = memory[i];
    const LinearChain linear(chain);
    const auto d = static_cast<std::size_t>(k.state_dimension);
    std::vector<double> all;
    all.reserve((1 + steps) * d * d);
    auto append_transposed = [&](const std::vector<double>& a) {
      for (std::size_t q = 0; q < d; ++q)
        for (std::size_t r = 0; r < d; ++r) all.push_back(a[r * d + q]);
    };
    append_transposed(linear.transition_power(k.chunk_length));
    for (int t = 0; t < steps; ++t)
      append_transposed(linear.transition_power((static_cast<std::int64_t>(k.chunk_length) * codegen::kCudaCarryGroup) << t));
    FXC_TRY(write_or_replace(m.scan_matrices, all.data(), all.size() * sizeof(double)));
    if (k.state_table) {
      const std::vector<double> table = linear.input_to_state(k.chunk_length);
      FXC_TRY(write_or_replace(m.state_table, table.data(), table.size() * sizeof(double)));
    }
    m.scan_steps = steps;
    return std::monostate{};
  }

  // What blocks of `n` samples need beyond the buffers: the sums' and routes' operand tables
  // for each pass.
  GpuStatus prepare(long long n) {
    FXC_TRY(ensure_signals());
    for (std::size_t i = 0; i < program->kernels.size(); ++i) {
      const CudaKernelInfo& k = program->kernels[i];
      KernelMemory& m = memory[i];
      const long long pass = pass_length(region_of[i], n);
      if ((k.kind == CudaKernelKind::sum || k.kind == CudaKernelKind::route) && !m.operand_tables.count(n)) {
        std::vector<DevicePtr> table;
        for (long long start = 0; start < n; start += pass)
          for (ir::NodeId operand : g.node(k.node).operands) table.push_back(at(operand, start));
        auto uploaded = upload(table.data(), table.size() * sizeof(DevicePtr));
        if (!uploaded) return Unexpected{uploaded.error()};
        m.operand_tables.emplace(n, std::move(*uploaded));
      }
    }
    return device->synchronize();
  }

  // The device buffer holding node `id`'s value (an output's is its operand's): the caller's
  // memory where a run on it binds the node there, else the stream's own.
  DevicePtr value(ir::NodeId id) const {
    while (ir::holds<ir::Output>(g.node(id))) id = g.node(id).operands[0];
    return id < bound.size() && bound[id] ? bound[id] : signals[id].get();
  }

  // Node `id`'s value from sample `start` on: where a pass beginning there finds it.
  DevicePtr at(ir::NodeId id, long long start) const {
    const auto skip = static_cast<std::size_t>(start) * size_of(dtype) * (interleaved ? channels_of(id) : 1);
    return value(id) + skip;
  }

  // The nodes' own buffers for `capacity` samples, each made when a run first needs it
  // (prepare): a run on the caller's device memory reads its inputs where they are and writes
  // an output whose operand nothing else reads where the caller wants it, so those nodes need
  // none (at 1024 channels x 60 s, a float64 buffer is 23.6 GB). A failed allocation leaves
  // the others for the next run to make.
  GpuStatus ensure_signals() {
    const std::size_t t = size_of(dtype);
    for (ir::NodeId id = 0; id < g.size(); ++id) {
      if (ir::holds<ir::Output>(g.node(id)) || signals[id].get() || (id < bound.size() && bound[id])) continue;
      auto b = allocate(channels_of(id) * static_cast<std::size_t>(capacity) * t);
      if (!b) return Unexpected{b.error()};
      signals[id] = std::move(*b);
    }
    return std::monostate{};
  }

  // Buffers for blocks of up to `n` samples (the nodes' own, made by ensure_signals). Growing
  // them invalidates the recorded graphs, which point at the old buffers.
  GpuStatus grow(long long n) {
    TraceSpan span("allocate device buffers", "cuda", {{"samples", std::to_string(n)}});
    drop_graphs();
    capacity = 0;  // until every buffer is there: a failed allocation leaves none to use
    signals.clear();
    signals.resize(g.size());
    std::size_t t = size_of(dtype);
    layout_in.clear();
    layout_out.clear();
    if (interleaved) {
      for (auto [ids, buffers] : {std::pair{g.inputs(), &layout_in}, std::pair{g.outputs(), &layout_out}})
        for (ir::NodeId id : ids) {
          auto b = allocate(channels_of(id) * n * t);
          if (!b) return Unexpected{b.error()};
          buffers->push_back(std::move(*b));
        }
    }
    for (std::size_t i = 0; i < program->kernels.size(); ++i) {
      const CudaKernelInfo& k = program->kernels[i];
      KernelMemory& m = memory[i];
      if (k.kind == CudaKernelKind::chain_chunked_scan) {
        const long long chunks = (n + k.chunk_length - 1) / k.chunk_length;
        const long long groups = (chunks + codegen::kCudaCarryGroup - 1) / codegen::kCudaCarryGroup;
        const std::size_t row = k.state_dimension * sizeof(double);
        auto chunk_state = allocate(m.channels * chunks * row);
        auto totals = allocate(m.channels * groups * row);
        auto scan = allocate(m.channels * groups * row);
        if (!chunk_state) return Unexpected{chunk_state.error()};
        if (!totals) return Unexpected{totals.error()};
        if (!scan) return Unexpected{scan.error()};
        m.chunk_state = std::move(*chunk_state);
        m.group_totals = std::move(*totals);
        m.group_scan = std::move(*scan);
        // Matrices for the scan steps of the longest block (a shorter one takes fewer).
        if (const int steps = codegen::cuda_carry_steps(chunks); steps > m.scan_steps)
          FXC_TRY(upload_scan_matrices(i, std::get<ir::Chain>(g.node(k.node).op), steps));
      }
      if (k.kind == CudaKernelKind::fir_partitioned) {
        const auto points = static_cast<std::size_t>(codegen::cuda_fir_spectra(k, n)) * (k.fft_length / 2 + 1);
        auto spectra = allocate(m.channels * points * 2 * size_of(k.state_dtype));
        if (!spectra) return Unexpected{spectra.error()};
        m.fft_spectra = std::move(*spectra);
      }
    }
    capacity = n;
    return device->synchronize();
  }

  // Page-locked staging for blocks of up to `n` samples from host memory (a run on caller
  // device memory needs none). Replacing it drops the recorded graphs, which copy through it.
  // The device lends it from the blocks earlier streams gave back where one fits
  // (runtime/pinned_host_cache.h); pinning a new one is the trace's "allocate pinned staging".
  GpuStatus grow_staging(long long n, int sets = 1) {
    if (n <= staging_capacity && sets <= staging_sets) return std::monostate{};
    n = std::max(n, staging_capacity);
    sets = std::max(sets, staging_sets);
    // The blocks replaced go back first (the device may lend them again here); until every
    // new one is there the capacity stays 0: a failed allocation leaves none to use.
    FXC_TRY(give_back_staging());
    const std::size_t t = size_of(dtype);
    for (int k = 0; k < sets; ++k) {
      for (ir::NodeId id : g.inputs()) {
        auto h = device->allocate_host(channels_of(id) * n * t);
        if (!h) return Unexpected{h.error()};
        staging_in[k].emplace_back(device, *h, channels_of(id) * n * t);
      }
      for (ir::NodeId id : g.outputs()) {
        auto h = device->allocate_host(channels_of(id) * n * t);
        if (!h) return Unexpected{h.error()};
        staging_out[k].emplace_back(device, *h, channels_of(id) * n * t);
      }
    }
    staging_capacity = n;
    staging_sets = sets;
    return std::monostate{};
  }

  // The staging back to the device, for the next stream (an idle pooled one's: its next run
  // takes staging again, most likely these blocks). The device lends the blocks on at once,
  // so no copy of a call that failed part-way may still reach them: the wait makes sure
  // (microseconds on an idle stream; runs in pieces settle their streams themselves). A
  // failed wait keeps them until the stream goes. The graphs copy through the staging and
  // go; the operand tables point at device buffers and stay.
  GpuStatus give_back_staging() {
    FXC_TRY(device->synchronize());
    destroy_graphs();
    for (int k = 0; k < 2; ++k) {
      staging_in[k].clear();
      staging_out[k].clear();
    }
    staging_capacity = 0;
    staging_sets = 0;
    return std::monostate{};
  }

  // Copies in, every kernel, copies out: what a block does on the stream. Returns the launches.
  // A loop's kernels run in passes of pass_length samples over the block's buffers, each
  // feedback line written after the loop's other kernels of a pass (the CPU's run_loop).
  Expected<long long, std::string> enqueue(long long n, int set = 0) {
    FXC_TRY(enqueue_copies_in(n, set));
    auto launches = enqueue_kernels(n);
    if (!launches) return launches;
    FXC_TRY(enqueue_copies_out(n, set));
    return launches;
  }
  // Staging is planar; an interleaved stream copies it through planar device buffers
  // (layout_in, layout_out) and transposes on the GPU, where a host transpose would be bound by
  // the cache misses of its strided side.
  GpuStatus enqueue_copies_in(long long n, int set) {
    const std::size_t t = size_of(dtype);
    std::vector<ir::NodeId> inputs = g.inputs();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::size_t ch = channels_of(inputs[i]);
      const DevicePtr to = signals[inputs[i]].get();
      if (!interleaved) {
        FXC_TRY(device->copy_to_device(to, staging_in[set][i].get(), ch * n * t));
        continue;
      }
      FXC_TRY(device->copy_to_device(layout_in[i].get(), staging_in[set][i].get(), ch * n * t));
      FXC_TRY(enqueue_into_input(i, layout_in[i].get(), n));
    }
    return std::monostate{};
  }
  // Graph input i's `n` frames from planar rows at `from` on the device into its buffer: a
  // device copy, or the transpose of an interleaved stream.
  GpuStatus enqueue_into_input(std::size_t i, DevicePtr from, long long n) {
    const ir::NodeId id = g.inputs()[i];
    const std::size_t ch = channels_of(id);
    const DevicePtr to = signals[id].get();
    if (!interleaved) return device->copy_on_device(to, from, ch * n * size_of(dtype));
    return device->launch(program->layout_functions[0], codegen::cuda_layout_launch(static_cast<long long>(ch), n),
                          {from, to, ch, static_cast<std::uint64_t>(n)});
  }
  GpuStatus enqueue_copies_out(long long n, int set) {
    const std::size_t t = size_of(dtype);
    std::vector<ir::NodeId> outputs = g.outputs();
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      const std::size_t ch = channels_of(outputs[o]);
      if (!interleaved) {
        FXC_TRY(device->copy_to_host(staging_out[set][o].get(), value(outputs[o]), ch * n * t));
        continue;
      }
      FXC_TRY(device->launch(program->layout_functions[1], codegen::cuda_layout_launch(static_cast<long long>(ch), n),
                             {value(outputs[o]), layout_out[o].get(), ch, static_cast<std::uint64_t>(n)}));
      FXC_TRY(device->copy_to_host(staging_out[set][o].get(), layout_out[o].get(), ch * n * t));
    }
    return std::monostate{};
  }

  // Every kernel over a block of `n` samples already in the device signals.
  Expected<long long, std::string> enqueue_kernels(long long n) {
    long long launches = 0;
    for (std::size_t r = 0; r < regions.size(); ++r) {
      const long long pass = pass_length(r, n);
      for (long long start = 0, p = 0; start < n; start += pass, ++p) {
        const long long samples = std::min(pass, n - start);
        for (std::size_t i : regions[r].kernels) {
          if (const int side = program->side_of[i]; side >= 0) {
            // One launch for the group, where its first member comes (the others' inputs
            // are ready there too: codegen::cuda_side_by_side).
            if (program->side_by_side[static_cast<std::size_t>(side)].members.front() != i) continue;
            auto count = enqueue_side_by_side(static_cast<std::size_t>(side), n, start, samples);
            if (!count) return count;
            launches += *count;
            continue;
          }
          auto count = enqueue_kernel(i, n, start, p, samples, false);
          if (!count) return count;
          launches += *count;
        }
        for (std::size_t i : regions[r].feedbacks) {
          auto count = enqueue_kernel(i, n, start, p, samples, true);
          if (!count) return count;
          launches += *count;
        }
      }
    }
    return launches;
  }

  // A chain_thread_per_channel kernel's arguments for the `samples` from `start` of a block
  // of `n` samples.
  std::vector<std::uint64_t> thread_per_channel_args(std::size_t i, long long n, long long start, long long samples) const {
    const CudaKernelInfo& k = program->kernels[i];
    const KernelMemory& m = memory[i];
    const ir::Node& node = g.node(k.node);
    const std::uint64_t ch = m.channels;
    const std::uint64_t cs = interleaved ? 1 : n, ss = interleaved ? ch : 1;
    return {node.operands.empty() ? 0 : at(node.operands[0], start), at(k.node, start), ch,
            static_cast<std::uint64_t>(samples), cs, ss,
            m.params.get(), m.delay_lengths.get(), m.state.get(), m.line_ptrs.get(), m.positions.get()};
  }

  // Side-by-side group `side`'s one launch: its members' arguments one after another.
  Expected<long long, std::string> enqueue_side_by_side(std::size_t side, long long n, long long start, long long samples) {
    const codegen::CudaSideBySide& group = program->side_by_side[side];
    std::vector<std::uint64_t> args;
    std::vector<long long> channels;
    for (std::size_t i : group.members) {
      const std::vector<std::uint64_t> member = thread_per_channel_args(i, n, start, samples);
      args.insert(args.end(), member.begin(), member.end());
      channels.push_back(static_cast<long long>(memory[i].channels));
    }
    const codegen::CudaLaunch shape = codegen::cuda_side_launch(channels);
    if (shape.grid == 0 || samples <= 0) return 0;
    FXC_TRY(device->launch(program->side_functions[side], shape, args));
    return 1;
  }

  // Kernel i's launches for the pass `p` of a block of `n` samples, the `samples` from `start`;
  // for a feedback node its read, or with `write` its write. Returns the launches.
  Expected<long long, std::string> enqueue_kernel(std::size_t i, long long n, long long start, long long p,
                                            long long samples, bool write) {
    const CudaKernelInfo& k = program->kernels[i];
    const KernelMemory& m = memory[i];
    const ir::Node& node = g.node(k.node);
    const std::uint64_t ch = m.channels;
    // A pass is the same layout as the block, from another first sample: planar channels stay
    // n samples apart.
    const std::uint64_t cs = interleaved ? 1 : n, ss = interleaved ? ch : 1;
    const DevicePtr out = at(k.node, start);
    const DevicePtr in = node.operands.empty() ? 0 : at(node.operands[0], start);
    const std::uint64_t N = static_cast<std::uint64_t>(samples);
    const DevicePtr operands =
        k.kind == CudaKernelKind::sum || k.kind == CudaKernelKind::route
            ? m.operand_tables.at(n).get() + static_cast<std::size_t>(p) * node.operands.size() * sizeof(DevicePtr)
            : 0;
    struct Launch {
      std::size_t entry;
      std::vector<std::uint64_t> args;
    };
    std::vector<Launch> launches;
    switch (k.kind) {
      case CudaKernelKind::chain_thread_per_channel:
        launches = {{0, thread_per_channel_args(i, n, start, samples)}};
        break;
      case CudaKernelKind::chain_chunked_scan: {
        // The scan's steps ping-pong between the groups' sums and a second buffer; the last
        // step's output holds each group's true start state.
        const DevicePtr a_chunk = m.scan_matrices.get();
        const std::size_t matrix = static_cast<std::size_t>(k.state_dimension) * k.state_dimension * sizeof(double);
        const DevicePtr buffers[2] = {m.group_scan.get(), m.group_totals.get()};
        const int steps = codegen::cuda_carry_steps((samples + k.chunk_length - 1) / k.chunk_length);
        if (k.state_table)
          launches.push_back({0, {in, ch, N, cs, ss, m.state_table.get(), m.chunk_state.get()}});
        else
          launches.push_back({0, {in, ch, N, cs, ss, m.params.get(), m.chunk_state.get()}});
        launches.push_back({1, {ch, N, a_chunk, m.chunk_state.get(), m.group_totals.get()}});
        for (int t = 0; t < steps; ++t)
          launches.push_back({2, {ch, N, static_cast<std::uint64_t>(t), a_chunk + (1 + t) * matrix,
                                  t == 0 ? m.group_totals.get() : buffers[(t - 1) % 2], buffers[t % 2],
                                  m.state.get()}});
        launches.push_back({3, {ch, N, a_chunk, buffers[(steps - 1) % 2], m.chunk_state.get()}});
        launches.push_back({4, {in, out, ch, N, cs, ss, m.params.get(), m.chunk_state.get(), m.state.get()}});
        break;
      }
      case CudaKernelKind::chain_elementwise:
        launches = {{0, {in, out, ch, N, cs, ss, m.params.get(), m.delay_lengths.get(), m.line_ptrs.get()}}};
        if (!m.delay_lengths_host.empty())
          launches.push_back({1, {in, ch, N, cs, ss, m.params.get(), m.delay_lengths.get(), m.line_ptrs.get(),
                                  m.next_line_ptrs.get()}});
        break;
      case CudaKernelKind::fir_tiled:
      case CudaKernelKind::fir_fft:
        launches = {{0, {in, out, ch, N, cs, ss, k.kind == CudaKernelKind::fir_fft ? m.fft_tables.get() : m.params.get(),
                         m.state.get(), m.positions.get()}},
                    {1, {in, ch, N, cs, ss, m.state.get(), m.positions.get()}}};
        break;
      case CudaKernelKind::fir_partitioned:
        launches = {{0, {in, ch, N, cs, ss, m.fft_tables.get(), m.state.get(), m.positions.get(), m.fft_spectra.get()}},
                    {1, {in, out, ch, N, cs, ss, m.fft_tables.get(), m.state.get(), m.positions.get(), m.fft_spectra.get()}},
                    {2, {in, ch, N, cs, ss, m.state.get(), m.positions.get()}}};
        break;
      case CudaKernelKind::sum:
        launches = {{0, {operands, out, ch, N, cs, ss, m.weights.get()}}};
        break;
      case CudaKernelKind::route:
        launches = {{0, {operands, out, ch, N, cs, ss, interleaved ? 1u : 0u, m.weights.get()}}};
        break;
      case CudaKernelKind::feedback: {
        const auto cells = static_cast<std::uint64_t>(feedback_cells(i));
        if (write)
          launches = {{1, {in, ch, N, cs, ss, m.lines.get(), m.positions.get(), cells}}};
        else
          launches = {{0, {m.lines.get(), out, ch, N, cs, ss, m.positions.get(), cells}}};
        break;
      }
    }
    int count = 0;
    for (const Launch& l : launches) {
      codegen::CudaLaunch shape = codegen::cuda_launch(k, l.entry, static_cast<long long>(ch), samples);
      if (shape.grid == 0) continue;
      FXC_TRY(device->launch(program->functions[i][l.entry], shape, l.args));
      ++count;
    }
    if (k.kind == CudaKernelKind::chain_elementwise && !m.delay_lengths_host.empty())
      FXC_TRY(device->copy_on_device(m.lines.get(), m.next_lines.get(), m.lines.bytes()));
    return count;
  }

  void stage_in_all(std::span<const void* const* const> in, std::size_t start, std::size_t n, int set) {
    std::vector<ir::NodeId> inputs = g.inputs();
    for (std::size_t i = 0; i < in.size(); ++i) {
      std::size_t ch = channels_of(inputs[i]);
      if (dtype == DType::f32) stage_in(in[i], ch, start, n, static_cast<float*>(staging_in[set][i].get()));
      else stage_in(in[i], ch, start, n, static_cast<double*>(staging_in[set][i].get()));
    }
  }
  void stage_out_all(std::span<void* const* const> out, std::size_t start, std::size_t n, int set) {
    std::vector<ir::NodeId> outputs = g.outputs();
    for (std::size_t o = 0; o < out.size(); ++o) {
      std::size_t ch = channels_of(outputs[o]);
      if (dtype == DType::f32) stage_out(static_cast<const float*>(staging_out[set][o].get()), out[o], ch, start, n);
      else stage_out(static_cast<const double*>(staging_out[set][o].get()), out[o], ch, start, n);
    }
  }
  // A run's launches and the samples it copied each way, in the process's counters.
  void count_run(long long launches, long long n) const {
    std::uint64_t bytes = 0;
    for (ir::NodeId id : g.inputs()) bytes += channels_of(id) * n * size_of(dtype);
    for (ir::NodeId id : g.outputs()) bytes += channels_of(id) * n * size_of(dtype);
    counters().gpu_launches += launches;
    counters().dispatches += launches;
    counters().gpu_bytes_copied += bytes;
  }

  // The inputs, checked against the bound graph; their length.
  Expected<long long, std::string> check_inputs(std::span<const Signal> in) const {
    if (!broken.empty()) return Unexpected{broken};
    std::vector<ir::NodeId> inputs = g.inputs();
    if (in.size() != inputs.size())
      return Unexpected{"the graph has " + std::to_string(inputs.size()) + " input(s), got " +
                        std::to_string(in.size()) + " signal(s)"};
    for (std::size_t i = 0; i < in.size(); ++i)
      if (in[i].channels() != channels_of(inputs[i]) || in[i].samples() != in[0].samples())
        return Unexpected{"input " + std::to_string(i) + " does not match the bound graph (" +
                          std::to_string(channels_of(inputs[i])) + " channels, " +
                          std::to_string(in.empty() ? 0 : in[0].samples()) + " samples)"};
    return in.empty() ? 0LL : static_cast<long long>(in[0].samples());
  }

  // The inputs in the program's sample type, as pointers into `in` or into the returned
  // converted copies (made only where an input has another type).
  std::vector<Signal> converted_inputs(std::span<const Signal> in, std::vector<const Signal*>& view) const {
    std::vector<Signal> converted;
    converted.reserve(in.size());  // no reallocation: `view` points into it
    for (const Signal& s : in)
      if (s.dtype() != dtype) converted.push_back(s.converted(dtype));
    std::size_t k = 0;
    for (const Signal& s : in) view.push_back(s.dtype() != dtype ? &converted[k++] : &s);
    return converted;
  }

  // A whole signal from host memory, from the stream's state, in pieces of at most `piece`
  // frames through two sets of page-locked staging of that size: the device works on one
  // piece while the host stages the next in and the last out, and the staging (kept for the
  // next run) never grows with the signal, so a signal larger than the GPU's memory streams
  // through. Launched directly (no CUDA graph: a piece is long).
  Expected<std::vector<Signal>, std::string> process_whole(std::span<const Signal> in, long long piece) {
    auto length = check_inputs(in);
    if (!length) return Unexpected{length.error()};
    std::vector<Signal> out;
    for (ir::NodeId id : g.outputs())
      out.emplace_back(channels_of(id), static_cast<std::size_t>(*length), dtype, Signal::Uninitialized{});
    std::vector<const Signal*> src;
    const std::vector<Signal> converted = converted_inputs(in, src);
    const auto in_pointers = channel_pointers(src);
    const auto out_pointers = channel_pointers(out);
    const auto in_arrays = arrays_of(in_pointers);
    const auto out_arrays = arrays_of(out_pointers);
    FXC_TRY(process_whole_into(in_arrays, out_arrays, *length, piece));
    return out;
  }

  // Whether a run on `inputs` and `outputs` pointer arrays can go: the stream set up, one
  // array per graph input and output.
  GpuStatus usable_with(std::size_t inputs, std::size_t outputs) const {
    if (!broken.empty()) return Unexpected{broken};
    if (inputs != g.inputs().size() || outputs != g.outputs().size())
      return Unexpected{"the graph has " + std::to_string(g.inputs().size()) + " input(s) and " +
                        std::to_string(g.outputs().size()) + " output(s), got " + std::to_string(inputs) + " and " +
                        std::to_string(outputs)};
    return std::monostate{};
  }

  // The same between channel pointer arrays in the program's sample type (one array per graph
  // input and output, a pointer per channel), staged straight from and to them.
  GpuStatus process_whole_into(std::span<const void* const* const> in, std::span<void* const* const> out, long long n,
                               long long piece) {
    FXC_TRY(usable_with(in.size(), out.size()));
    if (n == 0) return std::monostate{};
    piece = std::min(piece, n);
    if (piece > capacity) FXC_TRY(grow(piece));
    FXC_TRY(grow_staging(piece, n > piece ? 2 : 1));
    FXC_TRY(prepare(piece));
    if (n % piece) FXC_TRY(prepare(n % piece));
    long long launches = 0;
    auto length_of = [&](long long start) { return std::min(piece, n - start); };
    if (n > piece && outputs_apart_from_inputs()) {
      FXC_TRY(run_pieces_overlapped(in, out, n, piece, launches));
      evict_graphs(piece);
      count_run(launches, n);
      return std::monostate{};
    }
    std::optional<TraceSpan> step;
    next_host_step(step, "stage in", length_of(0));
    stage_in_all(in, 0, static_cast<std::size_t>(length_of(0)), 0);
    step.reset();  // launches go between the steps
    auto first = enqueue(length_of(0), 0);
    if (!first) return Unexpected{first.error()};
    launches += *first;
    for (long long start = 0, k = 0; start < n; start += piece, ++k) {
      const long long next = start + piece;
      const int set = static_cast<int>(k % 2), other = 1 - set;
      if (next < n) {
        next_host_step(step, "stage in", length_of(next));
        stage_in_all(in, static_cast<std::size_t>(next), static_cast<std::size_t>(length_of(next)), other);
      }
      next_host_step(step, "wait for GPU", length_of(start));
      FXC_TRY(device->synchronize());
      step.reset();
      if (next < n) {
        auto count = enqueue(length_of(next), other);
        if (!count) return Unexpected{count.error()};
        launches += *count;
      }
      next_host_step(step, "stage out", length_of(start));
      stage_out_all(out, static_cast<std::size_t>(start), static_cast<std::size_t>(length_of(start)), set);
    }
    step.reset();
    evict_graphs(piece);
    count_run(launches, n);
    return std::monostate{};
  }

  // True when no output is a graph input's own buffer (an input passed straight through):
  // then the next piece's copies in never write what the last piece's copies out read.
  bool outputs_apart_from_inputs() const {
    for (ir::NodeId id : g.outputs()) {
      while (ir::holds<ir::Output>(g.node(id))) id = g.node(id).operands[0];
      if (ir::holds<ir::Input>(g.node(id))) return false;
    }
    return true;
  }

  // The streams and events of run_pieces_overlapped, made on its first run, all or none (the
  // next run tries again).
  GpuStatus make_piece_streams() {
    if (has_copy_stream) return std::monostate{};
    std::vector<GpuDevice::Handle> streams, events;
    auto undo = [&] {
      for (GpuDevice::Handle h : events) device->destroy_event(h);
      for (GpuDevice::Handle h : streams) device->destroy_stream(h);
    };
    for (int k = 0; k < 2; ++k) {
      auto stream = device->create_stream();
      if (!stream) {
        undo();
        return Unexpected{stream.error()};
      }
      streams.push_back(*stream);
    }
    for (int e = 0; e < 6; ++e) {
      auto made = device->create_event();
      if (!made) {
        undo();
        return Unexpected{made.error()};
      }
      events.push_back(*made);
    }
    copy_stream = streams[0];
    in_stream = streams[1];
    computed = {events[0], events[1]};
    copied = {events[2], events[3]};
    loaded = {events[4], events[5]};
    has_copy_stream = true;
    return std::monostate{};
  }

  // Device buffers for two pieces of up to `n` frames of every input, copied in beside the
  // kernels and then moved into the graph's input buffers.
  GpuStatus grow_piece_in(long long n) {
    if (n <= piece_in_capacity) return std::monostate{};
    piece_in_capacity = 0;  // until every buffer is there
    for (auto& set : piece_in) {
      set.clear();
      for (ir::NodeId id : g.inputs()) {
        auto b = allocate(channels_of(id) * n * size_of(dtype));
        if (!b) return Unexpected{b.error()};
        set.push_back(std::move(*b));
      }
    }
    piece_in_capacity = n;
    return std::monostate{};
  }

  // A piece's inputs from staging set `set` into piece_in[set] on in_stream; then on this
  // stream, into the graph's input buffers (a device copy, or the transpose of an interleaved
  // stream). The piece before last, which used piece_in[set] too, has moved its inputs on:
  // the host waited for its copies out, which follow its kernels, before staging this piece.
  GpuStatus enqueue_piece_in(long long n, int set) {
    const std::size_t t = size_of(dtype);
    const std::vector<ir::NodeId> inputs = g.inputs();
    {
      StreamScope on_in(device, in_stream, own_stream);
      for (std::size_t i = 0; i < inputs.size(); ++i)
        FXC_TRY(device->copy_to_device(piece_in[set][i].get(), staging_in[set][i].get(), channels_of(inputs[i]) * n * t));
      FXC_TRY(device->record_event(loaded[set]));
    }
    FXC_TRY(device->wait_event(loaded[set]));
    for (std::size_t i = 0; i < inputs.size(); ++i) FXC_TRY(enqueue_into_input(i, piece_in[set][i].get(), n));
    return std::monostate{};
  }

  // Pieces on three streams: piece k + 1's inputs come in (in_stream) while piece k's kernels
  // run (this stream) and piece k - 1's outputs go out (copy_stream), so the bus carries both
  // directions at once beside the kernels, and the device waits only where an order is needed:
  // piece k's kernels wait for its inputs (loaded, then moved on this stream) and for piece
  // k - 1's copies out (which read the outputs they overwrite); its copies out wait for its
  // kernels. The host stages piece k + 1 in while the device works, then waits for piece
  // k's copies out and stages them out; staging set k % 2 is free again by then (piece k - 1's
  // copies, in and out, are done).
  GpuStatus run_pieces_overlapped(std::span<const void* const* const> in, std::span<void* const* const> out,
                                  long long n, long long piece, long long& launches) {
    FXC_TRY(make_piece_streams());
    FXC_TRY(grow_piece_in(piece));
    // On an error, copies already queued on the other streams may still read or write the
    // staging: they finish before this returns, so that the next run may stage again.
    struct Settle {
      Impl& self;
      bool done = false;
      ~Settle() {
        if (done) return;
        for (GpuDevice::Handle stream : {self.in_stream, self.copy_stream, self.own_stream}) {
          (void)self.device->use_stream(stream);
          (void)self.device->synchronize();
        }
      }
    } settle{*this};
    auto length_of = [&](long long start) { return std::min(piece, n - start); };
    auto launch_piece = [&](long long start, int set) -> GpuStatus {
      const long long len = length_of(start);
      FXC_TRY(enqueue_piece_in(len, set));
      if (start > 0) FXC_TRY(device->wait_event(copied[1 - set]));
      auto count = enqueue_kernels(len);
      if (!count) return Unexpected{count.error()};
      launches += *count;
      FXC_TRY(device->record_event(computed[set]));
      StreamScope on_copy(device, copy_stream, own_stream);
      FXC_TRY(device->wait_event(computed[set]));
      FXC_TRY(enqueue_copies_out(len, set));
      return device->record_event(copied[set]);
    };
    std::optional<TraceSpan> step;
    next_host_step(step, "stage in", length_of(0));
    stage_in_all(in, 0, static_cast<std::size_t>(length_of(0)), 0);
    step.reset();  // launches go between the steps
    FXC_TRY(launch_piece(0, 0));
    for (long long start = 0, k = 0; start < n; start += piece, ++k) {
      const long long next = start + piece;
      const int set = static_cast<int>(k % 2), other = 1 - set;
      if (next < n) {
        next_host_step(step, "stage in", length_of(next));
        stage_in_all(in, static_cast<std::size_t>(next), static_cast<std::size_t>(length_of(next)), other);
        step.reset();
        FXC_TRY(launch_piece(next, other));
      }
      next_host_step(step, "wait for GPU", length_of(start));
      FXC_TRY(device->synchronize_event(copied[set]));
      next_host_step(step, "stage out", length_of(start));
      stage_out_all(out, static_cast<std::size_t>(start), static_cast<std::size_t>(length_of(start)), set);
    }
    step.reset();
    settle.done = true;
    return device->synchronize();
  }

  Expected<std::vector<Signal>, std::string> process(std::span<const Signal> in) {
    auto length = check_inputs(in);
    if (!length) return Unexpected{length.error()};
    const long long n = *length;
    std::vector<Signal> out;
    for (ir::NodeId id : g.outputs())
      out.emplace_back(channels_of(id), static_cast<std::size_t>(n), dtype, Signal::Uninitialized{});
    std::vector<const Signal*> src;
    const std::vector<Signal> converted = converted_inputs(in, src);
    const auto in_pointers = channel_pointers(src);
    const auto out_pointers = channel_pointers(out);
    FXC_TRY(process_into(arrays_of(in_pointers), arrays_of(out_pointers), n, 0));
    return out;
  }

  // Buffers, staging and the per-length tables for blocks of up to `n` frames, made now.
  GpuStatus reserve(long long n) {
    if (!broken.empty()) return Unexpected{broken};
    if (n == 0) return std::monostate{};
    if (n > capacity) FXC_TRY(grow(n));
    FXC_TRY(grow_staging(n));
    return prepare(n);
  }

  // `n` frames between caller channel pointer arrays in the program's sample type, in blocks
  // of at most `block` frames (0: one block), each through process_block.
  GpuStatus process_into(std::span<const void* const* const> in, std::span<void* const* const> out, long long n,
                         long long block) {
    FXC_TRY(usable_with(in.size(), out.size()));
    if (block <= 0 || block >= n) return process_block(in, out, n);
    // The pointer arrays of one block, made on the first call that needs them (the ports'
    // channel counts never change).
    const std::vector<ir::NodeId> inputs = g.inputs(), outputs = g.outputs();
    if (step_in.size() != inputs.size() || step_out.size() != outputs.size()) {
      step_in.clear();
      step_out.clear();
      for (ir::NodeId id : inputs) step_in.emplace_back(channels_of(id));
      for (ir::NodeId id : outputs) step_out.emplace_back(channels_of(id));
    }
    const std::size_t t = size_of(dtype);
    for (long long start = 0; start < n; start += block) {
      const auto skip = static_cast<std::size_t>(start) * t;
      for (std::size_t i = 0; i < step_in.size(); ++i)
        for (std::size_t c = 0; c < step_in[i].size(); ++c)
          step_in[i][c] = static_cast<const std::byte*>(in[i][c]) + skip;
      for (std::size_t o = 0; o < step_out.size(); ++o)
        for (std::size_t c = 0; c < step_out[o].size(); ++c) step_out[o][c] = static_cast<std::byte*>(out[o][c]) + skip;
      FXC_TRY(process_block(arrays_of(step_in), arrays_of(step_out), std::min(block, n - start)));
    }
    return std::monostate{};
  }

  // The next block between caller channel pointer arrays in the program's sample type, staged
  // through staging set 0 and run as the CUDA graph recorded for its length (recorded on the
  // first block of that length), or launched directly without graphs.
  GpuStatus process_block(std::span<const void* const* const> in, std::span<void* const* const> out, long long n) {
    if (n == 0) return std::monostate{};
    if (n > capacity) FXC_TRY(grow(n));
    FXC_TRY(grow_staging(n));
    FXC_TRY(prepare(n));
    std::optional<TraceSpan> step;
    next_host_step(step, "stage in", n);
    stage_in_all(in, 0, static_cast<std::size_t>(n), 0);
    step.reset();  // the launch (and a first block's graph capture) between the steps
    long long launches = 0;
    if (use_graphs) {
      auto found = graphs.find(n);
      if (found == graphs.end()) {
        FXC_TRY(device->begin_capture());
        auto recorded_launches = enqueue(n);
        auto graph = device->end_capture();  // ends the capture even when enqueue failed
        if (!recorded_launches) return Unexpected{recorded_launches.error()};
        if (!graph) return Unexpected{graph.error()};
        found = graphs.emplace(n, Recorded{*graph, *recorded_launches, 0}).first;
        ++recorded;
      }
      found->second.last_use = ++uses;
      FXC_TRY(device->launch_graph(found->second.graph));
      launches = found->second.launches;
      ++counters().gpu_graph_launches;
    } else {
      auto count = enqueue(n);
      if (!count) return Unexpected{count.error()};
      launches = *count;
    }
    next_host_step(step, "wait for GPU", n);
    FXC_TRY(device->synchronize());
    step.reset();
    evict_graphs(n);  // after the block: nothing in flight uses what goes
    next_host_step(step, "stage out", n);
    stage_out_all(out, 0, static_cast<std::size_t>(n), 0);
    step.reset();
    count_run(launches, n);
    return std::monostate{};
  }

  // Whole signals in caller device memory (planar rows) through the graph on `stream`, from
  // the stream's state. Inputs are read where they are; an output whose operand nothing else
  // reads is written where the caller wants it, the others are copied there at the end.
  Expected<long long, std::string> process_device(std::span<const DevicePtr> in, std::span<const DevicePtr> out, long long n,
                                            GpuDevice::Handle stream) {
    if (!broken.empty()) return Unexpected{broken};
    if (!planar_only)
      return Unexpected{std::string("this CUDA stream was made for host memory: make one with DeviceLayout::planar")};
    std::vector<ir::NodeId> inputs = g.inputs(), outputs = g.outputs();
    if (in.size() != inputs.size() || out.size() != outputs.size())
      return Unexpected{"the graph has " + std::to_string(inputs.size()) + " input(s) and " +
                        std::to_string(outputs.size()) + " output(s), got " + std::to_string(in.size()) + " and " +
                        std::to_string(out.size()) + " device pointer(s)"};
    if (n == 0) return 0;
    for (DevicePtr p : in)
      if (!p) return Unexpected{std::string("a null device pointer for an input")};
    for (DevicePtr p : out)
      if (!p) return Unexpected{std::string("a null device pointer for an output")};
    const std::size_t t = size_of(dtype);
    if (n > capacity) FXC_TRY(grow(n));
    std::vector<int> readers(g.size(), 0);
    for (const ir::Node& node : g.nodes())
      for (ir::NodeId operand : node.operands) ++readers[operand];
    auto overlaps_input = [&](DevicePtr p, std::size_t bytes) {
      for (std::size_t i = 0; i < in.size(); ++i)
        if (p < in[i] + channels_of(inputs[i]) * n * t && in[i] < p + bytes) return true;
      return false;
    };
    bound.assign(g.size(), 0);
    for (std::size_t i = 0; i < inputs.size(); ++i) bound[inputs[i]] = in[i];
    std::vector<bool> direct(outputs.size(), false);
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      const ir::NodeId p = g.node(outputs[o]).operands[0];
      const ir::Node& producer = g.node(p);
      if (ir::holds<ir::Input>(producer) || ir::holds<ir::Feedback>(producer) || readers[p] != 1 || bound[p] ||
          overlaps_input(out[o], channels_of(outputs[o]) * n * t))
        continue;
      bound[p] = out[o];
      direct[o] = true;
    }
    // Unbinds, and drops the operand tables (they hold this call's addresses), however it ends.
    struct Unbind {
      Impl& self;
      ~Unbind() {
        self.bound.clear();
        for (KernelMemory& m : self.memory) m.operand_tables.clear();
        (void)self.device->use_stream(0);  // cannot fail: it only selects
      }
    } unbind{*this};
    for (KernelMemory& m : memory) m.operand_tables.clear();
    FXC_TRY(prepare(n));
    FXC_TRY(device->use_stream(stream ? stream : own_stream));  // 0: this stream's own
    auto launches = enqueue_kernels(n);
    if (!launches) return launches;
    for (std::size_t o = 0; o < outputs.size(); ++o)
      if (!direct[o]) FXC_TRY(device->copy_on_device(out[o], value(outputs[o]), channels_of(outputs[o]) * n * t));
    FXC_TRY(device->synchronize());
    counters().gpu_launches += *launches;
    counters().dispatches += *launches;
    return launches;
  }

  // A kernel's state buffers beside their bytes in `kernel` (a snapshot's, CudaKernelState).
  template <class KernelState>
  static auto paired(const KernelMemory& m, KernelState& kernel) {
    return std::array{std::pair{&m.state, &kernel.state}, std::pair{&m.positions, &kernel.positions},
                      std::pair{&m.lines, &kernel.lines}};
  }

  // The buffers a snapshot holds: section and FIR state, ring positions, delay lines, a
  // feedback node's line and positions (sums and routes have none).
  std::vector<const DeviceBuffer*> state_buffers(std::size_t i) const {
    std::vector<const DeviceBuffer*> out;
    for (const DeviceBuffer* b : {&memory[i].state, &memory[i].positions, &memory[i].lines})
      if (b->get() && b->bytes()) out.push_back(b);
    return out;
  }
};

// Streams kept for whole runs of one program, so their page-locked staging and device buffers
// are reused from run to run (pinning memory costs milliseconds). They point at the program
// without owning it: the pool is the program's, and goes first when it goes.
struct CudaRunPool {
  std::mutex mutex;
  std::vector<std::unique_ptr<CudaStream>> idle;            // host memory (process_whole)
  std::vector<std::unique_ptr<CudaStream>> idle_on_device;  // caller device memory (planar)
};

namespace {

// Runs `run` on a stream of `program` for `layout`: one from its pool, reset to zero state, or
// a new one, which points at the program without owning it (the pool that keeps the stream
// belongs to the program: a stream that owned it would keep it alive forever). The stream goes
// back to the pool, with its staging and device buffers, when `run` succeeded.
template <class Run>
auto run_pooled(const std::shared_ptr<const CudaProgram>& program, DeviceLayout layout, Run run)
    -> decltype(run(std::declval<CudaStream&>())) {
  CudaRunPool& pool = *program->run_pool;
  std::vector<std::unique_ptr<CudaStream>>& idle = layout == DeviceLayout::planar ? pool.idle_on_device : pool.idle;
  std::unique_ptr<CudaStream> stream;
  {
    std::lock_guard lock(pool.mutex);
    if (!idle.empty()) {
      stream = std::move(idle.back());
      idle.pop_back();
    }
  }
  std::optional<TraceSpan> span;  // its strings only when tracing: this is every run's path
  if (Trace::global().enabled())
    span.emplace("GPU run", "cuda", Trace::Args{{"graph", program->scheduled.name}, {"stream", stream ? "pooled" : "new"}});
  if (stream) {
    if (auto zero = stream->reset(); !zero) return Unexpected{zero.error()};
  } else {
    stream = std::make_unique<CudaStream>(std::shared_ptr<const CudaProgram>(std::shared_ptr<const CudaProgram>{}, program.get()),
                                          layout);
  }
  auto result = run(*stream);
  if (result) {
    // Kept by the device, not by this program's idle stream: a process makes programs for
    // many lengths (a corpus), and each would otherwise pin staging of its own.
    (void)stream->give_back_staging();  // (a failed device fails the stream's next run too)
    std::lock_guard lock(pool.mutex);
    idle.push_back(std::move(stream));
  }
  return result;
}

}  // namespace

CudaRunPoolRef::CudaRunPoolRef() : pool_(std::make_shared<CudaRunPool>()) {}

namespace {

// A module loaded on a device, and what unloads it when its last program goes.
struct SharedModule {
  GpuDevice::Handle handle = 0;
  std::shared_ptr<const void> unload;
};

// The module of `image` (a cubin, or the emulation's source) on `device`: the one a live
// program loaded already, else `load()`'s. Programs of one kernel shape made for other
// signal lengths, sample rates or values (a corpus's files, each length a Program) share it,
// where each loaded its own before 2026-12-02. Keyed by the image's bytes, so only the same
// machine code is shared. Loads run outside the lock (the emulation compiles for seconds, a
// PTX load compiles too); two threads loading one image at once keep the first's.
template <class Load>
Expected<SharedModule, std::string> shared_module(const std::shared_ptr<GpuDevice>& device, const std::string& image,
                                                  Load load) {
  struct Loaded {
    GpuDevice::Handle handle;
    std::weak_ptr<const void> unload;
  };
  struct Registry {
    std::mutex mutex;
    std::map<const GpuDevice*, std::map<std::string, Loaded, std::less<>>> loaded;  // by device, by image
  };
  static auto* registry = new Registry();  // outlives every program
  // The live module of `image`, under the lock; drops the device's modules that are gone.
  auto live = [&]() -> std::optional<SharedModule> {
    auto& modules = registry->loaded[device.get()];
    std::erase_if(modules, [](const auto& entry) { return entry.second.unload.expired(); });
    auto it = modules.find(std::string_view(image));
    if (it == modules.end()) return std::nullopt;
    // (An owner of nothing: alive while it counts owners, though it converts to false.)
    std::shared_ptr<const void> unload = it->second.unload.lock();
    if (unload.use_count() == 0) return std::nullopt;
    return SharedModule{it->second.handle, std::move(unload)};
  };
  {
    std::lock_guard lock(registry->mutex);
    if (auto found = live()) return std::move(*found);
  }
  auto module = load();
  if (!module) return Unexpected{module.error()};
  // A shared owner of nothing whose deleter unloads: the device goes after its last module.
  std::shared_ptr<const void> unload(nullptr, [device, m = *module](const void*) { device->unload_module(m); });
  std::lock_guard lock(registry->mutex);
  if (auto found = live()) return std::move(*found);  // another thread's load won: ours goes with `unload`
  registry->loaded[device.get()][image] = Loaded{*module, unload};
  return SharedModule{*module, std::move(unload)};
}

}  // namespace

Expected<std::shared_ptr<const CudaProgram>, std::string> load_cuda_program(std::shared_ptr<GpuDevice> device,
                                                                            const ir::Graph& scheduled,
                                                                            const std::string& cubin) {
  TraceSpan span("load CUDA module", "cuda", {{"graph", scheduled.name}});
  auto program = std::make_shared<CudaProgram>();
  program->scheduled = scheduled;
  program->device = device;
  auto kernels = codegen::cuda_kernels(scheduled);
  if (!kernels) return Unexpected{kernels.error()};
  program->kernels = std::move(*kernels);
  std::string source;
  if (cubin.empty()) {  // a device without an architecture (the emulation) takes the source
    auto emitted = codegen::emit_cuda_source(scheduled);
    if (!emitted) return Unexpected{emitted.error()};
    source = std::move(*emitted);
  }
  std::vector<codegen::CudaEntry> entries;
  for (const CudaKernelInfo& k : program->kernels) entries.insert(entries.end(), k.entries.begin(), k.entries.end());
  program->side_by_side = codegen::cuda_side_by_side(scheduled, program->kernels);
  program->side_of.assign(program->kernels.size(), -1);
  for (std::size_t s = 0; s < program->side_by_side.size(); ++s) {
    entries.push_back(program->side_by_side[s].entry);
    for (std::size_t i : program->side_by_side[s].members) program->side_of[i] = static_cast<int>(s);
  }
  const DType signal = codegen::cuda_signal_dtype(scheduled);
  const std::vector<codegen::CudaEntry> layout = codegen::cuda_layout_entries(signal);
  entries.insert(entries.end(), layout.begin(), layout.end());
  auto module = shared_module(device, cubin.empty() ? source : cubin, [&] { return device->load_module(source, cubin, entries); });
  if (!module) return Unexpected{module.error()};
  program->module = module->handle;
  program->module_unload = std::move(module->unload);
  for (std::size_t e = 0; e < layout.size(); ++e) {
    auto f = device->function(program->module, layout[e].symbol);
    if (!f) return Unexpected{f.error()};
    program->layout_functions[e] = *f;
  }
  for (const CudaKernelInfo& k : program->kernels) {
    std::vector<GpuDevice::Handle> functions;
    for (const codegen::CudaEntry& e : k.entries) {
      auto f = device->function(program->module, e.symbol);
      if (!f) return Unexpected{f.error()};
      functions.push_back(*f);
    }
    program->functions.push_back(std::move(functions));
  }
  for (const codegen::CudaSideBySide& side : program->side_by_side) {
    auto f = device->function(program->module, side.symbol);
    if (!f) return Unexpected{f.error()};
    program->side_functions.push_back(*f);
  }
  return std::shared_ptr<const CudaProgram>(std::move(program));
}

std::size_t cuda_piece_frames(const CudaProgram& program) {
  const ir::Graph& g = program.scheduled;
  std::size_t channels = 0;
  for (ir::NodeId id : g.inputs()) channels += static_cast<std::size_t>(std::max(1, g.node(id).type.channels));
  for (ir::NodeId id : g.outputs()) channels += static_cast<std::size_t>(std::max(1, g.node(id).type.channels));
  const DType dtype = codegen::cuda_signal_dtype(g);
  const std::size_t frame = std::max<std::size_t>(channels, 1) * size_of(dtype);
  return std::max<std::size_t>(kCudaStagingBytes / frame, 4096);
}

Expected<std::vector<Signal>, std::string> execute_cuda(std::shared_ptr<const CudaProgram> program,
                                                        std::span<const Signal> inputs, std::size_t piece_frames) {
  if (piece_frames == 0) piece_frames = cuda_piece_frames(*program);
  return run_pooled(program, DeviceLayout::automatic,
                    [&](CudaStream& stream) { return stream.process_whole(inputs, piece_frames); });
}

Expected<std::monostate, std::string> execute_cuda_into(std::shared_ptr<const CudaProgram> program,
                                                        std::span<const void* const* const> inputs,
                                                        std::span<void* const* const> outputs, std::size_t frames,
                                                        std::size_t piece_frames) {
  if (piece_frames == 0) piece_frames = cuda_piece_frames(*program);
  return run_pooled(program, DeviceLayout::automatic, [&](CudaStream& stream) {
    return stream.process_whole_into(inputs, outputs, frames, piece_frames);
  });
}

Expected<std::vector<std::vector<Signal>>, std::string> execute_cuda_batch(std::shared_ptr<const CudaProgram> program,
                                                                           const std::vector<BatchItem>& items) {
  if (items.empty()) return std::vector<std::vector<Signal>>{};
  const ir::Graph& g = program->scheduled;
  std::vector<ir::NodeId> inputs = g.inputs();
  if (items[0].size() != inputs.size())
    return Unexpected{"the graph has " + std::to_string(inputs.size()) + " input(s), a batch item has " +
                      std::to_string(items[0].size()) + " signal(s)"};
  std::size_t longest = 0;
  for (std::size_t b = 0; b < items.size(); ++b) {
    if (items[b].size() != inputs.size())
      return Unexpected{"batch item " + std::to_string(b) + " has " + std::to_string(items[b].size()) +
                        " signal(s) for a graph of " + std::to_string(inputs.size()) + " input(s)"};
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const int wide = g.node(inputs[i]).type.channels;
      if (items[b][i].channels() * items.size() != static_cast<std::size_t>(std::max(wide, 0)) ||
          items[b][i].samples() != items[b][0].samples())
        return Unexpected{"batch item " + std::to_string(b) + " does not fit the batch program: input " +
                          std::to_string(i) + " has " + std::to_string(wide) + " channels for " +
                          std::to_string(items.size()) + " item(s), and an item's inputs need one length"};
    }
    longest = std::max(longest, items[b][0].samples());
  }
  DType dtype = codegen::cuda_signal_dtype(g);
  auto out = execute_cuda(std::move(program), lay_out_batch(items, longest, dtype));
  if (!out) return Unexpected{out.error()};
  return split_batch(*out, items);
}

CudaStream::CudaStream(std::shared_ptr<const CudaProgram> program, bool use_graphs)
    : impl_(std::make_unique<Impl>(std::move(program), use_graphs, false)) {}
CudaStream::CudaStream(std::shared_ptr<const CudaProgram> program, DeviceLayout layout)
    : impl_(std::make_unique<Impl>(std::move(program), false, layout == DeviceLayout::planar)) {}

Expected<long long, std::string> CudaStream::process_device(std::span<const DevicePtr> inputs,
                                                     std::span<const DevicePtr> outputs, std::size_t frames,
                                                     GpuDevice::Handle stream) {
  StreamScope on(impl_->device, impl_->own_stream);
  return impl_->process_device(inputs, outputs, static_cast<long long>(frames), stream);
}

Expected<std::monostate, std::string> execute_cuda_on_device(std::shared_ptr<const CudaProgram> program,
                                                             std::span<const DevicePtr> inputs,
                                                             std::span<const DevicePtr> outputs, std::size_t frames,
                                                             GpuDevice::Handle stream) {
  // A pooled stream: a new one would allocate, fill and free its device buffers on every call
  // (cuMemFree waits for the whole device).
  auto launches = run_pooled(program, DeviceLayout::planar, [&](CudaStream& run) {
    return run.process_device(inputs, outputs, frames, stream);
  });
  if (!launches) return Unexpected{launches.error()};
  return std::monostate{};
}

Expected<std::monostate, std::string> CudaStream::give_back_staging() {
  StreamScope on(impl_->device, impl_->own_stream);
  return impl_->give_back_staging();
}

CudaStream::~CudaStream() = default;
CudaStream::CudaStream(CudaStream&&) noexcept = default;
CudaStream& CudaStream::operator=(CudaStream&&) noexcept = default;

Expected<std::vector<Signal>, std::string> CudaStream::process(std::span<const Signal> block) {
  StreamScope on(impl_->device, impl_->own_stream);
  return impl_->process(block);
}

Expected<std::monostate, std::string> CudaStream::reserve(std::size_t frames) {
  StreamScope on(impl_->device, impl_->own_stream);
  return impl_->reserve(static_cast<long long>(frames));
}

Expected<std::monostate, std::string> CudaStream::process_into(std::span<const void* const* const> inputs,
                                                              std::span<void* const* const> outputs, std::size_t frames,
                                                              std::size_t block) {
  StreamScope on(impl_->device, impl_->own_stream);
  return impl_->process_into(inputs, outputs, static_cast<long long>(frames), static_cast<long long>(block));
}

Expected<std::vector<Signal>, std::string> CudaStream::process_whole(std::span<const Signal> inputs,
                                                                    std::size_t piece_frames) {
  StreamScope on(impl_->device, impl_->own_stream);
  return impl_->process_whole(inputs, static_cast<long long>(std::max<std::size_t>(piece_frames, 1)));
}

Expected<std::monostate, std::string> CudaStream::process_whole_into(std::span<const void* const* const> inputs,
                                                                    std::span<void* const* const> outputs,
                                                                    std::size_t frames, std::size_t piece_frames) {
  StreamScope on(impl_->device, impl_->own_stream);
  return impl_->process_whole_into(inputs, outputs, static_cast<long long>(frames),
                                   static_cast<long long>(std::max<std::size_t>(piece_frames, 1)));
}

Expected<std::monostate, std::string> CudaStream::reset() {
  Impl& s = *impl_;
  StreamScope on(s.device, s.own_stream);
  if (!s.broken.empty()) return Unexpected{s.broken};
  for (std::size_t i = 0; i < s.memory.size(); ++i)
    for (const DeviceBuffer* b : s.state_buffers(i)) FXC_TRY(s.device->fill_zero(b->get(), b->bytes()));
  return s.device->synchronize();
}

Expected<std::shared_ptr<const CudaStreamState>, std::string> CudaStream::snapshot() const {
  Impl& s = *impl_;
  StreamScope on(s.device, s.own_stream);
  if (!s.broken.empty()) return Unexpected{s.broken};
  FXC_TRY(s.device->synchronize());
  auto state = std::make_shared<CudaStreamState>();
  for (const KernelMemory& m : s.memory) {
    for (auto [buffer, bytes] : Impl::paired(m, state->kernels.emplace_back())) {
      if (!buffer->get()) continue;
      bytes->resize(buffer->bytes());
      if (!bytes->empty()) FXC_TRY(s.device->copy_to_host(bytes->data(), buffer->get(), bytes->size()));
    }
  }
  FXC_TRY(s.device->synchronize());
  return std::shared_ptr<const CudaStreamState>(std::move(state));
}

Expected<std::monostate, std::string> CudaStream::restore(const CudaStreamState& state) {
  Impl& s = *impl_;
  StreamScope on(s.device, s.own_stream);
  if (!s.broken.empty()) return Unexpected{s.broken};
  if (state.kernels.size() != s.memory.size())
    return Unexpected{std::string("the snapshot is of another graph")};
  for (std::size_t i = 0; i < s.memory.size(); ++i)
    for (auto [buffer, bytes] : Impl::paired(s.memory[i], state.kernels[i]))
      if (bytes->size() != (buffer->get() ? buffer->bytes() : 0))
        return Unexpected{std::string("the snapshot does not fit this stream (a delay length changed since)")};
  for (std::size_t i = 0; i < s.memory.size(); ++i)
    for (auto [buffer, bytes] : Impl::paired(s.memory[i], state.kernels[i]))
      if (!bytes->empty()) FXC_TRY(s.device->copy_to_device(buffer->get(), bytes->data(), bytes->size()));
  return s.device->synchronize();
}

Expected<std::string, std::string> CudaStream::save_state() const {
  auto snap = snapshot();
  if (!snap) return Unexpected{snap.error()};
  auto state = host_stream_state(*impl_->program, impl_->g, **snap);
  if (!state) return Unexpected{state.error()};
  return save_stream_state(*state, impl_->g);
}

Expected<CudaStreamState, std::string> CudaStream::state_from_bytes(std::string_view bytes) const {
  const Impl& s = *impl_;
  auto loaded = load_stream_state(bytes, s.g, graph_values(s.g));
  if (!loaded) return Unexpected{loaded.error()};
  CudaStreamState sizes;  // the buffers' sizes, zeros
  for (const KernelMemory& m : s.memory)
    for (auto [buffer, bytes] : Impl::paired(m, sizes.kernels.emplace_back()))
      if (buffer->get()) bytes->resize(buffer->bytes());
  return device_stream_state(*s.program, s.g, *loaded, sizes);
}

Expected<std::monostate, std::string> CudaStream::update_values(const ir::Graph& scheduled) {
  Impl& s = *impl_;
  StreamScope on(s.device, s.own_stream);
  if (!s.broken.empty()) return Unexpected{s.broken};
  if (ir::structural_hash(scheduled) != ir::structural_hash(s.g))
    return Unexpected{std::string(
        "the new graph has another shape (stages, orders, channels or strategy): compile it as a new stream")};
  s.g = scheduled;
  const GraphValues values = graph_values(s.g);
  for (std::size_t i = 0; i < s.program->kernels.size(); ++i) {
    const codegen::CudaKernelInfo& k = s.program->kernels[i];
    const ir::Node& node = s.g.node(k.node);
    if (k.kind == CudaKernelKind::feedback) {
      FXC_TRY(s.set_feedback_length(i, values.nodes[k.node].delay_lengths.at(0), false));
    } else if (k.kind == CudaKernelKind::sum || k.kind == CudaKernelKind::route) {
      auto bytes = s.weights_of(node);
      FXC_TRY(s.device->copy_to_device(s.memory[i].weights.get(), bytes.data(), bytes.size()));
      FXC_TRY(s.device->synchronize());
    } else {
      FXC_TRY(s.set_values(i, std::get<ir::Chain>(node.op), false));
    }
  }
  // Values were written into the buffers the recorded graphs use, which stay valid; a delay or
  // feedback line whose length changed was replaced, and that dropped them.
  return s.device->synchronize();
}

const ir::Graph& CudaStream::graph() const { return impl_->g; }
bool CudaStream::interleaved() const { return impl_->interleaved; }
int CudaStream::graphs_recorded() const { return impl_->recorded; }
std::size_t CudaStream::graphs_held() const { return impl_->graphs.size(); }

}  // namespace fxc

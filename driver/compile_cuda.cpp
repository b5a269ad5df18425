// SPDX-License-Identifier: Apache-2.0
#include "driver/compile_cuda.h"

#include <algorithm>
#include <cstdio>

#include "codegen/cuda/cuda_driver.h"
#include "codegen/cuda/nvrtc.h"
#include "driver/kernel_cache.h"
#include "ir/hash.h"
#include "passes/target.h"

namespace fxc {
namespace {

// PTX fallback (docs/cuda.md): where the driver refuses the cubin in a way PTX may avoid
// (load_module's error starts with kCubinRejected), PTX for the device's compute_XX, which the
// driver compiles itself. Not cached: NVRTC runs on every such load. Written against the driver
// API's documentation: it has never run on a GPU.
Expected<std::shared_ptr<const CudaProgram>, std::string> load_with_ptx_fallback(std::shared_ptr<GpuDevice> device,
                                                                               const ir::Graph& scheduled,
                                                                               const std::string& cubin,
                                                                               DiagnosticEngine& diags) {
  auto program = load_cuda_program(device, scheduled, cubin);
  if (program || cubin.empty() || program.error().rfind(kCubinRejected, 0) != 0) return program;
  std::string rejected = program.error();
  auto source = codegen::emit_cuda_source(scheduled);
  if (!source) return Unexpected{rejected + "; no PTX either: " + source.error()};
  auto ptx = codegen::compile_cuda(*source, device->arch(), false);
  if (!ptx) return Unexpected{rejected + "; no PTX either: " + ptx.error()};
  auto from_ptx = load_cuda_program(device, scheduled, *ptx);
  if (!from_ptx) {
    std::string hint;
    const codegen::NvrtcChoice& nvrtc = codegen::nvrtc_choice();
    int driver = codegen::cuda_driver_version();
    int nvrtc_major = 0, nvrtc_minor = 0;
    if (nvrtc.found() && driver > 0 && std::sscanf(nvrtc.version.c_str(), "%d.%d", &nvrtc_major, &nvrtc_minor) == 2 &&
        1000 * nvrtc_major + 10 * nvrtc_minor > driver)
      hint = " (NVRTC " + nvrtc.version + " is newer than the CUDA driver " + codegen::cuda_version_text(driver) +
             ", whose JIT refuses newer PTX: set FXC_NVRTC_LIBRARY to an NVRTC of CUDA " +
             codegen::cuda_version_text(driver) + " or older, or update the driver)";
    return Unexpected{rejected + "; PTX for the same device failed too: " + from_ptx.error() + hint};
  }
  diags.warning({},
                rejected + "; loaded PTX for " + device->arch() + " instead (the driver compiles it at every load)",
                "fxc-cuda");
  return from_ptx;
}

}  // namespace

std::optional<std::shared_ptr<const CudaProgram>> compile_for_cuda(
    const ir::Graph& graph, const CudaCompileRequest& request, std::shared_ptr<GpuDevice> device,
    DiagnosticEngine& diags, const std::shared_ptr<const CudaProgram>& same_shape) {
  // The device's size decides the chunked scan's chunks and when channels alone fill it.
  std::optional<ir::Graph> scheduled = schedule_graph(graph, request, passes::cuda_target(device->properties()), diags);
  if (!scheduled) return std::nullopt;
  if (same_shape && same_shape->device == device &&
      ir::structural_hash(*scheduled) == ir::structural_hash(same_shape->scheduled)) {
    // The kernels take every value as an argument: new values need none compiled or loaded.
    auto program = std::make_shared<CudaProgram>(*same_shape);
    program->scheduled = std::move(*scheduled);
    return program;
  }
  std::string cubin;
  if (!device->arch().empty()) {
    KernelCache cache(request.cache_directory);
    auto compiled = cache.cuda_cubin(*scheduled, device->arch(), diags);
    if (!compiled) {
      diags.error({}, compiled.error(), "fxc-compile");
      return std::nullopt;
    }
    cubin = **compiled;
  }
  auto program = load_with_ptx_fallback(std::move(device), *scheduled, cubin, diags);
  if (!program) {
    diags.error({}, program.error(), "fxc-compile");
    return std::nullopt;
  }
  return *program;
}

std::optional<std::shared_ptr<const CudaProgram>> compile_batch_for_cuda(const ir::Graph& graph,
                                                                         const std::vector<BatchItem>& items,
                                                                         CudaCompileRequest request,
                                                                         std::shared_ptr<GpuDevice> device,
                                                                         DiagnosticEngine& diags) {
  std::optional<WideBatch> wide = widen_batch(graph, items, diags);
  if (!wide) return std::nullopt;
  request.length_samples = static_cast<std::int64_t>(wide->longest);
  request.batch = 1;  // the channels are already multiplied out
  return compile_for_cuda(wide->graph, request, std::move(device), diags);
}

std::optional<std::shared_ptr<const CudaProgram>> compile_batch_for_cuda(
    const ir::Graph& graph, std::span<const int> input_channels, std::size_t items, std::size_t frames,
    CudaCompileRequest request, std::shared_ptr<GpuDevice> device, DiagnosticEngine& diags,
    const std::shared_ptr<const CudaProgram>& same_shape) {
  // Stand-in signals of no samples: widen_batch reads only their channel counts (and checks
  // them against declared ones).
  BatchItem shape;
  for (int channels : input_channels) shape.emplace_back(static_cast<std::size_t>(std::max(channels, 0)), 0);
  std::optional<WideBatch> wide = widen_batch(graph, std::vector<BatchItem>(items, shape), diags);
  if (!wide) return std::nullopt;
  request.length_samples = static_cast<std::int64_t>(frames);
  request.batch = 1;  // the channels are already multiplied out
  return compile_for_cuda(wide->graph, request, std::move(device), diags, same_shape);
}

}  // namespace fxc

// SPDX-License-Identifier: Apache-2.0
#include "runtime/graph_values.h"

#include <functional>
#include <string>

#include "codegen/chain_layout.h"
#include "runtime/fft_convolution.h"
#include "runtime/partitioned_convolution.h"
#include "runtime/stream_state.h"

namespace fxc {

namespace {

// A number for the spectra of `taps` at `block`, never 0 (an unbuilt stream's).
std::uint64_t spectra_serial(const std::vector<double>& taps, int block) {
  std::string bytes(reinterpret_cast<const char*>(taps.data()), taps.size() * sizeof(double));
  bytes.append(reinterpret_cast<const char*>(&block), sizeof block);
  return static_cast<std::uint64_t>(std::hash<std::string>{}(bytes)) | 1;
}

}  // namespace

GraphValues graph_values(const ir::Graph& scheduled) {
  GraphValues out;
  out.nodes.resize(scheduled.size());
  DType signal = dtype_of(scheduled);
  for (ir::NodeId id = 0; id < scheduled.size(); ++id) {
    NodeValues& v = out.nodes[id];
    const ir::Op& op = scheduled.node(id).op;
    if (const auto* feedback = std::get_if<ir::Feedback>(&op)) {
      v.delay_lengths = {static_cast<std::int64_t>(feedback->amount)};
    } else if (const auto* matrix = std::get_if<ir::Matrix>(&op)) {
      if (signal == DType::f32) v.f32.assign(matrix->gains.begin(), matrix->gains.end());
      else v.f64 = matrix->gains;
    } else if (const auto* sum = std::get_if<ir::Sum>(&op)) {
      if (signal == DType::f32) v.f32.assign(sum->weights.begin(), sum->weights.end());
      else v.f64 = sum->weights;
    } else if (const auto* chain = std::get_if<ir::Chain>(&op)) {
      codegen::ChainValues values = codegen::values_of(*chain);
      v.delay_lengths = std::move(values.delay_lengths);
      if (codegen::runs_in_runtime(*chain)) {
        v.f64 = std::move(values.params);  // the taps, read in float64 by the direct fallback
        // A block above the taps runs overlap-save; one not above them a partitioned
        // convolution on the CPU (the GPU's makes its own tables, runtime/cuda_executor.cpp).
        const bool overlap_save = !runs_partitioned(v.f64.size(), chain->fft_block);
        auto transform = [&](auto& response, auto&& plan) {
          if constexpr (requires { plan.partitions(); }) response.resize(plan.partitions() * plan.spectrum_size());
          else response.resize(plan.bins());
          plan.transform_taps(v.f64, response);
        };
        if (overlap_save && signal == DType::f32) transform(v.fft_response_f32, FftConvolver<float>(v.f64.size(), chain->fft_block));
        else if (overlap_save) transform(v.fft_response_f64, FftConvolver<double>(v.f64.size(), chain->fft_block));
        else if (signal == DType::f32) transform(v.partition_spectra_f32, PartitionedConvolver<float>(v.f64.size(), chain->fft_block));
        else transform(v.partition_spectra_f64, PartitionedConvolver<double>(v.f64.size(), chain->fft_block));
        // The same taps and block give the same spectra: a value staged for another node leaves
        // the serial, so a partitioned FIR's channels do not rebuild (M FFTs) for it.
        v.fft_serial = spectra_serial(v.f64, chain->fft_block);
      } else if (codegen::compute_dtype(*chain, signal) == DType::f32) {
        v.f32.assign(values.params.begin(), values.params.end());
      } else {
        v.f64 = std::move(values.params);
      }
    }
  }
  return out;
}

}  // namespace fxc

// SPDX-License-Identifier: Apache-2.0
// What the Google Benchmark suites share: the standard chains of design/performance.md built
// with the C++ DSL, the workloads' noise, and the accuracy check against the reference
// interpreter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/dsl.h"
#include "ir/graph.h"
#include "driver/compile_cpu.h"
#include "runtime/signal.h"

namespace fxc::bench {

/// A standard chain: its stages, and how much work one channel-sample of it is.
struct StandardChain {
  std::string name;
  Chain chain;
  double fs_hz;
  int sections;  ///< biquad sections of the designs (0 for FIR chains)
  int taps;      ///< FIR taps of the stages as written, before fusion (0 for IIR chains)
};

/// W1 (TorchFX's api chain): cheby1(4, 0.1 dB) highpass at 20, 60, 65 Hz, then butter(5)
/// lowpass at 5000, 4900, 4850 Hz: 15 sections at 44.1 kHz.
StandardChain w1_api();
/// W2 (TorchFX's IIR chain): butter(2) highpass 1 kHz, butter(2) lowpass 5 kHz, cheby1(2,
/// 0.1 dB) highpass 1.5 kHz and lowpass 1.8 kHz: 4 sections at 44.1 kHz.
StandardChain w2_iir();
/// W3 (FIR chain): firwin lowpass 101..105 taps at 1000, 5000, 1500, 1800, 1850 Hz; 515 taps.
StandardChain w3_fir();
/// W4 (profiling chain): butter(4) highpass 80 Hz, butter(8) lowpass 12 kHz: 6 sections at 48 kHz.
StandardChain w4_profile();

/// `input x : channels | chain | output y`.
ir::Graph chain_graph(const StandardChain& chain, int channels);

/// Float32 white noise in [-1, 1], seed 1234 (as `fxc bench`), converted to `dtype`.
std::vector<Signal> noise(int channels, std::size_t samples, DType dtype);

/// The largest |got - want| over every output, channel and sample.
double max_abs_error(const std::vector<Signal>& got, const std::vector<Signal>& want);

/// The scheduled graph's execution plan in a few words ("channel_lanes", "chunked_scan
/// chunk 4096", "fft_overlap_save block 2048"), for benchmark labels.
std::string plan_label(const ir::Graph& scheduled);

/// A long chain with fan-outs of exactly `nodes` nodes (at least 4): blocks of
///   a = y | peaking(f, 1, 3 dB);  y = a + 0.5 * (a | butter(2, f'))
/// so every block's `a` feeds two users, which breaks it out of the chain before it.
ir::Graph fan_out_chain(int nodes, int channels = 2);

}  // namespace fxc::bench

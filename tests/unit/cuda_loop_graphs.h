// SPDX-License-Identifier: Apache-2.0
// Graphs with feedback loops, channel routing (select, matrix, concat) and dynamics for the CUDA tests
// (cuda_emulation_test.cpp runs them, cuda_codegen_test.cpp compiles their source): loops in
// .fx text, routing in IR text, which says exactly which routing nodes the graph holds.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "frontend/fx_file.h"
#include "ir/graph.h"
#include "ir/parse.h"

namespace fxc::test {

/// A stereo echo with a lowpass in the loop (api_feedback_test.cpp's, at a fixed delay).
inline constexpr const char* kEchoFx = "input x : 2\ny = x + 0.5 * (y | lowpass(3 kHz) | delay(37))\noutput y\n";

/// Two loops of different delays feeding each other, a nonlinearity inside one: four feedback
/// nodes, the shortest 29 samples.
inline constexpr const char* kTangleFx =
    "input x : 2\n"
    "a = x + 0.6 * (a | delay(37)) - 0.3 * (b | delay(53))\n"
    "b = x | tanh() + 0.3 * (a | delay(29)) + 0.5 * (b | highpass(200 Hz) | delay(41))\n"
    "output a + b | fir([0.1, 0.2, 0.3, 0.2, 0.1])\n";

/// The echo between two filters outside its loop: they run over whole blocks, the loop in
/// passes (a chunked scan on few channels, in and out of the loop).
inline constexpr const char* kFilteredEchoFx =
    "input x : 2\n"
    "d = x | highpass(80 Hz)\n"
    "y = d + 0.5 * (y | lowpass(3 kHz) | delay(37))\n"
    "output y | lowpass(8 kHz)\n";

/// The echo on undeclared channels (40 of them run interleaved on the GPU).
inline constexpr const char* kWideEchoFx = "input x\ny = x + 0.5 * (y | lowpass(3 kHz) | delay(37))\noutput y\n";

/// Loops through one mix, which fuse-loops makes one chain kernel each: an echo whose filter
/// follows its delay (the mix read), an allpass core (the line's sample read, with the mix
/// `past - x` taken in) and a one-sample loop with a tanh.
inline constexpr const char* kFusedLoopsFx =
    "input x : 2\n"
    "echo = x + 0.5 * (echo | delay(37) | lowpass(3 kHz))\n"
    "past = line | delay(23)\n"
    "line = x + 0.5 * past\n"
    "tight = x + 0.9 * (tight | delay(1) | tanh())\n"
    "output echo + (past - x) + tight\n";

/// Every routing kind, with filters between: a swap, a 3 x 2 mix with a zero gain, a select
/// that repeats a channel (of=0), a concat of three.
inline constexpr const char* kRoutedIr = R"(graph routed
%0 = input {name="x"} : 2ch f64
%1 = select %0 {indices=[1, 0], of=2} : 2ch f64
%2 = matrix %0 {rows=3, gains=[0.5, 0.5, 1, 0, 0.25, -2]} : 3ch f64
%3 = biquad %2 {type=lowpass, f0_hz=3000, q=0.7071067811865476, gain_db=0} : 3ch f64
%4 = select %3 {indices=[2, 2, 0], of=0} : 3ch f64
%5 = concat %1, %3, %4 : 8ch f64
%6 = output %5 {name="y"} : 8ch f64
)";

/// A ping-pong delay: the loop swaps the channels, so each echo moves to the other side.
inline constexpr const char* kPingPongIr = R"(graph pingpong
%0 = input {name="x"} : 2ch f64
%1 = feedback %4 {amount=23, unit=samples, reason=""} : 2ch f64
%2 = select %1 {indices=[1, 0], of=2} : 2ch f64
%3 = biquad %2 {type=lowpass, f0_hz=5000, q=0.7071067811865476, gain_db=0} : 2ch f64
%4 = sum %0, %3 {weights=[1, 0.7]} : 2ch f64
%5 = matrix %4 {rows=1, gains=[0.5, 0.5]} : 1ch f64
%6 = concat %4, %5 : 3ch f64
%7 = output %6 {name="y"} : 3ch f64
)";

/// 2 channels spread to 40 (interleaved on the GPU), a loop that rotates them by one channel
/// every 19 samples, mixed down to 2 and put beside the input.
inline std::string wide_routed_loop_ir() {
  std::string spread, rotate, gains;
  for (int c = 0; c < 40; ++c) {
    spread += (c ? ", " : "") + std::to_string((c * 7 + c / 3) % 2);
    rotate += (c ? ", " : "") + std::to_string((c + 1) % 40);
  }
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 40; ++c) gains += std::string(r || c ? ", " : "") + std::to_string(((c + r) % 5 - 2) / 40.0);
  return "graph wide_routed_loop\n"
         "%0 = input {name=\"x\"} : 2ch f64\n"
         "%1 = select %0 {indices=[" + spread + "], of=2} : 40ch f64\n"
         "%2 = feedback %4 {amount=19, unit=samples, reason=\"\"} : 40ch f64\n"
         "%3 = select %2 {indices=[" + rotate + "], of=40} : 40ch f64\n"
         "%4 = sum %1, %3 {weights=[1, 0.6]} : 40ch f64\n"
         "%5 = matrix %4 {rows=2, gains=[" + gains + "]} : 2ch f64\n"
         "%6 = concat %5, %0 : 4ch f64\n"
         "%7 = output %6 {name=\"y\"} : 4ch f64\n";
}

/// Every dynamics stage in one chain after a filter, with times short enough to act within a
/// few hundred samples: a compressor with a knee, a gate with hold, a limiter with lookahead
/// (rings in the state) and an rms envelope.
inline constexpr const char* kDynamicsFx =
    "input x : 2\n"
    "output x | highpass(80 Hz) | compressor(-20 dB, 4, 0.1 ms, 1 ms, knee=6 dB, makeup=2 dB) |"
    " gate(-30 dB, 0.05 ms, 0.5 ms, hold=0.1 ms) | limiter(-3 dB, 1 ms, lookahead=0.2 ms) |"
    " envelope(0.1 ms, 1 ms, detector=rms)\n";

/// A side-chain (a stereo signal ducked under a mono key) and a limiter linked across its
/// channels: link and multiply route kernels, dynamics stages that output their gain.
inline constexpr const char* kSideChainFx =
    "input x : 2\n"
    "input voice : 1\n"
    "music = x | compressor(-20 dB, 4, 0.1 ms, 1 ms, key=voice)\n"
    "output music | limiter(-6 dB, 1 ms, lookahead=0.2 ms, link=mean)\n";

inline ir::Graph fx_graph(const std::string& text, const std::string& name = "loop") {
  DiagnosticEngine diags;
  auto g = frontend::compile_fx_source(text, name + ".fx", diags);
  REQUIRE_MESSAGE(g, diags.str());
  g->name = name;
  return std::move(*g);
}

inline ir::Graph ir_graph(const std::string& text) {
  DiagnosticEngine diags;
  auto g = ir::parse_graph(text, "routing.ir", diags);
  REQUIRE_MESSAGE(g, diags.str());
  return std::move(*g);
}

inline ir::Graph echo_graph() { return fx_graph(kEchoFx, "echo"); }
inline ir::Graph tangle_graph() { return fx_graph(kTangleFx, "tangle"); }
inline ir::Graph filtered_echo_graph() { return fx_graph(kFilteredEchoFx, "filtered_echo"); }
inline ir::Graph wide_echo_graph() { return fx_graph(kWideEchoFx, "wide_echo"); }
inline ir::Graph fused_loops_graph() { return fx_graph(kFusedLoopsFx, "fused_loops"); }
inline ir::Graph dynamics_graph() { return fx_graph(kDynamicsFx, "dynamics"); }
inline ir::Graph side_chain_graph() { return fx_graph(kSideChainFx, "side_chain"); }

/// A 300-tap FIR inside a 400-sample echo loop: the loop's passes are shorter than an FFT
/// segment, so on the GPU the FIR runs direct.
inline ir::Graph looped_fir_graph() {
  std::string taps;
  for (int i = 0; i < 300; ++i) taps += (i ? ", " : "") + std::to_string(1.0 / (1 + i));
  return fx_graph("input x : 2\ny = x + 0.5 * (y | fir([" + taps + "]) | delay(400))\noutput y\n", "looped_fir");
}
inline ir::Graph routed_graph() { return ir_graph(kRoutedIr); }
inline ir::Graph ping_pong_graph() { return ir_graph(kPingPongIr); }
inline ir::Graph wide_routed_loop_graph() { return ir_graph(wide_routed_loop_ir()); }

}  // namespace fxc::test

// SPDX-License-Identifier: Apache-2.0
#include "bench/bench_support.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <variant>

#include "ir/nodes.h"

namespace fxc::bench {

using namespace fxc::literals;

StandardChain w1_api() {
  Chain c = cheby1(4, 0.1_dB, 20_Hz, highpass) | cheby1(4, 0.1_dB, 60_Hz, highpass) |
            cheby1(4, 0.1_dB, 65_Hz, highpass) | butter(5, 5000_Hz) | butter(5, 4900_Hz) |
            butter(5, 4850_Hz);
  return {"w1_api", c, 44100, 15, 0};
}

StandardChain w2_iir() {
  Chain c = butter(2, 1000_Hz, highpass) | butter(2, 5000_Hz) | cheby1(2, 0.1_dB, 1500_Hz, highpass) |
            cheby1(2, 0.1_dB, 1800_Hz);
  return {"w2_iir", c, 44100, 4, 0};
}

StandardChain w3_fir() {
  Chain c = firwin(101, {1000.0}) | firwin(102, {5000.0}) | firwin(103, {1500.0}) | firwin(104, {1800.0}) |
            firwin(105, {1850.0});
  return {"w3_fir", c, 44100, 0, 101 + 102 + 103 + 104 + 105};
}

StandardChain w4_profile() {
  Chain c = butter(4, 80_Hz, highpass) | butter(8, 12_kHz);
  return {"w4_profile", c, 48000, 6, 0};
}

ir::Graph chain_graph(const StandardChain& chain, int channels) {
  Flow x = input("x", channels);
  return make_graph(chain.name, {output("y", x | chain.chain)});
}

std::vector<Signal> noise(int channels, std::size_t samples, DType dtype) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Signal s(channels, samples, DType::f32, Signal::Uninitialized{});
  for (int c = 0; c < channels; ++c)
    for (float& v : s.f32(c)) v = dist(rng);
  std::vector<Signal> out;
  out.push_back(dtype == DType::f32 ? std::move(s) : s.converted(dtype));
  return out;
}

double max_abs_error(const std::vector<Signal>& got, const std::vector<Signal>& want) {
  if (got.size() != want.size()) throw std::runtime_error("output counts differ");
  double worst = 0;
  for (std::size_t k = 0; k < want.size(); ++k)
    for (std::size_t c = 0; c < want[k].channels(); ++c)
      for (std::size_t n = 0; n < want[k].samples(); ++n)
        worst = std::max(worst, std::abs(got[k].at(c, n) - want[k].at(c, n)));
  return worst;
}

std::string plan_label(const ir::Graph& scheduled) {
  std::string label;
  int chains = 0;
  for (const ir::Node& node : scheduled.nodes()) {
    const auto* chain = std::get_if<ir::Chain>(&node.op);
    if (!chain) continue;
    if (++chains > 1) continue;  // the standard workloads fuse to one chain; say so if not
    if (chain->strategy != ir::IirStrategy::none) {
      label += std::string(ir::name(chain->strategy));
      if (chain->chunk_length) label += " chunk " + std::to_string(chain->chunk_length);
    }
    if (chain->fir_method != ir::FirMethod::none) {
      if (!label.empty()) label += ", ";
      label += std::string(ir::name(chain->fir_method));
      if (chain->fft_block) label += " block " + std::to_string(chain->fft_block);
    }
  }
  if (chains != 1) label += " (" + std::to_string(chains) + " chains)";
  return label;
}

ir::Graph fan_out_chain(int nodes, int channels) {
  if (nodes < 4) throw std::invalid_argument("fan_out_chain needs at least 4 nodes");
  int body = nodes - 2;  // the input and the output
  Flow y = input("x", channels);
  int blocks = body / 4;
  for (int i = 0; i < blocks; ++i) {
    double f = 100 * std::pow(1.01, i);  // every block designs its own filters: no merging
    Flow a = y | peaking(Frequency{f}, 1.0, 3_dB);
    y = a + 0.5 * (a | butter(2, Frequency{3 * f}));
  }
  for (int i = 0; i < body % 4; ++i) y = y | lowpass(Frequency{15000.0 - 100 * i});
  ir::Graph g = make_graph("fan_out_" + std::to_string(nodes), {output("y", y)});
  if (static_cast<int>(g.size()) != nodes)
    throw std::logic_error("fan_out_chain made " + std::to_string(g.size()) + " nodes, not " +
                           std::to_string(nodes));
  return g;
}

}  // namespace fxc::bench

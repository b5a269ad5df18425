// SPDX-License-Identifier: Apache-2.0
// Whole signals fed through an fxc::Processor a block at a time, straight from their memory:
// what `fxc run --block` does to files and `fxc bench --block` times.
#pragma once

#include <fxc/fxc.h>

#include <algorithm>
#include <functional>
#include <span>
#include <type_traits>
#include <vector>

namespace fxc::corpus {

namespace detail {
template <class T>
void stream_blocks(Processor& processor, const std::vector<Signal>& inputs, std::vector<Signal>& outputs,
                   std::size_t block, const std::function<void(std::size_t)>& after_block,
                   const std::function<void()>& before_block) {
  const std::size_t total = inputs.empty() ? 0 : inputs[0].samples();
  auto samples = [](auto& s, std::size_t c) {
    if constexpr (std::is_same_v<T, float>) return s.f32(c).data();
    else return s.f64(c).data();
  };
  // Pointer arrays made once; each block points them further into the signals.
  std::vector<std::vector<const T*>> in(inputs.size());
  std::vector<std::vector<T*>> out(outputs.size());
  std::vector<const T* const*> in_ports;
  std::vector<T* const*> out_ports;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    in[i].resize(inputs[i].channels());
    in_ports.push_back(in[i].data());
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    out[k].resize(outputs[k].channels());
    out_ports.push_back(out[k].data());
  }
  for (std::size_t start = 0; start < total; start += block) {
    const std::size_t count = std::min(block, total - start);
    for (std::size_t i = 0; i < inputs.size(); ++i)
      for (std::size_t c = 0; c < in[i].size(); ++c) in[i][c] = samples(inputs[i], c) + start;
    for (std::size_t k = 0; k < outputs.size(); ++k)
      for (std::size_t c = 0; c < out[k].size(); ++c) out[k][c] = samples(outputs[k], c) + start;
    if (before_block) before_block();
    processor.process(std::span<const T* const* const>(in_ports), std::span<T* const* const>(out_ports), count);
    if (after_block) after_block(start + count);
  }
}
}  // namespace detail

/// `inputs` through `processor`, `block` frames per call, into `outputs` (as long as the
/// inputs, of their sample type); `after_block(frames done)` after each call and
/// `before_block()` just before each (so that a timer around a call holds the call alone).
inline void stream_blocks(Processor& processor, const std::vector<Signal>& inputs, std::vector<Signal>& outputs,
                          std::size_t block, const std::function<void(std::size_t)>& after_block = {},
                          const std::function<void()>& before_block = {}) {
  if (!inputs.empty() && inputs[0].dtype() == DType::f32)
    detail::stream_blocks<float>(processor, inputs, outputs, block, after_block, before_block);
  else
    detail::stream_blocks<double>(processor, inputs, outputs, block, after_block, before_block);
}

}  // namespace fxc::corpus

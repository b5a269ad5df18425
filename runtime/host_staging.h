// SPDX-License-Identifier: Apache-2.0
// Signals between the caller's channels and the page-locked staging a GPU copies from and to:
// each channel a planar row of n samples, the copies split over the shared thread pool.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "runtime/signal.h"

namespace fxc {

/// Frames [start, start + n) of `ch` host channels into staging as planar rows of n samples
/// (whatever the device layout: an interleaved stream transposes on the GPU). T: float or double.
template <class T>
void stage_in(const void* const* channels, std::size_t ch, std::size_t start, std::size_t n, T* to);
/// The rows stage_in writes, back into frames [start, start + n) of `ch` host channels.
template <class T>
void stage_out(const T* from, void* const* channels, std::size_t ch, std::size_t start, std::size_t n);

/// Signals' channels as the pointer arrays stage_in and stage_out take.
std::vector<std::vector<const void*>> channel_pointers(std::span<const Signal* const> signals);
std::vector<std::vector<void*>> channel_pointers(std::vector<Signal>& signals);

/// One pointer per signal to its array of channel pointers.
template <class P>
std::vector<P* const*> arrays_of(const std::vector<std::vector<P*>>& pointers) {
  std::vector<P* const*> arrays;
  for (const auto& p : pointers) arrays.push_back(p.data());
  return arrays;
}

}  // namespace fxc

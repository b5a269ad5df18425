// SPDX-License-Identifier: Apache-2.0
// NumPy arrays as fxc's planar signals: a C-contiguous (channels, frames) array is one
// pointer per channel into its own memory, so nothing is copied on the way in or out.
#pragma once

#include <nanobind/ndarray.h>

#include <cstddef>
#include <string>
#include <vector>

#include <fxc/types.h>

namespace fxc::python {

namespace nb = nanobind;

/// Any CPU array; what it holds is checked by planar_view.
using AnyArray = nb::ndarray<nb::ro, nb::device::cpu>;
using NumpyArray = nb::ndarray<nb::numpy, nb::device::cpu>;

/// A C-contiguous float32 or float64 array of shape (channels, frames), seen as one pointer
/// per channel.
struct PlanarView {
  DType dtype = DType::f32;
  std::size_t channels = 0, frames = 0;
  std::vector<const void*> channel_data;
};

/// The view of `array` (C-contiguous float32 or float64; (frames,) is one channel; with
/// `batch`, 3-D is (items, channels, frames), of which item `item`); throws fxc::Error naming
/// `what` ("input 'x'") otherwise.
PlanarView planar_view(const AnyArray& array, const std::string& what, std::size_t item = 0, bool batch = false);

/// A new NumPy array of `dtype` and `shape` (C order), owning uninitialized memory.
NumpyArray new_array(DType dtype, std::initializer_list<std::size_t> shape);
/// Its channels as planar pointers: rows of the last two dimensions of item `item`.
std::vector<void*> channel_pointers(NumpyArray& array, std::size_t item = 0);

DType parse_dtype(const std::string& name);

/// Refuses a call: an fxc::Error, which Python sees as fxc.Error with `code`.
[[noreturn]] void refuse(const std::string& message, const char* code = "fxc-python");

}  // namespace fxc::python

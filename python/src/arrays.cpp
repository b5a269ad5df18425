// SPDX-License-Identifier: Apache-2.0
#include "python/src/arrays.h"

#include <fxc/error.h>

#include "runtime/signal_memory.h"

#include <string>

namespace fxc::python {

void refuse(const std::string& message, const char* code) { throw Error(message, message, code); }

namespace {

std::size_t item_bytes(DType dtype) { return dtype == DType::f32 ? sizeof(float) : sizeof(double); }

}  // namespace

DType parse_dtype(const std::string& name) {
  if (name == "float32" || name == "f32") return DType::f32;
  if (name == "float64" || name == "f64") return DType::f64;
  refuse("dtype must be \"float32\" or \"float64\", got \"" + name + "\"");
}

PlanarView planar_view(const AnyArray& array, const std::string& what, std::size_t item, bool batch) {
  PlanarView view;
  if (array.dtype() == nb::dtype<float>()) view.dtype = DType::f32;
  else if (array.dtype() == nb::dtype<double>()) view.dtype = DType::f64;
  else refuse(what + ": samples must be float32 or float64");
  std::size_t nd = array.ndim();
  if (nd < 1 || nd > (batch ? 3 : 2))
    refuse(what + (batch ? ": expected an (items, channels, frames) array" : ": expected a (frames,) or (channels, frames) array"));
  std::size_t items = nd == 3 ? array.shape(0) : 1;
  view.channels = nd == 1 ? 1 : array.shape(nd - 2);
  view.frames = array.shape(nd - 1);
  // Strides are in elements; a dimension of extent 1 may carry any stride.
  auto dense = [&](std::size_t d, std::size_t inner) {
    return array.shape(d) <= 1 || array.stride(d) == static_cast<std::int64_t>(inner);
  };
  bool contiguous = dense(nd - 1, 1) && (nd == 1 || dense(nd - 2, view.frames)) &&
                    (nd != 3 || dense(0, view.channels * view.frames));
  if (!contiguous) refuse(what + ": the array must be C-contiguous");
  if (item >= items) refuse(what + ": no item " + std::to_string(item));
  std::size_t bytes = item_bytes(view.dtype);
  const char* base = static_cast<const char*>(array.data()) + item * view.channels * view.frames * bytes;
  for (std::size_t c = 0; c < view.channels; ++c) view.channel_data.push_back(base + c * view.frames * bytes);
  return view;
}

NumpyArray new_array(DType dtype, std::initializer_list<std::size_t> shape) {
  std::size_t count = 1;
  for (std::size_t n : shape) count *= n;
  // From the signal allocator, as the C++ API's signals: a long output reuses the pages of
  // one freed before (or gets huge pages), instead of a fresh mapping that faults on every
  // 4 KiB page of every call. The block's size sits in a 64-byte header, for the free.
  constexpr std::size_t kHeader = 64;
  std::size_t bytes = kHeader + std::max<std::size_t>(count, 1) * item_bytes(dtype);
  auto* block = static_cast<char*>(allocate_signal_memory(bytes));
  *reinterpret_cast<std::size_t*>(block) = bytes;
  nb::capsule owner(block, [](void* p) noexcept { free_signal_memory(p, *static_cast<std::size_t*>(p)); });
  return NumpyArray(block + kHeader, shape, owner, {}, dtype == DType::f32 ? nb::dtype<float>() : nb::dtype<double>());
}

std::vector<void*> channel_pointers(NumpyArray& array, std::size_t item) {
  std::size_t nd = array.ndim();
  std::size_t channels = nd == 1 ? 1 : array.shape(nd - 2), frames = array.shape(nd - 1);
  std::size_t bytes = array.itemsize();
  char* base = static_cast<char*>(array.data()) + item * channels * frames * bytes;
  std::vector<void*> pointers;
  for (std::size_t c = 0; c < channels; ++c) pointers.push_back(base + c * frames * bytes);
  return pointers;
}

}  // namespace fxc::python

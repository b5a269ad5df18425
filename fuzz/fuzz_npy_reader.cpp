// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the .npy reader (runtime/npy_file.cpp), on the fuzz bytes as a file.
//
// Checks: no crash, no sanitizer report, no exception escaping, no allocation beyond what
// the file's size justifies (libFuzzer's -rss_limit_mb / -malloc_limit_mb catch a header
// that makes the reader allocate without bound). A signal that is read has the dtype asked for
// and as many samples as the data holds.
//
// The dtype asked for alternates with the input's size, so both conversions are exercised.
// Differential: the file read a block at a time gives the same samples (streamed_read_check.h).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "formats/npy_file.h"
#include "fuzz/streamed_read_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fxc;
  fuzz::MemoryFile file(data, size);
  const DType dtype = size % 2 ? DType::f32 : DType::f64;
  auto signal = read_npy_file(file.path(), dtype);
  fuzz::check_streamed_read(signal, open_npy_reader(file.path()), signal ? &*signal : nullptr, std::nullopt, dtype,
                            size);
  if (!signal) return 0;
  if (signal->dtype() != dtype) fuzz::property_failed("read_npy_file returned another dtype");
  // Every sample came from the file (10 bytes of prefix at least, 4 bytes per sample at least).
  if (signal->channels() * signal->samples() > size / 4)
    fuzz::property_failed("read_npy_file returned more samples than the file holds");
  return 0;
}

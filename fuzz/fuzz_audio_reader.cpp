// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the audio reader (runtime/audio_file.cpp) through libsndfile, on the fuzz
// bytes as a file.
//
// Checks: no crash, no sanitizer report, no exception escaping, no unbounded allocation from
// a header's claims. libsndfile itself is Debian's uninstrumented build: the fuzzer sees no
// coverage inside it and ASan sees its own bad accesses only where they reach an intercepted
// function (memcpy, read, ...). The code under test is fxc's handling of what it returns:
// channel and frame counts, truncation, the log, the conversion to planar samples.
//
// The dtype asked for alternates with the input's size, so both conversions are exercised.
// Differential: the file read a block at a time gives the same samples (streamed_read_check.h).
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_support.h"
#include "formats/audio_file.h"
#include "fuzz/streamed_read_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fxc;
  fuzz::MemoryFile file(data, size);
  const DType dtype = size % 2 ? DType::f32 : DType::f64;
  auto read = read_audio_file(file.path(), dtype);
  fuzz::check_streamed_read(read, open_signal_reader(file.path()), read ? &read->signal : nullptr,
                            read ? read->sample_rate_hz : std::nullopt, dtype, size);
  if (!read) return 0;
  if (read->signal.dtype() != dtype) fuzz::property_failed("read_audio_file returned another dtype");
  if (read->signal.channels() == 0) fuzz::property_failed("read_audio_file returned no channels");
  if (!read->sample_rate_hz || !(*read->sample_rate_hz > 0))
    fuzz::property_failed("read_audio_file returned no positive sample rate");
  return 0;
}

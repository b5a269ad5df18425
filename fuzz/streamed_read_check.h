// SPDX-License-Identifier: Apache-2.0
// The reader fuzz targets' differential property: a file read a block at a time
// (formats/signal_stream.h, what `fxc run --block` does) gives what the whole read gives.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

#include "formats/signal_stream.h"
#include "fuzz/fuzz_support.h"

namespace fxc::fuzz {

/// `whole` is the whole read of the file (a signal, or its error) and `opened` the stream
/// reader on the same file. Where the whole read failed, the streamed one must fail too (at
/// its opening or at a read: a streamed run never succeeds on a file a whole run refuses).
/// Where it succeeded, the reader must be absent (a file only a whole read takes) or give the
/// same channels, frames and samples, bit for bit, in pieces whose sizes `seed` picks; or fail
/// saying that the file holds more frames than its header (the one documented difference).
template <class Whole>
void check_streamed_read(const Whole& whole, const Expected<std::unique_ptr<SignalReader>, std::string>& opened,
                         const Signal* whole_signal, std::optional<double> whole_rate, DType dtype, std::size_t seed) {
  if (!opened) {
    if (whole) property_failed("the stream reader refused a file the whole read took", opened.error());
    return;
  }
  SignalReader* reader = opened->get();
  if (!reader) return;  // read whole only
  if (whole && (reader->channels() != whole_signal->channels() || reader->frames() != whole_signal->samples()))
    property_failed("the stream reader's shape differs from the whole read's");
  if (whole && reader->sample_rate_hz() != whole_rate) property_failed("the stream reader's sample rate differs");
  std::size_t piece = 1 + seed % 5, start = 0;
  Expected<std::monostate, std::string> failed = std::monostate{};
  Signal block;
  while (start < reader->frames() && failed) {
    const std::size_t frames = std::min(piece, reader->frames() - start);
    if (block.samples() != frames) block = Signal(reader->channels(), frames, dtype);
    failed = reader->read(block, frames);
    if (failed && whole)
      for (std::size_t c = 0; c < block.channels(); ++c) {
        const void* a = dtype == DType::f32 ? static_cast<const void*>(block.f32(c).data())
                                            : static_cast<const void*>(block.f64(c).data());
        const void* b = dtype == DType::f32 ? static_cast<const void*>(whole_signal->f32(c).data() + start)
                                            : static_cast<const void*>(whole_signal->f64(c).data() + start);
        if (std::memcmp(a, b, frames * size_of(dtype)) != 0)
          property_failed("a block read differs from the whole read's samples");
      }
    start += frames;
    piece = piece * 2 + 1;  // small pieces first (seeds are short), then growing
  }
  if (whole && !failed && failed.error().find("holds more frames than its header's") == std::string::npos)
    property_failed("the stream reader failed on a file the whole read took", failed.error());
  if (!whole && failed) property_failed("the stream reader took a file the whole read refused", whole.error());
}

}  // namespace fxc::fuzz

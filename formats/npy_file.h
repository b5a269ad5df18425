// SPDX-License-Identifier: Apache-2.0
// NumPy .npy files: float32/float64 arrays of shape [samples] or [channels, samples].
// See docs/file-formats.md for what is accepted and why.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <variant>

#include "formats/signal_stream.h"
#include "ir/dtype.h"
#include "runtime/signal.h"
#include "support/expected.h"

namespace fxc {

/// Reads an .npy file (format versions 1.0, 2.0, 3.0; dtype <f4, <f8, >f4 or >f8; C or
/// Fortran order) and converts it to `dtype`. Errors read "cannot read 'PATH': REASON".
Expected<Signal, std::string> read_npy_file(const std::string& path, DType dtype);

/// The same from an open regular file (read from its current offset, which must be 0);
/// `name` stands for the file in messages.
Expected<Signal, std::string> read_npy_fd(int fd, const std::string& name, DType dtype);

/// Writes `signal` to the open descriptor `fd` as a version 1.0 .npy file of shape
/// [channels, samples] and the signal's dtype, little-endian. Returns the reason on failure.
Expected<std::monostate, std::string> write_npy(int fd, const Signal& signal);

/// The same a block at a time (signal_stream.h): the header for `channels` x `frames` samples
/// of `dtype` is written at once; blocks of several channels go to their places with pwrite.
Expected<std::unique_ptr<SignalWriter>, std::string> open_npy_writer(int fd, std::size_t channels,
                                                                     std::size_t frames, DType dtype);

/// The file at `path` read a block at a time, converted to the dtype of the signal each read
/// fills; nullptr where it is not a regular file (read_npy_file then says why it cannot be
/// read). Errors read "cannot read 'PATH': REASON", as read_npy_file's.
Expected<std::unique_ptr<SignalReader>, std::string> open_npy_reader(const std::string& path);

}  // namespace fxc

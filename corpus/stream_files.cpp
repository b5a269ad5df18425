// SPDX-License-Identifier: Apache-2.0
#include "corpus/stream_files.h"

#include <algorithm>
#include <array>
#include <future>
#include <filesystem>

#include "corpus/corpus_runner.h"
#include "corpus/sample_scan.h"
#include "support/file_io.h"
#include "corpus/stream_blocks.h"

namespace fxc::corpus {

bool outputs_streamable(const std::vector<std::string>& outputs) {
  namespace fs = std::filesystem;
  return std::all_of(outputs.begin(), outputs.end(), [](const std::string& path) {
    if (path == "-") return false;
    std::error_code error;
    const fs::file_type type = fs::status(written_path(path), error).type();
    return type == fs::file_type::regular || type == fs::file_type::not_found;
  });
}

Expected<std::vector<std::unique_ptr<SignalReader>>, std::string> open_streamed_inputs(
    const std::vector<std::string>& inputs) {
  std::vector<std::unique_ptr<SignalReader>> readers;
  for (const std::string& path : inputs) {
    if (path == "-") return std::vector<std::unique_ptr<SignalReader>>{};
    auto reader = open_signal_reader(path);
    if (!reader) return Unexpected{reader.error()};
    if (!*reader) return std::vector<std::unique_ptr<SignalReader>>{};
    readers.push_back(std::move(reader).value());
  }
  return readers;
}

namespace {

// Frames read, run and written at a time: whole Processor blocks, about 1 Mi samples of the
// widest port (4 MiB in float32), so that a file's calls to libsndfile and to the system are
// long while its memory stays small.
std::size_t chunk_frames(const StreamedFiles& files) {
  std::size_t widest = 1;
  for (const auto& reader : *files.readers) widest = std::max(widest, reader->channels());
  for (std::size_t channels : files.output_channels) widest = std::max(widest, channels);
  const std::size_t target = std::max<std::size_t>(1, (std::size_t{1} << 20) / widest);
  return files.block * std::max<std::size_t>(1, target / files.block);
}

}  // namespace

Expected<StreamedRun, std::string> stream_files(Processor& processor, const StreamedFiles& files,
                                                             PendingOutputs& pending,
                                                             const std::function<void(std::size_t)>& progress) {
  const std::vector<std::string>& outputs = *files.outputs;
  std::vector<std::unique_ptr<SignalReader>>& readers = *files.readers;
  std::vector<std::unique_ptr<SignalWriter>> writers(outputs.size());
  std::vector<NonFiniteSamples> non_finite(readers.size());
  double peak = 0;  // of the chunks written (one write task at a time)

  // Every chunk: read each input, run the blocks, append each output. The three overlap: the
  // next chunk is read and the last one written, each on a thread of its own, while this one
  // runs (two sets of chunk buffers a side). Reads and writes stay in file order, one at a
  // time each, and an error is reported as one chunk after another would meet it.
  using Status = Expected<std::monostate, std::string>;
  auto run = [&]() -> Status {
    const std::size_t chunk = chunk_frames(files);
    const std::size_t chunks = (files.frames + chunk - 1) / chunk;
    auto length_of = [&](std::size_t k) { return std::min(chunk, files.frames - k * chunk); };
    std::array<std::vector<Signal>, 2> in, out;
    // Set k % 2's buffers for chunk k's length (the first chunk's, and a shorter last one's).
    auto size_set = [&](std::array<std::vector<Signal>, 2>& sets, std::size_t k, const std::vector<std::size_t>& channels) {
      std::vector<Signal>& set = sets[k % 2];
      const std::size_t frames = length_of(k);
      if (!set.empty() && set[0].samples() == frames) return;
      set.clear();
      for (std::size_t c : channels) set.emplace_back(c, frames, files.dtype, Signal::Uninitialized{});
    };
    std::vector<std::size_t> input_channels;
    for (const auto& reader : readers) input_channels.push_back(reader->channels());
    auto read = [&](std::size_t k) -> Status {
      size_set(in, k, input_channels);
      const std::size_t frames = length_of(k);
      for (std::size_t i = 0; i < readers.size(); ++i) {
        Signal& into = in[k % 2][i];
        if (auto ok = readers[i]->read(into, frames); !ok) return Unexpected{ok.error()};
        add_piece(non_finite[i], non_finite_samples(into), k * chunk);
      }
      return std::monostate{};
    };
    auto write = [&](std::size_t k) -> Status {
      for (std::size_t o = 0; o < outputs.size(); ++o) {
        peak = larger_peak(peak, peak_magnitude(out[k % 2][o]));
        if (auto ok = writers[o]->write(out[k % 2][o], 0, length_of(k)); !ok)
          return Unexpected{"cannot write '" + outputs[o] + "': " + ok.error()};
      }
      return std::monostate{};
    };
    // Every task is waited for before this returns (a future of std::async waits as it goes).
    if (chunks == 0) return std::monostate{};
    std::future<Status> reading = std::async(std::launch::async, read, std::size_t{0});
    std::future<Status> writing;
    for (std::size_t k = 0; k < chunks; ++k) {
      Status got = reading.get();
      if (!got) {
        // Chunk k - 1's write came before this read, one chunk after another.
        if (writing.valid())
          if (Status wrote = writing.get(); !wrote) return wrote;
        return got;
      }
      // In[(k + 1) % 2] held chunk k - 1, run already.
      if (k + 1 < chunks) reading = std::async(std::launch::async, read, k + 1);
      // Out[k % 2] held chunk k - 2, written before chunk k - 1's write began.
      size_set(out, k, files.output_channels);
      const std::size_t start = k * chunk;
      stream_blocks(processor, in[k % 2], out[k % 2], files.block, [&](std::size_t done) {
        if (progress) progress(start + done);
      });
      if (writing.valid())
        if (Status wrote = writing.get(); !wrote) return wrote;
      writing = std::async(std::launch::async, write, k);
    }
    return writing.valid() ? writing.get() : Status(std::monostate{});
  };

  // Each output is opened inside the one before it (its pending file exists while the next
  // opens and the chunks run), and completed before it is closed and placed.
  std::optional<std::string> failure;  // the first whole message: from the run, or about one output
  std::function<Expected<std::monostate, std::string>(std::size_t)> open_from =
      [&](std::size_t k) -> Expected<std::monostate, std::string> {
    if (k == outputs.size()) {
      auto ran = run();
      if (!ran) {
        failure = ran.error();
        return Unexpected{ran.error()};
      }
      return std::monostate{};
    }
    auto written = pending.write_to(outputs[k], [&](int fd) -> Expected<std::monostate, std::string> {
      auto writer = open_signal_writer(fd, lower_extension(outputs[k]), files.output_channels[k], files.frames,
                                       files.dtype, files.sample_rate_hz, files.write_options.at(k));
      if (!writer) return Unexpected{writer.error()};
      writers[k] = std::move(writer).value();
      if (auto ok = open_from(k + 1); !ok) return ok;
      return writers[k]->finish();
    });
    // The innermost failure is the one to report; the outer outputs' wrappings would name them.
    if (!written && !failure) failure = written.error();
    return written;
  };
  if (auto written = open_from(0); !written) return Unexpected{failure.value_or(written.error())};

  StreamedRun result;
  result.peak = peak;
  for (std::size_t i = 0; i < readers.size(); ++i)
    if (std::string w = non_finite_warning(non_finite[i], (*files.inputs)[i]); !w.empty())
      result.warnings.push_back(std::move(w));
  return result;
}

}  // namespace fxc::corpus

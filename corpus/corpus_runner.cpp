// SPDX-License-Identifier: Apache-2.0
#include "corpus/corpus_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <system_error>
#include <new>
#include <optional>
#include <utility>

#include "corpus/pending_outputs.h"
#include "corpus/sample_scan.h"
#include "corpus/stream_blocks.h"
#include "corpus/stream_files.h"
#include "formats/signal_stream.h"
#include "formats/signal_file.h"
#include "support/file_io.h"
#include "support/trace.h"

namespace fxc::corpus {

struct CorpusRunner::Shapes {
  std::mutex mutex;  // guards the map and the set, never held while compiling
  std::map<std::pair<double, int>, std::shared_ptr<std::mutex>> compiling;  // (sample rate, channels)
  // The compile's warnings, given once: a shape's later files copy its Program, and with it the
  // warnings (a damaged cache entry was reported once per file).
  std::set<std::string> warned;
};

namespace {

std::string describe(const Error& e) {
  std::string where;
  if (!e.file().empty()) where = e.file() + (e.line() > 0 ? ":" + std::to_string(e.line()) + ":" + std::to_string(e.column()) : "") + ": ";
  return where + e.message() + (e.code().empty() ? "" : " [" + e.code() + "]");
}

}  // namespace

Options default_corpus_options() {
  Options o;
  o.sample_rate_hz = 0;
  o.dtype = DType::f64;
  o.live_unranged_params = false;
  return o;
}

std::string non_finite_warning(const Signal& s, const std::string& path) {
  return non_finite_warning(non_finite_samples(s), path);
}

std::string non_finite_warning(const NonFiniteSamples& found, const std::string& path) {
  const auto [nans, infinities, first, first_channel] = found;
  if (nans + infinities == 0) return {};
  return "'" + path + "' holds " + std::to_string(nans) + " NaN and " + std::to_string(infinities) +
         " infinite sample(s), the first at sample " + std::to_string(first) + " of channel " +
         std::to_string(first_channel) +
         " (counting from 0); they propagate through the graph, and a recursive filter that meets one outputs NaN "
         "from there on" +
         (infinities ? std::string("; a compressor or limiter that meets an infinity outputs silence from "
                                   "there on (its reduction stays infinite)")
                     : std::string());
}

CorpusRunner::CorpusRunner(std::string graph, bool is_source, RunnerOptions options, std::string source_name)
    : options_(std::move(options)), shapes_(std::make_shared<Shapes>()) {
  if (is_source) {
    source_ = std::move(graph);
    name_ = std::move(source_name);
  } else {
    // As Program::from_file reads and names it, so that messages and the Program cache agree
    // with `fxc run`.
    auto text = read_whole_file(graph, AlsoRead::pipes_and_terminals);
    if (!text) throw Error("error: " + text.error() + " [fx-io]\n", text.error(), "fx-io");
    source_ = std::move(text).value();
    name_ = std::move(graph);
  }
  GraphInfo info = inspect_source(source_, name_, options_.options.settings);
  if (info.inputs.size() != 1) {
    std::string message = "a corpus runs graphs with exactly one input, and '" + name_ + "' has " +
                          std::to_string(info.inputs.size()) +
                          " (run it with one -i per input, or batches of -i groups, instead)";
    throw Error("error: " + message + " [fxc-corpus]\n", message, "fxc-corpus", name_);
  }
  declared_channels_ = info.inputs[0].channels;
  for (const PortInfo& port : info.outputs) output_names_.push_back(port.name);
}

const std::vector<std::string>& CorpusRunner::output_names() const { return output_names_; }

std::unique_lock<std::mutex> CorpusRunner::compiling(double fs_hz, int channels) const {
  // The first file of a shape compiles its kernels while the other files of that shape wait,
  // so that every shape compiles once (later files of it are copies from the process's
  // Program cache, and find a Processor's kernels in the kernel cache); files of other shapes
  // go on meanwhile. The mutexes live as long as the runner.
  std::mutex* shape_lock = nullptr;
  {
    std::lock_guard lock(shapes_->mutex);
    auto& slot = shapes_->compiling[{fs_hz, channels}];
    if (!slot) slot = std::make_shared<std::mutex>();
    shape_lock = slot.get();
  }
  return std::unique_lock<std::mutex>(*shape_lock);
}

FileResult CorpusRunner::process(const InputFile& input, const std::vector<std::string>& outputs) const {
  auto started = std::chrono::steady_clock::now();
  FileResult r;
  r.input = input.path;
  r.outputs = outputs;
  auto finish = [&](FileResult::Status status, std::string message = {}) {
    r.status = status;
    r.message = std::move(message);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return r;
  };
  auto fail = [&](std::string message) { return finish(FileResult::Status::failed, std::move(message)); };
  if (outputs.size() != output_names_.size())
    return fail("'" + input.path + "': " + std::to_string(outputs.size()) + " output path(s) given for a graph with " +
                std::to_string(output_names_.size()) + " output(s)");
  // Not opened where it is no regular file: a FIFO would block the run.
  if (std::string why = why_unreadable(input.path); !why.empty()) return fail("cannot read '" + input.path + "': " + why);
  // An output that is there as a file (a directory in its place is no output).
  if (options_.skip_existing &&
      std::all_of(outputs.begin(), outputs.end(), [](const std::string& p) {
        std::error_code error;
        return std::filesystem::is_regular_file(p, error);
      }))
    return finish(FileResult::Status::skipped);

  try {
    const Options& base = options_.options;
    const std::size_t block = options_.block;
    // With a block length, a file whose format allows is read a chunk at a time during the
    // run (fxc run --block): it stands here as its channels without samples.
    std::vector<std::unique_ptr<SignalReader>> readers;
    if (block > 0 && outputs_streamable(outputs)) {  // else written whole, as fxc run writes them
      auto reader = open_signal_reader(input.path);
      if (!reader) return fail(reader.error());
      if (*reader) readers.push_back(std::move(reader).value());
    }
    std::optional<TraceSpan> reading(std::in_place, "read " + input.path, "io");
    auto file = !readers.empty() ? Expected<SignalFile, std::string>(without_samples(*readers[0], base.dtype))
                                 : read_signal_file(input.path, base.dtype);
    reading.reset();
    if (!file) return fail(file.error());
    Signal& signal = file->signal;
    signal.set_source(input.path);  // messages about it name the file
    r.frames = readers.empty() ? signal.samples() : readers[0]->frames();
    r.channels = static_cast<int>(signal.channels());
    double fs_hz = base.sample_rate_hz > 0 ? base.sample_rate_hz : file->sample_rate_hz.value_or(0);
    if (!(fs_hz > 0)) return fail("'" + input.path + "' carries no sample rate (a .npy file): give it with --fs (fs= in Python)");
    r.sample_rate_hz = fs_hz;
    // (A streamed file's samples are scanned as they are read.)
    if (std::string w = non_finite_warning(signal, input.path); !w.empty()) r.warnings += "warning: " + w + " [fxc-input]\n";

    // The options `fxc run -i FILE` (with --block N) compiles with (tools/fxc/cmd_run.cpp), so
    // that the outputs are the same bytes.
    const auto frames = static_cast<std::size_t>(r.frames);
    Options o = base;
    o.sample_rate_hz = fs_hz;
    if (declared_channels_ == 0 && o.channels == 0) o.channels = r.channels;
    const std::size_t prepared = prepared_frames(block, frames, base.target == Target::cuda);
    if (block > 0) {
      o.signal_length = prepared;
      o.max_block = prepared;
      o.compile_kernels = false;  // the Processor compiles for its blocks
    } else {
      o.signal_length = frames;
      o.max_block = std::clamp<std::size_t>(std::min<std::size_t>(std::size_t{1} << 16, frames), 1, std::size_t{1} << 20);
      o.compile_kernels = true;
    }

    // Each output's encoding: --subtype, else the input's where the container holds it.
    std::vector<WriteOptions> writes;
    for (const std::string& path : outputs) {
      WriteOptions write{options_.subtype};
      std::string ext = lower_extension(path);
      if (!write.subtype && file->subtype && ext != ".npy" && audio_subtype_available(ext, *file->subtype))
        write.subtype = file->subtype;
      writes.push_back(write);
    }
    // The outputs' directories and formats, just before they are first written.
    auto ready_outputs = [&]() -> std::optional<std::string> {
      for (std::size_t k = 0; k < outputs.size(); ++k) {
        const std::string& path = outputs[k];
        if (options_.create_directories) {
          std::filesystem::path dir = std::filesystem::path(path).parent_path();
          std::error_code error;
          if (!dir.empty()) std::filesystem::create_directories(dir, error);
          if (error) return "cannot write '" + path + "': cannot make its directory: " + error.message();
        }
        if (auto ok = check_output_format(path, writes[k]); !ok) return ok.error();
      }
      return std::nullopt;
    };

    std::vector<Signal> results;
    PendingOutputs pending;
    bool written = false;  // streamed: the outputs are written, pending
    try {
      std::unique_lock shape_lock = compiling(fs_hz, r.channels);
      Program program = Program::from_source(source_, o, name_);
      // A stream's kernels are compiled for its blocks by prepare(), under the same lock.
      std::optional<Processor> processor;
      if (block > 0) {
        processor.emplace(program);
        processor->prepare(prepared, std::max<std::size_t>(frames, 1));
      }
      shape_lock.unlock();
      // An output its format cannot hold is found before the run, not after it.
      const std::vector<PortInfo> ports = program.outputs();
      for (std::size_t k = 0; k < outputs.size() && k < ports.size(); ++k)
        if (auto ok = check_output_channels(outputs[k], static_cast<std::size_t>(ports[k].channels),
                                            WriteOptions{options_.subtype});
            !ok)
          return fail(ok.error());
      // The input moves in, and its memory goes with `inputs` before the outputs are written: a
      // copy of it (the vector's initializer list) was a sixth of a corpus file's time.
      std::vector<Signal> inputs;
      inputs.push_back(std::move(signal));
      if (block == 0) {
        // Given up: the output computes over the input's memory where it has the input's
        // channel count, rather than into fresh pages (which the system zeroes first).
        results = program.run(std::move(inputs));
      } else {
        processor->check_inputs(inputs);  // the blocks are read through pointers nothing else checks
        if (!readers.empty()) {
          if (auto error = ready_outputs()) return fail(*error);
          const std::vector<std::string> names{input.path};
          StreamedFiles files{&readers, &names, &outputs, {}, frames, processor->max_block(), base.dtype, fs_hz, writes};
          for (const PortInfo& port : ports) files.output_channels.push_back(static_cast<std::size_t>(port.channels));
          auto streamed = stream_files(*processor, files, pending, {});
          if (!streamed) return fail(streamed.error());
          for (const std::string& w : streamed->warnings) r.warnings += "warning: " + w + " [fxc-input]\n";
          r.peak = streamed->peak;
          written = true;
        } else {
          for (const PortInfo& port : ports)
            results.emplace_back(static_cast<std::size_t>(port.channels), frames, base.dtype, Signal::Uninitialized{});
          stream_blocks(*processor, inputs, results, processor->max_block());
        }
        if (std::string failed = processor->device_error(); !failed.empty())
          return fail("'" + input.path + "': the GPU failed during the run: " + failed);
      }
      if (std::string w = program.warnings(); !w.empty()) {
        std::lock_guard lock(shapes_->mutex);
        if (shapes_->warned.insert(w).second) r.warnings += w;
      }
    } catch (const Error& e) {
      std::string what = describe(e);
      // A message about the signal names it already; one about the graph (a cutoff above this
      // file's Nyquist frequency) gets the file and its rate.
      if (what.find("'" + input.path + "'") != std::string::npos) return fail(what);
      return fail("'" + input.path + "' (" + std::to_string(static_cast<long long>(fs_hz)) + " Hz, " +
                  std::to_string(r.channels) + " channel(s)): " + what);
    }
    if (!written) {
      TraceSpan writing("write outputs", "io", {{"file", input.path}});
      if (auto error = ready_outputs()) return fail(*error);
      for (std::size_t k = 0; k < outputs.size(); ++k) {
        Signal out = results[k].dtype() == base.dtype ? std::move(results[k]) : results[k].converted(base.dtype);
        r.peak = larger_peak(r.peak, peak_magnitude(out));
        if (auto ok = pending.write(outputs[k], out, fs_hz, writes[k]); !ok) return fail(ok.error());
      }
    }
    if (auto ok = pending.commit(); !ok) return fail(ok.error());
    return finish(FileResult::Status::written);
  } catch (const std::bad_alloc&) {
    return fail("'" + input.path + "': out of memory (fewer --jobs, or shorter files, need less)");
  } catch (const std::system_error& e) {  // a stream's reading or writing thread not started
    return fail("'" + input.path + "': " + e.what());
  }
}

}  // namespace fxc::corpus

// SPDX-License-Identifier: Apache-2.0
// fxc run --live-pipe: a WAV on standard input run through an fxc::Processor a block at a
// time and written to standard output block by block, as the audio comes (`arecord | fxc run
// ... | aplay`). Unlike every other run, what was computed is sent before the run has ended:
// a failure part-way leaves it sent (docs/cli.md).
#include <fxc/fxc.h>

#include <unistd.h>

#include <chrono>
#include <iostream>

#include "corpus/corpus_runner.h"
#include "corpus/pending_outputs.h"
#include "corpus/sample_scan.h"
#include "corpus/stream_blocks.h"
#include "corpus/stream_files.h"
#include "formats/wav_pipe.h"
#include "runtime/counters.h"
#include "runtime/gpu_device.h"
#include "support/file_io.h"
#include "support/trace.h"
#include "tools/fxc/cli_support.h"
#include "tools/fxc/commands.h"
#include "tools/fxc/run_options.h"

namespace fxc::cli {

int run_live_pipe(const RunOptions& o) {
  // What a live pipe cannot take: usage errors before anything is read.
  if (!o.block)
    throw UsageError{"--live-pipe needs --block N: the frames read, run and written at a time (the pipe's latency), "
                     "e.g. --block 256"};
  if (o.inputs != std::vector<std::string>{"-"} || o.outputs != std::vector<std::string>{"-"})
    throw UsageError{"--live-pipe runs standard input to standard output: give '-i - -o -' (a graph of one input "
                     "and one output)"};
  if (o.batch) throw UsageError{"--live-pipe runs one stream; it cannot be used with --batch"};
  if (o.pipe_format == "npy")
    throw UsageError{"--live-pipe writes WAV: a .npy array stores each channel whole, one after another, so it "
                     "cannot be written as it comes"};
  if (*o.block < 1) return user_error("--block must be at least 1, got " + std::to_string(*o.block));
  if (*o.block > (1 << 24)) return user_error("--block must be at most 16777216 frames, got " + std::to_string(*o.block));
  if (o.target == "ref") return user_error("--live-pipe runs compiled kernels: use it with --target cpu or cuda");
  auto thresholds = parse_thresholds(o.thresholds);
  if (!thresholds) return user_error(thresholds.error(), "fxc-threshold");
  if (std::optional<int> wrong = check_run_values(o)) return *wrong;
  set_threads(o.threads);
  if (!o.trace.empty()) Trace::global().enable();
  check_paths_apart({{"--save-state", o.save_state}, {"--trace", o.trace}},
                    {{"the graph", o.graph}, {"--load-state", o.load_state}});
  const WriteOptions write_options{o.subtype};
  if (auto ok = check_output_encoding("<stdout>.wav", write_options); !ok) return user_error(ok.error());

  GraphInfo info;
  try {
    info = inspect_graph_file(o.graph, o.sets);
  } catch (const Error& e) {
    return report(e);
  }
  if (info.inputs.size() != 1 || info.outputs.size() != 1)
    throw UsageError{"--live-pipe runs a graph of one input and one output; this one has " +
                     std::to_string(info.inputs.size()) + " input(s) and " + std::to_string(info.outputs.size()) +
                     " output(s)"};
  const bool cuda = o.target == "cuda";
  if (cuda) open_cuda_device_early();

  // The header waits for the stream's first bytes: the graph is compiled once they came.
  auto reader = open_wav_pipe_reader(STDIN_FILENO, "<stdin>");
  if (!reader) return user_error(reader.error());
  WavPipeReader& in = **reader;
  // As `fxc run --block N` prepares for a file of the header's length (corpus::prepared_frames:
  // a block no longer than the stream, nor than a Processor's longest call), so that the
  // kernels, and so the samples, are that run's.
  const std::optional<std::size_t> length = in.frames();
  const std::size_t prepared =
      corpus::prepared_frames(static_cast<std::size_t>(*o.block), length.value_or(static_cast<std::size_t>(*o.block)), cuda);
  Options options = run_options(o, *thresholds);
  options.sample_rate_hz = o.fs_hz.value_or(in.sample_rate_hz());
  if (info.inputs[0].channels == 0) options.channels = static_cast<int>(in.channels());
  options.signal_length = prepared;  // the strategy follows one call
  options.max_block = prepared;
  options.compile_kernels = false;  // the Processor compiles for its blocks
  const DType dtype = options.dtype;

  auto before = std::make_tuple(counters().compiles.load(), counters().dispatches.load());
  std::uint64_t frames = 0;
  corpus::NonFiniteSamples non_finite;
  std::optional<std::string> saved_state;
  double compile_ms = 0;
  try {
    const auto compiling = std::chrono::steady_clock::now();
    Program program = program_from_file(o.graph, options);
    const std::size_t out_channels = static_cast<std::size_t>(program.outputs()[0].channels);
    if (auto ok = check_output_channels("<stdout>.wav", out_channels, write_options, "<stdout>"); !ok)
      return user_error(ok.error());
    if (std::string warnings = program.warnings(); !warnings.empty()) std::cerr << warnings;  // before the stream
    Processor processor(program);
    processor.prepare(prepared, length ? std::max<std::size_t>(*length, 1) : 0);
    const std::size_t block = processor.max_block();
    compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - compiling).count();
    std::vector<Signal> ins, outs;
    ins.emplace_back(in.channels(), block, dtype);
    outs.emplace_back(out_channels, block, dtype);
    processor.check_inputs(ins);  // the blocks are read through pointers nothing else checks
    if (!o.load_state.empty()) {
      auto bytes = read_whole_file(o.load_state);
      if (!bytes) return user_error(bytes.error());
      try {
        processor.load_state(*bytes);
      } catch (const Error& e) {
        return user_error("cannot load '" + o.load_state + "': " + e.message());
      }
    }
    auto writer = open_wav_pipe_writer(STDOUT_FILENO, out_channels, dtype, options.sample_rate_hz, write_options);
    if (!writer) return user_error("cannot write '<stdout>': " + writer.error());
    // A block is read whole (the read waits for it), run and sent; a shorter one ends the stream.
    while (true) {
      auto got = in.read(ins[0], block);
      if (!got) return user_error(got.error());
      if (*got == 0) break;
      if (*got < block) {  // the last block: signals of its length
        Signal last(in.channels(), *got, dtype);
        for (std::size_t c = 0; c < in.channels(); ++c)
          for (std::size_t i = 0; i < *got; ++i)
            if (dtype == DType::f32) last.f32(c)[i] = ins[0].f32(c)[i];
            else last.f64(c)[i] = ins[0].f64(c)[i];
        ins[0] = std::move(last);
        outs[0] = Signal(out_channels, *got, dtype);
      }
      corpus::add_piece(non_finite, corpus::non_finite_samples(ins[0]), frames);
      corpus::stream_blocks(processor, ins, outs, block);
      if (std::string failed = processor.device_error(); !failed.empty())
        return user_error("the GPU failed during the run: " + failed, "fxc-cuda");
      if (auto ok = (*writer)->write(outs[0], 0, *got); !ok) return user_error("cannot write '<stdout>': " + ok.error());
      frames += *got;
      if (*got < block) break;
    }
    if (auto ok = (*writer)->finish(); !ok) return user_error("cannot write '<stdout>': " + ok.error());
    if (!o.save_state.empty()) saved_state = processor.save_state();
  } catch (const Error& e) {
    return report(e);
  }
  if (std::string w = corpus::non_finite_warning(non_finite, "<stdin>"); !w.empty()) {
    DiagnosticEngine diags;
    diags.warning({}, w, "fxc-input");
    report(diags);
  }
  if (auto ok = write_trace(o.trace); !ok) return user_error(ok.error());
  // The state of the stream that was sent, once all of it was.
  corpus::PendingOutputs pending;
  if (saved_state)
    if (auto ok = pending.write_bytes(o.save_state, *saved_state); !ok) return user_error(ok.error());
  if (auto ok = pending.commit(); !ok) return user_error(ok.error());
  if (o.stats) {
    auto [compiles, dispatches] = before;
    std::cerr << "fxc run statistics (--live-pipe)\n"
              << "  compiles          " << counters().compiles - compiles << "\n"
              << "  compile           " << compile_ms << " ms (after the header came; the stream waited)\n"
              << "  kernel dispatches " << counters().dispatches - dispatches << "\n"
              << "  frames            " << frames << " (blocks of " << prepared << ")\n"
              << "  peak RSS          " << peak_rss_kib() << " KiB\n";
  }
  return kSuccess;
}

}  // namespace fxc::cli

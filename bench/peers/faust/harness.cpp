// SPDX-License-Identifier: Apache-2.0
// Times a Faust-generated C++ class on planar float32 noise, as bench/compare_peers.py asks.
//
// Built once per workload, channel count and precision by compare_peers.py:
//   faust -lang cpp [-double] -cn FaustChain w1_api_44100_x8.dsp -o w1_api_44100_x8_f32.h
//   g++ -std=c++17 -O3 -march=native -DFAUST_HEADER='"w1_api_44100_x8_f32.h"' -DFAUST_PRECISION='"f32"' harness.cpp
//
//   harness --input noise.f32 --channels C --samples N [--repeat R] [--output out.f32] [--fs HZ]
//
// The input file is C x N float32, channel after channel (compare_peers.py writes it, and runs
// SciPy on the same samples). The class either has C inputs and outputs (the chain under
// `par(i, C, chain)`: one instance, all channels in one sample loop, Faust's fastest layout for
// several channels here) or one (the mono chain: one instance per channel). Each timed run
// clears the state and calls compute() once over the whole signal, the most favourable call
// pattern for Faust (no per-block overhead). One untimed warm-up run first; flush-to-zero and
// denormals-are-zero are on, as around fxc's kernels. Prints one JSON object: the median and
// the minimum over the timed runs, in ms. --output writes the last run's output (C x N float32)
// for the accuracy check. --fs is the rate given to init() (default 48000): only programs whose
// delays or coefficients follow ma.SR (bench/loops_vs_faust.py's re.mono_freeverb row) use it.
// Built with -DFAUSTFLOAT=double (and faust -double), the class takes and gives float64: the
// float32 input is widened exactly and --output is written as C x N float64, so that an accuracy
// check can compare a float64 program with another float64 one (bench/dynamics_vs_peers.py).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>
#include <xmmintrin.h>
#include <pmmintrin.h>

#ifndef FAUSTFLOAT
#define FAUSTFLOAT float  // as faust/dsp/dsp.h; -DFAUSTFLOAT=double for float64 in and out
#endif

#include <faust/dsp/dsp.h>
#include <faust/gui/UI.h>
#include <faust/gui/meta.h>

#ifndef FAUST_HEADER
#error "define FAUST_HEADER as the header faust generated (-cn FaustChain)"
#endif
#include FAUST_HEADER
#ifndef FAUST_PRECISION
#define FAUST_PRECISION "unknown"  // compare_peers.py passes "f32" or "f64" (faust -double)
#endif

namespace {

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "harness: %s\nusage: harness --input FILE --channels C --samples N [--repeat R] [--output FILE] [--fs HZ]\n", why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string input_path, output_path;
  long channels = 0, samples = 0;
  int repeat = 5;
  int fs = 48000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + a).c_str());
    const char* v = argv[++i];
    if (a == "--input") input_path = v;
    else if (a == "--output") output_path = v;
    else if (a == "--channels") channels = std::atol(v);
    else if (a == "--samples") samples = std::atol(v);
    else if (a == "--repeat") repeat = std::atoi(v);
    else if (a == "--fs") fs = std::atoi(v);
    else usage(("unknown option " + a).c_str());
  }
  if (input_path.empty() || channels < 1 || samples < 1 || repeat < 1 || fs < 1) usage("bad arguments");
  if (samples > 0x7fffffffL) usage("--samples must fit compute()'s int count");

  std::vector<float> raw(static_cast<size_t>(channels) * samples);
  FILE* f = std::fopen(input_path.c_str(), "rb");
  if (!f) usage("cannot open --input");
  if (std::fread(raw.data(), sizeof(float), raw.size(), f) != raw.size()) usage("--input is too short");
  std::fclose(f);
  std::vector<FAUSTFLOAT> in(raw.begin(), raw.end());  // float32 input, widened exactly for float64
  std::vector<float>().swap(raw);
  std::vector<FAUSTFLOAT> out(in.size(), FAUSTFLOAT(0));  // zero-filled: its pages are touched before timing

  // One instance over every channel (par), or one instance per channel (a mono chain).
  std::vector<std::unique_ptr<FaustChain>> dsps;
  dsps.push_back(std::make_unique<FaustChain>());
  const long ports = dsps[0]->getNumInputs();
  if (ports != dsps[0]->getNumOutputs() || (ports != 1 && ports != channels))
    usage("the .dsp must have one input and output, or one per channel");
  if (ports == 1)
    for (long c = 1; c < channels; ++c) dsps.push_back(std::make_unique<FaustChain>());
  for (auto& d : dsps) d->init(fs);  // compare_peers.py's coefficients are constants in the .dsp: the rate is unused
  std::vector<FAUSTFLOAT*> ins(channels), outs(channels);
  for (long c = 0; c < channels; ++c) {
    ins[c] = in.data() + c * samples;
    outs[c] = out.data() + c * samples;
  }

  _mm_setcsr(_mm_getcsr() | _MM_FLUSH_ZERO_ON | _MM_DENORMALS_ZERO_ON);
  auto run = [&] {
    for (std::size_t k = 0; k < dsps.size(); ++k) {  // k: the instance, and its first channel
      dsps[k]->instanceClear();
      dsps[k]->compute(static_cast<int>(samples), ins.data() + k, outs.data() + k);
    }
  };
  run();  // warm-up
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());

  if (!output_path.empty()) {
    FILE* o = std::fopen(output_path.c_str(), "wb");
    if (!o || std::fwrite(out.data(), sizeof(FAUSTFLOAT), out.size(), o) != out.size()) usage("cannot write --output");
    std::fclose(o);
  }
  std::printf("{\"median_ms\": %.6f, \"min_ms\": %.6f, \"repeat\": %d, \"channels\": %ld, \"samples\": %ld, "
              "\"internal\": \"%s\", \"io\": \"%s\", \"instances\": %zu}\n",
              sorted[sorted.size() / 2], sorted.front(), repeat, channels, samples, FAUST_PRECISION,
              sizeof(FAUSTFLOAT) == 8 ? "f64" : "f32", dsps.size());
  return 0;
}

// Times a Faust-generated C++ class on planar float32 noise, as bench/compare_peers.py asks.
//
// Built once per workload and precision by compare_peers.py:
//   faust -lang cpp [-double] -cn FaustChain w1_api_44100.dsp -o w1_api_44100_f32.h
//   g++ -std=c++17 -O3 -march=native -DFAUST_HEADER='"w1_api_44100_f32.h"' -DFAUST_PRECISION='"f32"' harness.cpp
//
//   harness --input noise.f32 --channels C --samples N [--repeat R] [--output out.f32]
//
// The input file is C x N float32, channel after channel (compare_peers.py writes it, and runs
// SciPy on the same samples). One instance of the class per channel (the .dsp is one mono
// chain); each timed run clears every instance's state and calls compute() once per channel
// over the whole signal, the most favourable call pattern for Faust (no per-block overhead).
// One untimed warm-up run first; flush-to-zero and denormals-are-zero are on, as around fxc's
// kernels. Prints one JSON object: the median and the minimum over the timed runs, in ms.
// --output writes the last run's output (C x N float32) for the accuracy check.
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
  std::fprintf(stderr, "harness: %s\nusage: harness --input FILE --channels C --samples N [--repeat R] [--output FILE]\n", why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string input_path, output_path;
  long channels = 0, samples = 0;
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + a).c_str());
    const char* v = argv[++i];
    if (a == "--input") input_path = v;
    else if (a == "--output") output_path = v;
    else if (a == "--channels") channels = std::atol(v);
    else if (a == "--samples") samples = std::atol(v);
    else if (a == "--repeat") repeat = std::atoi(v);
    else usage(("unknown option " + a).c_str());
  }
  if (input_path.empty() || channels < 1 || samples < 1 || repeat < 1) usage("bad arguments");
  if (samples > 0x7fffffffL) usage("--samples must fit compute()'s int count");

  std::vector<float> in(static_cast<size_t>(channels) * samples);
  std::vector<float> out(in.size(), 0.0f);  // zero-filled: its pages are touched before timing
  FILE* f = std::fopen(input_path.c_str(), "rb");
  if (!f) usage("cannot open --input");
  if (std::fread(in.data(), sizeof(float), in.size(), f) != in.size()) usage("--input is too short");
  std::fclose(f);

  std::vector<std::unique_ptr<FaustChain>> dsps;
  for (long c = 0; c < channels; ++c) {
    dsps.push_back(std::make_unique<FaustChain>());
    dsps.back()->init(48000);  // the coefficients are constants in the .dsp: the rate is unused
    if (dsps.back()->getNumInputs() != 1 || dsps.back()->getNumOutputs() != 1) usage("the .dsp must be mono in, mono out");
  }

  _mm_setcsr(_mm_getcsr() | _MM_FLUSH_ZERO_ON | _MM_DENORMALS_ZERO_ON);
  auto run = [&] {
    for (long c = 0; c < channels; ++c) {
      FAUSTFLOAT* ins[1] = {in.data() + c * samples};
      FAUSTFLOAT* outs[1] = {out.data() + c * samples};
      dsps[c]->instanceClear();
      dsps[c]->compute(static_cast<int>(samples), ins, outs);
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
    if (!o || std::fwrite(out.data(), sizeof(float), out.size(), o) != out.size()) usage("cannot write --output");
    std::fclose(o);
  }
  std::printf("{\"median_ms\": %.6f, \"min_ms\": %.6f, \"repeat\": %d, \"channels\": %ld, \"samples\": %ld, "
              "\"internal\": \"%s\"}\n",
              sorted[sorted.size() / 2], sorted.front(), repeat, channels, samples, FAUST_PRECISION);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// fxc_float32_forms: can sections with poles near z = 1 compute in float32 at float64 quality
// if their structure keeps the coefficients exact? The experiment behind docs/cuda.md's
// "Not done" note on a float32 form for the near-unit-circle sections (the GPU model's
// `--what-if f32-state`).
//
//   build/bench/fxc_float32_forms [--seconds S]
//
// The sections: W1's six near-unit-circle ones (cheby1(4, 0.1 dB, 20 / 60 / 65 Hz, highpass) at
// 44.1 kHz, pole radius up to 0.9994), designed by fxc's SciPy-exact design. Each form runs the
// cascade on the same float32 input; the error is RMS(out - ref) / RMS(ref) against the cascade
// in float64 transposed direct form II (what `state_precision mixed` runs on a GPU; its own
// column is the final rounding alone), every output rounded to float32 as a kernel stores it.
// Forms:
//   df2t f32      transposed direct form II in float32 (what the precision rule refuses)
//   delta f32     the all-pole part as w[n] = w[n-1] + d[n], d[n] = d[n-1] + e[n],
//                 e[n] = x[n] - k w[n-1] - c d[n-1], k = 1 + a1 + a2, c = 1 - a2: small
//                 coefficients that float32 holds to its relative precision (a1 = -1.9989 and
//                 a2 = 0.9989 do not), and y[n] = (b0 + b1 + b2) w[n-1] + (b0 - b2) d[n-1] + b0 e[n]
//                 (7 float32 operations a sample, against 4 FMAs in direct form)
//   exact, f32 between  every section in float64, its output rounded to float32 before the next:
//                 the bound of any form whose sections pass float32 samples to each other
// Inputs: white noise in [-1, 1] (what select-strategy's precision estimate measures), a
// low-frequency random walk, and a 25 Hz tone of amplitude 0.5 under 1% noise (rumble that the
// highpasses remove: their outputs are 40-90 dB below their inputs at 25 Hz).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "design/filter_design.h"

namespace {

using fxc::design::Section;
using fxc::design::Sos;

void df2t_f64(const Section& s, std::vector<double>& x) {
  double z1 = 0, z2 = 0;
  for (double& v : x) {
    const double o = s.b0 * v + z1;
    z1 = s.b1 * v - s.a1 * o + z2;
    z2 = s.b2 * v - s.a2 * o;
    v = o;
  }
}

void df2t_f32(const Section& s, std::vector<double>& x) {
  const float b0 = float(s.b0), b1 = float(s.b1), b2 = float(s.b2), a1 = float(s.a1), a2 = float(s.a2);
  float z1 = 0, z2 = 0;
  for (double& v : x) {
    const float in = float(v);
    const float o = std::fma(b0, in, z1);
    z1 = std::fma(-a1, o, std::fma(b1, in, z2));
    z2 = std::fma(-a2, o, b2 * in);
    v = o;
  }
}

void delta_f32(const Section& s, std::vector<double>& x) {
  // The coefficients are formed in float64 and rounded once.
  const float k = float(1.0 + s.a1 + s.a2), c = float(1.0 - s.a2);
  const float g = float(s.b0 + s.b1 + s.b2), h = float(s.b0 - s.b2), b0 = float(s.b0);
  float w1 = 0, d1 = 0;
  for (double& v : x) {
    const float e = std::fma(-c, d1, std::fma(-k, w1, float(v)));
    const float out = std::fma(b0, e, std::fma(h, d1, g * w1));
    d1 = d1 + e;
    w1 = w1 + d1;
    v = out;
  }
}

void exact_f32_between(const Section& s, std::vector<double>& x) {
  df2t_f64(s, x);
  for (double& v : x) v = float(v);
}

double relative_rms(const std::vector<double>& ref, const std::vector<double>& y) {
  double e = 0, n = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = double(float(y[i])) - ref[i];
    e += d * d;
    n += ref[i] * ref[i];
  }
  return std::sqrt(e / n);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: fxc_float32_forms [--seconds S]\n");
      return 2;
    }
  }
  const double fs = 44100;
  Sos sos;
  for (double cutoff : {20.0, 60.0, 65.0}) {
    fxc::design::IirSpec spec;
    spec.family = fxc::design::IirFamily::cheby1;
    spec.order = 4;
    spec.btype = fxc::design::BandType::highpass;
    spec.cutoff_hz = {cutoff};
    spec.rp_db = 0.1;
    auto sections = fxc::design::design_iir(spec, fs);
    if (!sections) {
      std::fprintf(stderr, "design failed: %s\n", sections.error().message.c_str());
      return 1;
    }
    sos.insert(sos.end(), sections->begin(), sections->end());
  }
  std::printf("W1's %zu near-unit-circle sections (largest pole radius %.5f), %.0f s at 44.1 kHz\n\n", sos.size(),
              fxc::design::max_pole_radius(sos), seconds);
  std::printf("| input | df2t f64 (mixed) | df2t f32 | delta f32 | exact, f32 between |\n|---|---|---|---|---|\n");
  const size_t n = size_t(seconds * fs);
  const char* names[] = {"white noise in [-1, 1]", "low-frequency random walk", "25 Hz tone 0.5 + 1% noise"};
  for (int kind = 0; kind < 3; ++kind) {
    std::mt19937_64 rng(1234);
    std::uniform_real_distribution<double> uniform(-1, 1);
    std::vector<double> input(n);
    double walk = 0;
    for (size_t i = 0; i < n; ++i) {
      double v = uniform(rng);
      if (kind == 1) v = walk = 0.999 * walk + 0.03 * v;
      if (kind == 2) v = 0.5 * std::sin(2 * M_PI * 25.0 * double(i) / fs) + 0.01 * v;
      input[i] = float(v);
    }
    auto run = [&](void (*form)(const Section&, std::vector<double>&)) {
      std::vector<double> y = input;
      for (const Section& s : sos) form(s, y);
      return y;
    };
    const std::vector<double> ref = run(df2t_f64);
    std::printf("| %s | %.2g | %.2g | %.2g | %.2g |\n", names[kind], relative_rms(ref, ref), relative_rms(ref, run(df2t_f32)),
                relative_rms(ref, run(delta_f32)), relative_rms(ref, run(exact_f32_between)));
  }
  return 0;
}

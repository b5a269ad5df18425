// SPDX-License-Identifier: Apache-2.0
// Program::run on inputs the caller gives up (std::move): the outputs are run()'s, bit for
// bit, computed over an input's memory where one of the output's channel count is left.
#include <fxc/fxc.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "api_test_support.h"

namespace {

using fxc::test::noise;
using fxc::test::options;

bool same_bits(const fxc::Signal& a, const fxc::Signal& b) {
  if (a.channels() != b.channels() || a.samples() != b.samples() || a.dtype() != b.dtype()) return false;
  for (std::size_t c = 0; c < a.channels(); ++c) {
    const void* pa = a.dtype() == fxc::DType::f32 ? static_cast<const void*>(a.f32(c).data()) : a.f64(c).data();
    const void* pb = b.dtype() == fxc::DType::f32 ? static_cast<const void*>(b.f32(c).data()) : b.f64(c).data();
    if (std::memcmp(pa, pb, a.samples() * (a.dtype() == fxc::DType::f32 ? 4 : 8)) != 0) return false;
  }
  return true;
}

const void* first_sample(const fxc::Signal& s) {
  return s.dtype() == fxc::DType::f32 ? static_cast<const void*>(s.f32(0).data()) : s.f64(0).data();
}

// The vocal example: its delay reads the input after the chain, so an output over the input's
// memory is written at the end of each piece of the run.
constexpr const char* kVocal =
    "input x : 2\n"
    "wet = x | butter(4, 80 Hz, highpass) | peaking(3 kHz, 1.0, 4 dB) | tanh() | gain(-3 dB)\n"
    "output 0.7 * wet + 0.3 * (x | delay(5 ms))\n";

}  // namespace

TEST_CASE("run(std::move(inputs)) gives run()'s bits, over the input's memory") {
  for (fxc::DType dtype : {fxc::DType::f32, fxc::DType::f64}) {
    CAPTURE(dtype == fxc::DType::f32);
    fxc::Program program = fxc::Program::from_source(kVocal, options(dtype));
    const fxc::Signal x = noise(2, 200000, dtype);  // pieces of 2^16 frames and a short one
    const fxc::Signal want = program.run(x);
    fxc::Signal given = x;
    const void* memory = first_sample(given);
    fxc::Signal got = program.run(std::move(given));
    CHECK(same_bits(got, want));
    CHECK(first_sample(got) == memory);
    CHECK(got.source().empty());
    // The vector form, and an input of the other sample type (converted first, then reused).
    const std::vector<fxc::Signal> other = {
        x.converted(dtype == fxc::DType::f32 ? fxc::DType::f64 : fxc::DType::f32)};
    const std::vector<fxc::Signal> want_other = program.run(other);  // kept: the const& overload
    std::vector<fxc::Signal> inputs = other;
    std::vector<fxc::Signal> converted = program.run(std::move(inputs));
    REQUIRE(converted.size() == 1);
    CHECK(converted[0].dtype() == dtype);
    CHECK(same_bits(converted[0], want_other[0]));
  }
}

TEST_CASE("run(std::move(inputs)): each output takes an input of its channel count, else new memory") {
  // Outputs of 2 and 1 channels from inputs of 1 and 2: y takes b's memory, z takes a's.
  constexpr const char* kCrossed =
      "input a : 1\n"
      "input b : 2\n"
      "output y = b | lowpass(2 kHz)\n"
      "output z = a | highpass(100 Hz) | gain(0.5)\n";
  fxc::Program crossed = fxc::Program::from_source(kCrossed, options());
  const fxc::Signal a = noise(1, 5000, fxc::DType::f64, 1), b = noise(2, 5000, fxc::DType::f64, 2);
  const std::vector<fxc::Signal> kept = {a, b};
  const std::vector<fxc::Signal> want = crossed.run(kept);
  std::vector<fxc::Signal> inputs = kept;
  const void* a_memory = first_sample(inputs[0]);
  const void* b_memory = first_sample(inputs[1]);
  std::vector<fxc::Signal> got = crossed.run(std::move(inputs));
  REQUIRE(got.size() == 2);
  CHECK(same_bits(got[0], want[0]));
  CHECK(same_bits(got[1], want[1]));
  CHECK(first_sample(got[0]) == b_memory);
  CHECK(first_sample(got[1]) == a_memory);

  // A mono sum of a stereo input: no input of one channel, so the output is new memory.
  fxc::Program down = fxc::Program::from_source("input x : 2\noutput x | mix([[0.5, 0.5]])\n", options());
  const fxc::Signal x = noise(2, 3000, fxc::DType::f64);
  fxc::Signal given = x;
  const void* memory = first_sample(given);
  fxc::Signal mono = down.run(std::move(given));
  CHECK(same_bits(mono, down.run(x)));
  CHECK(first_sample(mono) != memory);
}

// Outputs that pass inputs straight through, in another order: each takes its own input's
// memory or new memory (given another passed-through input's, its copy overwrote that input
// before the next copy read it).
TEST_CASE("run(std::move(inputs)) with inputs passed straight through, swapped and repeated") {
  for (const char* graph : {"input a : 1\ninput b : 1\noutput p = b\noutput q = a\n",
                            "input a : 1\ninput b : 1\noutput p = b\noutput q = a | gain(2)\noutput r = a\n",
                            "input a : 1\ninput b : 1\noutput p = a\noutput q = a\noutput r = b | gain(0.5)\n"}) {
    CAPTURE(graph);
    fxc::Program program = fxc::Program::from_source(graph, options());
    const std::vector<fxc::Signal> kept = {noise(1, 1000, fxc::DType::f64, 1), noise(1, 1000, fxc::DType::f64, 2)};
    const std::vector<fxc::Signal> want = program.run(kept);
    std::vector<fxc::Signal> given = kept;
    const std::vector<fxc::Signal> got = program.run(std::move(given));
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      CAPTURE(k);
      CHECK(same_bits(got[k], want[k]));
    }
  }
}

TEST_CASE("run(std::move(inputs)) on the reference interpreter, and its errors, are run()'s") {
  fxc::Program reference = fxc::Program::from_source(kVocal, options(fxc::DType::f64, fxc::Target::reference));
  const fxc::Signal x = noise(2, 3000, fxc::DType::f64);
  fxc::Signal given = x;
  CHECK(same_bits(reference.run(std::move(given)), reference.run(x)));

  // Refused inputs: the message run(const&) gives.
  fxc::Program program = fxc::Program::from_source(kVocal, options());
  auto message = [](auto&& run) -> std::string {
    try {
      run();
    } catch (const fxc::Error& e) {
      return e.what();
    }
    return "no error";
  };
  const std::vector<std::vector<fxc::Signal>> refused = {
      {}, {noise(3, 100, fxc::DType::f64)}, {noise(2, 100, fxc::DType::f64), noise(2, 100, fxc::DType::f64)}};
  for (const std::vector<fxc::Signal>& inputs : refused) {
    CAPTURE(inputs.size());
    const std::string want = message([&] { program.run(inputs); });
    CHECK(want != "no error");
    CHECK(message([&] { program.run(std::vector<fxc::Signal>(inputs)); }) == want);
  }
  CHECK(message([&] { program.run(noise(3, 100, fxc::DType::f64)); })
            .find("input 'x' is declared with 2 channel(s), but its signal has 3") != std::string::npos);
}

// Outputs that pass inputs through, written over other such inputs (a permutation of the
// inputs' memory, which the in-place rule allows): each copy overwrote an input a later copy
// read, in whole runs and in a Processor's blocks alike. Swaps, a 3-cycle, a cycle with a
// second reader of one input, and stereo channels.
TEST_CASE("in place, outputs that pass inputs through over each other's memory get the right inputs") {
  struct Case {
    const char* graph;
    std::vector<int> over;  // per output: the input whose memory it is written over, -1: its own
  };
  const Case cases[] = {
      {"input a : 1\ninput b : 1\noutput p = b\noutput q = a\n", {0, 1}},
      {"input a : 1\ninput b : 1\ninput c : 1\noutput p = b\noutput q = c\noutput r = a\n", {0, 1, 2}},
      {"input a : 1\ninput b : 1\noutput p = b\noutput q = a\noutput s = a | gain(2)\noutput t = a\n",
       {0, 1, -1, -1}},
      {"input a : 2\ninput b : 2\noutput p = b\noutput q = a\n", {0, 1}},
      // A chain (p must read b before q writes over it) and two swaps at once.
      {"input a : 1\ninput b : 1\ninput c : 1\noutput q = c\noutput p = b\n", {1, 0}},
      {"input a : 1\ninput b : 1\ninput c : 1\ninput d : 1\n"
       "output p = b\noutput q = a\noutput r = d\noutput s = c\noutput t = a | gain(3)\n",
       {0, 1, 2, 3, -1}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.graph);
    fxc::Program program = fxc::Program::from_source(c.graph, options());
    std::vector<fxc::Signal> kept;
    for (const fxc::PortInfo& port : program.inputs())
      kept.push_back(noise(static_cast<std::size_t>(port.channels), 700, fxc::DType::f64,
                           static_cast<unsigned>(kept.size() + 1)));
    const std::vector<fxc::Signal> want = program.run(kept);
    for (bool blocks : {false, true}) {
      CAPTURE(blocks);
      std::vector<fxc::Signal> memory = kept;  // the inputs, then written over
      std::vector<fxc::Signal> own;            // outputs given memory of their own
      own.reserve(c.over.size());
      std::vector<std::vector<const double*>> in(memory.size());
      std::vector<std::vector<double*>> out(c.over.size());
      for (std::size_t i = 0; i < memory.size(); ++i)
        for (std::size_t ch = 0; ch < memory[i].channels(); ++ch) in[i].push_back(memory[i].f64(ch).data());
      for (std::size_t k = 0; k < c.over.size(); ++k) {
        fxc::Signal& target = c.over[k] >= 0 ? memory[static_cast<std::size_t>(c.over[k])]
                                              : own.emplace_back(want[k].channels(), 700, fxc::DType::f64);
        for (std::size_t ch = 0; ch < target.channels(); ++ch) out[k].push_back(target.f64(ch).data());
      }
      std::vector<const double* const*> ins;
      std::vector<double* const*> outs;
      for (auto& p : in) ins.push_back(p.data());
      for (auto& p : out) outs.push_back(p.data());
      if (blocks) {
        fxc::Processor live = program.processor();
        live.prepare(256);
        for (std::size_t done = 0; done < 700; done += 256) {
          std::vector<std::vector<const double*>> bin = in;
          std::vector<std::vector<double*>> bout = out;
          std::vector<const double* const*> bins;
          std::vector<double* const*> bouts;
          for (auto& p : bin) {
            for (auto& q : p) q += done;
            bins.push_back(p.data());
          }
          for (auto& p : bout) {
            for (auto& q : p) q += done;
            bouts.push_back(p.data());
          }
          live.process(std::span<const double* const* const>(bins), std::span<double* const* const>(bouts),
                       std::min<std::size_t>(256, 700 - done));
        }
      } else {
        program.run(std::span<const double* const* const>(ins), std::span<double* const* const>(outs), 700);
      }
      std::size_t next_own = 0;
      for (std::size_t k = 0; k < c.over.size(); ++k) {
        CAPTURE(k);
        const fxc::Signal& got = c.over[k] >= 0 ? memory[static_cast<std::size_t>(c.over[k])] : own[next_own++];
        CHECK(same_bits(got, want[k]));
      }
    }
  }
}

// One buffer given as two inputs, the second 10 samples in: an output passed through from the
// second (to memory of its own) reads samples that another passed-through output is written
// over (exactly the first input's memory). Found by a review: the copies compared pointers.
TEST_CASE("in place, a passed-through input that starts inside another input is read before it is written") {
  fxc::Program program =
      fxc::Program::from_source("input a : 1\ninput b : 1\ninput c : 1\noutput p = c\noutput q = b\n", options());
  constexpr std::size_t kFrames = 100, kShift = 10;
  std::vector<double> buffer(kFrames + kShift), c(kFrames), q(kFrames);
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<double>(i + 1);
  for (std::size_t i = 0; i < kFrames; ++i) c[i] = -static_cast<double>(i + 1);
  const std::vector<double> want_p = c;
  const std::vector<double> want_q(buffer.begin() + kShift, buffer.end());
  const double* a_in[] = {buffer.data()};
  const double* b_in[] = {buffer.data() + kShift};
  const double* c_in[] = {c.data()};
  double* p_out[] = {buffer.data()};  // exactly input a's memory
  double* q_out[] = {q.data()};
  std::vector<const double* const*> ins = {a_in, b_in, c_in};
  std::vector<double* const*> outs = {p_out, q_out};
  program.run(std::span<const double* const* const>(ins), std::span<double* const* const>(outs), kFrames);
  CHECK(std::equal(q.begin(), q.end(), want_q.begin()));
  CHECK(std::equal(buffer.begin(), buffer.begin() + kFrames, want_p.begin()));
}

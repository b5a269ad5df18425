// SPDX-License-Identifier: Apache-2.0
// Program::run on inputs the caller gives up (std::move): the outputs are run()'s, bit for
// bit, computed over an input's memory where one of the output's channel count is left.
#include <fxc/fxc.h>

#include <doctest/doctest.h>

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
    const fxc::Signal other = x.converted(dtype == fxc::DType::f32 ? fxc::DType::f64 : fxc::DType::f32);
    const std::vector<fxc::Signal> want_other = program.run(std::vector<fxc::Signal>{other});
    std::vector<fxc::Signal> inputs = {other};
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
  const std::vector<fxc::Signal> want = crossed.run(std::vector<fxc::Signal>{a, b});
  std::vector<fxc::Signal> inputs = {a, b};
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

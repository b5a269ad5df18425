// SPDX-License-Identifier: Apache-2.0
// fxc::Program and fxc::Processor on Target::cuda through the public header, as an embedder
// and `fxc run --target cuda` call them: on the host emulation (use_cuda_device_for_testing)
// and, where there is one, on the GPU.
#include <fxc/fxc.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../api/api_test_support.h"
#include "cuda_emulator.h"
#include "cuda_test_device.h"
#include "runtime/gpu_device.h"
#include "worse.h"

namespace fxc {
namespace {

using fxc::test::worse;

// Stereo, a live cutoff: the chunked scan on the GPU (few channels), values as arguments.
constexpr const char* kEq =
    "input x : 2\n"
    "fc = 200 Hz in [20 Hz, 2 kHz]\n"
    "output y = x | butter(4, fc, highpass) | peaking(1 kHz, 1.0, 3 dB) | gain(-2 dB)\n";

// The vocal example: a chunked scan with a tanh folded in, a delay, a sum.
constexpr const char* kVocal =
    "input x : 2\n"
    "clean = x | butter(4, 80 Hz, highpass)\n"
    "tone  = clean | peaking(3 kHz, 1.0, 4 dB) | highshelf(10 kHz, -2 dB)\n"
    "wet   = tone | tanh() | gain(-3 dB)\n"
    "output 0.7 * wet + 0.3 * (x | delay(5 ms))\n";

// The public-API tests' helpers: options (48 kHz, no disk cache), seeded noise, relative error.
Options options_for(Target target, DType dtype = DType::f32) { return test::options(dtype, target); }
using test::noise;
using test::relative_error;
using test::same_bits;


// `x` through `p` in calls of `lengths` frames in turn (the last as long as is left), one
// input and one output, samples of type T (the Processor converts another type than its own).
template <class T>
Signal stream_through(Processor& p, const Signal& x, const std::vector<std::size_t>& lengths) {
  const DType dtype = std::is_same_v<T, float> ? DType::f32 : DType::f64;
  const Signal in = x.dtype() == dtype ? x : x.converted(dtype);
  Signal out(x.channels(), x.samples(), dtype);
  auto data = [](auto& s, std::size_t c) {
    if constexpr (std::is_same_v<T, float>) return s.f32(c).data();
    else return s.f64(c).data();
  };
  // NaN where nothing is written: a call that leaves its outputs alone fails every check.
  for (std::size_t c = 0; c < out.channels(); ++c)
    std::fill_n(data(out, c), out.samples(), std::numeric_limits<T>::quiet_NaN());
  std::size_t k = 0;
  for (std::size_t start = 0; start < x.samples(); ++k) {
    const std::size_t frames = std::min(lengths[k % lengths.size()], x.samples() - start);
    std::vector<const T*> ins;
    std::vector<T*> outs;
    for (std::size_t c = 0; c < x.channels(); ++c) {
      ins.push_back(data(in, c) + start);
      outs.push_back(data(out, c) + start);
    }
    p.process(ins.data(), outs.data(), frames);
    start += frames;
  }
  return out;
}

// What the public API promises on Target::cuda, on whatever device open_cuda_device gives.
void check_public_api() {
  const std::size_t frames = 5000;
  const Signal x = noise(2, frames, DType::f32, 7);
  for (const char* text : {kEq, kVocal}) {
    CAPTURE(std::string(text));
    Program gpu = Program::from_source(text, options_for(Target::cuda));
    Program cpu = Program::from_source(text, options_for(Target::cpu));
    Program reference = Program::from_source(text, options_for(Target::reference, DType::f64));
    const Signal whole = gpu.run(x);
    const Signal want = reference.run(x.converted(DType::f64));
    // float32 samples, float64 state where the poles need it: as the CPU's error.
    CHECK(relative_error(whole, want) <= 2e-6);
    CHECK(relative_error(whole, cpu.run(x)) <= 2e-6);

    // By default a Processor's blocks are a whole run's pieces: one call of the whole signal
    // is Program::run, bit for bit.
    Processor whole_stream = gpu.processor();
    CHECK(whole_stream.max_block() >= frames);
    CHECK(same_bits(stream_through<float>(whole_stream, x, {frames}), whole));
    CHECK(whole_stream.device_error().empty());

    // Calls of whole blocks (a call longer than the block runs as several) are run_in_blocks.
    const std::size_t block = 700;
    const Signal in_blocks = gpu.run_in_blocks({x}, block)[0];
    CHECK(relative_error(in_blocks, want) <= 2e-6);
    Processor p(gpu);
    p.prepare(block);
    CHECK(p.max_block() == block);
    CHECK(same_bits(stream_through<float>(p, x, {block, 3 * block, 2 * block}), in_blocks));
    // Double samples into a float32 Program: converted on the way in and out.
    p.reset();
    const Signal as_double = stream_through<double>(p, x, {block});
    CHECK(same_bits(as_double.converted(DType::f32), in_blocks));
    // Blocks of other lengths (each recorded once as a CUDA graph) within rounding.
    p.reset();
    CHECK(relative_error(stream_through<float>(p, x, {1, 64, 699, 3, 1500}), want) <= 2e-6);
    CHECK(p.device_error().empty());
    // The state comes to the host and back (api_cuda_state_test.cpp checks it at length).
    const std::string state = p.save_state();
    CHECK(state.rfind("fxc stream state 1\n", 0) == 0);
    p.load_state(state);
    CHECK_THROWS_AS(p.load_state(""), Error);
  }

  // run_in_blocks reads its blocks through pointers: inputs of counts the compiled graph does
  // not bind are refused, not read past their ends.
  Program two = Program::from_source("input a\ninput b\noutput y = a | gain(2)\noutput z = b | gain(3)\n",
                                     options_for(Target::cuda));
  CHECK_THROWS_WITH_AS((void)two.run_in_blocks({noise(2, 300, DType::f32, 1), noise(1, 300, DType::f32, 2)}, 100),
                       doctest::Contains("does not match the bound graph"), Error);
  const std::vector<Signal> both = two.run_in_blocks({noise(2, 300, DType::f32, 1), noise(2, 300, DType::f32, 2)}, 100);
  CHECK(relative_error(both[1], two.run({noise(2, 300, DType::f32, 1), noise(2, 300, DType::f32, 2)})[1]) == 0);

  // set() from the stream: the next block takes the value, as the CPU's Processor does. `x`
  // through a GPU and a CPU Processor in blocks of 512, `name` set to `value` on both after
  // 2048 frames; their outputs.
  auto across_set = [&](Processor& on_gpu, Processor& on_cpu, const char* name, double value) {
    on_gpu.prepare(512);
    on_cpu.prepare(512);
    Signal got(2, frames, DType::f32), expected(2, frames, DType::f32);
    auto half = [&](Processor& p, Signal& out, std::size_t start, std::size_t count) {
      for (std::size_t at = start; at < start + count; at += 512) {
        const std::size_t n = std::min<std::size_t>(512, start + count - at);
        const float* in[] = {x.f32(0).data() + at, x.f32(1).data() + at};
        float* o[] = {out.f32(0).data() + at, out.f32(1).data() + at};
        p.process(in, o, n);
      }
    };
    half(on_gpu, got, 0, 2048);
    half(on_cpu, expected, 0, 2048);
    on_gpu.set(name, value);
    on_cpu.set(name, value);
    CHECK(on_gpu.get(name) == value);
    half(on_gpu, got, 2048, frames - 2048);
    half(on_cpu, expected, 2048, frames - 2048);
    return std::pair{got, expected};
  };
  Program gpu = Program::from_source(kEq, options_for(Target::cuda));
  Program cpu = Program::from_source(kEq, options_for(Target::cpu));
  Processor on_gpu(gpu), on_cpu(cpu);
  const auto [got, expected] = across_set(on_gpu, on_cpu, "fc", 1500.0);
  CHECK(relative_error(got, expected) <= 2e-6);
  // The new value changed the output (the check above would pass with none taken by both).
  Program unchanged = Program::from_source(kEq, options_for(Target::cpu));
  CHECK(relative_error(unchanged.run(x), expected) > 1e-2);
  // A new length for one delay of a chain restarts that line alone, as on the CPU (until
  // 2026-12-01 the GPU restarted every line of the chain).
  {
    const char* two = "input x : 2\nd = 2 ms in [1 ms, 10 ms]\noutput y = x | delay(d) | butter(2, 3 kHz) | delay(3 ms)\n";
    Processor a(Program::from_source(two, options_for(Target::cuda)));
    Processor b(Program::from_source(two, options_for(Target::cpu)));
    const auto [on_gpu_delays, on_cpu_delays] = across_set(a, b, "d", 0.004);
    CHECK(relative_error(on_gpu_delays, on_cpu_delays) <= 2e-6);
  }
  // reset(): from zero state again, at the values set.
  on_gpu.reset();
  Program at_new = Program::from_source(kEq, options_for(Target::cuda));
  at_new.set("fc", 1500.0);
  Processor fresh(at_new);
  fresh.prepare(512);
  const Signal again = stream_through<float>(on_gpu, x, {512});
  CHECK(same_bits(again, stream_through<float>(fresh, x, {512})));
}

// The emulation, until `failing` is set: from then on every launch and graph replay fails, as
// a GPU's do after a fault (an illegal address ends the context).
class FailingDevice final : public GpuDevice {
 public:
  bool failing = false;
  std::string description() const override { return inner_.description(); }
  std::string arch() const override { return inner_.arch(); }
  Expected<DevicePtr, std::string> allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  void release(DevicePtr p) noexcept override { inner_.release(p); }
  Expected<void*, std::string> allocate_host(std::size_t bytes) override { return inner_.allocate_host(bytes); }
  void release_host(void* p) noexcept override { inner_.release_host(p); }
  GpuStatus copy_to_device(DevicePtr to, const void* from, std::size_t n) override {
    return inner_.copy_to_device(to, from, n);
  }
  GpuStatus copy_to_host(void* to, DevicePtr from, std::size_t n) override { return inner_.copy_to_host(to, from, n); }
  GpuStatus fill_zero(DevicePtr to, std::size_t n) override { return inner_.fill_zero(to, n); }
  GpuStatus copy_on_device(DevicePtr to, DevicePtr from, std::size_t n) override {
    return inner_.copy_on_device(to, from, n);
  }
  GpuStatus use_stream(Handle stream) override { return inner_.use_stream(stream); }
  Expected<Handle, std::string> load_module(const std::string& source, const std::string& cubin,
                                            const std::vector<codegen::CudaEntry>& entries) override {
    return inner_.load_module(source, cubin, entries);
  }
  Expected<Handle, std::string> function(Handle module, const std::string& symbol) override {
    return inner_.function(module, symbol);
  }
  void unload_module(Handle module) noexcept override { inner_.unload_module(module); }
  GpuStatus launch(Handle f, const codegen::CudaLaunch& shape, const std::vector<std::uint64_t>& args) override {
    if (failing) return Unexpected{std::string(kFault)};
    return inner_.launch(f, shape, args);
  }
  GpuStatus synchronize() override { return inner_.synchronize(); }
  Expected<Handle, std::string> create_stream() override { return inner_.create_stream(); }
  void destroy_stream(Handle stream) noexcept override { inner_.destroy_stream(stream); }
  Expected<Handle, std::string> create_event() override { return inner_.create_event(); }
  void destroy_event(Handle event) noexcept override { inner_.destroy_event(event); }
  GpuStatus record_event(Handle event) override { return inner_.record_event(event); }
  GpuStatus wait_event(Handle event) override { return inner_.wait_event(event); }
  GpuStatus synchronize_event(Handle event) override { return inner_.synchronize_event(event); }
  GpuStatus begin_capture() override { return inner_.begin_capture(); }
  Expected<Handle, std::string> end_capture() override { return inner_.end_capture(); }
  GpuStatus launch_graph(Handle graph) override {
    if (failing) return Unexpected{std::string(kFault)};
    return inner_.launch_graph(graph);
  }
  void destroy_graph(Handle graph) noexcept override { inner_.destroy_graph(graph); }

  static constexpr const char* kFault = "CUDA error 700 (an illegal memory access was encountered)";

 private:
  test::EmulatedDevice inner_;
};

// One Program's Processors and whole runs on several threads at once, as a corpus's jobs or a
// plugin's instances run them: every thread's outputs are the single-threaded ones, bit for bit.
// The device, its module and its table of recorded CUDA graphs serve every stream at once:
// each thread goes through the four lists of block lengths in turn, starting at another, so
// that streams record graphs of the same lengths side by side.
void check_concurrent_use() {
  const std::size_t frames = 3000;
  const Signal x = noise(2, frames, DType::f32, 11);
  Program gpu = Program::from_source(kEq, options_for(Target::cuda));
  const std::vector<std::vector<std::size_t>> lengths = {{256}, {100, 924}, {1000, 24, 7}, {333}};
  std::vector<Signal> want_stream;
  for (const auto& l : lengths) {
    Processor p(gpu);
    p.prepare(1024);
    want_stream.push_back(stream_through<float>(p, x, l));
  }
  const Signal want_run = gpu.run(x);
  constexpr int kThreads = 4;
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::string> errors(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        try {
          Processor p(gpu);
          p.prepare(1024);
          for (int round = 0; round < 2; ++round)
            for (std::size_t k = 0; k < lengths.size(); ++k) {
              const std::size_t which = (k + static_cast<std::size_t>(t)) % lengths.size();
              p.reset();
              if (!same_bits(stream_through<float>(p, x, lengths[which]), want_stream[which])) ++wrong[t];
              if (!same_bits(gpu.run(x), want_run)) ++wrong[t];
            }
          errors[t] = p.device_error();
        } catch (const std::exception& e) {
          errors[t] = e.what();
        }
      });
  }
  for (int t = 0; t < kThreads; ++t) {
    CAPTURE(t);
    CHECK(errors[t] == "");
    CHECK(wrong[t] == 0);
  }
}


}  // namespace

TEST_CASE("CUDA emulation: fxc::Program and fxc::Processor on Target::cuda through the public API") {
  test::UseCudaDevice emulated(std::make_shared<test::EmulatedDevice>());
  check_public_api();
  // No GPU for the reference target's Processor either way.
  CHECK_THROWS_AS(Processor(Program::from_source(kEq, options_for(Target::reference))), Error);
}

TEST_CASE("CUDA emulation: one Program's Processors and runs on several threads at once") {
  test::UseCudaDevice emulated(std::make_shared<test::EmulatedDevice>());
  check_concurrent_use();
}

TEST_CASE("CUDA emulation: the Program cache holds the GPU memory of at most four dropped Programs") {
  // A corpus run makes a Program per file length; each keeps its streams' device buffers for
  // its next run, and so does its copy in the Program cache, which held every length's until
  // 256 were made. (Their page-locked staging goes back to the device after each run: the
  // next test.)
  auto device = std::make_shared<test::EmulatedDevice>();
  test::UseCudaDevice emulated(device);
  clear_kernel_memory_cache();
  const std::size_t before = device->live_allocations();
  auto held = [&] { return device->live_allocations() - device->kept_host_blocks() - before; };
  auto run_once = [](std::size_t frames) {
    Options o = options_for(Target::cuda);
    o.signal_length = frames;
    Program p = Program::from_source(kVocal, o);
    (void)p.run(noise(2, frames, DType::f32, 1));
  };
  run_once(20000);
  const std::size_t one = held();
  CHECK(one > 0);
  for (std::size_t k = 1; k < 8; ++k) run_once(20000 + 1000 * k);
  CHECK(held() == 4 * one);  // the four most recent lengths'
  // Programs of one kernel shape share a module (each length loaded its own until
  // 2026-12-02), and it goes with the last of them (the device, kept for the process, would
  // gather them).
  CHECK(device->modules_loaded() == 1);
  // A length made again takes its remembered Program, and that Program's streams: nothing new.
  run_once(27000);
  CHECK(held() == 4 * one);
  clear_kernel_memory_cache();
  CHECK(held() == 0);
  CHECK(device->modules_loaded() == 0);
  device->trim_host();
  CHECK(device->live_allocations() == before);
}

TEST_CASE("CUDA emulation: page-locked staging goes back to the device after a run, for the next Program's") {
  // Each file length of a corpus is a Program of its own, and a stream per run; pinning new
  // staging for each cost milliseconds a file on a GPU. The device keeps the blocks given back
  // and lends them to requests of up to their size whose own block would be at least half of it.
  auto device = std::make_shared<test::EmulatedDevice>();
  test::UseCudaDevice emulated(device);
  clear_kernel_memory_cache();
  device->trim_host();
  auto run_once = [](std::size_t frames, std::uint32_t seed) {
    Options o = options_for(Target::cuda);
    o.signal_length = frames;
    Program p = Program::from_source(kVocal, o);
    const Signal x = noise(2, frames, DType::f32, seed);
    const Signal y = p.run(x);
    Options cpu = options_for(Target::cpu);
    cpu.signal_length = frames;
    CHECK(relative_error(y, Program::from_source(kVocal, cpu).run(x)) <= 2e-6);
  };
  // Longest first, as a sorted corpus may come: one input and one output block, pinned once.
  for (std::size_t k = 0; k < 8; ++k) {
    run_once(60000 - 4000 * k, static_cast<std::uint32_t>(k));
    CHECK(device->host_blocks() == 2);
    CHECK(device->kept_host_blocks() == 2);  // none held by the programs between runs
  }
  // A second run of a Program takes its stream from the program's pool and its staging from
  // the device: nothing is allocated, on the device or pinned.
  {
    Options o = options_for(Target::cuda);
    o.signal_length = 30000;
    Program p = Program::from_source(kVocal, o);
    const Signal x = noise(2, 30000, DType::f32, 3);
    const Signal y = p.run(x);
    const std::size_t made = device->allocations_made();
    CHECK(same_bits(p.run(x), y));
    CHECK(device->allocations_made() == made);
  }
  // Shorter than half the blocks: blocks of their own (a small request does not hold a large block).
  run_once(20000, 9);
  CHECK(device->host_blocks() == 4);
  // A Processor takes its staging from the same blocks, and gives it back when it goes.
  {
    Options o = options_for(Target::cuda);
    o.signal_length = 40000;
    Processor p(Program::from_source(kVocal, o));
    p.prepare(40000);
    CHECK(device->kept_host_blocks() == 2);
    CHECK(device->host_blocks() == 4);
  }
  CHECK(device->kept_host_blocks() == 4);
  clear_kernel_memory_cache();
}

TEST_CASE("CUDA emulation: copies of a Program made without kernels load one module, not one each") {
  // A corpus with --block: a Program per file from the Program cache (a copy without kernels,
  // Options::compile_kernels false) and a Processor of it, one after another.
  auto device = std::make_shared<test::EmulatedDevice>();
  test::UseCudaDevice emulated(device);
  clear_kernel_memory_cache();
  Options o = options_for(Target::cuda);
  o.compile_kernels = false;
  o.signal_length = 1024;
  o.max_block = 1024;
  const Signal x = noise(2, 3000, DType::f32, 5);
  std::optional<Signal> first;
  const std::size_t loads = device->module_loads();
  for (int file = 0; file < 3; ++file) {
    Processor p(Program::from_source(kVocal, o));
    p.prepare(1024);
    const Signal y = stream_through<float>(p, x, {1024});
    if (!first) first = y;
    CHECK(same_bits(y, *first));
  }
  CHECK(device->module_loads() - loads == 1);  // 3 until 2026-12-02
  clear_kernel_memory_cache();
  CHECK(device->modules_loaded() == 0);
}

TEST_CASE("CUDA emulation: a device error in a Processor's call gives zeros and device_error(), not a crash") {
  auto device = std::make_shared<FailingDevice>();
  test::UseCudaDevice emulated(device);
  Program gpu = Program::from_source(kEq, options_for(Target::cuda));
  Processor p(gpu);
  p.prepare(256);
  const Signal x = noise(2, 1024, DType::f32, 3);
  const Signal before = stream_through<float>(p, x, {256});
  CHECK(relative_error(before, Signal(2, 1024, DType::f32)) > 0);  // not zeros
  CHECK(p.device_error().empty());
  device->failing = true;
  const Signal after = stream_through<float>(p, x, {100, 924});
  CHECK(p.device_error() == FailingDevice::kFault);
  CHECK(same_bits(after, Signal(2, 1024, DType::f32)));  // zeros, every call
  // The device works again, but the stream's state is lost: zeros until prepare().
  device->failing = false;
  CHECK(same_bits(stream_through<float>(p, x, {256}), Signal(2, 1024, DType::f32)));
  CHECK(p.device_error() == FailingDevice::kFault);
  p.prepare(256);
  CHECK(p.device_error().empty());
  CHECK(same_bits(stream_through<float>(p, x, {256}), before));
  // Program::run says the same as an Error.
  device->failing = true;
  CHECK_THROWS_WITH_AS((void)gpu.run(x), doctest::Contains("illegal memory access"), Error);
}

TEST_CASE("CUDA device: fxc::Program and fxc::Processor on Target::cuda through the public API") {
  // The process's own device: the real one, which open_cuda_device gives without the hook.
  if (!test::real_cuda_device()) return;
  check_public_api();
}

TEST_CASE("CUDA device: one Program's Processors and runs on several threads at once") {
  if (!test::real_cuda_device()) return;
  check_concurrent_use();
}

}  // namespace fxc

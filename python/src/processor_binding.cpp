// SPDX-License-Identifier: Apache-2.0
// fxc._core.Processor: an fxc::Processor for Python, one block per call. The call path does
// no allocation beyond the output array (none with out=) and keeps the GIL for small blocks:
// releasing it costs more than a 64-frame block takes.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <optional>
#include <variant>

#include "python/src/arrays.h"
#include "python/src/program_binding.h"

namespace fxc::python {

namespace {

class PyProcessor {
 public:
  /// Marks the Processor in use for one call: a second thread calling it meanwhile gets an
  /// error instead of sharing its state and pointer arrays (one Processor serves one thread).
  class Busy {
   public:
    explicit Busy(std::atomic<bool>& flag) : flag_(flag) {
      if (flag_.exchange(true))
        refuse("this Processor is in use by another thread: a Processor serves one thread at a time "
               "(make one per thread with program.processor())");
    }
    ~Busy() { flag_ = false; }
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;

   private:
    std::atomic<bool>& flag_;
  };

  PyProcessor(const PyProgram& program, std::size_t block, int channels)
      : program_(bound_program(program, channels)), processor_(program_) {
    processor_.prepare(block);
    for (const PortInfo& p : program_.inputs()) in_channels_.push_back(static_cast<std::size_t>(p.channels));
    for (const PortInfo& p : program_.outputs()) out_channels_.push_back(static_cast<std::size_t>(p.channels));
    if (in_channels_.size() != 1 || out_channels_.size() != 1) single_ = false;
  }

  std::size_t max_block() const { return processor_.max_block(); }
  const std::vector<std::size_t>& input_channels() const { return in_channels_; }
  const std::vector<std::size_t>& output_channels() const { return out_channels_; }

  /// One block through a one-input, one-output graph: x (frames,) or (channels, frames).
  NumpyArray process(const AnyArray& x, std::optional<NumpyArray> out) {
    Busy busy(busy_);
    if (!single_) refuse("this graph has several inputs or outputs: call process_many([x, ...])");
    PlanarView v = planar_view(x, "the block");
    if (v.channels != in_channels_[0])
      refuse("the block has " + std::to_string(v.channels) + " channel(s), the processor's input " +
             std::to_string(in_channels_[0]));
    NumpyArray y = out ? *out : (x.ndim() == 1 && out_channels_[0] == 1 ? new_array(v.dtype, {v.frames})
                                                                       : new_array(v.dtype, {out_channels_[0], v.frames}));
    check_output(y, v, out_channels_[0]);
    in_ptrs_.assign(v.channel_data.begin(), v.channel_data.end());
    out_ptrs_ = channel_pointers(y);
    run_block(v.dtype, v.frames);
    return y;
  }

  std::vector<NumpyArray> process_many(const std::vector<AnyArray>& xs) {
    Busy busy(busy_);
    if (xs.size() != in_channels_.size())
      refuse("the graph has " + std::to_string(in_channels_.size()) + " input(s) but " + std::to_string(xs.size()) +
             " block(s) were given");
    std::vector<PlanarView> views;
    for (const AnyArray& x : xs) views.push_back(planar_view(x, "a block"));
    std::vector<NumpyArray> ys;
    for (std::size_t k = 0; k < out_channels_.size(); ++k)
      ys.push_back(new_array(views[0].dtype, {out_channels_[k], views[0].frames}));
    std::vector<std::vector<const void*>> ins;
    for (std::size_t i = 0; i < views.size(); ++i) {
      if (views[i].dtype != views[0].dtype || views[i].frames != views[0].frames)
        refuse("every block must have one sample type and one length");
      if (views[i].channels != in_channels_[i]) refuse("block " + std::to_string(i) + " has the wrong channel count");
      ins.push_back(views[i].channel_data);
    }
    std::vector<std::vector<void*>> outs;
    for (NumpyArray& y : ys) outs.push_back(channel_pointers(y));
    if (views[0].dtype == DType::f32) run_many<float>(ins, outs, views[0].frames);
    else run_many<double>(ins, outs, views[0].frames);
    return ys;
  }

  void reset() {
    Busy busy(busy_);
    processor_.reset();
  }
  void set(const std::string& name, std::variant<double, std::string> value) {
    if (auto* v = std::get_if<double>(&value)) processor_.set(name, *v);
    else processor_.set(name, std::get<std::string>(value));
  }
  void set_many(const std::vector<std::pair<std::string, std::variant<double, std::string>>>& values) {
    std::vector<ParamValue> list;
    for (const auto& [name, value] : values) list.push_back({name, value});
    processor_.set(list);
  }
  double get(const std::string& name) const { return processor_.get(name); }
  nb::bytes save_state() {
    Busy busy(busy_);
    std::string s = processor_.save_state();
    return nb::bytes(s.data(), s.size());
  }
  void load_state(nb::bytes bytes) {
    Busy busy(busy_);
    processor_.load_state(std::string_view(bytes.c_str(), bytes.size()));
  }

 private:
  static Program bound_program(const PyProgram& program, int channels) {
    std::vector<std::size_t> counts;
    bool open = false;
    for (const PortInfo& p : program.base().inputs()) {
      open = open || p.channels == 0;
      counts.push_back(p.channels ? static_cast<std::size_t>(p.channels) : static_cast<std::size_t>(channels));
    }
    if (open && channels <= 0 && program.options().channels == 0)
      refuse("the graph's input has no declared channel count: give processor(channels=...)");
    // Every input's count known (declared, or given by compile(channels=)): a count no input
    // has was ignored without a word, and the first block then refused.
    if (!open && channels > 0) {
      std::string counts;
      bool fits = false;
      for (const PortInfo& p : program.base().inputs()) {
        counts += (counts.empty() ? "" : ", ") + p.name + ": " + std::to_string(p.channels);
        fits = fits || p.channels == channels;
      }
      if (!fits)
        refuse("processor(channels=" + std::to_string(channels) + "): no input of this program has that count (" +
               counts + "); channels= gives an input declared without a count its own, where compile() did not");
    }
    if (channels <= 0) return program.for_channels({});
    return program.for_channels(counts);
  }

  void check_output(NumpyArray& y, const PlanarView& in, std::size_t channels) {
    std::size_t nd = y.ndim();
    bool ok = (nd == 1 || nd == 2) && y.shape(nd - 1) == in.frames && (nd == 1 ? 1 : y.shape(0)) == channels &&
              y.dtype() == (in.dtype == DType::f32 ? nb::dtype<float>() : nb::dtype<double>());
    if (!ok) refuse("out= must be a C-contiguous array of the block's sample type shaped (" + std::to_string(channels) +
                    ", " + std::to_string(in.frames) + ")");
    AnyArray view(y);
    planar_view(view, "out=");  // contiguity
  }

  void run_block(DType dtype, std::size_t frames) {
    auto go = [&] {
      if (dtype == DType::f32)
        processor_.process(reinterpret_cast<const float* const*>(in_ptrs_.data()),
                           reinterpret_cast<float* const*>(out_ptrs_.data()), frames);
      else
        processor_.process(reinterpret_cast<const double* const*>(in_ptrs_.data()),
                           reinterpret_cast<double* const*>(out_ptrs_.data()), frames);
    };
    if (frames * in_ptrs_.size() > 16384) {
      nb::gil_scoped_release release;
      go();
    } else {
      go();
    }
    raise_device_error();
  }

  // On the GPU a call cannot throw: one the device failed in wrote zeros. Never a silent zero.
  void raise_device_error() const {
    if (std::string failed = processor_.device_error(); !failed.empty())
      refuse("the GPU failed during a block (its outputs are zeros; prepare a new Processor): " + failed);
  }

  template <class T>
  void run_many(const std::vector<std::vector<const void*>>& ins, const std::vector<std::vector<void*>>& outs,
                std::size_t frames) {
    std::vector<const T* const*> in;
    for (const auto& c : ins) in.push_back(reinterpret_cast<const T* const*>(c.data()));
    std::vector<T* const*> out;
    for (const auto& c : outs) out.push_back(reinterpret_cast<T* const*>(c.data()));
    {
      nb::gil_scoped_release release;
      processor_.process(std::span<const T* const* const>(in), std::span<T* const* const>(out), frames);
    }
    raise_device_error();
  }

  Program program_;
  Processor processor_;
  std::vector<std::size_t> in_channels_, out_channels_;
  bool single_ = true;
  std::atomic<bool> busy_{false};
  std::vector<const void*> in_ptrs_;
  std::vector<void*> out_ptrs_;
};

}  // namespace

void bind_processor(nb::module_& m) {
  nb::class_<PyProcessor>(m, "Processor")
      .def(
          "__init__",
          [](PyProcessor* self, const PyProgram& program, std::size_t block, int channels) {
            nb::gil_scoped_release release;  // compiling and preparing may take a while
            new (self) PyProcessor(program, block, channels);
          },
          nb::arg("program"), nb::arg("block"), nb::arg("channels"))
      .def_prop_ro("max_block", &PyProcessor::max_block)
      .def_prop_ro("input_channels", &PyProcessor::input_channels)
      .def_prop_ro("output_channels", &PyProcessor::output_channels)
      .def("process", &PyProcessor::process, nb::arg("x"), nb::arg("out") = nb::none())
      .def("process_many", &PyProcessor::process_many, nb::arg("blocks"))
      .def("reset", &PyProcessor::reset)
      .def("set", &PyProcessor::set, nb::arg("name"), nb::arg("value"))
      .def("set_many", &PyProcessor::set_many, nb::arg("values"))
      .def("get", &PyProcessor::get, nb::arg("name"))
      .def("save_state", &PyProcessor::save_state)
      .def("load_state", &PyProcessor::load_state, nb::arg("state"));
}

}  // namespace fxc::python

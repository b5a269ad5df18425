// SPDX-License-Identifier: Apache-2.0
#include "python/src/program_binding.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/complex.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <variant>

#include "python/src/arrays.h"

namespace fxc::python {

namespace {

template <class T>
void run_planar(const Program& program, const std::vector<PlanarView>& views, std::vector<NumpyArray>& outputs,
                std::size_t frames) {
  std::vector<const T* const*> ins;
  std::vector<std::vector<const T*>> in_channels;
  for (const PlanarView& v : views) {
    in_channels.emplace_back();
    for (const void* p : v.channel_data) in_channels.back().push_back(static_cast<const T*>(p));
  }
  for (auto& c : in_channels) ins.push_back(c.data());
  std::vector<std::vector<T*>> out_channels;
  for (NumpyArray& a : outputs) {
    out_channels.emplace_back();
    for (void* p : channel_pointers(a)) out_channels.back().push_back(static_cast<T*>(p));
  }
  std::vector<T* const*> outs;
  for (auto& c : out_channels) outs.push_back(c.data());
  program.run(std::span<const T* const* const>(ins), std::span<T* const* const>(outs), frames);
}

template <class T>
void run_batch_rows(const Program& program, const std::vector<std::vector<const void*>>& in_rows,
                    const std::vector<std::vector<void*>>& out_rows, std::size_t items, std::size_t frames) {
  std::vector<std::vector<const T*>> ins;
  for (const auto& rows : in_rows) {
    ins.emplace_back();
    for (const void* p : rows) ins.back().push_back(static_cast<const T*>(p));
  }
  std::vector<const T* const*> in;
  for (auto& r : ins) in.push_back(r.data());
  std::vector<std::vector<T*>> outs;
  for (const auto& rows : out_rows) {
    outs.emplace_back();
    for (void* p : rows) outs.back().push_back(static_cast<T*>(p));
  }
  std::vector<T* const*> out;
  for (auto& r : outs) out.push_back(r.data());
  program.run_batch(std::span<const T* const* const>(in), std::span<T* const* const>(out), items, frames);
}

// Checks the arrays against the graph's inputs: one each, one sample type, one length.
std::vector<PlanarView> input_views(const Program& program, const std::vector<AnyArray>& arrays) {
  std::vector<PortInfo> ports = program.inputs();
  if (arrays.size() != ports.size())
    refuse("the graph has " + std::to_string(ports.size()) + " input(s) but " + std::to_string(arrays.size()) +
           " array(s) were given");
  std::vector<PlanarView> views;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    std::string what = "input '" + ports[i].name + "'";
    views.push_back(planar_view(arrays[i], what));
    if (views[i].dtype != views[0].dtype) refuse("every input must have one sample type (float32 or float64)");
    if (views[i].frames != views[0].frames)
      refuse("every input must have one length: '" + ports[0].name + "' has " + std::to_string(views[0].frames) +
             " frames, '" + ports[i].name + "' has " + std::to_string(views[i].frames));
  }
  return views;
}

}  // namespace

// GPU arrays as fxc/program.py passes them: (pointer, rows, frames) each.
std::vector<DeviceArray> device_arrays(const std::vector<std::tuple<std::uintptr_t, std::size_t, std::size_t>>& list) {
  std::vector<DeviceArray> out;
  for (const auto& [data, rows, frames] : list) out.push_back({data, rows, frames});
  return out;
}

std::vector<std::pair<std::string, int>> port_pairs(const std::vector<PortInfo>& ports) {
  std::vector<std::pair<std::string, int>> r;
  for (const PortInfo& port : ports) r.emplace_back(port.name, port.channels);
  return r;
}

PyProgram::PyProgram(std::string source, std::string name, Options options)
    : source_(std::move(source)), name_(std::move(name)), base_(Program::from_source(source_, options, name_)) {
  // An input without a channel count defers the design to the first call; a graph that
  // cannot be designed at this rate (a cutoff above Nyquist) should fail here, at compile().
  if (options.channels != 0) return;
  for (const PortInfo& port : base_.inputs())
    if (port.channels == 0) {
      options.channels = 1;
      options.compile_kernels = false;
      try {
        probe_.emplace(Program::from_source(source_, options, name_));
      } catch (const Error& e) {
        // Not the channel errors: one channel may clash with another input's declared count.
        if (e.code() != "fx-channels" && e.code() != "fxc-channels") throw;
      }
      return;
    }
}

Program PyProgram::for_channels(const std::vector<std::size_t>& channels) const {
  std::vector<PortInfo> ports = base_.inputs();
  int undeclared = 0;
  for (std::size_t i = 0; i < ports.size() && i < channels.size(); ++i) {
    int have = static_cast<int>(channels[i]);
    if (have == 0) refuse("input '" + ports[i].name + "': the array has no channels");
    if (ports[i].channels != 0) {
      if (have != ports[i].channels)
        refuse("input '" + ports[i].name + "' is declared with " + std::to_string(ports[i].channels) +
               " channel(s), but its array has " + std::to_string(have));
      continue;
    }
    if (undeclared != 0 && have != undeclared)
      refuse("the inputs declared without a channel count take one count per call, but '" + ports[i].name +
             "' has " + std::to_string(have) + " and an earlier one " + std::to_string(undeclared));
    undeclared = have;
  }
  if (undeclared == 0 || base_.options().channels == undeclared) return base_;
  if (base_.options().channels != 0)
    refuse("the program was compiled for " + std::to_string(base_.options().channels) +
           " channel(s) (channels=), but the array has " + std::to_string(undeclared));
  std::lock_guard lock(mutex_);
  auto it = by_channels_.find(undeclared);
  if (it == by_channels_.end()) {
    Options options = base_.options();
    options.channels = undeclared;
    Program program = Program::from_source(source_, options, name_);
    for (const ParamInfo& p : base_.params())
      if (p.value != program.get(p.name)) program.set(p.name, p.value);
    it = by_channels_.emplace(undeclared, std::move(program)).first;
  }
  return it->second;
}

Program PyProgram::for_dump() const {
  std::lock_guard lock(mutex_);
  return by_channels_.empty() ? base_ : by_channels_.begin()->second;
}

void PyProgram::set(const std::vector<ParamValue>& values) {
  std::lock_guard lock(mutex_);
  std::vector<ParamValue> before;
  for (const ParamValue& v : values) before.push_back({v.name, base_.get(v.name)});
  // The probe and the compiled ones first: they refuse what base_ (nothing compiled) cannot see.
  // Each reads a text value in the parameter's declared unit, so all get one number; each
  // takes the values together (a run on another thread sees all or none).
  std::vector<Program*> programs;
  if (probe_) programs.push_back(&*probe_);
  for (auto& [channels, program] : by_channels_) programs.push_back(&program);
  programs.push_back(&base_);
  std::size_t done = 0;
  try {
    for (; done < programs.size(); ++done) programs[done]->set(values);
  } catch (...) {
    // Back to the values each held (accepted there before): each on its own, so that one
    // failing restore neither stops the others nor replaces the error being reported.
    for (std::size_t k = 0; k < done; ++k) try {
        programs[k]->set(before);
      } catch (...) {
      }
    throw;
  }
}

void PyProgram::set(const std::string& name, double value) { set(std::vector<ParamValue>{{name, value}}); }
void PyProgram::set(const std::string& name, const std::string& value_with_unit) {
  set(std::vector<ParamValue>{{name, value_with_unit}});
}

std::string PyProgram::warnings() const {
  std::lock_guard lock(mutex_);
  if (!by_channels_.empty()) return by_channels_.begin()->second.warnings();
  return probe_ ? probe_->warnings() : base_.warnings();
}

void bind_program(nb::module_& m) {
  nb::class_<PyProgram>(m, "Program")
      .def(
          "__init__",
          [](PyProgram* self, std::string source, std::string name, double fs, std::string dtype, std::string target,
             int channels, std::size_t max_block, std::string cache_dir, std::vector<std::string> settings,
             bool live, bool fuse, std::size_t signal_length, std::string cuda_architecture) {
            Options o;
            o.sample_rate_hz = fs;
            o.dtype = parse_dtype(dtype);
            if (target == "cpu") o.target = Target::cpu;
            else if (target == "cuda") o.target = Target::cuda;
            else if (target == "reference" || target == "ref") o.target = Target::reference;
            else refuse("target must be \"cpu\", \"cuda\" or \"reference\", got \"" + target + "\"");
            if (channels < 0) refuse("channels must be a positive count (or None), got " + std::to_string(channels));
            o.channels = channels;
            o.max_block = max_block;
            o.cache_directory = cache_dir;
            o.settings = std::move(settings);
            o.live_unranged_params = live;
            o.fuse = fuse;
            o.signal_length = signal_length;
            o.cuda_architecture = std::move(cuda_architecture);
            nb::gil_scoped_release release;
            new (self) PyProgram(std::move(source), std::move(name), o);
          },
          nb::arg("source"), nb::arg("name"), nb::arg("fs"), nb::arg("dtype"), nb::arg("target"),
          nb::arg("channels"), nb::arg("max_block"), nb::arg("cache_dir"), nb::arg("settings"), nb::arg("live"),
          nb::arg("fuse"), nb::arg("signal_length"), nb::arg("cuda_architecture"))
      .def_prop_ro("source", &PyProgram::source)
      .def_prop_ro("source_name", &PyProgram::source_name)
      .def_prop_ro("name", [](const PyProgram& p) { return p.base().name(); })
      .def_prop_ro("fs", [](const PyProgram& p) { return p.options().sample_rate_hz; })
      .def_prop_ro("dtype", [](const PyProgram& p) { return p.options().dtype == DType::f32 ? "float32" : "float64"; })
      .def_prop_ro("target",
                   [](const PyProgram& p) {
                     Target t = p.options().target;
                     return t == Target::cpu ? "cpu" : t == Target::cuda ? "cuda" : "reference";
                   })
      .def_prop_ro("channels", [](const PyProgram& p) { return p.options().channels; })
      .def("inputs", [](const PyProgram& p) { return port_pairs(p.base().inputs()); })
      .def("outputs", [](const PyProgram& p) { return port_pairs(p.base().outputs()); })
      .def("params",
           [](const PyProgram& p) {
             nb::list r;
             for (const ParamInfo& info : p.base().params()) {
               nb::dict d;
               d["name"] = info.name;
               d["unit"] = info.unit;
               d["value"] = info.value;
               d["min"] = info.min;
               d["max"] = info.max;
               d["has_range"] = info.has_range;
               r.append(d);
             }
             return r;
           })
      .def("set",
           [](PyProgram& p, const std::string& name, std::variant<double, std::string> value) {
             nb::gil_scoped_release release;
             if (auto* v = std::get_if<double>(&value)) p.set(name, *v);
             else p.set(name, std::get<std::string>(value));
           })
      .def("set_many",
           [](PyProgram& p, const std::vector<std::pair<std::string, std::variant<double, std::string>>>& values) {
             std::vector<ParamValue> list;
             for (const auto& [name, value] : values) list.push_back({name, value});
             nb::gil_scoped_release release;
             p.set(list);
           })
      .def("get", [](const PyProgram& p, const std::string& name) { return p.base().get(name); })
      .def("warnings", [](const PyProgram& p) { return p.warnings(); })
      .def(
          "output_channels",
          [](const PyProgram& self, const std::vector<std::size_t>& channels) {
            nb::gil_scoped_release release;
            std::vector<int> out;
            for (const PortInfo& port : self.for_channels(channels).outputs()) out.push_back(port.channels);
            return out;
          },
          nb::arg("channels"))
      // GPU memory the caller owns (fxc/program.py reads it from __cuda_array_interface__):
      // (pointer, channels, frames) per input and output, and the CUstream to run on.
      .def(
          "run_device",
          [](const PyProgram& self, const std::vector<std::tuple<std::uintptr_t, std::size_t, std::size_t>>& inputs,
             const std::vector<std::tuple<std::uintptr_t, std::size_t, std::size_t>>& outputs, std::uintptr_t stream) {
            std::vector<DeviceArray> in = device_arrays(inputs), out = device_arrays(outputs);
            std::vector<std::size_t> channels;
            for (const DeviceArray& a : in) channels.push_back(a.channels);
            nb::gil_scoped_release release;
            self.for_channels(channels).run_device(in, out, stream);
          },
          nb::arg("inputs"), nb::arg("outputs"), nb::arg("stream"))
      // A batch (B, C, T) in GPU memory: (pointer, B x C rows, frames) per array.
      .def(
          "run_batch_device",
          [](const PyProgram& self, const std::vector<std::tuple<std::uintptr_t, std::size_t, std::size_t>>& inputs,
             const std::vector<std::tuple<std::uintptr_t, std::size_t, std::size_t>>& outputs, std::size_t items,
             std::uintptr_t stream) {
            std::vector<DeviceArray> in = device_arrays(inputs), out = device_arrays(outputs);
            std::vector<std::size_t> channels;  // one item's
            for (const DeviceArray& a : in) channels.push_back(items ? a.channels / items : a.channels);
            nb::gil_scoped_release release;
            self.for_channels(channels).run_batch_device(in, out, items, stream);
          },
          nb::arg("inputs"), nb::arg("outputs"), nb::arg("items"), nb::arg("stream"))
      .def(
          "run",
          [](const PyProgram& self, const std::vector<AnyArray>& arrays, std::optional<std::vector<NumpyArray>> out) {
            std::vector<PlanarView> views = input_views(self.base(), arrays);
            std::vector<std::size_t> channels;
            for (const PlanarView& v : views) channels.push_back(v.channels);
            std::size_t frames = views.empty() ? 0 : views[0].frames;
            DType dtype = views.empty() ? self.options().dtype : views[0].dtype;
            Program program = [&] {
              nb::gil_scoped_release release;
              return self.for_channels(channels);
            }();
            std::vector<PortInfo> ports = program.outputs();
            std::vector<NumpyArray> outputs;
            if (out) {
              // Caller memory (out=): no allocation, no page faults on a fresh array.
              if (out->size() != ports.size())
                refuse("out= needs " + std::to_string(ports.size()) + " array(s), one per output");
              for (std::size_t k = 0; k < ports.size(); ++k) {
                PlanarView v = planar_view(AnyArray((*out)[k]), "out=");
                if (v.dtype != dtype || v.frames != frames || v.channels != static_cast<std::size_t>(ports[k].channels))
                  refuse("out= array " + std::to_string(k) + " must be " + (dtype == DType::f32 ? "float32" : "float64") +
                         " shaped (" + std::to_string(ports[k].channels) + ", " + std::to_string(frames) + ")");
              }
              outputs = std::move(*out);
            } else {
              for (const PortInfo& port : ports)
                outputs.push_back(new_array(dtype, {static_cast<std::size_t>(port.channels), frames}));
            }
            {
              nb::gil_scoped_release release;
              if (dtype == DType::f32) run_planar<float>(program, views, outputs, frames);
              else run_planar<double>(program, views, outputs, frames);
            }
            return outputs;
          },
          nb::arg("inputs"), nb::arg("out") = nb::none())
      .def(
          "run_batch",
          [](const PyProgram& self, const std::vector<AnyArray>& arrays) {
            // (items, channels, frames) per input, C order: each item's channels are rows of
            // the array, so the batch runs on the arrays' memory (Program::run_batch's planar
            // form), one dispatch per kernel for all items.
            std::vector<PortInfo> ports = self.base().inputs();
            if (arrays.size() != ports.size())
              refuse("the graph has " + std::to_string(ports.size()) + " input(s) but " +
                     std::to_string(arrays.size()) + " array(s) were given");
            std::size_t items = arrays.empty() || arrays[0].ndim() != 3 ? 0 : arrays[0].shape(0);
            if (items == 0) refuse("a batch needs (items, channels, frames) arrays with at least one item");
            std::vector<PlanarView> views;
            std::vector<std::size_t> channels;
            for (std::size_t i = 0; i < arrays.size(); ++i) {
              const AnyArray& a = arrays[i];
              if (a.ndim() != 3 || a.shape(0) != items)
                refuse("every input of a batch must be (items, channels, frames) with one item count");
              views.push_back(planar_view(a, "input '" + ports[i].name + "'", 0, true));
              channels.push_back(views.back().channels);
              if (views[i].dtype != views[0].dtype || views[i].frames != views[0].frames)
                refuse("every input of a batch must have one sample type and one length");
            }
            DType dtype = views.empty() ? self.options().dtype : views[0].dtype;
            std::size_t frames = views.empty() ? 0 : views[0].frames;
            Program program = [&] {
              nb::gil_scoped_release release;
              return self.for_channels(channels);
            }();
            std::vector<NumpyArray> outputs;
            for (const PortInfo& port : program.outputs())
              outputs.push_back(new_array(dtype, {items, static_cast<std::size_t>(port.channels), frames}));
            // Pointer rows: item b's channel c at b x channels + c.
            std::vector<std::vector<const void*>> in_rows;
            for (std::size_t i = 0; i < views.size(); ++i) {
              in_rows.emplace_back();
              for (std::size_t b = 0; b < items; ++b)
                for (const void* row : planar_view(arrays[i], "input", b, true).channel_data) in_rows.back().push_back(row);
            }
            std::vector<std::vector<void*>> out_rows;
            for (NumpyArray& out : outputs) {
              out_rows.emplace_back();
              for (std::size_t b = 0; b < items; ++b)
                for (void* row : channel_pointers(out, b)) out_rows.back().push_back(row);
            }
            {
              nb::gil_scoped_release release;
              if (dtype == DType::f32) run_batch_rows<float>(program, in_rows, out_rows, items, frames);
              else run_batch_rows<double>(program, in_rows, out_rows, items, frames);
            }
            return outputs;
          },
          nb::arg("inputs"))
      .def(
          "dump",
          [](const PyProgram& p, std::string emit, std::string format, std::vector<std::string> passes,
             bool print_after_all, bool locations, bool llvm_optimized) {
            DumpOptions o;
            o.emit = std::move(emit);
            o.format = std::move(format);
            o.passes = std::move(passes);
            o.print_after_all = print_after_all;
            o.locations = locations;
            o.llvm_optimized = llvm_optimized;
            nb::gil_scoped_release release;
            return p.for_dump().dump(o);
          },
          nb::arg("emit") = "ir-opt", nb::arg("format") = "text", nb::arg("passes") = std::vector<std::string>{},
          nb::arg("print_after_all") = false, nb::arg("locations") = true, nb::arg("llvm_optimized") = false)
      .def("frequency_response", [](const PyProgram& p, const std::vector<double>& frequencies) {
        std::vector<FrequencyResponse> responses;
        {
          nb::gil_scoped_release release;
          responses = p.base().frequency_response(frequencies);
        }
        nb::list r;
        for (FrequencyResponse& f : responses) {
          auto* data = new std::complex<double>[std::max<std::size_t>(f.response.size(), 1)];
          std::copy(f.response.begin(), f.response.end(), data);
          nb::capsule owner(data, [](void* q) noexcept { delete[] static_cast<std::complex<double>*>(q); });
          nb::ndarray<nb::numpy, std::complex<double>> h(data, {f.response.size()}, owner);
          r.append(nb::make_tuple(f.output_index, f.input_index, h));
        }
        return r;
      });
}

}  // namespace fxc::python

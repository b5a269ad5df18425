// SPDX-License-Identifier: Apache-2.0
// fxc._core: the native half of the Python package. fxc::Error becomes fxc.Error (a
// ValueError, defined in python/fxc/errors.py) with its code and location; fxc::InternalError
// becomes fxc.InternalError.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fxc/fxc.h>

#include "codegen/cpu/cpu_compiler.h"
#include "codegen/cuda/cuda_driver.h"
#include "codegen/cuda/nvrtc.h"
#include "driver/kernel_cache.h"
#include "frontend/stage_args.h"
#include "python/src/program_binding.h"
#include "runtime/counters.h"

namespace fxc::python {

void bind_processor(nb::module_& m);
void bind_corpus(nb::module_& m);

namespace {

void raise_python(const char* class_name, nb::object instance_args, nb::kwargs kwargs) {
  nb::object cls = nb::module_::import_("fxc.errors").attr(class_name);
  nb::object error = cls(*instance_args, **kwargs);
  PyErr_SetObject(cls.ptr(), error.ptr());
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    nb::kwargs kw;
    kw["code"] = e.code();
    kw["file"] = e.file();
    kw["line"] = e.line();
    kw["column"] = e.column();
    kw["report"] = e.report(false);
    raise_python("Error", nb::make_tuple(e.message()), kw);
  } catch (const InternalError& e) {
    raise_python("InternalError", nb::make_tuple(std::string(e.what())), nb::kwargs());
  }
}

// What `fxc info` prints, as a dict.
nb::dict info() {
  nb::dict d;
  d["version"] = version();
  d["llvm"] = codegen::llvm_version_string();
  std::string target = codegen::cpu_target_id();
  d["cpu_target"] = target.substr(0, target.find(' '));  // the CPU, without its feature list
  codegen::CudaDriverInfo cuda = codegen::query_cuda_driver();
  d["cuda"] = codegen::cuda_status(cuda);
  d["cuda_devices"] = cuda.devices.size();
  std::optional<std::string> nvrtc = codegen::nvrtc_version();
  d["nvrtc"] = nvrtc ? nb::cast(*nvrtc) : nb::none();
  // Which NVRTC and why (fxc info's NVRTC line): the path loaded, or why none did.
  const codegen::NvrtcChoice& choice = codegen::nvrtc_choice();
  d["nvrtc_path"] = choice.found() ? nb::cast(choice.path) : nb::none();
  d["nvrtc_reason"] = choice.found() ? choice.reason : choice.error;
  d["cache_dir"] = KernelCache::default_directory({});
  d["threads"] = threads();
  return d;
}

// The process's counters, as `fxc run --stats` prints them.
nb::dict stats() {
  const Counters& c = counters();
  nb::dict d;
  d["compiles"] = c.compiles.load();
  d["memory_hits"] = c.memory_hits.load();
  d["disk_hits"] = c.disk_hits.load();
  d["dispatches"] = c.dispatches.load();
  d["gpu_launches"] = c.gpu_launches.load();
  return d;
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "fxc's native module; use the fxc package";
  // A Dask worker exits with the Programs of its tasks still referenced from distributed's own
  // structures, which outlive the module's teardown: nanobind would print "leaked instances
  // ... a reference counting issue in the binding code" on every worker's exit, though
  // nothing of fxc's leaks (a process that drops its Programs exits quietly).
  nb::set_leak_warnings(false);
  nb::register_exception_translator(translate);
  m.def("version", [] { return std::string(version()); });
  m.def("info", &info);
  m.def("stats", &stats);
  m.def("set_threads", &set_threads, nb::arg("threads"));
  m.def("threads", &threads);
  m.def("clear_kernel_memory_cache", &clear_kernel_memory_cache);
  m.def("scipy_word", [](const std::string& word) -> std::optional<std::string> {
    if (auto name = frontend::scipy_name_for(word)) return std::string(*name);
    return std::nullopt;
  });
  m.def(
      "inspect_source",
      [](const std::string& text, const std::string& name, const std::vector<std::string>& settings) {
        GraphInfo info;
        {
          nb::gil_scoped_release release;
          info = inspect_source(text, name, settings);
        }
        nb::dict d;
        d["inputs"] = port_pairs(info.inputs);
        d["outputs"] = port_pairs(info.outputs);
        nb::list params;
        for (const ParamInfo& p : info.params) params.append(nb::make_tuple(p.name, p.unit, p.value));
        d["params"] = params;
        return d;
      },
      nb::arg("text"), nb::arg("name"), nb::arg("settings"));
  bind_program(m);
  bind_processor(m);
  bind_corpus(m);
}

}  // namespace fxc::python

// SPDX-License-Identifier: Apache-2.0
// The corpus runner of `fxc run --out-dir` for Python (fxc.dask and fxc.corpus): the same
// file listing, output names and per-file processing, so outputs are the command's bytes.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fxc/fxc.h>

#include "corpus/abandoned_pending.h"
#include "corpus/corpus_runner.h"
#include "corpus/file_list.h"
#include "corpus/output_names.h"
#include "python/src/arrays.h"

namespace fxc::python {

namespace nb = nanobind;

namespace {

constexpr const char* kCorpus = "fxc-corpus";

// Paths and messages cross as bytes (Python decodes them with os.fsdecode): a file name
// that is not UTF-8 is still a file, and one such name must not stop a corpus.
nb::bytes to_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }
std::string from_bytes(const nb::bytes& b) { return std::string(b.c_str(), b.size()); }

nb::list to_bytes_list(const std::vector<std::string>& list) {
  nb::list out;
  for (const std::string& s : list) out.append(to_bytes(s));
  return out;
}

std::vector<std::string> from_bytes_list(const std::vector<nb::bytes>& list) {
  std::vector<std::string> out;
  for (const nb::bytes& b : list) out.push_back(from_bytes(b));
  return out;
}

nb::dict to_dict(const corpus::FileResult& r) {
  nb::dict d;
  d["input"] = to_bytes(r.input);
  d["outputs"] = to_bytes_list(r.outputs);
  d["status"] = r.status == corpus::FileResult::Status::written   ? "written"
                : r.status == corpus::FileResult::Status::skipped ? "skipped"
                                                                  : "failed";
  d["message"] = to_bytes(r.message);
  d["warnings"] = to_bytes(r.warnings);
  d["frames"] = r.frames;
  d["sample_rate"] = r.sample_rate_hz;
  d["channels"] = r.channels;
  d["peak"] = r.peak;
  d["seconds"] = r.seconds;
  return d;
}

}  // namespace

void bind_corpus(nb::module_& m) {
  m.def(
      "list_inputs",
      [](const std::vector<nb::bytes>& specs, const std::vector<nb::bytes>& outputs_within) {
        std::vector<std::string> paths = from_bytes_list(specs);
        std::vector<std::string> skipped = from_bytes_list(outputs_within);
        Expected<std::vector<corpus::InputFile>, std::string> files = [&] {
          nb::gil_scoped_release release;
          return corpus::list_inputs(paths, skipped);
        }();
        if (!files) refuse(files.error(), kCorpus);
        nb::list r;
        for (const corpus::InputFile& f : *files) r.append(nb::make_tuple(to_bytes(f.path), to_bytes(f.relative_dir)));
        return r;
      },
      nb::arg("specs"), nb::arg("outputs_within") = std::vector<nb::bytes>{});
  m.def(
      "all_output_paths",
      [](const nb::bytes& out_dir, const nb::bytes& pattern, const std::vector<std::pair<nb::bytes, nb::bytes>>& files,
         const std::vector<std::string>& output_names) {
        // Every input's outputs, with the checks `fxc run` makes before it runs anything: two
        // inputs to one output, an output over an input.
        std::vector<corpus::InputFile> inputs;
        for (const auto& [path, dir] : files) inputs.push_back({from_bytes(path), from_bytes(dir)});
        auto paths = corpus::all_output_paths({from_bytes(out_dir), from_bytes(pattern)}, inputs, output_names);
        if (!paths) refuse(paths.error(), kCorpus);
        nb::list r;
        for (const std::vector<std::string>& outs : *paths) r.append(to_bytes_list(outs));
        return r;
      },
      nb::arg("out_dir"), nb::arg("pattern"), nb::arg("files"), nb::arg("output_names"));

  m.def(
      "remove_abandoned_pending",
      [](const std::vector<nb::bytes>& outputs) {
        std::vector<std::string> paths = from_bytes_list(outputs);
        nb::gil_scoped_release release;
        return corpus::remove_abandoned_pending(paths);
      },
      nb::arg("outputs"));

  nb::class_<corpus::CorpusRunner>(m, "CorpusRunner")
      .def(
          "__init__",
          [](corpus::CorpusRunner* self, std::string source, std::string name, double fs, std::string dtype,
             std::vector<std::string> settings, std::string cache_dir, std::optional<std::string> subtype,
             bool skip_existing, std::size_t block) {
            corpus::RunnerOptions o;  // `fxc run`'s options: the same kernels, the same bytes
            o.options.sample_rate_hz = fs;  // 0: each file's own
            o.options.dtype = parse_dtype(dtype);
            o.options.settings = std::move(settings);
            o.options.cache_directory = std::move(cache_dir);
            o.subtype = std::move(subtype);
            o.skip_existing = skip_existing;
            o.block = block;  // 0: each file whole
            nb::gil_scoped_release release;
            new (self) corpus::CorpusRunner(std::move(source), true, std::move(o), std::move(name));
          },
          nb::arg("source"), nb::arg("name"), nb::arg("fs"), nb::arg("dtype"), nb::arg("settings"),
          nb::arg("cache_dir"), nb::arg("subtype"), nb::arg("skip_existing"), nb::arg("block") = 0)
      .def("output_names", &corpus::CorpusRunner::output_names)
      .def(
          "process",
          [](const corpus::CorpusRunner& runner, const nb::bytes& path, const nb::bytes& relative_dir,
             const std::vector<nb::bytes>& outputs) {
            corpus::InputFile input{from_bytes(path), from_bytes(relative_dir)};
            std::vector<std::string> names = from_bytes_list(outputs);
            corpus::FileResult r;
            {
              nb::gil_scoped_release release;
              r = runner.process(input, names);
            }
            return to_dict(r);
          },
          nb::arg("path"), nb::arg("relative_dir"), nb::arg("outputs"));
}

}  // namespace fxc::python

// SPDX-License-Identifier: Apache-2.0
// The corpus runner of `fxc run --out-dir` for Python (fxc.dask and fxc.corpus): the same
// file listing, output names and per-file processing, so outputs are the command's bytes.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fxc/fxc.h>

#include "corpus/corpus_runner.h"
#include "corpus/file_list.h"
#include "corpus/output_names.h"
#include "python/src/arrays.h"

namespace fxc::python {

namespace nb = nanobind;

namespace {

[[noreturn]] void refuse(const std::string& message) { throw Error(message, message, "fxc-corpus"); }

nb::dict to_dict(const corpus::FileResult& r) {
  nb::dict d;
  d["input"] = r.input;
  d["outputs"] = r.outputs;
  d["status"] = r.status == corpus::FileResult::Status::written   ? "written"
                : r.status == corpus::FileResult::Status::skipped ? "skipped"
                                                                  : "failed";
  d["message"] = r.message;
  d["warnings"] = r.warnings;
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
      [](const std::vector<std::string>& specs) {
        auto files = corpus::list_inputs(specs);
        if (!files) refuse(files.error());
        std::vector<std::pair<std::string, std::string>> r;
        for (const corpus::InputFile& f : *files) r.emplace_back(f.path, f.relative_dir);
        return r;
      },
      nb::arg("specs"));
  m.def(
      "shard",
      [](const std::vector<std::pair<std::string, std::string>>& files, int index, int count) {
        if (count < 1 || index < 1 || index > count)
          refuse("a shard is I/N with 1 <= I <= N, got " + std::to_string(index) + "/" + std::to_string(count));
        std::vector<corpus::InputFile> list;
        for (const auto& [path, dir] : files) list.push_back({path, dir});
        std::vector<std::pair<std::string, std::string>> r;
        for (const corpus::InputFile& f : corpus::shard(std::move(list), index, count)) r.emplace_back(f.path, f.relative_dir);
        return r;
      },
      nb::arg("files"), nb::arg("index"), nb::arg("count"));
  m.def(
      "output_paths",
      [](const std::string& out_dir, const std::string& pattern, const std::string& path, const std::string& relative_dir,
         const std::vector<std::string>& output_names) {
        auto paths = corpus::output_paths({out_dir, pattern}, {path, relative_dir}, output_names);
        if (!paths) refuse(paths.error());
        return *paths;
      },
      nb::arg("out_dir"), nb::arg("pattern"), nb::arg("path"), nb::arg("relative_dir"), nb::arg("output_names"));

  nb::class_<corpus::CorpusRunner>(m, "CorpusRunner")
      .def(
          "__init__",
          [](corpus::CorpusRunner* self, std::string source, std::string name, double fs, std::string dtype,
             std::vector<std::string> settings, std::string cache_dir, std::optional<std::string> subtype,
             bool skip_existing) {
            // `name` names the graph in messages; the runner takes it from the source text.
            corpus::RunnerOptions o;  // `fxc run`'s options: the same kernels, the same bytes
            o.options.sample_rate_hz = fs;  // 0: each file's own
            o.options.dtype = parse_dtype(dtype);
            o.options.settings = std::move(settings);
            o.options.cache_directory = std::move(cache_dir);
            o.subtype = std::move(subtype);
            o.skip_existing = skip_existing;
            (void)name;
            nb::gil_scoped_release release;
            new (self) corpus::CorpusRunner(std::move(source), true, std::move(o));
          },
          nb::arg("source"), nb::arg("name"), nb::arg("fs"), nb::arg("dtype"), nb::arg("settings"),
          nb::arg("cache_dir"), nb::arg("subtype"), nb::arg("skip_existing"))
      .def("output_names", &corpus::CorpusRunner::output_names)
      .def(
          "process",
          [](const corpus::CorpusRunner& runner, const std::string& path, const std::string& relative_dir,
             const std::vector<std::string>& outputs) {
            corpus::FileResult r;
            {
              nb::gil_scoped_release release;
              r = runner.process({path, relative_dir}, outputs);
            }
            return to_dict(r);
          },
          nb::arg("path"), nb::arg("relative_dir"), nb::arg("outputs"));
}

}  // namespace fxc::python

// SPDX-License-Identifier: Apache-2.0
// Diagnostic tests: each cases/NAME.fx is compiled (and, when the frontend accepts it, bound
// to 48 kHz, one channel, and designed), and the rendered diagnostics must equal
// cases/NAME.expected exactly. FXC_UPDATE_GOLDEN=1 rewrites the .expected files instead;
// review the diff by eye: each message must be clear and its caret must point at the fault.
#define DOCTEST_CONFIG_IMPLEMENT
#include "test_main.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/fx_file.h"
#include "passes/design_filters.h"
#include "passes/infer_types.h"
#include "passes/pass_context.h"

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The diagnostics of one case, rendered. The file is named NAME.fx in messages so the
// expectations do not depend on where the source tree lives.
std::string diagnose(const fs::path& path) {
  fxc::DiagnosticEngine diags;
  std::optional<fxc::ir::Graph> graph =
      fxc::frontend::compile_fx_source(read_text(path), path.filename().string(), diags);
  if (graph) {
    fxc::passes::Binding binding;
    binding.sample_rate_hz = 48000.0;
    binding.channels = 1;
    fxc::passes::PassContext context{diags, binding};
    fxc::ir::Graph typed = fxc::passes::infer_types(*graph, context);
    if (!diags.has_errors()) fxc::passes::design_filters(typed, context);
  }
  return diags.str();
}

std::vector<fs::path> cases() {
  std::vector<fs::path> out;
  for (const fs::directory_entry& e : fs::directory_iterator(FXC_DIAG_CASES_DIR))
    if (e.path().extension() == ".fx") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("every malformed .fx case renders its expected diagnostics") {
  const char* update = std::getenv("FXC_UPDATE_GOLDEN");
  bool rewrite = update && std::string(update) == "1";
  std::vector<fs::path> all = cases();
  CHECK(all.size() >= 35);
  for (const fs::path& fx : all) {
    std::string actual = diagnose(fx);
    fs::path expected_path = fs::path(fx).replace_extension(".expected");
    INFO("case: " << fx.filename().string());
    // A case exists to show an error; one that compiles cleanly has lost its point.
    CHECK_MESSAGE(actual.find(": error: ") != std::string::npos, "no error reported");
    if (rewrite) {
      std::ofstream(expected_path, std::ios::binary) << actual;
      continue;
    }
    if (!fs::exists(expected_path)) {
      FAIL_CHECK("missing " << expected_path.string() << " (run with FXC_UPDATE_GOLDEN=1)");
      continue;
    }
    CHECK(actual == read_text(expected_path));
  }
}

int main(int argc, char** argv) { return fxc::test::run_tests(argc, argv); }

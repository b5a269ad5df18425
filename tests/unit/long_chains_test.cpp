// SPDX-License-Identifier: Apache-2.0
// A graph of n chained steps compiles in memory linear in n. Fusing a run into one chain used
// to copy the run so far at every step and keep each copy until the end (n²/2 stages and
// origins): 2,000 named steps `aK = aJ | tanh()` took 415 MB, 20,000 more than 22 GB. The
// check is a bound on address space, not on time: the pipeline runs in a child process
// whose RLIMIT_AS leaves it 1 GB more than the test process has, where the quadratic
// behaviour needs about 5 GB for the 10,000 steps here.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <new>
#include <optional>
#include <string>

#include "frontend/fx_file.h"
#include "ir/nodes.h"
#include "passes/pass_context.h"
#include "passes/pipeline.h"

#include "sanitizer.h"
#include "test_skip.h"

namespace fxc {
namespace {

constexpr int kSteps = 10000;

std::string named_steps(int n) {
  std::string text = "graph d\ninput x\na0 = x\n";
  for (int i = 1; i < n; ++i) text += "a" + std::to_string(i) + " = a" + std::to_string(i - 1) + " | tanh()\n";
  return text + "output y = a" + std::to_string(n - 1) + "\n";
}

// The process's address space now, from /proc/self/statm (in pages).
std::optional<rlim_t> address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  unsigned long long pages = 0;
  if (!(statm >> pages)) return std::nullopt;
  return static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
}

// Exit statuses of the child.
enum Outcome { fused = 0, out_of_memory = 1, failed = 2, not_one_chain = 3 };

// In the child: lowers the steps and runs the default pipeline, as `fxc dump --emit ir-opt`.
[[noreturn]] void compile_steps(const std::string& text, rlim_t limit) {
  rlimit bound{limit, limit};
  if (setrlimit(RLIMIT_AS, &bound) != 0) _exit(failed);
  try {
    DiagnosticEngine diags;
    std::optional<ir::Graph> graph = frontend::compile_fx_source(text, "steps.fx", diags);
    if (!graph) _exit(failed);
    passes::PassContext context{diags, {48000.0, 1, DType::f64}};
    std::optional<ir::Graph> scheduled = passes::run_pipeline(*graph, context);
    if (!scheduled) _exit(failed);
    std::size_t stages = 0, origins = 0;
    for (const ir::Node& node : scheduled->nodes())
      if (const auto* chain = std::get_if<ir::Chain>(&node.op)) {
        stages += chain->stages.size();
        origins += node.origins.size();
      }
    _exit(stages == kSteps - 1 && origins == kSteps - 1 ? fused : not_one_chain);
  } catch (const std::bad_alloc&) {
    _exit(out_of_memory);
  } catch (...) {
    _exit(failed);
  }
}

TEST_CASE("long chains: 10,000 named steps fuse into one chain within 1 GB") {
#ifdef FXC_UNDER_SANITIZER
  test::skip("a sanitizer's shadow memory does not fit under an address-space limit");
  return;
#else
  const std::string text = named_steps(kSteps);  // made before the fork: the child only compiles
  std::optional<rlim_t> now = address_space_bytes();
  REQUIRE(now.has_value());
  const rlim_t limit = *now + (rlim_t{1} << 30);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) compile_steps(text, limit);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK_MESSAGE(WEXITSTATUS(status) != out_of_memory, "compiling the chain needed more than 1 GB");
  CHECK(WEXITSTATUS(status) == fused);
#endif
}

}  // namespace
}  // namespace fxc

// SPDX-License-Identifier: Apache-2.0
// The deepest programs the language allows (fx-language.md: 1000 levels) compile, and deeper
// ones are the documented error, on a calling thread of any stack: the frontend's recursion
// runs on a stack of its own (support/deep_stack.h). The callers here are threads of 256 KB,
// as a plugin host's or a Python thread's may be; before, 600 nested parentheses overflowed a
// 2 MB thread.
#include <doctest/doctest.h>
#include <pthread.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fxc/fxc.h>

#include "frontend/ast_dump.h"
#include "frontend/fx_file.h"
#include "frontend/parser.h"
#include "support/deep_stack.h"

namespace fxc {
namespace {

constexpr std::size_t kSmallStackBytes = 256 * 1024;

// Runs `work` on a new thread with a stack of `bytes` and waits for it. Checks are made by the
// caller, from what `work` leaves behind.
void on_thread_with_stack(std::size_t bytes, const std::function<void()>& work) {
  pthread_attr_t attributes;
  REQUIRE(pthread_attr_init(&attributes) == 0);
  REQUIRE(pthread_attr_setstacksize(&attributes, bytes) == 0);
  pthread_t thread;
  auto run = [](void* w) -> void* {
    (*static_cast<const std::function<void()>*>(w))();
    return nullptr;
  };
  REQUIRE(pthread_create(&thread, &attributes, run, const_cast<std::function<void()>*>(&work)) == 0);
  pthread_attr_destroy(&attributes);
  pthread_join(thread, nullptr);
}

std::string repeat(std::string_view piece, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += piece;
  return out;
}

struct Compiled {
  bool ok = false;
  std::string errors;
};

Compiled compile_on_small_stack(const std::string& text) {
  Compiled out;
  on_thread_with_stack(kSmallStackBytes, [&] {
    DiagnosticEngine diags;
    out.ok = frontend::compile_fx_source(text, "deep.fx", diags).has_value();
    out.errors = diags.str();
  });
  return out;
}

// A chain of n gains is n + 2 deep (each call holds its argument): fx_parser_test.cpp.
constexpr int kDeepestChain = frontend::kMaxExpressionDepth - 2;

TEST_CASE("deep stack: the result, the exception and a nested call come back") {
  CHECK(on_deep_stack([] { return std::string("made there"); }) == "made there");
  CHECK_THROWS_WITH_AS(on_deep_stack([]() -> int { throw std::runtime_error("thrown there"); }), "thrown there",
                       std::runtime_error);
  // Work inside work stays on the deep stack's thread: no thread per level.
  const bool same_thread = on_deep_stack([] {
    const pthread_t outer = pthread_self();
    return on_deep_stack([&] { return pthread_equal(outer, pthread_self()) != 0; });
  });
  CHECK(same_thread);
}

TEST_CASE("deep stack: the deepest programs compile on a thread of 256 KB, deeper ones are the error") {
  const int deepest = frontend::kMaxExpressionDepth;
  struct Case {
    const char* what;
    std::string deepest_text, too_deep_text;
  };
  const std::string head = "graph d\ninput x\n";
  auto parens = [&](int n) { return head + "output y = " + repeat("(", n) + "x" + repeat(")", n) + "\n"; };
  auto chain = [&](int n) { return head + "output y = x" + repeat(" | gain(1)", n) + "\n"; };
  auto sum = [&](int n) { return head + "output y = x" + repeat(" + x", n) + "\n"; };
  auto product = [&](int n) { return head + "output y = x" + repeat(" * 1", n) + "\n"; };
  auto selection = [&](int n) { return "graph d\ninput x : 1\noutput y = x" + repeat("[0:1]", n) + "\n"; };
  // Functions calling each other: each call counts 8 of the lowering's 1500 levels.
  auto calls = [&](int n) {
    std::string text = head;
    for (int i = 0; i < n; ++i) text += "fn f" + std::to_string(i) + "() { return f" + std::to_string(i + 1) + "() }\n";
    return text + "fn f" + std::to_string(n) + "() { return gain(1) }\noutput y = x | f0()\n";
  };
  for (const Case& c : {Case{"parentheses", parens(deepest), parens(5000)},
                        Case{"a chain of stages", chain(kDeepestChain), chain(5000)},
                        Case{"a sum", sum(deepest - 1), sum(5000)},
                        Case{"a product", product(deepest - 1), product(5000)},
                        Case{"channel selections", selection(deepest - 1), selection(5000)},
                        Case{"function calls", calls(165), calls(3000)}}) {
    INFO(std::string(c.what));
    Compiled deepest_one = compile_on_small_stack(c.deepest_text);
    CHECK_MESSAGE(deepest_one.ok, deepest_one.errors);
    Compiled too_deep = compile_on_small_stack(c.too_deep_text);
    CHECK_FALSE(too_deep.ok);
    CHECK(too_deep.errors.find("levels deep [fx-") != std::string::npos);
  }
}

TEST_CASE("deep stack: the deepest tree is printed and freed on a thread of 256 KB") {
  const std::string text = "graph d\ninput x\noutput y = x" + repeat(" | gain(1)", kDeepestChain) + "\n";
  std::size_t text_length = 0, json_length = 0, dot_length = 0;
  on_thread_with_stack(kSmallStackBytes, [&] {
    DiagnosticEngine diags;
    std::optional<frontend::Ast> ast = frontend::parse_fx_source(text, "deep.fx", diags);
    if (!ast) return;
    text_length = frontend::ast_to_text(*ast).size();
    json_length = frontend::ast_to_json_text(*ast).size();
    dot_length = frontend::ast_to_dot(*ast).size();
  });
  CHECK(text_length > 0);
  CHECK(json_length > 0);
  CHECK(dot_length > 0);
}

TEST_CASE("deep stack: Program::from_source of the deepest chain, from a thread of 256 KB") {
  const std::string text = "graph d\ninput x\noutput y = x" + repeat(" | gain(1)", kDeepestChain) + "\n";
  std::string failure = "not run";
  on_thread_with_stack(kSmallStackBytes, [&] {
    try {
      Options options;
      options.channels = 1;
      options.compile_kernels = false;
      options.cache_directory = "none";
      Program program = Program::from_source(text, options, "deep.fx");
      failure = program.dump(DumpOptions{}).empty() ? "an empty dump" : "";
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  CHECK_MESSAGE(failure.empty(), failure);
}

}  // namespace
}  // namespace fxc

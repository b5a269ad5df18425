// SPDX-License-Identifier: Apache-2.0
// Golden tests: each cases/NAME.fx starts with the fxc command line to run on it,
//
//   # RUN: fxc dump %s --emit ir --fs 44100 --channels 2
//   # EXIT: 1              (optional: the expected exit status, 0 if absent)
//   # REQUIRES: avx2       (optional: skip the case on hosts without AVX2 and FMA)
//
// `%s` becomes the case's file name and the command runs in cases/, so the output does not
// depend on where the tree lives. Standard output must equal NAME.expected exactly, and
// standard error NAME.expected-stderr (empty when that file is absent).
//
// FXC_UPDATE_GOLDEN=1 rewrites the expected files from the actual output instead (the exit
// status is never rewritten: it is part of what the case means). Review the diff by eye.
//
// Every text IR the cases print (`--emit ir`, `--emit ir-opt`, and each block of
// `--print-after-all`) must also read back with ir::parse_graph and print identically.
#define DOCTEST_CONFIG_IMPLEMENT
#include "test_main.h"

#include <filesystem>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ir/parse.h"
#include "ir/print.h"
#include "case_text.h"
#include "run_command.h"
#include "support/diagnostics.h"

namespace fs = std::filesystem;

namespace {

struct GoldenCase {
  fs::path fx;
  std::vector<std::string> args;       // the RUN line, `fxc` and `%s` still unexpanded
  int expected_exit = 0;
  std::vector<std::string> requires_;  // host features the expected output assumes
};

using fxc::test::split_lines;
using fxc::test::split_words;
using fxc::test::trim;

// Reads the directives from the comment lines at the top of the file.
GoldenCase parse_case(const fs::path& fx) {
  GoldenCase c{fx, {}, 0, {}};
  for (const std::string& line : split_lines(fxc::test::read_file_bytes(fx))) {
    if (line.rfind("#", 0) != 0) break;
    std::string body = trim(line.substr(1));
    if (body.rfind("RUN:", 0) == 0) c.args = split_words(trim(body.substr(4)));
    else if (body.rfind("EXIT:", 0) == 0) c.expected_exit = std::stoi(trim(body.substr(5)));
    else if (body.rfind("REQUIRES:", 0) == 0) {
      std::istringstream features(body.substr(9));
      for (std::string f; std::getline(features, f, ',');) c.requires_.push_back(trim(f));
    }
  }
  return c;
}

// Whether the host has `feature`; nullopt for a name this runner does not know (a typo must
// not skip a case silently). "avx2" mirrors passes::host_target(): the CPU strategies assume
// 32-byte vectors when the host has AVX2 and FMA.
std::optional<bool> host_has(const std::string& feature) {
  if (feature == "avx2") {
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
  }
  return std::nullopt;
}

bool has_flag(const std::vector<std::string>& args, const std::string& flag) {
  return std::find(args.begin(), args.end(), flag) != args.end();
}

std::optional<std::string> option_value(const std::vector<std::string>& args,
                                        const std::string& option) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == option) return args[i + 1];
  for (const std::string& a : args)
    if (a.rfind(option + "=", 0) == 0) return a.substr(option.size() + 1);
  return std::nullopt;
}

// A line diff (longest common subsequence) shown as unified-style hunks with two lines of
// context, at most `max_lines` lines of it.
std::string diff_text(const std::string& expected, const std::string& actual,
                      std::size_t max_lines = 60) {
  std::vector<std::string> a = split_lines(expected), b = split_lines(actual);
  std::ostringstream out;
  if (a.size() * b.size() > 16'000'000) {  // too big for the table: show the first difference
    std::size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    out << "first difference at line " << i + 1 << "\n";
    if (i < a.size()) out << "-" << a[i] << "\n";
    if (i < b.size()) out << "+" << b[i] << "\n";
    return out.str();
  }
  std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<unsigned>> lcs(n + 1, std::vector<unsigned>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;)
    for (std::size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  struct Row {
    char tag;
    std::size_t line;  // 1-based line in expected (for ' ' and '-') or actual ('+')
    std::string text;
  };
  std::vector<Row> rows;
  std::size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      rows.push_back({' ', i + 1, a[i]});
      ++i, ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      rows.push_back({'-', i + 1, a[i]});
      ++i;
    } else {
      rows.push_back({'+', j + 1, b[j]});
      ++j;
    }
  }
  std::vector<bool> show(rows.size(), false);
  for (std::size_t k = 0; k < rows.size(); ++k)
    if (rows[k].tag != ' ')
      for (std::size_t c = (k >= 2 ? k - 2 : 0); c <= std::min(rows.size() - 1, k + 2); ++c)
        show[c] = true;
  std::size_t printed = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (!show[k]) continue;
    if (k == 0 || !show[k - 1]) out << "@@ expected line " << rows[k].line << " @@\n";
    if (++printed > max_lines) {
      out << "... (diff truncated)\n";
      break;
    }
    out << rows[k].tag << rows[k].text << "\n";
  }
  if (expected.size() && expected.back() != '\n') out << "(expected has no newline at end)\n";
  if (actual.size() && actual.back() != '\n') out << "(actual has no newline at end)\n";
  return out.str();
}

// The text IR blocks of one command's standard output: the whole output, or with
// --print-after-all each block after a "// -----// IR after PASS //----- //" line other than
// "(unchanged)".
std::vector<std::pair<std::string, std::string>> ir_blocks(const std::string& out,
                                                            bool print_after_all) {
  std::vector<std::pair<std::string, std::string>> blocks;
  if (!print_after_all) {
    blocks.emplace_back("output", out);
    return blocks;
  }
  std::string title, text;
  auto flush = [&] {
    if (!title.empty() && text != "(unchanged)\n") blocks.emplace_back(title, text);
    text.clear();
  };
  for (const std::string& line : split_lines(out)) {
    if (line.rfind("// -----// IR after ", 0) == 0) {
      flush();
      title = line;
    } else {
      text += line + "\n";
    }
  }
  flush();
  return blocks;
}

std::vector<fs::path> case_files() {
  std::vector<fs::path> out;
  for (const fs::directory_entry& e : fs::directory_iterator(FXC_GOLDEN_DIR))
    if (e.path().extension() == ".fx") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("every golden case prints its expected output") {
  const char* update = std::getenv("FXC_UPDATE_GOLDEN");
  const bool rewrite = update && std::string(update) == "1";
  std::vector<fs::path> all = case_files();
  CHECK(all.size() >= 15);

  for (const fs::path& fx : all) {
    const std::string name = fx.filename().string();
    INFO("case: " << name);
    GoldenCase c = parse_case(fx);
    REQUIRE_MESSAGE(!c.args.empty(), "the first line must be '# RUN: fxc ...'");
    REQUIRE_MESSAGE(c.args.front() == "fxc", "the command must start with 'fxc'");

    bool runnable = true;
    for (const std::string& feature : c.requires_) {
      std::optional<bool> has = host_has(feature);
      CHECK_MESSAGE(has.has_value(), "unknown REQUIRES feature '" << feature << "'");
      if (!has.value_or(false)) {
        if (has) MESSAGE("skipping " << name << ": the host lacks '" << feature << "'");
        runnable = false;
      }
    }
    if (!runnable) continue;

    std::vector<std::string> argv = c.args;
    argv.front() = FXC_BINARY;
    for (std::string& a : argv)
      for (std::size_t at; (at = a.find("%s")) != std::string::npos;) a.replace(at, 2, name);
    fxc::test::CommandResult r = fxc::test::run_command(argv, FXC_GOLDEN_DIR);

    CHECK_MESSAGE(r.exit_code == c.expected_exit,
                  "exit status " << r.exit_code << ", expected " << c.expected_exit
                                 << "\nstderr:\n" << r.err);

    fs::path out_path = fs::path(fx).replace_extension(".expected");
    fs::path err_path = fs::path(fx).replace_extension(".expected-stderr");
    if (rewrite) {
      write_file(out_path, r.out);
      if (!r.err.empty()) write_file(err_path, r.err);
      else fs::remove(err_path);
    } else {
      REQUIRE_MESSAGE(fs::exists(out_path), "missing " << out_path.filename().string()
                                                       << " (run with FXC_UPDATE_GOLDEN=1)");
      std::string want_out = fxc::test::read_file_bytes(out_path);
      std::string want_err = fs::exists(err_path) ? fxc::test::read_file_bytes(err_path) : "";
      // Compare as booleans so that a failure shows the diff, not both texts in full.
      bool same_out = r.out == want_out, same_err = r.err == want_err;
      CHECK_MESSAGE(same_out, "standard output differs from " << out_path.filename().string()
                                                              << ":\n" << diff_text(want_out, r.out));
      CHECK_MESSAGE(same_err, "standard error differs from "
                                  << (fs::exists(err_path) ? err_path.filename().string()
                                                           : std::string("(none expected)"))
                                  << ":\n" << diff_text(want_err, r.err));
    }

    // Print, parse, print: every text IR the case shows reads back to the same text.
    std::optional<std::string> emit = option_value(c.args, "--emit");
    std::string format = option_value(c.args, "--format").value_or("text");
    bool ir_text = c.args.size() > 1 && c.args[1] == "dump" && r.exit_code == 0 &&
                   format == "text" && (!emit || *emit == "ir" || *emit == "ir-opt");
    if (!ir_text) continue;
    for (const auto& [title, text] : ir_blocks(r.out, has_flag(c.args, "--print-after-all"))) {
      INFO("IR block: " << title);
      // Print as the block was printed: with locations unless it has none (--no-locations;
      // the --print-after-all log has them either way).
      fxc::ir::PrintOptions print_options;
      print_options.locations = text.find(" loc(\"") != std::string::npos;
      fxc::DiagnosticEngine diags;
      std::optional<fxc::ir::Graph> graph = fxc::ir::parse_graph(text, name + " (printed IR)", diags);
      CHECK_MESSAGE(graph.has_value(), "the printed IR does not parse back:\n" << diags.str());
      if (!graph) continue;
      std::string again = fxc::ir::to_text(*graph, print_options);
      bool same = again == text;
      CHECK_MESSAGE(same, "printing the parsed IR gives different text:\n" << diff_text(text, again));
    }
  }
}

TEST_CASE("every expected file belongs to a case") {
  for (const fs::directory_entry& e : fs::directory_iterator(FXC_GOLDEN_DIR)) {
    std::string ext = e.path().extension().string();
    if (ext != ".expected" && ext != ".expected-stderr") continue;
    INFO("file: " << e.path().filename().string());
    CHECK(fs::exists(fs::path(e.path()).replace_extension(".fx")));
  }
}

TEST_CASE("the diff shows what changed") {
  std::string d = diff_text("a\nb\nc\nd\n", "a\nb\nX\nd\n");
  CHECK(d.find("-c\n") != std::string::npos);
  CHECK(d.find("+X\n") != std::string::npos);
  CHECK(d.find(" b\n") != std::string::npos);
}

// Every fxc this suite starts uses a kernel cache of its own, so runs of other builds (or of
// other suites at the same time) never meet its entries.
int main(int argc, char** argv) {
  std::string cache = (std::filesystem::temp_directory_path() /
                       ("fxc-test-cache-" + std::to_string(getpid()))).string();
  setenv("FXC_CACHE_DIR", cache.c_str(), 1);
  int status = fxc::test::run_tests(argc, argv);
  std::error_code ignored;
  std::filesystem::remove_all(cache, ignored);
  return status;
}

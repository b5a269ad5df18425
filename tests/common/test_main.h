// SPDX-License-Identifier: Apache-2.0
// The main of every fxc doctest binary: runs doctest, then holds each run to three rules
// that doctest alone does not check, so that no test passes without having tested anything:
//
// - a test case that made no assertion and did not call fxc::test::skip fails the run;
// - with --min-test-cases=N (each CTest test passes its binary's count), fewer than N test
//   cases matching the filters fail the run: a filter that matches nothing, or a binary whose
//   cases were compiled out, would otherwise pass with zero tests;
// - a run in which some case skipped (and none failed) exits kSkipExitCode, which CTest shows
//   as "Skipped".
//
// Include it in exactly one translation unit, after `#define DOCTEST_CONFIG_IMPLEMENT`, and
// return fxc::test::run_tests(argc, argv) from main.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "test_skip.h"

namespace fxc::test {

struct RunRecord {
  bool finished = false;  // test_run_end was reached (not a --list or --help query)
  unsigned cases = 0;     // test cases that passed the filters and ran
  std::vector<std::string> vacuous;  // ran, passed, asserted nothing, did not skip
  std::vector<std::string> skipped;  // "name: reason"
};
inline RunRecord& run_record() {
  static RunRecord record;
  return record;
}

class PolicyListener : public doctest::IReporter {
 public:
  explicit PolicyListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    run_record().finished = true;
    run_record().cases = stats.numTestCasesPassingFilters;
  }
  void test_case_start(const doctest::TestCaseData& data) override {
    name_ = data.m_name;
    current_skip() = {};
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
    if (current_skip().skipped)
      run_record().skipped.push_back(name_ + ": " + current_skip().reason);
    else if (stats.numAssertsCurrentTest == 0 && stats.testCaseSuccess)
      run_record().vacuous.push_back(name_);
  }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}

 private:
  std::string name_;
};

DOCTEST_REGISTER_LISTENER("fxc-policy", 1, PolicyListener);

/// Runs doctest with the command line and applies the rules above; returns the exit status.
inline int run_tests(int argc, char** argv) {
  long min_cases = 0;
  const std::string min_flag = "--min-test-cases=";
  for (int i = 1; i < argc; ++i)  // doctest ignores options it does not know
    if (std::strncmp(argv[i], min_flag.c_str(), min_flag.size()) == 0)
      min_cases = std::strtol(argv[i] + min_flag.size(), nullptr, 10);
  doctest::Context context(argc, argv);
  int status = context.run();
  const RunRecord& r = run_record();
  if (context.shouldExit() || !r.finished) return status;
  bool failed = status != 0;
  for (const std::string& name : r.vacuous) {
    std::cerr << "[fxc] FAILED: test case \"" << name
              << "\" made no assertion and did not skip: it cannot fail\n";
    failed = true;
  }
  if (min_cases > 0 && r.cases < static_cast<unsigned long>(min_cases)) {
    std::cerr << "[fxc] FAILED: " << r.cases << " test case(s) ran, at least " << min_cases
              << " expected (--min-test-cases): a filter matched too little, or cases were "
                 "compiled out\n";
    failed = true;
  }
  if (failed) return status != 0 ? status : 1;
  if (!r.skipped.empty()) {
    std::cerr << "[fxc] SKIPPED: " << r.skipped.size() << " of " << r.cases << " test case(s):\n";
    for (const std::string& s : r.skipped) std::cerr << "[fxc]   " << s << "\n";
    return kSkipExitCode;
  }
  return 0;
}

}  // namespace fxc::test

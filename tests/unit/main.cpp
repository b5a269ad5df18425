// SPDX-License-Identifier: Apache-2.0
// The unit tier's main: doctest, with the rules of tests/common/test_main.h (no case without an
// assertion, a minimum number of cases, skips reported as skips).
#define DOCTEST_CONFIG_IMPLEMENT
#include "test_main.h"

int main(int argc, char** argv) { return fxc::test::run_tests(argc, argv); }

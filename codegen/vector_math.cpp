// SPDX-License-Identifier: Apache-2.0
#include "codegen/vector_math.h"

#include <dlfcn.h>

#include "passes/target.h"

namespace fxc::codegen {
namespace {

// libmvec, loaded once with its symbols global: the JIT resolves kernels' calls in the
// process (cpu_jit.cpp). Null where there is none.
void* libmvec() {
  static void* handle = [] { return dlopen("libmvec.so.1", RTLD_NOW | RTLD_GLOBAL); }();
  return handle;
}

// The x86-64 vector function ABI's ISA letter for `lanes` float64s on this host: b (SSE, 2),
// d (AVX2, 4); 0 for none (AVX-512's 8 are not used: passes::host_target treats AVX-512 as
// 32-byte vectors).
char isa_letter(int lanes) {
#if defined(__x86_64__)
  if (lanes == 2) return 'b';
  if (lanes == 4 && __builtin_cpu_supports("avx2")) return 'd';
#endif
  (void)lanes;
  return 0;
}

}  // namespace

std::string libmvec_symbol(const char* function, int lanes) {
  const char isa = isa_letter(lanes);
  if (!isa || !libmvec()) return {};
  std::string name = std::string("_ZGV") + isa + "N" + std::to_string(lanes) + "v_" + function;
  return dlsym(libmvec(), name.c_str()) ? name : std::string();
}

bool f64_vector_math(int lanes) {
  for (const char* f : {"tanh", "log10", "exp"})
    if (libmvec_symbol(f, lanes).empty()) return false;
  return true;
}

bool host_f64_vector_math() {
  static const bool yes = f64_vector_math(passes::host_target().lanes(DType::f64));
  return yes;
}

std::string vector_math_id() {
  static const std::string id = [] {
    for (int lanes : {2, 4})
      if (isa_letter(lanes) && !f64_vector_math(lanes)) return std::string("libm");
    return std::string(isa_letter(2) || isa_letter(4) ? "libmvec" : "libm");
  }();
  return id;
}

}  // namespace fxc::codegen

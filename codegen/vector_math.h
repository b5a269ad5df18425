// SPDX-License-Identifier: Apache-2.0
// The C library's vector math (glibc's libmvec) for float64 transcendental stages: tanh and
// a compressor's log10 and exp on a whole vector of channels in one call, where the scalar C
// library takes one call per lane (a float64 tanh cost 22x its float32 vector form).
#pragma once

#include <string>

namespace fxc::codegen {

/// The libmvec function computing `function` ("tanh", "log10", "exp") on `lanes` float64s at
/// once on this host ("_ZGVdN4v_tanh" with AVX2, "_ZGVbN2v_tanh" with SSE), after loading
/// libmvec into the process so that the JIT resolves it; empty where libmvec, or that function
/// in it (glibc before 2.35 has no tanh or log10), or the host's vector ABI is missing. The
/// kernels then call the scalar C library once per lane.
std::string libmvec_symbol(const char* function, int lanes);

/// Whether this host's libmvec computes tanh, log10 and exp on `lanes` float64s: a float64
/// chain with those stages then runs a partial group of lanes as one vector too
/// (partial_group_vectorized), its idle lanes costing nothing more.
bool f64_vector_math(int lanes);

/// f64_vector_math for this host's float64 lanes (passes::host_target), asked once.
bool host_f64_vector_math();

/// What the kernels' vector math is, for the kernel cache's key: "libmvec" where this host's
/// libmvec has every function above, else "libm" (a cache shared between machines then
/// keeps their kernels apart).
std::string vector_math_id();

}  // namespace fxc::codegen

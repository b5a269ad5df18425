// SPDX-License-Identifier: Apache-2.0
// FXC_VECTOR_CLONES: a function compiled twice, for the baseline x86-64 and for AVX2, the one
// the CPU runs chosen when the program loads (an ifunc: x86-64 ELF with glibc). For the C++
// loops of the runtime that the compiler vectorizes (the LLVM kernels choose their own CPU at
// run time); the build itself targets the baseline, so that one binary runs on every x86-64.
//
// AVX2 without FMA: every version gives the same bits (FMA would let the compiler contract
// a * b + c, rounded once instead of twice). Not under a sanitizer, whose instrumentation of the
// resolver has crashed before main; elsewhere one function still, never inlined, as an ifunc.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define FXC_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FXC_SANITIZED 1
#endif

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && defined(__GLIBC__) && !defined(FXC_SANITIZED)
#define FXC_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FXC_VECTOR_CLONES __attribute__((noinline))
#endif

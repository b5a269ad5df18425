// SPDX-License-Identifier: Apache-2.0
// FXC_UNDER_SANITIZER: defined in a build with AddressSanitizer, ThreadSanitizer or
// MemorySanitizer (GCC's and Clang's ways of saying so), where tests that count allocations or
// bound memory do not apply (the sanitizer allocates and reserves on its own).
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define FXC_UNDER_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FXC_UNDER_SANITIZER 1
#endif

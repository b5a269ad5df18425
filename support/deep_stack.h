// SPDX-License-Identifier: Apache-2.0
// Running recursive work on a stack sized for it rather than on the caller's. The frontend
// parses, lowers and prints expressions recursively, to the depths the language allows
// (frontend/parser.h: kMaxExpressionDepth), which takes megabytes of stack; a caller's thread
// may have far less (a worker thread's default 2 MB under `ulimit -s unlimited`, a plugin
// host's or a Python thread's few hundred KB).
#pragma once

#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>

namespace fxc {

/// The stack that run_on_deep_stack gives its work. Address space only: the pages the work
/// touches are the ones that cost memory. The deepest program the frontend accepts takes
/// about 5 MB in a release build; a debug build with AddressSanitizer takes several times that.
inline constexpr std::size_t kDeepStackBytes = std::size_t{64} << 20;

/// Calls `work(context)` on a thread with a stack of kDeepStackBytes and waits for it; an
/// exception it throws is rethrown here. On a thread that is already such a thread (a nested
/// call) it is called in place. Should no thread be had (the process is out of threads or
/// address space), it is called in place, with the caller's stack, as it was before.
void run_on_deep_stack(void (*work)(void*), void* context);

/// `work()` run by run_on_deep_stack; its result (or exception) comes back here.
template <class Work>
auto on_deep_stack(Work&& work) -> std::invoke_result_t<Work&> {
  using Result = std::invoke_result_t<Work&>;
  static_assert(!std::is_reference_v<Result>, "a reference would point into the other thread's frames");
  if constexpr (std::is_void_v<Result>) {
    struct Call {
      std::remove_reference_t<Work>& work;
    } call{work};
    run_on_deep_stack([](void* c) { static_cast<Call*>(c)->work(); }, &call);
  } else {
    struct Call {
      std::remove_reference_t<Work>& work;
      std::optional<Result> result;
    } call{work, std::nullopt};
    run_on_deep_stack([](void* c) {
      auto& call = *static_cast<Call*>(c);
      call.result.emplace(call.work());
    }, &call);
    return std::move(*call.result);
  }
}

}  // namespace fxc

// SPDX-License-Identifier: Apache-2.0
#include "support/deep_stack.h"

#include <pthread.h>

#include <exception>

namespace fxc {
namespace {

// Set on the threads run_on_deep_stack starts: work nested in other work stays on its thread.
thread_local bool on_a_deep_stack = false;

struct Job {
  void (*work)(void*);
  void* context;
  std::exception_ptr thrown;
};

void* run_job(void* opaque) {
  Job& job = *static_cast<Job*>(opaque);
  on_a_deep_stack = true;
  try {
    job.work(job.context);
  } catch (...) {
    job.thrown = std::current_exception();
  }
  return nullptr;
}

}  // namespace

void run_on_deep_stack(void (*work)(void*), void* context) {
  if (on_a_deep_stack) {
    work(context);
    return;
  }
  Job job{work, context, nullptr};
  pthread_attr_t attributes;
  if (pthread_attr_init(&attributes) != 0) {
    work(context);
    return;
  }
  pthread_t thread;
  // A thread of its own, not one of a pool: its stack size is fixed when it is made, and the
  // work is milliseconds where starting a thread is tens of microseconds.
  const bool started = pthread_attr_setstacksize(&attributes, kDeepStackBytes) == 0 &&
                       pthread_create(&thread, &attributes, run_job, &job) == 0;
  pthread_attr_destroy(&attributes);
  if (!started) {
    work(context);
    return;
  }
  pthread_join(thread, nullptr);
  if (job.thrown) std::rethrow_exception(job.thrown);
}

}  // namespace fxc

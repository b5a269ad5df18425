// SPDX-License-Identifier: Apache-2.0
#include "runtime/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

namespace fxc {

int available_cores() {
  int cores = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cores = CPU_COUNT(&set);
  if (cores <= 0) cores = static_cast<int>(std::thread::hardware_concurrency());
  // cgroup v2: "max 100000" or "<quota> <period>" in microseconds.
  std::ifstream max("/sys/fs/cgroup/cpu.max");
  std::string quota;
  long long period = 0;
  if (max >> quota >> period && quota != "max" && period > 0) {
    long long q = std::atoll(quota.c_str());
    if (q > 0) cores = std::min<int>(cores, static_cast<int>(std::max<long long>(1, (q + period - 1) / period)));
  }
  return std::max(cores, 1);
}

struct ThreadPool::Impl {
  std::mutex busy;  // one run at a time holds the workers
  std::mutex mutex;
  std::condition_variable wake, done;
  std::vector<std::thread> workers;
  // A late worker may still be taking parts when the next run starts: what it reads outside
  // the mutex is atomic, and `next` is stored after `task` and `parts`.
  std::atomic<const std::function<void(int)>*> task{nullptr};
  std::atomic<int> parts{0};
  std::atomic<int> next{0};
  int finished = 0;  // under mutex
  std::uint64_t generation = 0;
  bool stopping = false;
  std::atomic<int> wanted{0};  // 0: the default

  // Read once: the cgroup quota comes from a file.
  static int default_threads() {
    static const int threads = [] {
      if (const char* env = std::getenv("FXC_THREADS"); env && *env) {
        int n = std::atoi(env);
        if (n >= 1) return n;
      }
      return available_cores();
    }();
    return threads;
  }

  // Parts taken by index until none is left; returns how many this thread ran.
  int drain() {
    int ran = 0;
    for (int p; (p = next.fetch_add(1)) < parts.load();) {
      (*task.load())(p);
      ++ran;
    }
    return ran;
  }

  void work() {
    std::uint64_t seen = 0;
    std::unique_lock lock(mutex);
    for (;;) {
      wake.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping) return;
      seen = generation;
      lock.unlock();
      int ran = drain();
      lock.lock();
      finished += ran;
      if (finished == parts) done.notify_all();
    }
  }

  void resize(int threads) {
    stop();
    stopping = false;
    for (int w = 1; w < threads; ++w) workers.emplace_back([this] { work(); });
  }

  void stop() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread& t : workers) t.join();
    workers.clear();
  }
};

ThreadPool::ThreadPool() : impl_(new Impl) {}
ThreadPool::~ThreadPool() {
  impl_->stop();
  delete impl_;
}

ThreadPool& ThreadPool::shared() {
  static ThreadPool pool;
  return pool;
}

int ThreadPool::threads() const {
  int wanted = impl_->wanted.load();
  return wanted > 0 ? wanted : Impl::default_threads();
}

void ThreadPool::set_threads(int threads) { impl_->wanted = std::max(threads, 0); }

void ThreadPool::run(int parts, const std::function<void(int)>& task) {
  Impl& m = *impl_;
  std::unique_lock busy(m.busy, std::try_to_lock);
  int threads = this->threads();
  if (parts <= 1 || threads <= 1 || !busy.owns_lock()) {
    for (int p = 0; p < parts; ++p) task(p);
    return;
  }
  if (static_cast<int>(m.workers.size()) + 1 != threads) m.resize(threads);
  {
    std::lock_guard lock(m.mutex);
    m.task = &task;
    m.parts = parts;
    m.next = 0;
    m.finished = 0;
    ++m.generation;
  }
  m.wake.notify_all();
  int ran = m.drain();
  std::unique_lock lock(m.mutex);
  m.finished += ran;
  m.done.wait(lock, [&] { return m.finished == m.parts; });
  m.task = nullptr;
  m.parts = 0;
}

}  // namespace fxc

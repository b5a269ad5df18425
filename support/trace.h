// SPDX-License-Identifier: Apache-2.0
// Timed spans for a Chrome trace (loads in Perfetto and chrome://tracing): what fxc spent its
// time on, phase by phase and kernel by kernel. Recording is off unless enabled; a span then
// costs one flag test.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace fxc {

class Trace {
 public:
  using Args = std::vector<std::pair<std::string, std::string>>;

  /// The process-wide trace.
  static Trace& global();

  void enable() { enabled_ = true; }
  void disable() { enabled_ = false; }
  bool enabled() const { return enabled_; }

  /// Records a complete event; times in microseconds since the trace's start.
  void add(std::string name, std::string category, double start_us, double duration_us, Args args);

  /// {"traceEvents": [...], "displayTimeUnit": "ms"}
  std::string to_json() const;

  double now_us() const;

 private:
  struct Event {
    std::string name, category;
    double start_us, duration_us;
    int thread;
    Args args;
  };
  bool enabled_ = false;
  std::chrono::steady_clock::time_point origin_ = std::chrono::steady_clock::now();
  mutable std::mutex mutex_;
  std::vector<Event> events_;
};

/// Records the span from its construction to its destruction, when tracing is enabled.
class TraceSpan {
 public:
  TraceSpan(std::string name, std::string category, Trace::Args args = {});
  ~TraceSpan();
  TraceSpan(const TraceSpan&) = delete;
  TraceSpan& operator=(const TraceSpan&) = delete;
  /// Adds an argument known only later (a cache hit or miss, say).
  void arg(std::string key, std::string value);

 private:
  bool active_;
  std::string name_, category_;
  Trace::Args args_;
  double start_us_ = 0;
};

}  // namespace fxc

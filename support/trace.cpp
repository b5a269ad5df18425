// SPDX-License-Identifier: Apache-2.0
#include "support/trace.h"

#include <atomic>
#include <fmt/format.h>

namespace fxc {
namespace {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += c;
    }
  }
  return out + "\"";
}

int thread_number() {
  static std::atomic<int> next{1};
  thread_local int mine = next++;
  return mine;
}

}  // namespace

Trace& Trace::global() {
  static Trace trace;
  return trace;
}

double Trace::now_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - origin_).count();
}

void Trace::add(std::string name, std::string category, double start_us, double duration_us,
                Args args) {
  std::lock_guard lock(mutex_);
  events_.push_back({std::move(name), std::move(category), start_us, duration_us, thread_number(),
                     std::move(args)});
}

std::string Trace::to_json() const {
  std::lock_guard lock(mutex_);
  std::string out = "{\"traceEvents\": [\n";
  for (std::size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    out += fmt::format("  {{\"name\": {}, \"cat\": {}, \"ph\": \"X\", \"ts\": {:.3f}, \"dur\": {:.3f}, "
                       "\"pid\": 1, \"tid\": {}, \"args\": {{",
                       json_string(e.name), json_string(e.category), e.start_us, e.duration_us, e.thread);
    for (std::size_t a = 0; a < e.args.size(); ++a)
      out += (a ? ", " : "") + json_string(e.args[a].first) + ": " + json_string(e.args[a].second);
    out += i + 1 < events_.size() ? "}},\n" : "}}\n";
  }
  return out + "], \"displayTimeUnit\": \"ms\"}\n";
}

TraceSpan::TraceSpan(std::string name, std::string category, Trace::Args args)
    : active_(Trace::global().enabled()) {
  if (!active_) return;
  name_ = std::move(name);
  category_ = std::move(category);
  args_ = std::move(args);
  start_us_ = Trace::global().now_us();
}

TraceSpan::~TraceSpan() {
  if (active_)
    Trace::global().add(std::move(name_), std::move(category_), start_us_,
                        Trace::global().now_us() - start_us_, std::move(args_));
}

void TraceSpan::arg(std::string key, std::string value) {
  if (active_) args_.emplace_back(std::move(key), std::move(value));
}

}  // namespace fxc

// SPDX-License-Identifier: Apache-2.0
// A value or an error, for functions whose failure is an ordinary outcome (a user's bad
// parameter), not a bug. C++20 has no std::expected; this is the small part fxc needs.
#pragma once

#include <cassert>
#include <utility>
#include <variant>

namespace fxc {

template <class E>
struct Unexpected {
  E error;
};
template <class E>
Unexpected(E) -> Unexpected<E>;

template <class T, class E>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Expected(Unexpected<E> u) : state_(std::in_place_index<1>, std::move(u.error)) {}

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { assert(has_value()); return std::get<0>(state_); }
  const T& value() const& { assert(has_value()); return std::get<0>(state_); }
  T&& value() && { assert(has_value()); return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const E& error() const { assert(!has_value()); return std::get<1>(state_); }

 private:
  std::variant<T, E> state_;
};

}  // namespace fxc

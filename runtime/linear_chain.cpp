// SPDX-License-Identifier: Apache-2.0
#include "runtime/linear_chain.h"

#include <algorithm>
#include <cstddef>

namespace fxc {
namespace {

std::vector<double> multiply(const std::vector<double>& a, const std::vector<double>& b, int d) {
  std::vector<double> c(d * d, 0.0);
  for (int i = 0; i < d; ++i)
    for (int k = 0; k < d; ++k)
      for (int j = 0; j < d; ++j) c[i * d + j] += a[i * d + k] * b[k * d + j];
  return c;
}

}  // namespace

LinearChain::LinearChain(const ir::Chain& chain) {
  for (const ir::Stage& stage : chain.stages) {
    if (auto* sos = std::get_if<ir::SosCascade>(&stage))
      for (const design::Section& s : sos->sections) ops_.push_back({false, 1, s});
    else if (auto* gain = std::get_if<ir::Gain>(&stage))
      ops_.push_back({true, gain->gain, {}});
  }
  for (const Op& op : ops_) dimension_ += op.is_gain ? 0 : 2;
}

double LinearChain::step(double* z, double x) const {
  double v = x;
  int k = 0;
  for (const Op& op : ops_) {
    if (op.is_gain) {
      v *= op.gain;
      continue;
    }
    const design::Section& s = op.section;
    double y = s.b0 * v + z[k];
    z[k] = s.b1 * v - s.a1 * y + z[k + 1];
    z[k + 1] = s.b2 * v - s.a2 * y;
    v = y;
    k += 2;
  }
  return v;
}

std::vector<double> LinearChain::transition() const {
  int d = dimension_;
  std::vector<double> a(d * d, 0.0), z(d);
  for (int i = 0; i < d; ++i) {
    std::fill(z.begin(), z.end(), 0.0);
    z[i] = 1;
    step(z.data(), 0.0);
    for (int r = 0; r < d; ++r) a[r * d + i] = z[r];
  }
  return a;
}

std::vector<double> LinearChain::transition_power(std::int64_t n) const {
  int d = dimension_;
  std::vector<double> a = transition();
  std::vector<double> result(d * d, 0.0);
  for (int i = 0; i < d; ++i) result[i * d + i] = 1;
  while (n > 0) {
    if (n & 1) result = multiply(result, a, d);
    a = multiply(a, a, d);
    n >>= 1;
  }
  return result;
}

std::vector<double> LinearChain::input_to_state(std::int64_t length) const {
  const auto d = static_cast<std::size_t>(dimension_);
  const auto rows = static_cast<std::size_t>(std::max<std::int64_t>(length, 0));
  std::vector<double> r(rows * d, 0.0);
  std::vector<double> z(d, 0.0);
  if (rows == 0 || d == 0) return r;
  step(z.data(), 1.0);  // B
  for (std::size_t n = rows; n-- > 0;) {  // row n is A^(length - 1 - n) B
    std::copy(z.begin(), z.end(), r.begin() + static_cast<std::ptrdiff_t>(n * d));
    step(z.data(), 0.0);
  }
  return r;
}

}  // namespace fxc

// SPDX-License-Identifier: Apache-2.0
#include "runtime/linear_chain.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "support/vector_clones.h"

namespace fxc {
namespace {

std::vector<double> multiply(const std::vector<double>& a, const std::vector<double>& b, int d) {
  std::vector<double> c(d * d, 0.0);
  for (int i = 0; i < d; ++i)
    for (int k = 0; k < d; ++k)
      for (int j = 0; j < d; ++j) c[i * d + j] += a[i * d + k] * b[k * d + j];
  return c;
}

// Four doubles in GCC's (and clang's) vector extension: each operation is the scalar one per
// element, rounded the same way, so lanes give step()'s bits; the compiler's own vectorizer
// left these loops scalar (the state and the outputs may alias).
using Vec4 = double __attribute__((vector_size(32)));

// LinearChain::decay over 4 x kVectors lanes; each expression is step()'s, lane by lane.
template <int kVectors>
[[gnu::always_inline]] inline void decay_body(const LinearChain::Op* ops, std::size_t op_count, double* z, double* y,
                                              int samples) noexcept {
  constexpr int kLanes = 4 * kVectors;
  for (int i = 0; i < samples; ++i) {
    Vec4 v[kVectors] = {};  // zero input
    double* zk = z;
    for (std::size_t o = 0; o < op_count; ++o) {
      const LinearChain::Op& op = ops[o];
      if (op.is_gain) {
        for (Vec4& lanes : v) lanes = lanes * op.gain;
        continue;
      }
      const design::Section& s = op.section;
      for (int q = 0; q < kVectors; ++q) {
        Vec4 z0, z1;  // memcpy: unaligned loads and stores
        std::memcpy(&z0, zk + 4 * q, sizeof z0);
        std::memcpy(&z1, zk + kLanes + 4 * q, sizeof z1);
        const Vec4 out = s.b0 * v[q] + z0;
        z0 = s.b1 * v[q] - s.a1 * out + z1;
        z1 = s.b2 * v[q] - s.a2 * out;
        std::memcpy(zk + 4 * q, &z0, sizeof z0);
        std::memcpy(zk + kLanes + 4 * q, &z1, sizeof z1);
        v[q] = out;
      }
      zk += 2 * kLanes;
    }
    std::memcpy(y + i * kLanes, v, sizeof v);
  }
}

// Compiled for AVX2 and the baseline (no FMA: the same bits as step()). Eight lanes are two
// independent vectors a step, which hides more of each one's latency; four waste none on
// a group of four chunks or fewer.
FXC_VECTOR_CLONES void decay_8_lanes(const LinearChain::Op* ops, std::size_t op_count, double* z, double* y,
                                     int samples) noexcept {
  decay_body<2>(ops, op_count, z, y, samples);
}
FXC_VECTOR_CLONES void decay_4_lanes(const LinearChain::Op* ops, std::size_t op_count, double* z, double* y,
                                     int samples) noexcept {
  decay_body<1>(ops, op_count, z, y, samples);
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

void LinearChain::decay(double* z, double* y, int samples, int lanes) const {
  if (lanes == kDecayLanes) decay_8_lanes(ops_.data(), ops_.size(), z, y, samples);
  else if (lanes == kNarrowDecayLanes) decay_4_lanes(ops_.data(), ops_.size(), z, y, samples);
  else throw std::invalid_argument("LinearChain::decay runs 4 or 8 lanes");
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

#include "runtime/chunked_scan.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "codegen/chain_layout.h"

namespace fxc {
namespace {

// The chain as a float64 linear system whose state is every section's (z0, z1), in the
// kernel's state layout.
class LinearChain {
 public:
  explicit LinearChain(const ir::Chain& chain) {
    for (const ir::Stage& stage : chain.stages) {
      if (auto* sos = std::get_if<ir::SosCascade>(&stage))
        for (const design::Section& s : sos->sections) ops_.push_back({false, 1, s});
      else if (auto* gain = std::get_if<ir::Gain>(&stage))
        ops_.push_back({true, gain->gain, {}});
    }
    for (const Op& op : ops_) dimension_ += op.is_gain ? 0 : 2;
  }

  int dimension() const { return dimension_; }

  /// One sample through the chain, transposed direct form II; advances `z`.
  double step(double* z, double x) const {
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

  /// A: the state after one step with zero input, as a matrix (row-major, D x D).
  std::vector<double> transition() const {
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

 private:
  struct Op {
    bool is_gain;
    double gain;
    design::Section section;
  };
  std::vector<Op> ops_;
  int dimension_ = 0;
};

std::vector<double> multiply(const std::vector<double>& a, const std::vector<double>& b, int d) {
  std::vector<double> c(d * d, 0.0);
  for (int i = 0; i < d; ++i)
    for (int k = 0; k < d; ++k)
      for (int j = 0; j < d; ++j) c[i * d + j] += a[i * d + k] * b[k * d + j];
  return c;
}

// A^n by repeated squaring, in float64: the carries must not lose what float32 would.
std::vector<double> power(std::vector<double> a, std::int64_t n, int d) {
  std::vector<double> result(d * d, 0.0);
  for (int i = 0; i < d; ++i) result[i * d + i] = 1;
  while (n > 0) {
    if (n & 1) result = multiply(result, a, d);
    a = multiply(a, a, d);
    n >>= 1;
  }
  return result;
}

template <class T>
T* samples_of(Signal& s, std::size_t c) {
  if constexpr (std::is_same_v<T, float>) return s.f32(c).data();
  else return s.f64(c).data();
}
template <class T>
const T* samples_of(const Signal& s, std::size_t c) {
  if constexpr (std::is_same_v<T, float>) return s.f32(c).data();
  else return s.f64(c).data();
}

// Runs `work(begin, end)` over [0, count) split across `threads` threads, in multiples of
// `grain` so vector groups stay whole.
template <class F>
void parallel_for(std::int64_t count, std::int64_t grain, int threads, F work) {
  std::int64_t groups = (count + grain - 1) / grain;
  int parts = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, groups)));
  std::vector<std::thread> pool;
  std::int64_t begin = 0;
  for (int p = 0; p < parts; ++p) {
    std::int64_t end = p + 1 == parts ? count : std::min(count, begin + ((groups + parts - 1) / parts) * grain);
    if (p + 1 == parts) work(begin, end);
    else pool.emplace_back(work, begin, end);
    begin = end;
  }
  for (auto& t : pool) t.join();
}

template <class T>
void run(const ir::Chain& chain, FxcChainKernel kernel, const Signal& in, Signal& out,
         T* channel_state, int lanes, int threads) {
  const std::int64_t channels = static_cast<std::int64_t>(in.channels());
  const std::int64_t n = static_cast<std::int64_t>(in.samples());
  LinearChain linear(chain);
  const int d = linear.dimension();

  // K chunks per channel, a multiple of the lanes so that every vector group is full.
  std::int64_t per_lane = std::max<std::int64_t>(1, std::llround(static_cast<double>(n) /
                                                                 (static_cast<double>(lanes) * chain.chunk_length)));
  std::int64_t k = lanes * per_lane;
  std::int64_t length = n / k;
  if (k < 2 || length < 256) k = 1, length = n;  // too short to split: one chunk per channel
  const std::int64_t lane_count = channels * k;
  // Threads pay only on long work: a thread's start and join cost tens of microseconds, and a
  // busy core makes the join wait (W4, 1 M samples, went from 0.8 to 8 ms with the other
  // core loaded).
  if (lane_count * length < (std::int64_t{1} << 22)) threads = 1;

  std::vector<const void*> in_ptrs(lane_count);
  std::vector<void*> out_ptrs(lane_count);
  for (std::int64_t c = 0; c < channels; ++c)
    for (std::int64_t j = 0; j < k; ++j) {
      in_ptrs[c * k + j] = samples_of<T>(in, c) + j * length;
      out_ptrs[c * k + j] = samples_of<T>(out, c) + j * length;
    }
  std::vector<T> state(lane_count * d, T(0));
  std::vector<T> params;
  for (double v : codegen::values_of(chain).params) params.push_back(static_cast<T>(v));
  parallel_for(lane_count, lanes, threads, [&](std::int64_t begin, std::int64_t end) {
    FxcChainArgs args{in_ptrs.data() + begin, out_ptrs.data() + begin, end - begin, length,
                      params.data(), nullptr, state.data() + begin * d, nullptr, nullptr};
    kernel(&args);
  });

  // The exact state at each chunk's start: s[j+1] = end_state_from_zero[j] + A^L s[j].
  std::vector<double> a_to_l = power(linear.transition(), length, d);
  std::vector<double> starts(lane_count * d, 0.0), carry(d), next(d);
  std::vector<std::vector<double>> tail_state(channels, std::vector<double>(d, 0.0));
  for (std::int64_t c = 0; c < channels; ++c) {
    for (int r = 0; r < d; ++r) carry[r] = static_cast<double>(channel_state[c * d + r]);
    for (std::int64_t j = 0; j < k; ++j) {
      std::copy(carry.begin(), carry.end(), starts.begin() + (c * k + j) * d);
      for (int r = 0; r < d; ++r) {
        double sum = state[(c * k + j) * d + r];
        for (int q = 0; q < d; ++q) sum += a_to_l[r * d + q] * carry[q];
        next[r] = sum;
      }
      carry.swap(next);
    }
    tail_state[c] = carry;
  }

  // Each chunk's output plus its response to its true starting state, with zero input, until
  // that response is below what the output type can hold.
  const double tolerance = std::is_same_v<T, float> ? 1e-10 : 1e-19;
  parallel_for(lane_count, 1, threads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> z(d);
    for (std::int64_t lane = begin; lane < end; ++lane) {
      std::copy(starts.begin() + lane * d, starts.begin() + (lane + 1) * d, z.begin());
      double scale = 0;
      for (double v : z) scale = std::max(scale, std::abs(v));
      if (scale == 0) continue;
      T* y = static_cast<T*>(out_ptrs[lane]);
      for (std::int64_t i = 0; i < length; ++i) {
        y[i] = static_cast<T>(y[i] + linear.step(z.data(), 0.0));
        if ((i & 31) == 31) {
          double left = 0;
          for (double v : z) left = std::max(left, std::abs(v));
          if (left <= tolerance * scale) break;
        }
      }
    }
  });

  // The samples after the last whole chunk, one at a time from the carried state.
  for (std::int64_t c = 0; c < channels; ++c) {
    const T* x = samples_of<T>(in, c);
    T* y = samples_of<T>(out, c);
    for (std::int64_t i = k * length; i < n; ++i)
      y[i] = static_cast<T>(linear.step(tail_state[c].data(), static_cast<double>(x[i])));
    for (int r = 0; r < d; ++r) channel_state[c * d + r] = static_cast<T>(tail_state[c][r]);
  }
}

}  // namespace

bool chunked_scan_applies(const ir::Chain& chain) {
  bool has_section = false;
  for (const ir::Stage& stage : chain.stages) {
    if (std::holds_alternative<ir::SosCascade>(stage)) has_section = true;
    else if (!std::holds_alternative<ir::Gain>(stage)) return false;
  }
  return has_section;
}

void run_chunked_scan(const ir::Chain& chain, FxcChainKernel kernel, const Signal& in,
                      Signal& out, void* state, int lanes, int threads) {
  if (in.dtype() == DType::f32)
    run<float>(chain, kernel, in, out, static_cast<float*>(state), lanes, threads);
  else
    run<double>(chain, kernel, in, out, static_cast<double*>(state), lanes, threads);
}

}  // namespace fxc

// SPDX-License-Identifier: Apache-2.0
#include "random_graphs.h"

#include <algorithm>
#include <random>

#include "frontend/dsl.h"

namespace fxc::test {
namespace {

using namespace fxc::literals;

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  ir::Graph make() {
    int channels = uniform(1, 3);
    std::vector<Flow> pool;
    int inputs = uniform(1, 2);
    for (int i = 0; i < inputs; ++i) pool.push_back(input("in" + std::to_string(i), channels));
    std::vector<Chain> chains;
    int steps = uniform(2, 12);
    for (int s = 0; s < steps; ++s) {
      const Flow& from = pool[uniform(0, static_cast<int>(pool.size()) - 1)];
      switch (uniform(0, 9)) {
        case 0:
        case 1: {  // a mix of two signals, scaled
          const Flow& other = pool[uniform(0, static_cast<int>(pool.size()) - 1)];
          Flow mixed = uniform(0, 1) ? real(-2, 2) * from + other : from - real(0.1, 1) * other;
          pool.push_back(mixed);
          break;
        }
        case 2:  // reuse a chain made earlier: equally-filtered branches
          if (!chains.empty()) {
            pool.push_back(from | chains[uniform(0, static_cast<int>(chains.size()) - 1)]);
            break;
          }
          [[fallthrough]];
        default: {
          Chain chain = stage();
          for (int extra = uniform(0, 2); extra > 0; --extra) chain = chain | stage();
          chains.push_back(chain);
          pool.push_back(from | chain);
        }
      }
    }
    std::vector<Output> outputs{output("y0", pool.back())};
    if (uniform(0, 1)) outputs.push_back(output("y1", pool[uniform(0, static_cast<int>(pool.size()) - 1)]));
    return make_graph("random", outputs);
  }

 private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  // Log-uniform between 40 Hz and 18 kHz: inside (0, Nyquist) at 48 kHz with margin.
  double freq() { return 40 * std::pow(450.0, real(0, 1)); }
  design::BandType btype() { return static_cast<design::BandType>(uniform(0, 3)); }

  Chain iir_stage() {
    design::BandType t = btype();
    int order = uniform(1, design::is_band(t) ? 4 : 6);
    double lo = freq(), hi = freq();
    if (lo > hi) std::swap(lo, hi);
    if (hi / lo < 1.2) hi = std::min(lo * 1.5, 20000.0);
    Band band{{lo}, {hi}};
    Frequency f{lo};
    bool two = design::is_band(t);
    switch (uniform(0, 4)) {
      case 0: return two ? butter(order, band, t) : butter(order, f, t);
      case 1: return two ? cheby1(order, Level{real(0.1, 3)}, band, t) : cheby1(order, Level{real(0.1, 3)}, f, t);
      case 2: return two ? cheby2(order, Level{real(20, 60)}, band, t) : cheby2(order, Level{real(20, 60)}, f, t);
      case 3:
        return two ? ellip(order, Level{real(0.1, 2)}, Level{real(30, 60)}, band, t)
                   : ellip(order, Level{real(0.1, 2)}, Level{real(30, 60)}, f, t);
      default:
        return bessel(order, f, two ? design::BandType::lowpass : t,
                      static_cast<design::BesselNorm>(uniform(0, 2)));
    }
  }

  Chain stage() {
    switch (uniform(0, 11)) {
      case 0:
      case 1: return iir_stage();
      case 2: return peaking(Frequency{freq()}, real(0.3, 5), Level{real(-12, 12)});
      case 3: return uniform(0, 1) ? lowshelf(Frequency{freq()}, Level{real(-12, 12)}, real(0.4, 2))
                                   : highshelf(Frequency{freq()}, Level{real(-12, 12)}, real(0.4, 2));
      case 4: return uniform(0, 1) ? notch(Frequency{freq()}, real(0.5, 10)) : allpass(Frequency{freq()}, real(0.5, 3));
      case 5: {
        double r = real(0, 0.95), theta = real(0, 3.1);  // a stable pole pair
        return sos({{real(-1, 1), real(-1, 1), real(-1, 1), 1, -2 * r * std::cos(theta), r * r}});
      }
      case 6: return tf({real(-1, 1), real(-1, 1)}, {1, real(-0.9, 0.9)});
      case 7: {
        std::vector<double> taps(uniform(1, 24));
        for (double& t : taps) t = real(-1, 1);
        return fir(taps);
      }
      case 8: return firwin(2 * uniform(2, 30) + 1, {freq()}, static_cast<design::Window>(uniform(0, 3)));
      case 9: return uniform(0, 1) ? gain(real(-2, 2)) : gain(Level{real(-12, 12)});
      case 10: return uniform(0, 1) ? delay(Samples{static_cast<double>(uniform(0, 20))})
                                    : delay(Duration{real(0, 0.0005)});
      default: return uniform(0, 1) ? tanh() : clip(-real(0.2, 1), real(0.2, 1));
    }
  }

  std::mt19937_64 rng_;
};

}  // namespace

ir::Graph random_graph(std::uint64_t seed) { return Generator(seed).make(); }

}  // namespace fxc::test

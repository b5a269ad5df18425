// SPDX-License-Identifier: Apache-2.0
#include "random_graphs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

// .fx text: names with their channel counts; each step binds a new one.
class ProgramGenerator {
 public:
  explicit ProgramGenerator(std::uint64_t seed) : rng_(seed) {}

  std::string make() {
    int channels = uniform(1, 3);
    text_ = "input x : " + std::to_string(channels) + "\n";
    names_.push_back({"x", channels});
    int steps = uniform(3, 10);
    for (int s = 0; s < steps; ++s) step("n" + std::to_string(s));
    text_ += "output " + names_.back().name + "\n";
    if (uniform(0, 1)) text_ += "output " + pick().name + " | tanh()\n";
    return text_;
  }

 private:
  struct Name {
    std::string name;
    int channels;
  };

  void step(const std::string& name) {
    const Name from = pick();
    switch (uniform(0, 9)) {
      case 0:
      case 1:
        bind(name, from.name + " | " + stage(), from.channels);
        break;
      case 2: {  // a mix of two signals with the same count
        const Name other = pick(from.channels);
        bind(name, from.name + " + " + number(-1.5, 1.5) + " * " + other.name, from.channels);
        break;
      }
      case 3:  // a loop through stages and a delay (runs in blocks)
        bind(name, from.name + " + " + number(-0.85, 0.85) + " * (" + name + " | " + damping() + " | delay(" +
                       std::to_string(uniform(1, 40)) + "))",
             from.channels);
        break;
      case 4:  // a loop through a delay and stages (fused into one kernel), or a comb read at its line
        if (uniform(0, 1)) {
          bind(name, from.name + " + " + number(-0.85, 0.85) + " * (" + name + " | delay(" + std::to_string(uniform(1, 40)) +
                         ") | " + damping() + ")",
               from.channels);
        } else {
          std::string line = name + "line";
          text_ += line + " = " + from.name + " + " + number(-0.85, 0.85) + " * " + name + "\n";
          bind(name, line + " | delay(" + std::to_string(uniform(1, 40)) + ")", from.channels);
        }
        break;
      case 5: {  // two signals feeding each other
        std::string other = name + "b";
        text_ += name + " = " + from.name + " + " + number(-0.6, 0.6) + " * (" + other + " | delay(" +
                 std::to_string(uniform(1, 30)) + "))\n";
        bind(other, number(-0.6, 0.6) + " * (" + name + " | " + damping() + " | delay(" +
                        std::to_string(uniform(1, 30)) + "))",
             from.channels);
        names_.push_back({name, from.channels});
        break;
      }
      default:
        route(name, from);
    }
  }

  void route(const std::string& name, const Name& from) {
    switch (uniform(0, 6)) {
      case 0:
        bind(name, from.name + "[" + std::to_string(uniform(0, from.channels - 1)) + "]", 1);
        break;
      case 1: {
        const Name other = pick();
        if (from.channels + other.channels > 4) return bind(name, from.name + " | sum_channels()", 1);
        bind(name, "[" + from.name + ", " + other.name + "]", from.channels + other.channels);
        break;
      }
      case 2:
        bind(name, from.name + " | sum_channels()", 1);
        break;
      case 3:
        if (from.channels != 1) return bind(name, from.name + "[0]", 1);
        bind(name, from.name + " | pan(" + number(-1, 1) + ")", 2);
        break;
      case 4:
        if (from.channels != 2) return bind(name, "[" + from.name + ", " + from.name + "]", 2 * from.channels);
        bind(name, from.name + " | " + (uniform(0, 1) ? "ms_encode()" : "swap()"), 2);
        break;
      case 5:
        if (from.channels == 2) {
          text_ += name + "l, " + name + "r = " + from.name + "\n";
          names_.push_back({name + "l", 1});
          bind(name, name + "r - 0.5 * " + name + "l", 1);
          break;
        }
        [[fallthrough]];
      default:
        bind(name, from.name + " | mix([" + matrix_row(from.channels) + ", " + matrix_row(from.channels) + "])", 2);
    }
  }

  void bind(const std::string& name, const std::string& value, int channels) {
    text_ += name + " = " + value + "\n";
    names_.push_back({name, channels});
  }

  // A name bound so far (with `channels` channels, when given and one has them).
  Name pick(int channels = 0) {
    std::vector<Name> fit;
    for (const Name& n : names_)
      if (channels == 0 || n.channels == channels) fit.push_back(n);
    return fit[static_cast<std::size_t>(uniform(0, static_cast<int>(fit.size()) - 1))];
  }

  std::string stage() {
    switch (uniform(0, 5)) {
      case 0: return "peaking(" + hz() + ", " + number(0.5, 3) + ", " + number(-9, 9) + " dB)";
      case 1: return "butter(" + std::to_string(uniform(1, 4)) + ", " + hz() + ", highpass)";
      case 2: return "fir([" + number(-1, 1) + ", " + number(-1, 1) + ", " + number(-1, 1) + "])";
      case 3: return "delay(" + std::to_string(uniform(0, 12)) + ")";
      case 4: return "gain(" + number(-2, 2) + ")";
      default: return "clip(-0.8, 0.8)";
    }
  }
  // A stage whose gain is at most 1, for loops.
  std::string damping() {
    switch (uniform(0, 3)) {
      case 0: return "lowpass(" + hz() + ")";
      case 1: return "butter(2, " + hz() + ")";
      case 2: return "tanh()";
      default: return "highpass(" + hz() + ")";
    }
  }
  std::string matrix_row(int columns) {
    std::string row = "[";
    for (int c = 0; c < columns; ++c) row += (c ? ", " : "") + number(-1, 1);
    return row + "]";
  }
  std::string hz() { return number(40 * std::pow(450.0, real(0, 1)), 0) + " Hz"; }
  std::string number(double lo, double hi) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4f", hi > lo ? real(lo, hi) : lo);
    return buffer;
  }
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }

  std::mt19937_64 rng_;
  std::string text_;
  std::vector<Name> names_;
};

}  // namespace

ir::Graph random_graph(std::uint64_t seed) { return Generator(seed).make(); }

std::string random_looped_program(std::uint64_t seed) { return ProgramGenerator(seed).make(); }

}  // namespace fxc::test

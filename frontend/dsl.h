// The C++ pipe DSL: build fxc graphs in C++ the way they are written in .fx files.
//
//   using namespace fxc::literals;
//   fxc::Flow x = fxc::input("x", 2);
//   fxc::Chain eq = fxc::butter(4, 80_Hz, fxc::highpass) | fxc::peaking(1_kHz, 1.0, 3_dB);
//   fxc::Flow y = 0.7 * (x | eq) + 0.3 * (x | fxc::delay(5_ms));
//   ir::Graph graph = fxc::make_graph("vocal", {fxc::output("y", y)});
//
// A Chain is a sequence of stages with no signal at its start; a Flow is a signal (an input or
// anything computed from one). `flow | chain` is a flow, `chain | chain` a chain, `a + b` and
// `a - b` mix flows, and a number (or a level in dB) times a flow or chain is a gain. Each
// stage records the std::source_location of its call, so errors found later (a cutoff above
// Nyquist at the bound sample rate) point at the user's line.
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "design/filter_types.h"
#include "ir/graph.h"

namespace fxc {

/// A frequency in Hz (`80_Hz`, `1_kHz`).
struct Frequency {
  double hz;
};
/// A level in dB (`3_dB`); as a gain it is 10^(db/20).
struct Level {
  double db;
};
constexpr Level operator-(Level level) { return {-level.db}; }
/// A time in seconds (`5_ms`, `1_s`).
struct Duration {
  double seconds;
};
/// A whole number of samples (`64_samples`).
struct Samples {
  double count;
};
/// Two band edges, for bandpass and bandstop designs: `{300_Hz, 3_kHz}`.
struct Band {
  Frequency low, high;
};

namespace literals {
constexpr Frequency operator""_Hz(long double v) { return {static_cast<double>(v)}; }
constexpr Frequency operator""_Hz(unsigned long long v) { return {static_cast<double>(v)}; }
constexpr Frequency operator""_kHz(long double v) { return {static_cast<double>(v) * 1e3}; }
constexpr Frequency operator""_kHz(unsigned long long v) { return {static_cast<double>(v) * 1e3}; }
constexpr Level operator""_dB(long double v) { return {static_cast<double>(v)}; }
constexpr Level operator""_dB(unsigned long long v) { return {static_cast<double>(v)}; }
constexpr Duration operator""_s(long double v) { return {static_cast<double>(v)}; }
constexpr Duration operator""_s(unsigned long long v) { return {static_cast<double>(v)}; }
constexpr Duration operator""_ms(long double v) { return {static_cast<double>(v) * 1e-3}; }
constexpr Duration operator""_ms(unsigned long long v) { return {static_cast<double>(v) * 1e-3}; }
constexpr Samples operator""_samples(unsigned long long v) { return {static_cast<double>(v)}; }
}  // namespace literals

/// One node of a DSL expression. Flows share these, so a flow used twice is one IR node.
struct DslNode {
  ir::Op op;
  std::vector<std::shared_ptr<const DslNode>> operands;
  SourceLoc loc;
  int channels = 0;  ///< inputs only: the declared channel count (0 = any)
};

/// Stages with no signal at their start.
class Chain {
 public:
  struct Stage {
    ir::Op op;
    SourceLoc loc;
  };
  Chain() = default;
  explicit Chain(std::vector<Stage> stages) : stages_(std::move(stages)) {}
  const std::vector<Stage>& stages() const { return stages_; }

 private:
  std::vector<Stage> stages_;
};

/// A signal: an input, or anything computed from one.
class Flow {
 public:
  explicit Flow(std::shared_ptr<const DslNode> node) : node_(std::move(node)) {}
  const std::shared_ptr<const DslNode>& node() const { return node_; }

 private:
  std::shared_ptr<const DslNode> node_;
};

Flow operator|(const Flow& flow, const Chain& chain);
Chain operator|(const Chain& first, const Chain& second);
Flow operator+(const Flow& a, const Flow& b);
Flow operator-(const Flow& a, const Flow& b);
Flow operator*(double gain, const Flow& flow);
Flow operator*(const Flow& flow, double gain);
Flow operator*(Level gain, const Flow& flow);
Chain operator*(double gain, const Chain& chain);
Chain operator*(Level gain, const Chain& chain);

/// A graph input; `channels` 0 means any count, fixed when the graph is bound.
Flow input(std::string name, int channels = 0,
           std::source_location where = std::source_location::current());

/// The default Q of the cookbook filters: exactly 1/sqrt(2).
inline constexpr double kDefaultQ = 0.7071067811865476;

/// A word that is both a band type (`butter(4, 80_Hz, fxc::highpass)`) and, for lowpass,
/// highpass and bandpass, the cookbook biquad of that name (`fxc::highpass(1_kHz)`).
struct BandWord {
  design::BandType band;
  design::BiquadType biquad;
  constexpr operator design::BandType() const { return band; }
  Chain operator()(Frequency f0, double q = kDefaultQ,
                   std::source_location where = std::source_location::current()) const;
};
inline constexpr BandWord lowpass{design::BandType::lowpass, design::BiquadType::lowpass};
inline constexpr BandWord highpass{design::BandType::highpass, design::BiquadType::highpass};
inline constexpr BandWord bandpass{design::BandType::bandpass, design::BiquadType::bandpass};
inline constexpr design::BandType bandstop = design::BandType::bandstop;

// IIR designs, as scipy.signal's (output='sos').
Chain butter(int order, Frequency cutoff, design::BandType btype = design::BandType::lowpass,
             std::source_location where = std::source_location::current());
Chain butter(int order, Band band, design::BandType btype,
             std::source_location where = std::source_location::current());
Chain cheby1(int order, Level rp, Frequency cutoff,
             design::BandType btype = design::BandType::lowpass,
             std::source_location where = std::source_location::current());
Chain cheby1(int order, Level rp, Band band, design::BandType btype,
             std::source_location where = std::source_location::current());
Chain cheby2(int order, Level rs, Frequency cutoff,
             design::BandType btype = design::BandType::lowpass,
             std::source_location where = std::source_location::current());
Chain cheby2(int order, Level rs, Band band, design::BandType btype,
             std::source_location where = std::source_location::current());
Chain ellip(int order, Level rp, Level rs, Frequency cutoff,
            design::BandType btype = design::BandType::lowpass,
            std::source_location where = std::source_location::current());
Chain ellip(int order, Level rp, Level rs, Band band, design::BandType btype,
            std::source_location where = std::source_location::current());
Chain bessel(int order, Frequency cutoff, design::BandType btype = design::BandType::lowpass,
             design::BesselNorm norm = design::BesselNorm::phase,
             std::source_location where = std::source_location::current());

// Audio EQ Cookbook biquads (lowpass, highpass and bandpass are the BandWords above).
Chain notch(Frequency f0, double q = kDefaultQ,
            std::source_location where = std::source_location::current());
Chain allpass(Frequency f0, double q = kDefaultQ,
              std::source_location where = std::source_location::current());
Chain peaking(Frequency f0, double q, Level gain,
              std::source_location where = std::source_location::current());
Chain lowshelf(Frequency f0, Level gain, double q = kDefaultQ,
               std::source_location where = std::source_location::current());
Chain highshelf(Frequency f0, Level gain, double q = kDefaultQ,
                std::source_location where = std::source_location::current());

// Raw coefficients.
Chain sos(std::vector<std::vector<double>> rows_b0_b1_b2_a0_a1_a2, bool allow_unstable = false,
          std::source_location where = std::source_location::current());
Chain tf(std::vector<double> b, std::vector<double> a, bool allow_unstable = false,
         std::source_location where = std::source_location::current());
Chain fir(std::vector<double> taps, std::source_location where = std::source_location::current());
Chain firwin(int numtaps, std::vector<double> cutoff_hz,
             design::Window window = design::Window::hamming, bool pass_zero = true,
             double kaiser_beta = 0,
             std::source_location where = std::source_location::current());

// Other stages.
Chain gain(double linear, std::source_location where = std::source_location::current());
Chain gain(Level level, std::source_location where = std::source_location::current());
Chain delay(Samples samples, std::source_location where = std::source_location::current());
Chain delay(Duration time, std::source_location where = std::source_location::current());
Chain tanh(std::source_location where = std::source_location::current());
Chain clip(double lo, double hi, std::source_location where = std::source_location::current());

/// A named graph output.
struct Output {
  std::string name;
  Flow flow;
};
inline Output output(std::string name, Flow flow) { return {std::move(name), std::move(flow)}; }

/// Lowers the expressions reaching `outputs` to an IR graph. A flow used several times
/// becomes one node with several users; a chain used several times is instantiated at each
/// use. The result is not yet verified: run ir::verify (names must be unique, ...).
ir::Graph make_graph(std::string name, const std::vector<Output>& outputs);

}  // namespace fxc

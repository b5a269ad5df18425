// SPDX-License-Identifier: Apache-2.0
// The C++ pipe DSL: build fxc graphs in C++ the way they are written in .fx files.
//
//   using namespace fxc::literals;
//   fxc::Flow x = fxc::input("x", 2);
//   fxc::Chain eq = fxc::butter(4, 80_Hz, fxc::highpass) | fxc::peaking(1_kHz, 1.0, 3_dB);
//   fxc::Flow y = 0.7 * (x | eq) + 0.3 * (x | fxc::delay(5_ms));
//   fxc::Program program({fxc::output("y", y)}, options);
//
// A Chain is a sequence of stages with no signal at its start; a Flow is a signal (an input or
// anything computed from one). `flow | chain` is a flow, `chain | chain` a chain, `a + b` and
// `a - b` mix flows, and a number (or a level in dB) times a flow or chain is a gain. Each
// stage records the std::source_location of its call, so errors found later (a cutoff above
// Nyquist at the bound sample rate) point at the user's line.
//
// Live parameters: `fxc::param("fc", 200_Hz, {20_Hz, 2_kHz})` is a frequency that a Program
// or Processor can change later with set("fc", 350) without recompiling. It can stand
// wherever a Frequency, Level, Duration, Samples or Number is taken.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

namespace fxc {

/// A live parameter's declaration (opaque; see param()).
struct ParamDecl;
using ParamRef = std::shared_ptr<const ParamDecl>;

/// A frequency in Hz (`80_Hz`, `1_kHz`).
struct Frequency {
  double hz;
  ParamRef param = nullptr;  ///< set when the frequency is a live parameter
};
/// A level in dB (`3_dB`); as a gain it is 10^(db/20).
struct Level {
  double db;
  ParamRef param = nullptr;
  double sign = 1;  ///< -1 for a negated parameter: db is sign x the parameter's value
};
inline Level operator-(const Level& level) { return {-level.db, level.param, -level.sign}; }
/// A time in seconds (`5_ms`, `1_s`).
struct Duration {
  double seconds;
  ParamRef param = nullptr;
};
/// A whole number of samples (`64_samples`).
struct Samples {
  double count;
  ParamRef param = nullptr;
};
/// A plain number (a Q, a linear gain); converts from double.
struct Number {
  Number(double v) : value(v) {}  // NOLINT: implicit on purpose, `0.7 * x` reads as it should
  Number(double v, ParamRef p) : value(v), param(std::move(p)) {}
  double value;
  ParamRef param = nullptr;
};
/// Two band edges, for bandpass and bandstop designs: `{300_Hz, 3_kHz}`.
struct Band {
  Frequency low, high;
};

namespace literals {
inline Frequency operator""_Hz(long double v) { return {static_cast<double>(v)}; }
inline Frequency operator""_Hz(unsigned long long v) { return {static_cast<double>(v)}; }
inline Frequency operator""_kHz(long double v) { return {static_cast<double>(v) * 1e3}; }
inline Frequency operator""_kHz(unsigned long long v) { return {static_cast<double>(v) * 1e3}; }
inline Level operator""_dB(long double v) { return {static_cast<double>(v)}; }
inline Level operator""_dB(unsigned long long v) { return {static_cast<double>(v)}; }
inline Duration operator""_s(long double v) { return {static_cast<double>(v)}; }
inline Duration operator""_s(unsigned long long v) { return {static_cast<double>(v)}; }
inline Duration operator""_ms(long double v) { return {static_cast<double>(v) * 1e-3}; }
inline Duration operator""_ms(unsigned long long v) { return {static_cast<double>(v) * 1e-3}; }
inline Samples operator""_samples(unsigned long long v) { return {static_cast<double>(v)}; }
}  // namespace literals

/// A live parameter named `name` (unique in a graph) with its starting value and, optionally,
/// the range of values it will be set to. Shape decisions (state precision, strategy) are
/// made for the whole range, so setting any value in it never recompiles; without a range
/// they are made for every value the stage accepts. Values are in Hz, dB, seconds, samples
/// or plain numbers, as the first argument's type says.
/// Messages about a parameter (a name used twice, a start outside the range) point at the call.
Frequency param(std::string name, Frequency value, std::optional<Band> range = std::nullopt,
                std::source_location where = std::source_location::current());
Level param(std::string name, Level value, std::optional<std::pair<Level, Level>> range = std::nullopt,
            std::source_location where = std::source_location::current());
Duration param(std::string name, Duration value, std::optional<std::pair<Duration, Duration>> range = std::nullopt,
               std::source_location where = std::source_location::current());
Samples param(std::string name, Samples value, std::optional<std::pair<Samples, Samples>> range = std::nullopt,
              std::source_location where = std::source_location::current());
Number param(std::string name, double value, std::optional<std::pair<double, double>> range = std::nullopt,
             std::source_location where = std::source_location::current());

/// Band types of the IIR designs (scipy.signal's btype).
enum class BandType { lowpass, highpass, bandpass, bandstop };
/// Frequency normalisations of the Bessel design (scipy.signal.bessel's norm).
enum class BesselNorm { phase, delay, mag };
/// The Audio EQ Cookbook biquads.
enum class BiquadType { lowpass, highpass, bandpass, notch, allpass, peaking, lowshelf, highshelf };
/// FIR design windows (scipy.signal.firwin's window).
enum class Window { hamming, hann, blackman, boxcar, kaiser };
/// An envelope's detector: the branching peak detector on |x|, or on x^2 then its root.
enum class Detector { peak, rms };

/// One node of a DSL expression (opaque). Flows share these, so a flow used twice is one
/// graph node.
struct DslNode;

/// Stages with no signal at their start.
class Chain {
 public:
  Chain() = default;
  explicit Chain(std::vector<std::shared_ptr<const DslNode>> stages) : stages_(std::move(stages)) {}
  /// The stages in order, each a node without operands.
  const std::vector<std::shared_ptr<const DslNode>>& stages() const { return stages_; }

 private:
  std::vector<std::shared_ptr<const DslNode>> stages_;
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
Flow operator*(Number gain, const Flow& flow);
Flow operator*(const Flow& flow, Number gain);
Flow operator*(Level gain, const Flow& flow);
Chain operator*(Number gain, const Chain& chain);
Chain operator*(Level gain, const Chain& chain);

/// A graph input; `channels` 0 means any count, fixed when the graph is bound.
Flow input(std::string name, int channels = 0,
           std::source_location where = std::source_location::current());

/// The default Q of the cookbook filters: exactly 1/sqrt(2).
inline constexpr double kDefaultQ = 0.7071067811865476;

/// A word that is both a band type (`butter(4, 80_Hz, fxc::highpass)`) and, for lowpass,
/// highpass and bandpass, the cookbook biquad of that name (`fxc::highpass(1_kHz)`).
struct BandWord {
  BandType band;
  BiquadType biquad;
  constexpr operator BandType() const { return band; }
  Chain operator()(Frequency f0, Number q = kDefaultQ,
                   std::source_location where = std::source_location::current()) const;
};
inline constexpr BandWord lowpass{BandType::lowpass, BiquadType::lowpass};
inline constexpr BandWord highpass{BandType::highpass, BiquadType::highpass};
inline constexpr BandWord bandpass{BandType::bandpass, BiquadType::bandpass};
inline constexpr BandType bandstop = BandType::bandstop;

// IIR designs, as scipy.signal's (output='sos').
Chain butter(int order, Frequency cutoff, BandType btype = BandType::lowpass,
             std::source_location where = std::source_location::current());
Chain butter(int order, Band band, BandType btype,
             std::source_location where = std::source_location::current());
Chain cheby1(int order, Level rp, Frequency cutoff, BandType btype = BandType::lowpass,
             std::source_location where = std::source_location::current());
Chain cheby1(int order, Level rp, Band band, BandType btype,
             std::source_location where = std::source_location::current());
Chain cheby2(int order, Level rs, Frequency cutoff, BandType btype = BandType::lowpass,
             std::source_location where = std::source_location::current());
Chain cheby2(int order, Level rs, Band band, BandType btype,
             std::source_location where = std::source_location::current());
Chain ellip(int order, Level rp, Level rs, Frequency cutoff, BandType btype = BandType::lowpass,
            std::source_location where = std::source_location::current());
Chain ellip(int order, Level rp, Level rs, Band band, BandType btype,
            std::source_location where = std::source_location::current());
Chain bessel(int order, Frequency cutoff, BandType btype = BandType::lowpass,
             BesselNorm norm = BesselNorm::phase,
             std::source_location where = std::source_location::current());

// Audio EQ Cookbook biquads (lowpass, highpass and bandpass are the BandWords above).
Chain notch(Frequency f0, Number q = kDefaultQ,
            std::source_location where = std::source_location::current());
Chain allpass(Frequency f0, Number q = kDefaultQ,
              std::source_location where = std::source_location::current());
Chain peaking(Frequency f0, Number q, Level gain,
              std::source_location where = std::source_location::current());
Chain lowshelf(Frequency f0, Level gain, Number q = kDefaultQ,
               std::source_location where = std::source_location::current());
Chain highshelf(Frequency f0, Level gain, Number q = kDefaultQ,
                std::source_location where = std::source_location::current());

// Raw coefficients.
Chain sos(std::vector<std::vector<double>> rows_b0_b1_b2_a0_a1_a2, bool allow_unstable = false,
          std::source_location where = std::source_location::current());
Chain tf(std::vector<double> b, std::vector<double> a, bool allow_unstable = false,
         std::source_location where = std::source_location::current());
Chain fir(std::vector<double> taps, std::source_location where = std::source_location::current());
Chain firwin(int numtaps, std::vector<double> cutoff_hz, Window window = Window::hamming,
             bool pass_zero = true, double kaiser_beta = 0,
             std::source_location where = std::source_location::current());

// Other stages.
Chain gain(Number linear, std::source_location where = std::source_location::current());
Chain gain(Level level, std::source_location where = std::source_location::current());
Chain delay(Samples samples, std::source_location where = std::source_location::current());
Chain delay(Duration time, std::source_location where = std::source_location::current());
Chain tanh(std::source_location where = std::source_location::current());
Chain clip(double lo, double hi, std::source_location where = std::source_location::current());

// Dynamics (docs/fx-language.md, "Dynamics": the equations). A side-chain key or linked
// channels are written in .fx (key=, link=); these stages process each channel on its own.
Chain envelope(Duration attack, Duration release, Detector detector = Detector::peak,
               std::source_location where = std::source_location::current());
Chain compressor(Level threshold, Number ratio, Duration attack, Duration release, Level knee = {0},
                 Level makeup = {0}, std::source_location where = std::source_location::current());
Chain expander(Level threshold, Number ratio, Duration attack, Duration release, Level knee = {0},
               Level makeup = {0}, std::source_location where = std::source_location::current());
Chain gate(Level threshold, Duration attack, Duration release, Duration hold = {0}, Level range = {-80},
           std::source_location where = std::source_location::current());
Chain limiter(Level ceiling, Duration release, Duration lookahead = {0},
              std::source_location where = std::source_location::current());

/// A named graph output.
struct Output {
  std::string name;
  Flow flow;
};
inline Output output(std::string name, Flow flow) { return {std::move(name), std::move(flow)}; }

}  // namespace fxc

// SPDX-License-Identifier: Apache-2.0
// The table of .fx stages, argument binding, and the build function of each stage.
#include "frontend/stage_table.h"

#include <cmath>
#include <numbers>

#include "frontend/stage_args.h"
#include "support/float_format.h"
#include "support/strings.h"

namespace fxc::frontend {
namespace {

using design::BandType;
using K = ParamKind;

constexpr std::string_view kDefaultQ = "0.7071067811865476";  // 1/sqrt(2), the contract's default
constexpr double kDefaultQValue = 0.7071067811865476;

// ---- checks shared by several stages ----

// Written band edges or cutoffs, for messages: "[2 kHz, 1 kHz]".
std::string written_list(const Expr& e) {
  const auto* list = e.as<ListExpr>();
  if (!list) return describe_value(e);
  std::string out = "[";
  for (std::size_t i = 0; i < list->items.size(); ++i) {
    const auto* n = list->items[i].as<NumberExpr>();
    out += (i ? ", " : "") + (n ? written(*n) : std::string("?"));
  }
  return out + "]";
}

void check_increasing(StageArgs& args, std::string_view param, const std::vector<double>& hz,
                      std::string_view what) {
  if (args.failed(param)) return;  // an item was not a frequency: `hz` lacks it
  for (std::size_t i = 1; i < hz.size(); ++i)
    if (!(hz[i - 1] < hz[i])) {
      args.error(args.loc(param), "the " + std::string(what) + " in '" + std::string(param) +
                                      "' must be increasing, got " +
                                      written_list(*args.get(param)));
      return;
    }
}

void check_positive(StageArgs& args, std::string_view param, double value, std::string_view unit) {
  if (args.has(param) && !args.failed(param) && !(value > 0))
    args.error(args.loc(param), "'" + std::string(param) + "' must be above 0" + std::string(unit) +
                                    ", got " + format_double(value) + std::string(unit));
}

// ---- build functions ----

template <design::IirFamily F>
std::optional<ir::Op> build_iir(StageArgs& args) {
  ir::IirDesign p;
  p.family = F;
  p.order = args.count("N", "order", 1);
  if (F == design::IirFamily::cheby1 || F == design::IirFamily::ellip) {
    p.rp_db = args.level_db("rp", 0);
    check_positive(args, "rp", p.rp_db, " dB");
  }
  if (F == design::IirFamily::cheby2 || F == design::IirFamily::ellip) {
    p.rs_db = args.level_db("rs", 0);
    check_positive(args, "rs", p.rs_db, " dB");
  }
  p.btype = args.word<BandType>("btype", "band type", BandType::lowpass);
  const bool btype_ok = !args.failed("btype");
  p.cutoff_hz = args.frequencies_hz("Wn");
  if (F == design::IirFamily::bessel)
    p.norm = args.word<design::BesselNorm>("norm", "normalization", design::BesselNorm::phase);

  const Expr* wn = args.get("Wn");
  const auto* list = wn ? wn->as<ListExpr>() : nullptr;
  std::size_t given = list ? list->items.size() : 1;
  std::string btype(design::name(p.btype));
  if (wn && btype_ok && (!list || !list->items.empty())) {
    if (design::is_band(p.btype) && given != 2) {
      args.error(wn->loc, "a " + btype + " filter needs two band edges [low, high] for 'Wn', got " +
                              (list ? "a list of " + std::to_string(given) : "one frequency"));
    } else if (!design::is_band(p.btype) && given != 1) {
      args.error(wn->loc, "a " + btype +
                              " filter takes one cutoff frequency for 'Wn', got a list of " +
                              std::to_string(given));
    } else if (p.cutoff_hz.size() == 2) {
      check_increasing(args, "Wn", p.cutoff_hz, "band edges");
    }
  }
  if (!args.ok()) return std::nullopt;
  return p;
}

template <design::BiquadType T>
std::optional<ir::Op> build_biquad(StageArgs& args) {
  ir::Biquad p;
  p.type = T;
  p.f0_hz = args.frequency_hz("f0", p.f0_hz);
  p.q = args.real("q", kDefaultQValue);
  check_positive(args, "q", p.q, "");
  p.gain_db = args.level_db("gain", 0);
  if (!args.ok()) return std::nullopt;
  return p;
}

std::optional<ir::Op> build_firwin(StageArgs& args) {
  ir::FirDesign p;
  p.numtaps = args.count("numtaps", "'numtaps'", 1);
  p.cutoff_hz = args.frequencies_hz("cutoff");
  check_increasing(args, "cutoff", p.cutoff_hz, "cutoffs");
  p.window = args.word<design::Window>("window", "window", design::Window::hamming);
  const bool window_ok = !args.failed("window");
  p.pass_zero = args.boolean("pass_zero", true);
  if (window_ok && p.window == design::Window::kaiser) {
    if (!args.has("beta"))
      args.error(args.loc("window"),
                 "the kaiser window needs its shape parameter 'beta' "
                 "(such as beta=8.6)");
    p.kaiser_beta = args.real("beta", 0);
  } else if (window_ok && args.has("beta")) {
    args.error(args.loc("beta"), "'beta' applies only to the kaiser window, not to '" +
                                     std::string(design::name(p.window)) + "'");
  }
  // SciPy's rule: a response that passes the Nyquist frequency needs an odd tap count.
  bool passes_nyquist = (p.cutoff_hz.size() % 2 == 1) != p.pass_zero;
  if (args.ok() && passes_nyquist && p.numtaps % 2 == 0)
    args.error(args.loc("numtaps"),
               "'numtaps' must be odd for a filter that passes the Nyquist frequency (a "
               "highpass or bandstop response), got " +
                   std::to_string(p.numtaps));
  if (!args.ok()) return std::nullopt;
  return p;
}

std::optional<ir::Op> build_sos(StageArgs& args) {
  ir::SosCascade p;
  p.sections = args.sections("sos");
  p.allow_unstable = args.boolean("allow_unstable", false);
  if (!args.ok()) return std::nullopt;
  return p;
}

std::optional<ir::Op> build_tf(StageArgs& args) {
  ir::TransferFunction p;
  p.b = args.reals("b");
  p.a = args.reals("a");
  p.allow_unstable = args.boolean("allow_unstable", false);
  if (args.ok() && p.a.front() == 0) {
    const auto& items = args.get("a")->as<ListExpr>()->items;
    args.error(items.front().loc, "a[0] must not be 0 (the transfer function is divided by it)");
  }
  if (!args.ok()) return std::nullopt;
  return p;
}

std::optional<ir::Op> build_fir(StageArgs& args) {
  ir::FirFilter p;
  p.taps = args.reals("h");
  if (!args.ok()) return std::nullopt;
  return p;
}

std::optional<ir::Op> build_gain(StageArgs& args) {
  ir::Gain p;
  p.gain = args.linear_gain("g", 1);
  if (!args.ok()) return std::nullopt;
  return p;
}

std::optional<ir::Op> build_delay(StageArgs& args) {
  ir::Delay p = args.delay("d");
  if (!args.ok()) return std::nullopt;
  return p;
}

std::optional<ir::Op> build_tanh(StageArgs&) {
  return ir::Tanh{};
}

std::optional<ir::Op> build_clip(StageArgs& args) {
  ir::Clip p;
  p.lo = args.real("lo", -1);
  p.hi = args.real("hi", 1);
  if (args.ok() && p.lo > p.hi)
    args.error(args.loc("lo"), "the lower bound 'lo' (" + format_double(p.lo) +
                                   ") is above the upper bound 'hi' (" + format_double(p.hi) + ")");
  if (!args.ok()) return std::nullopt;
  return p;
}

// ---- dynamics (docs/fx-language.md, "Dynamics") ----

template <design::DynamicsType Type>
std::optional<ir::Op> build_dynamics(StageArgs& args) {
  using T = design::DynamicsType;
  ir::Dynamics p;
  p.type = Type;
  p.unit = ir::DelayUnit::seconds;
  // In the order of the signature, so errors come in source order.
  if (Type != T::envelope) p.threshold_db = args.level_db(Type == T::limiter ? "ceiling" : "threshold", 0);
  bool ratio = Type == T::compressor || Type == T::expander;
  if (ratio) {
    p.ratio = args.real("ratio", 1);
    if (args.has("ratio") && !(p.ratio >= 1))
      args.error(args.loc("ratio"), "'ratio' must be at least 1 (1 is no " +
                                        std::string(Type == T::compressor ? "compression" : "expansion") +
                                        "), got " + format_double(p.ratio));
  }
  if (Type != T::limiter) p.attack = args.seconds("attack", 0);
  p.release = args.seconds("release", 0);
  if (Type == T::envelope)
    p.detector = args.word<design::Detector>("detector", "detector", design::Detector::peak);
  if (ratio) {
    p.knee_db = args.level_db("knee", 0);
    if (!(p.knee_db >= 0))
      args.error(args.loc("knee"), "'knee' must be at least 0 dB, got " + format_double(p.knee_db) + " dB");
    p.makeup_db = args.level_db("makeup", 0);
  }
  if (Type == T::gate) {
    p.hold = args.seconds("hold", 0);
    p.range_db = args.level_db("range", -80);
    if (!(p.range_db <= 0))
      args.error(args.loc("range"), "'range' is an attenuation: at most 0 dB, got " + format_double(p.range_db) + " dB");
  }
  if (Type == T::limiter) p.lookahead = args.seconds("lookahead", 0);
  if (!args.ok()) return std::nullopt;
  return p;
}

// ---- channel routing ----

std::optional<ir::Op> build_mix(StageArgs& args) {
  std::vector<std::vector<double>> rows = args.matrix("m");
  if (!args.ok()) return std::nullopt;
  ir::Matrix p;
  p.rows = static_cast<int>(rows.size());
  for (const auto& row : rows) p.gains.insert(p.gains.end(), row.begin(), row.end());
  return p;
}

std::optional<ir::Op> build_sum_channels(StageArgs&) {
  return ir::Matrix{1, {}};  // a row of ones, one per channel, once the count is known
}

// Constant power: the pan position p in [-1, 1] is the angle (p + 1) pi / 4 between the two
// gains, cos and sin, so that their squares sum to 1 everywhere (-3 dB each at the centre).
std::optional<ir::Op> build_pan(StageArgs& args) {
  double p = args.real("p", 0);
  if (args.ok() && !(p >= -1 && p <= 1))
    args.error(args.loc("p"), "the pan position must lie in [-1, 1] (-1 left, 0 centre, 1 right), got " +
                                  format_double(p));
  if (!args.ok()) return std::nullopt;
  const double angle = (p + 1) * std::numbers::pi / 4;
  return ir::Matrix{2, {std::cos(angle), std::sin(angle)}};
}

// Mid = (L + R) / 2, side = (L - R) / 2; decoding, L = M + S and R = M - S, restores the pair.
std::optional<ir::Op> build_ms_encode(StageArgs&) { return ir::Matrix{2, {0.5, 0.5, 0.5, -0.5}}; }
std::optional<ir::Op> build_ms_decode(StageArgs&) { return ir::Matrix{2, {1, 1, 1, -1}}; }
std::optional<ir::Op> build_swap(StageArgs&) { return ir::Select{{1, 0}, 2}; }

// ---- the table ----

ParamSpec req(std::string_view name, ParamKind kind) {
  return {name, kind, true, {}, false};
}
ParamSpec opt(std::string_view name, ParamKind kind, std::string_view default_text) {
  return {name, kind, false, default_text, false};
}
ParamSpec named(std::string_view name, ParamKind kind, std::string_view default_text) {
  return {name, kind, false, default_text, true};
}

std::vector<StageSpec> make_table() {
  using design::BiquadType;
  using design::IirFamily;
  const ParamSpec n = req("N", K::count), wn = req("Wn", K::frequencies),
                  btype = opt("btype", K::word, "lowpass"), f0 = req("f0", K::frequency),
                  q = opt("q", K::real, kDefaultQ), gain = req("gain", K::level),
                  unstable = named("allow_unstable", K::boolean, "false"),
                  // Read by the lowering, which turns them into a gain from the key's level
                  // times the signal (lower_to_ir.cpp's side_chain); listed for the signature.
                  side_chain_key = named("key", K::signal, "none"), side_chain_link = named("link", K::word, "none");
  return {
      {"butter",
       "Butterworth IIR filter (SciPy butter)",
       {n, wn, btype},
       build_iir<IirFamily::butter>},
      {"cheby1",
       "Chebyshev type I IIR filter, passband ripple rp in dB",
       {n, req("rp", K::level), wn, btype},
       build_iir<IirFamily::cheby1>},
      {"cheby2",
       "Chebyshev type II IIR filter, stopband attenuation rs in dB",
       {n, req("rs", K::level), wn, btype},
       build_iir<IirFamily::cheby2>},
      {"ellip",
       "elliptic IIR filter, ripple rp and attenuation rs in dB",
       {n, req("rp", K::level), req("rs", K::level), wn, btype},
       build_iir<IirFamily::ellip>},
      {"bessel",
       "Bessel/Thomson IIR filter",
       {n, wn, btype, opt("norm", K::word, "phase")},
       build_iir<IirFamily::bessel>},
      {"lowpass", "cookbook low-pass biquad", {f0, q}, build_biquad<BiquadType::lowpass>},
      {"highpass", "cookbook high-pass biquad", {f0, q}, build_biquad<BiquadType::highpass>},
      {"bandpass",
       "cookbook band-pass biquad (0 dB peak gain)",
       {f0, q},
       build_biquad<BiquadType::bandpass>},
      {"notch", "cookbook notch biquad", {f0, q}, build_biquad<BiquadType::notch>},
      {"allpass", "cookbook all-pass biquad", {f0, q}, build_biquad<BiquadType::allpass>},
      {"peaking",
       "cookbook peaking EQ biquad, gain in dB",
       {f0, q, gain},
       build_biquad<BiquadType::peaking>},
      {"lowshelf",
       "cookbook low-shelf biquad, gain in dB",
       {f0, gain, q},
       build_biquad<BiquadType::lowshelf>},
      {"highshelf",
       "cookbook high-shelf biquad, gain in dB",
       {f0, gain, q},
       build_biquad<BiquadType::highshelf>},
      {"sos",
       "raw second-order sections [[b0, b1, b2, a0, a1, a2], ...]",
       {req("sos", K::sections), unstable},
       build_sos},
      {"tf",
       "raw transfer function (b, a), as lfilter(b, a, x)",
       {req("b", K::reals), req("a", K::reals), unstable},
       build_tf},
      {"fir", "raw FIR taps, as lfilter(h, [1], x)", {req("h", K::reals)}, build_fir},
      {"firwin",
       "windowed-sinc FIR design (SciPy firwin)",
       {req("numtaps", K::count), req("cutoff", K::frequencies), opt("window", K::word, "hamming"),
        opt("pass_zero", K::boolean, "true"), opt("beta", K::real, "")},
       build_firwin},
      {"gain", "multiply by g (linear, or dB with the unit)", {req("g", K::gain)}, build_gain},
      {"delay", "delay by d samples, or by a time in s or ms", {req("d", K::time)}, build_delay},
      {"tanh", "pointwise tanh", {}, build_tanh},
      {"clip", "pointwise clamp to [lo, hi]", {req("lo", K::real), req("hi", K::real)}, build_clip},
      {"envelope",
       "envelope follower (linear amplitude): branching peak or rms detector",
       {req("attack", K::duration), req("release", K::duration), opt("detector", K::word, "peak")},
       build_dynamics<design::DynamicsType::envelope>},
      {"compressor",
       "downward compressor above the threshold, quadratic soft knee (Giannoulis et al. 2012)",
       {req("threshold", K::level), req("ratio", K::real), req("attack", K::duration), req("release", K::duration),
        opt("knee", K::level, "0 dB"), opt("makeup", K::level, "0 dB"), side_chain_key, side_chain_link},
       build_dynamics<design::DynamicsType::compressor>},
      {"expander",
       "downward expander below the threshold, quadratic soft knee",
       {req("threshold", K::level), req("ratio", K::real), req("attack", K::duration), req("release", K::duration),
        opt("knee", K::level, "0 dB"), opt("makeup", K::level, "0 dB"), side_chain_key, side_chain_link},
       build_dynamics<design::DynamicsType::expander>},
      {"gate",
       "noise gate: attenuates by range below the threshold, after hold",
       {req("threshold", K::level), req("attack", K::duration), req("release", K::duration),
        opt("hold", K::duration, "0 ms"), opt("range", K::level, "-80 dB"), side_chain_key, side_chain_link},
       build_dynamics<design::DynamicsType::gate>},
      {"limiter",
       "peak limiter: no sample above the ceiling; lookahead delays the signal",
       {req("ceiling", K::level), req("release", K::duration), opt("lookahead", K::duration, "0 ms"), side_chain_key, side_chain_link},
       build_dynamics<design::DynamicsType::limiter>},
      {"mix",
       "mix channels through a matrix: a row per output channel, a gain per input channel",
       {req("m", K::matrix)},
       build_mix},
      {"sum_channels", "the sum of every channel (one channel out)", {}, build_sum_channels},
      {"pan", "a mono signal to stereo, constant power; p from -1 (left) to 1 (right)", {opt("p", K::real, "0")},
       build_pan},
      {"ms_encode", "stereo left/right to mid/side: M = (L + R) / 2, S = (L - R) / 2", {}, build_ms_encode},
      {"ms_decode", "mid/side to stereo left/right: L = M + S, R = M - S", {}, build_ms_decode},
      {"swap", "swap the two channels of a stereo signal", {}, build_swap},
  };
}

std::string names_text(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + std::string(names[i]);
  return out;
}

void note(Diagnostic& d, SourceLoc loc, std::string message) {
  d.notes.push_back({Severity::note, std::move(loc), std::move(message), {}, {}});
}

}  // namespace

const std::vector<StageSpec>& stage_table() {
  static const std::vector<StageSpec> table = make_table();
  return table;
}

const StageSpec* find_stage(std::string_view name) {
  for (const StageSpec& s : stage_table())
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<std::string_view> stage_names() {
  std::vector<std::string_view> out;
  for (const StageSpec& s : stage_table()) out.push_back(s.name);
  return out;
}

std::string signature(const StageSpec& stage) {
  std::string out = std::string(stage.name) + "(";
  for (std::size_t i = 0; i < stage.params.size(); ++i) {
    const ParamSpec& p = stage.params[i];
    out += (i ? ", " : "") + std::string(p.name);
    if (!p.required) out += "=" + std::string(p.default_text.empty() ? "..." : p.default_text);
  }
  return out + ")";
}

std::string_view param_kind_name(ParamKind kind) {
  switch (kind) {
    case K::frequency:
      return "frequency (Hz, kHz)";
    case K::frequencies:
      return "frequency or list of frequencies (Hz, kHz)";
    case K::level:
      return "level (dB)";
    case K::gain:
      return "gain (linear, or dB)";
    case K::time:
      return "time (samples, s, ms)";
    case K::duration:
      return "time (s, ms)";
    case K::count:
      return "whole number >= 1";
    case K::real:
      return "number";
    case K::reals:
      return "list of numbers";
    case K::sections:
      return "list of sections";
    case K::matrix:
      return "matrix (a list of rows)";
    case K::word:
      return "word";
    case K::boolean:
      return "true or false";
    case K::signal:
      return "signal";
  }
  return "value";
}

std::optional<StageOp> build_stage(const CallExpr& call, const SourceLoc& call_loc,
                                   DiagnosticEngine& diags, std::span<const std::string_view> functions) {
  const StageSpec* stage = find_stage(call.callee);
  if (!stage) {
    Diagnostic& d = diags.error(call_loc, "unknown stage '" + call.callee + "'", "fx-stage");
    std::vector<std::string_view> names = stage_names();
    std::vector<std::string_view> callable = names;
    callable.insert(callable.end(), functions.begin(), functions.end());
    if (std::optional<std::string> near = nearest_name(call.callee, callable))
      note(d, {}, "did you mean '" + *near + "'?");
    else
      note(d, {}, "the stages are " + names_text(names) +
                      (functions.empty() ? "" : "; the functions are " + names_text({functions.begin(), functions.end()})));
    return std::nullopt;
  }
  const std::string quoted_name = "'" + std::string(stage->name) + "'";
  const std::string expected = "expected " + signature(*stage);
  std::size_t positional_count = 0;
  for (const ParamSpec& p : stage->params) positional_count += p.keyword_only ? 0 : 1;

  std::vector<const Expr*> values(stage->params.size(), nullptr);
  std::vector<const Arg*> given(stage->params.size(), nullptr);
  std::size_t next_positional = 0;
  const Arg* first_keyword = nullptr;
  bool ok = true, too_many_reported = false;
  for (const Arg& arg : call.args) {
    if (arg.keyword.empty()) {
      if (first_keyword) {
        diags.error(arg.loc(),
                    "positional argument after the keyword argument '" + first_keyword->keyword +
                        "'; positional arguments come first",
                    "fx-stage");
        ok = false;
      } else if (next_positional >= positional_count) {
        if (!too_many_reported) {
          std::size_t count = 0;
          for (const Arg& a : call.args) count += a.keyword.empty() ? 1 : 0;
          std::string message = positional_count == 0
                                    ? "too many arguments: " + quoted_name + " takes no arguments"
                                    : "too many arguments: " + quoted_name + " takes at most " +
                                          std::to_string(positional_count) + " arguments, got " +
                                          std::to_string(count);
          note(diags.error(arg.loc(), message, "fx-stage"), {}, expected);
        }
        too_many_reported = true;
        ok = false;
      } else {
        values[next_positional] = arg.value.get();
        given[next_positional] = &arg;
        ++next_positional;
      }
      continue;
    }
    if (!first_keyword) first_keyword = &arg;
    std::size_t index = stage->params.size();
    for (std::size_t i = 0; i < stage->params.size(); ++i)
      if (stage->params[i].name == arg.keyword) index = i;
    if (index == stage->params.size()) {
      Diagnostic& d =
          diags.error(arg.keyword_loc, "unknown parameter '" + arg.keyword + "' for " + quoted_name,
                      "fx-stage");
      std::vector<std::string_view> names;
      for (const ParamSpec& p : stage->params) names.push_back(p.name);
      std::optional<std::string> near = nearest_name(arg.keyword, names);
      note(d, {}, near ? "did you mean '" + *near + "'?" : expected);
      ok = false;
    } else if (values[index]) {
      Diagnostic& d = diags.error(arg.keyword_loc, "parameter '" + arg.keyword + "' is given twice",
                                  "fx-stage");
      note(d, given[index]->loc(), "first given here");
      ok = false;
    } else {
      values[index] = arg.value.get();
      given[index] = &arg;
    }
  }
  if (!ok) return std::nullopt;

  std::vector<std::string> missing;
  for (std::size_t i = 0; i < stage->params.size(); ++i)
    if (stage->params[i].required && !values[i])
      missing.push_back("'" + std::string(stage->params[i].name) + "'");
  if (!missing.empty()) {
    std::string list;
    for (std::size_t i = 0; i < missing.size(); ++i)
      list += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
    std::string message = "missing argument" + std::string(missing.size() > 1 ? "s " : " ") + list +
                          " for " + quoted_name;
    Diagnostic& d = diags.error(call_loc, message, "fx-stage");
    note(d, {}, expected);
    // A level given by its place to a parameter that takes none (peaking(1 kHz, 6 dB): q comes
    // before gain) is most likely the missing level: said, where only 'missing gain' was.
    for (std::size_t i = 0; i < stage->params.size(); ++i) {
      const auto* number = values[i] && given[i]->keyword.empty() ? values[i]->as<NumberExpr>() : nullptr;
      if (!number || number->unit != Unit::db || stage->params[i].kind == ParamKind::level ||
          stage->params[i].kind == ParamKind::gain)
        continue;
      for (std::size_t m = 0; m < stage->params.size(); ++m)
        if (stage->params[m].required && !values[m] &&
            (stage->params[m].kind == ParamKind::level || stage->params[m].kind == ParamKind::gain))
          note(d, values[i]->loc, number->text + " dB went to '" + std::string(stage->params[i].name) +
                                      "' by its place; give it by name: " + std::string(stage->params[m].name) + "=" +
                                      number->text + " dB");
    }
    return std::nullopt;
  }

  std::vector<SourceLoc> starts(stage->params.size());
  for (std::size_t i = 0; i < stage->params.size(); ++i)
    if (given[i]) starts[i] = given[i]->loc();
  StageArgs args(*stage, values, call_loc, diags, starts);
  std::optional<ir::Op> op = stage->build(args);
  if (!op || !args.ok()) return std::nullopt;
  StageOp out{std::move(*op), {}};
  for (std::size_t i = 0; i < stage->params.size(); ++i)
    if (values[i]) out.arg_locs[std::string(stage->params[i].name)] = given[i]->loc();
  return out;
}

}  // namespace fxc::frontend

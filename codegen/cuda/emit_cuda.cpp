// SPDX-License-Identifier: Apache-2.0
#include "codegen/cuda/emit_cuda.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>
#include <variant>

#include "codegen/chain_layout.h"
#include "support/float_format.h"

namespace fxc::codegen {
namespace {

// CUDA kernels keep their own names (docs/cuda.md): fxc_chain_<id> and fxc_sum_<id>.
std::string cuda_chain_symbol(std::uint32_t id) { return "fxc_chain_" + std::to_string(id); }


std::string str(long long v) { return std::to_string(v); }

// The carry's group walks: a thread per state row, in whole warps.
int carry_block_threads(int state_dimension) { return (state_dimension + 31) / 32 * 32; }

// The scalar type and the math functions of one dtype. The float functions are named
// explicitly so no overload resolution can pick a double function for a float.
struct Scalar {
  std::string t, fma, tanh, fabs, sqrt, log10, exp;
  int bytes = 0;  // of one value
};
Scalar scalar_of(DType dtype) {
  if (dtype == DType::f32) return {"float", "fmaf", "tanhf", "fabsf", "sqrtf", "log10f", "expf", 4};
  return {"double", "fma", "tanh", "fabs", "sqrt", "log10", "exp", 8};
}
// Float64 arithmetic in pairs of floats (state_precision pairs and mixed_pairs; the type and
// its operators: emit_float_pairs). Only sections and gains compute in it: products and fused
// multiply-adds.
Scalar float_pair_scalar() { return {"fxc_ff", "fxc_ff_fma", "", "", "", "", "", 8}; }

// Lines of source with indentation.
class Writer {
 public:
  void line(const std::string& text = {}) {
    if (!text.empty()) out_ << std::string(2 * depth_, ' ') << text;
    out_ << '\n';
  }
  void open(const std::string& text) {
    line(text);
    ++depth_;
  }
  void close(const std::string& text = "}") {
    --depth_;
    line(text);
  }
  /// `} else {`: closes a block and opens the next at the same depth.
  void reopen(const std::string& text) {
    --depth_;
    line(text);
    ++depth_;
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
  int depth_ = 0;
};

std::string stage_kind(const ir::Stage& stage) {
  return std::visit([](const auto& p) { return std::string(std::decay_t<decltype(p)>::kKind); }, stage);
}

/// How a fused loop's kernel reaches its line (emit_thread_per_channel): by default the
/// loop_read loads the cell at the position and the loop_write stores the mix there. With
/// `read`, the loop_read takes that value instead (loaded ahead by the caller: blocks of
/// kCudaLoopAhead). With `registers`, the whole line is in registers `cell0` (the oldest, read
/// next) to `cell<registers - 1>`, and the loop_write shifts the mix in at `cell<len - 1>`
/// (`shift<j>`: j + 1 < len, `newest<j>`: j + 1 == len).
struct LoopAccess {
  std::string read;
  int registers = 0;
};

// The per-sample body of a chain and the code that loads and stores its state. `chunked`:
// state starts at zero and there are no rings (cuda_chunked_scan_applies holds).
class ChainBody {
 public:
  // `s`: the type of the kernel's state, parameter and ring buffers, and of its arithmetic
  // except, in a `mixed` chain, after the first stage (float there), and in float pairs
  // (`pairs`: every stage; `mixed_pairs`: the first, then float).
  ChainBody(const ir::Chain& chain, const Scalar& s)
      : chain_(chain),
        layout_(layout_of(chain)),
        s_(s),
        mixed_(ir::mixed_precision(chain.state_precision)),
        pairs_(ir::float_pairs(chain.state_precision)) {}

  const ChainLayout& layout() const { return layout_; }

  /// The variable holding a sample after the stages before `end` (all by default).
  std::string result(std::size_t end = static_cast<std::size_t>(-1)) const {
    return var(std::min(end, chain_.stages.size()) - 1);
  }

  // Scalar coefficients into registers (FIR taps are read in the tap loop).
  void load_params(Writer& w) const {
    for (std::size_t i = 0; i < chain_.stages.size(); ++i) {
      const ir::Stage& stage = chain_.stages[i];
      const StageLayout& at = layout_.stages[i];
      std::string where = "stage " + str(i) + " (" + stage_kind(stage) + ")";
      if (auto* sos = std::get_if<ir::SosCascade>(&stage)) {
        for (std::size_t k = 0; k < sos->sections.size(); ++k) {
          int p = at.param_offset + 5 * static_cast<int>(k);
          w.line("// " + where + ", section " + str(k) + ": b0 b1 b2 a1 a2");
          static const char* names[] = {"b0", "b1", "b2", "a1", "a2"};
          for (int j = 0; j < 5; ++j)
            w.line("const " + at_(i).t + " " + coef(i, k, names[j]) + " = " + from_buffer(i, "params[" + str(p + j) + "]") + ";");
        }
      } else if (std::holds_alternative<ir::Gain>(stage)) {
        w.line("const " + at_(i).t + " " + gain(i) + " = " + from_buffer(i, "params[" + str(at.param_offset) + "]") + ";  // " + where);
      } else if (std::holds_alternative<ir::Clip>(stage)) {
        w.line("const " + at_(i).t + " " + lo(i) + " = " + from_buffer(i, "params[" + str(at.param_offset) + "]") + ";  // " + where);
        w.line("const " + at_(i).t + " " + hi(i) + " = " + from_buffer(i, "params[" + str(at.param_offset + 1) + "]") + ";");
      } else if (std::holds_alternative<ir::Delay>(stage) || std::holds_alternative<ir::LoopRead>(stage)) {
        w.line("const long long " + delay_len(i) + " = delay_lengths[" + str(at.delay_index) +
               "];  // " + where);
      } else if (auto* write = std::get_if<ir::LoopWrite>(&stage)) {
        w.line("// " + where + ": input_weight loop_weight" + (write->dry_mix ? " wet_weight dry_weight" : ""));
        for (int k = 0; k < (write->dry_mix ? 4 : 2); ++k)
          w.line("const " + at_(i).t + " " + loop_weight(i, k) + " = " +
                 from_buffer(i, "params[" + str(at.param_offset + k) + "]") + ";");
      } else if (std::holds_alternative<ir::Dynamics>(stage)) {
        w.line("// " + where + ": threshold, slope, knee, makeup, alpha_A, alpha_R, hold, closed (chain_layout.h)");
        for (int k = 0; k < kDynParamCount; ++k)
          w.line("const " + at_(i).t + " " + dyn(i, k) + " = " + from_buffer(i, "params[" + str(at.param_offset + k) + "]") + ";");
      }
    }
  }

  // Section state into registers, ring pointers and positions. `st` points at the channel's
  // state (Start::state), at a chunk's float64 start state (Start::chunk), or is unused.
  enum class Start { state, zero, chunk };
  void load_state(Writer& w, Start start) const {
    for (std::size_t i = 0; i < chain_.stages.size(); ++i) {
      const ir::Stage& stage = chain_.stages[i];
      const StageLayout& at = layout_.stages[i];
      if (auto* sos = std::get_if<ir::SosCascade>(&stage)) {
        for (std::size_t k = 0; k < sos->sections.size(); ++k)
          for (int j = 0; j < 2; ++j) {
            int slot = at.state_offset + 2 * static_cast<int>(k) + j;
            // A chunk's start state is float64 whatever the kernel's type.
            const std::string st = "st[" + str(slot) + "]";
            std::string value = start == Start::zero                            ? at_(i).t + "(0)"
                                : start == Start::chunk && at_(i).t != "double" ? at_(i).t + "(" + st + ")"
                                : start == Start::chunk                          ? st
                                                                                 : from_buffer(i, st);
            w.line(at_(i).t + " " + z(i, k, j) + " = " + value + ";");
          }
      } else if (std::holds_alternative<ir::Delay>(stage) || std::holds_alternative<ir::LoopRead>(stage)) {
        int slot = at.delay_index;
        w.line(s_.t + "* const " + ring(i) + " = delay_lines[c * " + str(layout_.delay_count) + " + " +
               str(at.delay_index) + "];");
        w.line("long long " + pos(i) + " = positions[c * " + str(layout_.positions_per_channel()) +
               " + " + str(slot) + "];");
      } else if (std::holds_alternative<ir::FirFilter>(stage)) {
        int slot = layout_.delay_count + at.ring_index;
        w.line(s_.t + "* const " + ring(i) + " = st + " + str(at.state_offset) + ";  // stage " + str(i) +
               " (fir): ring of its last inputs");
        w.line("long long " + pos(i) + " = positions[c * " + str(layout_.positions_per_channel()) +
               " + " + str(slot) + "];");
      } else if (std::holds_alternative<ir::Dynamics>(stage)) {
        // Dynamics never run chunked (they are not linear): their state is the channel's.
        for (int j = 0; j < 2; ++j)
          w.line(at_(i).t + " " + dyn_state(i, j) + " = " +
                 (start == Start::zero ? at_(i).t + "(0)" : from_buffer(i, "st[" + str(at.state_offset + j) + "]")) + ";");
        if (at.ring_index >= 0) {
          w.line(s_.t + "* const " + ring(i) + " = st + " + str(at.state_offset + kDynRings) + ";  // stage " + str(i) +
                 " (dynamics): rings of the last inputs and targets, the targets' suffix maxima, their running maximum");
          w.line("long long " + pos(i) + " = positions[c * " + str(layout_.positions_per_channel()) + " + " +
                 str(layout_.delay_count + at.ring_index) + "];");
        }
      }
    }
  }

  void store_state(Writer& w, const std::string& base) const {
    for (std::size_t i = 0; i < chain_.stages.size(); ++i) {
      const ir::Stage& stage = chain_.stages[i];
      const StageLayout& at = layout_.stages[i];
      if (auto* sos = std::get_if<ir::SosCascade>(&stage)) {
        for (std::size_t k = 0; k < sos->sections.size(); ++k)
          for (int j = 0; j < 2; ++j)
            w.line(base + "[" + str(at.state_offset + 2 * static_cast<int>(k) + j) + "] = " + to_buffer(i, z(i, k, j)) + ";");
      } else if (std::holds_alternative<ir::Delay>(stage) || std::holds_alternative<ir::LoopRead>(stage)) {
        w.line("positions[c * " + str(layout_.positions_per_channel()) + " + " + str(at.delay_index) +
               "] = " + pos(i) + ";");
      } else if (std::holds_alternative<ir::FirFilter>(stage)) {
        w.line("positions[c * " + str(layout_.positions_per_channel()) + " + " +
               str(layout_.delay_count + at.ring_index) + "] = " + pos(i) + ";");
      } else if (std::holds_alternative<ir::Dynamics>(stage)) {
        for (int j = 0; j < 2; ++j) w.line(base + "[" + str(at.state_offset + j) + "] = " + dyn_state(i, j) + ";");
        if (at.ring_index >= 0)
          w.line("positions[c * " + str(layout_.positions_per_channel()) + " + " +
                 str(layout_.delay_count + at.ring_index) + "] = " + pos(i) + ";");
      }
    }
  }

  // Every stage on `v`, in order, with the CPU backend's arithmetic (emit_chain.cpp): the
  // same fused multiply-adds, in the same places, and nothing else fused (--fmad=false).
  // `end`: only the stages before it (the chunked scan's zero-state pass runs the scanned
  // prefix alone).
  // In a `mixed` chain the stages after the first run on `v32`, a float copy of `v` (result()).
  // `loop`: in a fused loop, where its line's cells come from (LoopAccess).
  void sample(Writer& w, std::size_t end = static_cast<std::size_t>(-1), const LoopAccess& loop = {}) const {
    for (std::size_t i = 0; i < chain_.stages.size() && i < end; ++i) {
      if (mixed_ && i == 1)
        w.line(at_(1).t + " v32 = " + at_(1).t + "(v);  // float64 " + (pairs_ ? "(pair) " : "") +
               "sections done: float32 from here");
      stage(w, i, loop);
    }
  }

  /// The index of a fused loop's loop_read stage, or -1 (no loop).
  int loop_read_stage() const {
    for (std::size_t i = 0; i < chain_.stages.size(); ++i)
      if (std::holds_alternative<ir::LoopRead>(chain_.stages[i])) return static_cast<int>(i);
    return -1;
  }
  /// Stage `stage`'s line and the position in it (a delay's, a loop_read's), as load_state
  /// names them.
  static std::string ring(std::size_t stage) { return "ring" + str(stage); }
  static std::string pos(std::size_t stage) { return "pos" + str(stage); }

  /// The register load_params gives delay stage `stage`'s length.
  static std::string delay_len(std::size_t stage) { return "len" + str(stage); }

  // Stage i on `v`; `loop` as sample()'s.
  void stage(Writer& w, std::size_t i, const LoopAccess& loop = {}) const {
    const ir::Stage& stage = chain_.stages[i];
    const StageLayout& at = layout_.stages[i];
    const Scalar& sc = at_(i);
    const std::string v = var(i);
    std::visit(
        [&](const auto& p) {
          using P = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<P, ir::SosCascade>) {
            for (std::size_t k = 0; k < p.sections.size(); ++k) section(w, i, k, v, "");
          } else if constexpr (std::is_same_v<P, ir::Gain> || std::is_same_v<P, ir::Clip> ||
                               std::is_same_v<P, ir::Tanh>) {
            memoryless(w, i, v);
          } else if constexpr (std::is_same_v<P, ir::Delay>) {
            w.open("if (" + delay_len(i) + " != 0) {  // stage " + str(i) + " (delay): ring of " +
                   delay_len(i) + " samples");
            w.line("const " + sc.t + " old = " + from_buffer(i, ring(i) + "[" + pos(i) + "]") + ";");
            w.line(ring(i) + "[" + pos(i) + "] = " + v + ";");
            w.line(pos(i) + " = " + pos(i) + " + 1 >= " + delay_len(i) + " ? 0 : " + pos(i) + " + 1;");
            w.line(v + " = old;");
            w.close();
          } else if constexpr (std::is_same_v<P, ir::FirFilter>) {
            std::string taps = str(static_cast<long long>(p.taps.size()));
            w.open("{  // stage " + str(i) + " (fir), " + taps + " taps: direct form over the ring");
            w.line(ring(i) + "[" + pos(i) + "] = " + v + ";");
            w.line(sc.t + " acc = " + sc.t + "(0);");
            w.open("for (long long k = 0; k < " + taps + "; ++k) {");
            w.line("long long back = " + pos(i) + " - k;");
            w.line("if (back < 0) back += " + taps + ";");
            w.line("acc = " + sc.fma + "(" + from_buffer(i, "params[" + str(at.param_offset) + " + k]") + ", " +
                   from_buffer(i, ring(i) + "[back]") + ", acc);");
            w.close();
            w.line(pos(i) + " = " + pos(i) + " + 1 >= " + taps + " ? 0 : " + pos(i) + " + 1;");
            w.line(v + " = acc;");
            w.close();
          } else if constexpr (std::is_same_v<P, ir::Dynamics>) {
            dynamics(w, i, p, at);
          } else if constexpr (std::is_same_v<P, ir::LoopRead>) {
            // The CPU kernel's (emit_chain.cpp): the line's sample from len ago; the input
            // waits for the loop_write. A loop's delay is at least one sample (design-filters).
            w.line("const " + sc.t + " " + loop_input(i) + " = " + v + ";  // stage " + str(i) +
                   " (loop_read): the loop's input, for its loop_write");
            const std::string cell = loop.registers > 0 ? std::string("cell0")
                                     : loop.read.empty()  ? from_buffer(i, ring(i) + "[" + pos(i) + "]")
                                                          : loop.read;
            w.line("const " + sc.t + " " + loop_value(i) + " = " + cell + ";  // the line's sample from " +
                   delay_len(i) + " ago");
            w.line(v + " = " + loop_value(i) + ";");
          } else if constexpr (std::is_same_v<P, ir::LoopWrite>) {
            // s = input_weight x + loop_weight v into the cell just read, and on to the next:
            // two products and a sum, unfused, as the CPU kernel.
            const std::size_t r = static_cast<std::size_t>(loop_read_stage());
            w.open("{  // stage " + str(i) + " (loop_write): the mix into the line");
            w.line("const " + sc.t + " mix = " + loop_weight(i, 0) + " * " + loop_input(r) + " + " + loop_weight(i, 1) +
                   " * " + v + ";");
            if (loop.registers > 0) {  // the line moves on by one: its oldest cell out, the mix in
              for (int j = 0; j < loop.registers; ++j) {
                const std::string cell = "cell" + str(j);
                const std::string newer = j + 1 < loop.registers ? "cell" + str(j + 1) : cell;
                w.line(cell + " = shift" + str(j) + " ? " + newer + " : (newest" + str(j) + " ? " + to_buffer(i, "mix") +
                       " : " + cell + ");");
              }
            } else {
              w.line(ring(r) + "[" + pos(r) + "] = " + to_buffer(i, "mix") + ";");
            }
            w.line(pos(r) + " = " + pos(r) + " + 1 >= " + delay_len(r) + " ? 0 : " + pos(r) + " + 1;");
            const std::string out = p.output_read ? loop_value(r) : std::string("mix");
            if (p.dry_mix)  // wet x out + dry x input, the CPU's fmuladd
              w.line(v + " = " + sc.fma + "(" + loop_weight(i, 3) + ", " + loop_input(r) + ", " + loop_weight(i, 2) +
                     " * " + out + ");  // the mix after the loop (dry_mix)");
            else
              w.line(v + " = " + out + ";" + (p.output_read ? "  // the line's sample (output_read)" : ""));
            w.close();
          }
        },
        stage);
  }

  /// One step of the chunk passes' wavefront (emit_wavefront_iteration): a section of an sos
  /// stage, or a whole gain, clip or tanh stage.
  struct Step {
    std::size_t stage = 0, section = 0;
  };
  /// The steps of the stages before `end`, in order (the chunked scan's chains: sos, gain,
  /// clip and tanh stages only).
  std::vector<Step> steps(std::size_t end) const {
    std::vector<Step> out;
    for (std::size_t i = 0; i < chain_.stages.size() && i < end; ++i) {
      if (auto* sos = std::get_if<ir::SosCascade>(&chain_.stages[i]))
        for (std::size_t k = 0; k < sos->sections.size(); ++k) out.push_back({i, k});
      else
        out.push_back({i, 0});
    }
    return out;
  }
  /// The arithmetic type of a step, which its input is converted to (a `mixed` chain's float
  /// steps after its float64 ones).
  std::string step_type(const Step& s) const { return at_(s.stage).t; }
  const ir::Stage& stage_of(const Step& s) const { return chain_.stages[s.stage]; }
  /// Step `s` on variable `x` in place. With `valid` (a bool expression), its state moves only
  /// where that holds: a wavefront's first and last iterations run steps on no sample.
  void step(Writer& w, const Step& s, const std::string& x, const std::string& valid) const {
    if (std::holds_alternative<ir::SosCascade>(chain_.stages[s.stage])) section(w, s.stage, s.section, x, valid);
    else memoryless(w, s.stage, x);
  }

 private:
  // Section k of sos stage i on `v` in place: transposed direct form II, with the CPU
  // backend's three fused multiply-adds. With `valid`, the state keeps its value where that
  // is false.
  void section(Writer& w, std::size_t i, std::size_t k, const std::string& v, const std::string& valid) const {
    const Scalar& sc = at_(i);
    w.open("{  // stage " + str(i) + " (sos), section " + str(k) + ": transposed direct form II");
    w.line("const " + sc.t + " o = " + sc.fma + "(" + coef(i, k, "b0") + ", " + v + ", " + z(i, k, 0) + ");");
    const std::string next0 = sc.fma + "(" + coef(i, k, "b1") + ", " + v + ", " + sc.fma + "(-" + coef(i, k, "a1") +
                              ", o, " + z(i, k, 1) + "))";
    const std::string next1 = sc.fma + "(-" + coef(i, k, "a2") + ", o, " + coef(i, k, "b2") + " * " + v + ")";
    if (valid.empty()) {
      w.line(z(i, k, 0) + " = " + next0 + ";");
      w.line(z(i, k, 1) + " = " + next1 + ";");
    } else {
      w.line("const " + sc.t + " n0 = " + next0 + ", n1 = " + next1 + ";");
      w.line(z(i, k, 0) + " = " + valid + " ? n0 : " + z(i, k, 0) + ";");
      w.line(z(i, k, 1) + " = " + valid + " ? n1 : " + z(i, k, 1) + ";");
    }
    w.line(v + " = o;");
    w.close();
  }

  // A gain, clip or tanh stage i on `v` in place.
  void memoryless(Writer& w, std::size_t i, const std::string& v) const {
    const ir::Stage& stage = chain_.stages[i];
    if (std::holds_alternative<ir::Gain>(stage)) {
      w.line(v + " = " + v + " * " + gain(i) + ";  // stage " + str(i) + " (gain)");
    } else if (std::holds_alternative<ir::Clip>(stage)) {
      w.line(v + " = " + v + " < " + lo(i) + " ? " + lo(i) + " : (" + hi(i) + " < " + v + " ? " + hi(i) + " : " + v +
             ");  // stage " + str(i) + " (clip): std::clamp's comparisons, NaN passes");
    } else if (std::holds_alternative<ir::Tanh>(stage)) {
      w.line(v + " = " + at_(i).tanh + "(" + v + ");  // stage " + str(i) + " (tanh)");
    }
  }

  // The equations of docs/fx-language.md ("Dynamics"), as the CPU kernel computes them
  // (emit_chain.cpp's emit_dynamics): the same comparisons, fused multiply-adds and order.
  void dynamics(Writer& w, std::size_t i, const ir::Dynamics& p, const StageLayout& at) const {
    using T = design::DynamicsType;
    const Scalar& sc = at_(i);
    const std::string& t = sc.t;
    const std::string v = var(i);
    std::string y = dyn_state(i, 0), h = dyn_state(i, 1);
    std::string attack = dyn(i, kDynAttack), release = dyn(i, kDynRelease);
    // y = alpha y + (1 - alpha) target, alpha by `attacking`.
    auto smooth = [&](const std::string& target, const std::string& attacking) {
      w.line("{ const " + t + " a = (" + attacking + ") ? " + attack + " : " + release + "; " + y + " = " + sc.fma +
             "(a, " + y + ", (" + t + "(1) - a) * " + target + "); }");
    };
    w.open("{  // stage " + str(i) + " (dynamics, " + std::string(design::name(p.type)) + ")");
    if (p.type == T::envelope) {
      bool peak = p.detector == design::Detector::peak;
      w.line("const " + t + " e = " + (peak ? sc.fabs + "(" + v + ")" : v + " * " + v) + ";");
      smooth("e", "e > " + y);
      w.line(v + " = " + (peak ? y : sc.sqrt + "(" + y + ")") + ";");
      w.close();
      return;
    }
    w.line(t + " m = " + sc.fabs + "(" + v + ");");
    w.line("m = m < " + t + "(1e-10) ? " + t + "(1e-10) : m;");
    w.line("const " + t + " xg = " + t + "(20) * " + sc.log10 + "(m);");
    w.line("const " + t + " d = xg - " + dyn(i, kDynThreshold) + ";");
    std::string knee_w = dyn(i, kDynKnee), slope = dyn(i, kDynSlope);
    if (p.type == T::compressor || p.type == T::expander) {
      w.line("const " + t + " two_d = " + t + "(2) * d;");
      w.line("const bool in_knee = " + knee_w + " > " + t + "(0) && " + sc.fabs + "(two_d) <= " + knee_w + ";");
      w.line("const " + t + " half_w = " + t + "(0.5) * " + knee_w + ";");
    }
    w.line(t + " input = " + v + ";");
    switch (p.type) {
      case T::compressor:
        w.line("const " + t + " u = d + half_w;");
        w.line("const " + t + " target = two_d > " + knee_w + " ? " + slope + " * d : (in_knee ? " + slope +
               " * (u * u) / (" + t + "(2) * " + knee_w + ") : " + t + "(0));");
        smooth("target", "target > " + y);
        break;
      case T::expander:
        w.line("const " + t + " u = d + -half_w;");
        w.line("const " + t + " target = two_d < -" + knee_w + " ? " + slope + " * -d : (in_knee ? " + slope +
               " * (u * u) / (" + t + "(2) * " + knee_w + ") : " + t + "(0));");
        smooth("target", "target < " + y);
        break;
      case T::gate: {
        std::string hold = dyn(i, kDynHold);
        w.line("const " + t + " up = " + h + " + " + t + "(1), cap = " + hold + " + " + t + "(1);");
        w.line(h + " = xg >= " + dyn(i, kDynThreshold) + " ? " + t + "(0) : (cap < up ? cap : up);");
        w.line("const " + t + " target = " + h + " <= " + hold + " ? " + t + "(0) : " + dyn(i, kDynClosed) + ";");
        smooth("target", "target < " + y);
        break;
      }
      case T::limiter: {
        w.line(t + " target = d > " + t + "(0) ? d : " + t + "(0);  // max(0, max(d, 0)); a NaN gives 0");
        if (at.ring_index >= 0) {
          // The window's maximum from blocks of the targets' ring, as the CPU's emit_lookahead
          // computes it (van Herk and Gil-Werman): this block's running maximum, the last
          // block's maxima from each position to the ring's end (computed when it wrapped).
          const int l = at.ring_length;
          const std::string length = str(l);
          const std::string targets = "(" + ring(i) + " + " + length + ")";
          const std::string suffix = "(" + ring(i) + " + " + str(2 * l) + ")";
          const std::string prefix = ring(i) + "[" + str(3 * l) + "]";
          w.line(t + " z = target < " + t + "(" + prefix + ") ? " + t + "(" + prefix + ") : target;");
          w.line("z = z < " + t + "(" + suffix + "[" + pos(i) + "]) ? " + t + "(" + suffix + "[" + pos(i) + "]) : z;");
          w.line("input = " + ring(i) + "[" + pos(i) + "];");
          w.line(ring(i) + "[" + pos(i) + "] = " + v + ";");
          w.line(targets + "[" + pos(i) + "] = target;");
          w.line(prefix + " = " + prefix + " < target ? target : " + prefix + ";");
          w.line("if (++" + pos(i) + " >= " + length + ") {  // the block is whole: its suffix maxima");
          w.line("  " + s_.t + " m = 0;");
          w.line("  for (long long k = " + str(l - 1) + "; k >= 0; --k) { m = m < " + targets + "[k] ? " + targets +
                 "[k] : m; " + suffix + "[k] = m; }");
          w.line("  " + prefix + " = 0;");
          w.line("  " + pos(i) + " = 0;");
          w.line("}");
          w.line("target = z;");
        }
        w.line(y + " = target > " + y + " ? target : " + sc.fma + "(" + release + ", " + y + ", (" + t + "(1) - " +
               release + ") * target);");
        break;
      }
      case T::envelope: break;
    }
    w.line(v + " = " + sc.exp + "(("+ dyn(i, kDynMakeup) + " - " + y + ") * " + t + "(" +
           format_double(std::log(10.0) / 20) + "))" + (p.output_gain ? ";  // the gain (a side-chain's)" : " * input;"));
    if (p.output_gain) w.line("(void)input;");
    w.close();
  }

  static std::string dyn(std::size_t stage, int k) { return "dyn" + str(stage) + "_" + str(k); }
  static std::string dyn_state(std::size_t stage, int j) { return (j == 0 ? "env" : "count") + str(stage); }

  static std::string coef(std::size_t stage, std::size_t section, const char* name) {
    return "s" + str(stage) + "_" + str(section) + "_" + name;
  }
  static std::string z(std::size_t stage, std::size_t section, int j) {
    return "z" + str(stage) + "_" + str(section) + "_" + str(j);
  }
  static std::string gain(std::size_t stage) { return "g" + str(stage); }
  static std::string lo(std::size_t stage) { return "lo" + str(stage); }
  static std::string hi(std::size_t stage) { return "hi" + str(stage); }
  static std::string loop_weight(std::size_t stage, int k) { return "lw" + str(stage) + "_" + str(k); }
  static std::string loop_input(std::size_t stage) { return "loop_in" + str(stage); }
  static std::string loop_value(std::size_t stage) { return "loop_v" + str(stage); }

  // Stage i's arithmetic type, and the name of the sample it works on: in a `mixed` chain,
  // float and `v32` after the first stage (its float64 sections); float pairs for the stages
  // a `pairs` chain has and a `mixed_pairs` chain's first.
  Scalar at_(std::size_t i) const {
    if (mixed_ && i > 0) return scalar_of(DType::f32);
    return pairs_ ? float_pair_scalar() : s_;
  }
  std::string var(std::size_t i) const { return mixed_ && i > 0 ? "v32" : "v"; }
  // A read of the kernel's buffers (parameters, state, rings: s_'s type) as stage i's type.
  std::string from_buffer(std::size_t i, const std::string& read) const {
    return at_(i).t == s_.t ? read : at_(i).t + "(" + read + ")";
  }
  // Stage i's value written into the buffers: a pair is converted explicitly (a float widens
  // by itself).
  std::string to_buffer(std::size_t i, const std::string& value) const {
    return at_(i).t == float_pair_scalar().t ? s_.t + "(" + value + ")" : value;
  }

  const ir::Chain& chain_;
  ChainLayout layout_;
  Scalar s_;
  bool mixed_, pairs_;
};

std::string describe_chain(const ir::Chain& chain) {
  std::string out;
  for (const ir::Stage& stage : chain.stages) {
    if (!out.empty()) out += " | ";
    out += stage_kind(stage);
    if (auto* sos = std::get_if<ir::SosCascade>(&stage)) out += "(" + str(static_cast<long long>(sos->sections.size())) + ")";
    if (auto* fir = std::get_if<ir::FirFilter>(&stage)) out += "(" + str(static_cast<long long>(fir->taps.size())) + ")";
  }
  return out;
}

const char* kSignalArgs =
    "long long channels, long long samples, long long channel_stride, long long sample_stride";
const std::vector<std::string> kSignalParams = {"long long", "long long", "long long", "long long"};

// The signal's type T and the arithmetic's type S (double for state_precision f64 on a
// float32 chain: samples are converted on load and store), and the type a sample enters the
// arithmetic in: S, or float pairs (state_precision pairs and mixed_pairs), whose buffers are
// still S.
struct Types {
  Scalar signal, compute, value;
  std::string load(const std::string& what) const {
    return signal.t == value.t ? what : value.t + "(" + what + ")";
  }
  std::string store(const std::string& what) const {
    return signal.t == compute.t ? what : signal.t + "(" + what + ")";
  }
};
Types types_of(const CudaKernelInfo& k) {
  return {scalar_of(k.dtype), scalar_of(k.state_dtype), scalar_of(k.state_dtype)};
}
// A chain's: its samples enter the first stage's arithmetic.
Types types_of(const CudaKernelInfo& k, const ir::Chain& chain) {
  Types ty = types_of(k);
  if (ir::float_pairs(chain.state_precision)) ty.value = float_pair_scalar();
  return ty;
}

void header(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain, const ChainLayout& l, const Types& ty) {
  w.line("// chain %" + str(k.node) + ": " + describe_chain(chain));
  w.line("// " + k.note);
  w.line("// params: " + str(l.param_count) + ", state per channel: " + str(l.state_per_channel) +
         ", delays: " + str(l.delay_count) + ", rings: " + str(l.ring_count));
  using P = ir::StatePrecision;
  if (ty.signal.t != ty.compute.t) switch (chain.state_precision) {
      case P::mixed:
        w.line("// state in double; arithmetic in double for stage 0's sections, in float after (state_precision "
               "mixed); samples are " + ty.signal.t);
        break;
      case P::mixed_pairs:
        w.line("// state in double; arithmetic in float pairs for stage 0's sections, in float after (state_precision "
               "mixed_pairs); samples are " + ty.signal.t);
        break;
      case P::pairs:
        w.line("// state in double; arithmetic in float pairs (state_precision pairs); samples are " + ty.signal.t);
        break;
      default:
        w.line("// state and arithmetic in " + ty.compute.t + " (state_precision f64); samples are " + ty.signal.t);
    }
}

// fxc_prefetch_l2: brings the cache line at `p` into L2 (PTX prefetch.L2 on a generic
// address), for a serial kernel whose next block would otherwise wait a DRAM latency for its
// inputs. It returns nothing, so host C++ (the emulation) compiles it as nothing.
void emit_prefetch(Writer& w) {
  w.line("// A fused loop's thread reads its inputs a few samples at a time, each block after the last:");
  w.line("// the inputs of a later block are brought into L2 first, so that its loads wait an L2");
  w.line("// latency, not a DRAM one.");
  w.open("__device__ inline void fxc_prefetch_l2(const void* p) {");
  w.line("#if defined(__CUDACC__)");
  w.line("asm volatile(\"prefetch.L2 [%0];\" : : \"l\"(p));");
  w.line("#else");
  w.line("(void)p;");
  w.line("#endif");
  w.close();
}

// fxc_copy_async and its group calls: a copy of Bytes (4, 8 or 16) from global to shared memory
// that runs while the thread goes on (PTX cp.async, sm_80 and later: no register holds the
// value, and nothing waits until fxc_copy_wait), the chunk passes' planar tile. It reads
// `valid` bytes of them and writes zeros for the rest (src-size: a copy past the chunk's end
// reads nothing; `from` must still point into the signal), so that every copy is issued
// unpredicated: a branch around each made ptxas recompute its addresses. fxc_copy_commit closes
// the thread's copies since the last into a group; fxc_copy_wait<N> waits until at most the N
// newest groups are still under way (a __syncthreads after it shows them to the block). Before
// sm_80, and in host C++ (the emulation), the copy is a load and a store, and the rest nothing.
void emit_async_copy(Writer& w) {
  w.line("// The chunk passes copy their planar tile's samples in while they compute from the last ones.");
  w.line("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800");
  w.line("#define FXC_COPY_ASYNC 1");
  w.line("#endif");
  w.line("template <int Bytes, class T>");
  w.open("__device__ inline void fxc_copy_async(T* to, const T* from, unsigned valid) {");
  w.line("#ifdef FXC_COPY_ASYNC");
  w.line("const unsigned shared = (unsigned)__cvta_generic_to_shared(to);");
  w.line("asm volatile(\"cp.async.ca.shared.global [%0], [%1], %2, %3;\" : : \"r\"(shared), \"l\"(from), \"n\"(Bytes),");
  w.line("             \"r\"(valid) : \"memory\");");
  w.line("#else");
  w.line("for (unsigned e = 0; e < Bytes / sizeof(T); ++e) to[e] = e < valid / sizeof(T) ? from[e] : T(0);");
  w.line("#endif");
  w.close();
  w.open("__device__ inline void fxc_copy_commit() {");
  w.line("#ifdef FXC_COPY_ASYNC");
  w.line("asm volatile(\"cp.async.commit_group;\" : : : \"memory\");");
  w.line("#endif");
  w.close();
  w.line("template <int N>");
  w.open("__device__ inline void fxc_copy_wait() {");
  w.line("#ifdef FXC_COPY_ASYNC");
  w.line("asm volatile(\"cp.async.wait_group %0;\" : : \"n\"(N) : \"memory\");");
  w.line("#endif");
  w.close();
}

// A fused loop's samples in blocks of kCudaLoopAhead, from `n` while a whole block remains; the
// caller runs the rest one at a time. Each sample reads the line's cell that was written a delay
// ago, then writes it. One sample at a time through memory, every sample would wait a memory
// latency for its cell and its input (ptxas cannot tell the next cell from the one just
// written), on top of the body's own serial latency. Here each block's inputs are loaded while
// the block before computes, and brought into L2 kCudaLoopPrefetch samples before that. The
// line's cells: with `registers` (a line shorter than two blocks, emit_loop_registers) they are
// in registers; else they are loaded with the inputs, a block ahead: the next block's cells lie
// past the ones this block writes, so no write of this block reaches them.
template <class OneSample>
void emit_loop_blocks(Writer& w, const Types& ty, std::size_t read, int registers, const OneSample& one_sample) {
  const int ahead = kCudaLoopAhead;
  const std::string len = ChainBody::delay_len(read), ring = ChainBody::ring(read), pos = ChainBody::pos(read);
  const std::string& T = ty.compute.t;  // the line's cells
  const std::string& S = ty.signal.t;
  const bool cells_ahead = registers == 0;
  auto load = [&](const std::string& prefix, const std::string& first_sample, const std::string& first_cell) {
    if (cells_ahead) w.line("long long at = " + first_cell + ";");
    for (int j = 0; j < ahead; ++j) {
      if (cells_ahead) {
        if (j > 0) w.line("at = at + 1 >= " + len + " ? 0 : at + 1;");
        w.line(prefix + "line" + str(j) + " = " + ring + "[at];");
      }
      w.line(prefix + "in" + str(j) + " = x[(" + first_sample + " + " + str(j) + ") * sample_stride];");
    }
  };
  auto declare = [&](const std::string& type, const std::string& name, const std::string& init) {
    std::string line = type + " ";
    for (int j = 0; j < ahead; ++j) line += std::string(j ? ", " : "") + name + str(j) + init;
    w.line(line + ";");
  };
  w.open("if (samples >= " + str(ahead) + ") {");
  w.line("// blocks of " + str(ahead) + " samples: the next block's inputs" + (cells_ahead ? " and line cells" : "") +
         " load while this one computes");
  if (cells_ahead) declare(T, "line", "");
  declare(S, "in", "");
  w.open("{");
  load("", "n", pos);
  w.close();
  w.open("for (; n + " + str(ahead) + " <= samples; n += " + str(ahead) + ") {");
  if (cells_ahead) declare(T, "next_line", " = 0");
  declare(S, "next_in", " = 0");
  const std::string later = str(kCudaLoopPrefetch);
  // A planar block of 8 samples lies in one or two cache lines; an interleaved one in 8 rows.
  w.open("if (n + " + later + " + " + str(ahead) + " <= samples) {  // the block " + later + " samples on, into L2");
  w.line("if (sample_stride == 1) fxc_prefetch_l2(x + n + " + later + ");");
  w.open("else {");
  for (int j = 0; j < ahead; ++j) w.line("fxc_prefetch_l2(x + (n + " + later + " + " + str(j) + ") * sample_stride);");
  w.close();
  w.close();
  w.open("if (n + " + str(2 * ahead) + " <= samples) {  // the next block");
  load("next_", "n + " + str(ahead),
       pos + " + " + str(ahead) + " >= " + len + " ? " + pos + " + " + str(ahead) + " - " + len + " : " + pos + " + " +
           str(ahead));
  w.close();
  for (int j = 0; j < ahead; ++j) {
    w.open("{");
    one_sample("(n + " + str(j) + ")", "in" + str(j),
               cells_ahead ? LoopAccess{"line" + str(j)} : LoopAccess{"", registers});
    w.close();
  }
  for (int j = 0; j < ahead; ++j)
    w.line((cells_ahead ? "line" + str(j) + " = next_line" + str(j) + ", " : std::string()) + "in" + str(j) +
           " = next_in" + str(j) + ";");
  w.close();
  w.close();
}

// A fused loop whose line is shorter than two blocks of kCudaLoopAhead: a block's cells cannot
// be loaded a block ahead (some are written within the block before), and through memory a
// sample would wait for the write before it every `len` samples. The whole line lives in
// registers instead, loaded at the start and stored at the end; each sample reads the oldest and
// shifts the mix in (LoopAccess): 2 x kCudaLoopAhead - 1 registers. Blocks as emit_loop_blocks,
// then the last samples one at a time.
template <class OneSample>
void emit_loop_registers(Writer& w, const Types& ty, std::size_t read, const OneSample& one_sample) {
  const int cells = 2 * kCudaLoopAhead - 1;
  const std::string len = ChainBody::delay_len(read), ring = ChainBody::ring(read), pos = ChainBody::pos(read);
  const std::string& T = ty.compute.t;
  w.line("// the line's " + len + " cells in registers, oldest first");
  for (int j = 0; j < cells; ++j)
    w.line(T + " cell" + str(j) + " = 0;  const bool shift" + str(j) + " = " + str(j + 1) + " < " + len + ", newest" +
           str(j) + " = " + str(j + 1) + " == " + len + ";");
  auto walk = [&](bool store) {
    w.open("{");
    w.line("long long at = " + pos + ";");
    for (int j = 0; j < cells; ++j) {
      w.open("if (" + str(j) + " < " + len + ") {");
      w.line(store ? ring + "[at] = cell" + str(j) + ";" : "cell" + str(j) + " = " + ring + "[at];");
      w.line("at = at + 1 >= " + len + " ? 0 : at + 1;");
      w.close();
    }
    w.close();
  };
  walk(false);
  emit_loop_blocks(w, ty, read, cells, one_sample);
  w.open("for (; n < samples; ++n) {");
  one_sample("n", "", LoopAccess{"", cells});
  w.close();
  walk(true);
}

// A thread's samples `from` up to (not including) `below` of its own channel, read from x, each
// through `one_sample(n, input)` in order, their inputs kCudaSampleAhead ahead: the next block's
// loads are in flight while this block computes, from `row` (the thread's row of shared memory,
// kCudaSampleAhead values at least). The loop this replaces loaded each sample as the arithmetic
// needed it, so each waited out a memory round trip whenever too few warps were there to cover it.
// The arithmetic and its order are that loop's.
template <class OneSample>
void emit_samples_ahead(Writer& w, const Types& ty, const std::string& from, const std::string& below,
                        const std::string& row, const OneSample& one_sample) {
  const int ahead = kCudaSampleAhead;
  const std::string& S = ty.signal.t;
  auto load = [&](const std::string& first) {
    for (int j = 0; j < ahead; ++j) {
      const std::string n = "(" + first + " + " + str(j) + ")";
      w.line("next" + str(j) + " = " + n + " < " + below + " ? x[" + n + " * sample_stride] : " + S + "(0);");
    }
  };
  w.open("{  // inputs " + str(ahead) + " samples ahead: the next block's load while this one computes");
  std::string names;
  for (int j = 0; j < ahead; ++j) names += std::string(j ? ", " : "") + "next" + str(j);
  w.line(S + " " + names + ";");
  load(from);
  w.open("for (long long n0 = " + from + "; n0 < " + below + "; n0 += " + str(ahead) + ") {");
  for (int j = 0; j < ahead; ++j) w.line(row + "[" + str(j) + "] = next" + str(j) + ";");
  w.open("if (n0 + " + str(ahead) + " < " + below + ") {");
  load("n0 + " + str(ahead));
  w.close();
  w.open("for (long long n = n0; n < n0 + " + str(ahead) + " && n < " + below + "; ++n) {");
  one_sample("n", row + "[n - n0]");
  w.close();
  w.close();
  w.close();
}

void emit_thread_per_channel(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain) {
  Types ty = types_of(k, chain);
  const Scalar& s = ty.compute;
  ChainBody body(chain, s);
  const ChainLayout& l = body.layout();
  header(w, k, chain, l, ty);
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + ty.signal.t + "* __restrict__ in, " + ty.signal.t + "* __restrict__ out, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ params, const long long* __restrict__ delay_lengths,");
  w.line(s.t + "* __restrict__ state, " + s.t + "* const* __restrict__ delay_lines, long long* __restrict__ positions) {");
  w.line("const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
  w.line("if (c >= channels) return;");
  body.load_params(w);
  if (l.state_per_channel > 0) w.line(s.t + "* const st = state + c * " + str(l.state_per_channel) + ";");
  body.load_state(w, ChainBody::Start::state);
  w.line("const " + ty.signal.t + "* const x = in + c * channel_stride;");
  w.line(ty.signal.t + "* const y = out + c * channel_stride;");
  // Sample `n` from the input `input` (a read of x by default).
  auto one_sample = [&](const std::string& n, const std::string& input, const LoopAccess& loop) {
    w.line(ty.value.t + " v = " + ty.load(input.empty() ? "x[" + n + " * sample_stride]" : input) + ";");
    body.sample(w, static_cast<std::size_t>(-1), loop);
    w.line("y[" + n + " * sample_stride] = " + ty.store(body.result()) + ";");
  };
  const int read = body.loop_read_stage();
  if (read < 0) {
    // A row per thread of the block cuda_launch launches (kCudaBlockThreads).
    w.line("__shared__ " + ty.signal.t + " ahead[" + str(kCudaBlockThreads) + "][" + str(kCudaSampleAhead + 1) +
           "];  // padded: no bank conflicts");
    emit_samples_ahead(w, ty, "0", "samples", "ahead[threadIdx.x]",
                       [&](const std::string& n, const std::string& input) { one_sample(n, input, {}); });
  } else {
    // A fused loop: its line in registers where it is short, else in blocks that load ahead,
    // then the last samples of a call one at a time (in registers for a short line, through
    // memory otherwise).
    const auto r = static_cast<std::size_t>(read);
    w.line("long long n = 0;");
    w.open("if (" + ChainBody::delay_len(r) + " < " + str(2 * kCudaLoopAhead) + ") {");
    emit_loop_registers(w, ty, r, one_sample);
    w.close();
    w.open("else {");
    emit_loop_blocks(w, ty, r, 0, one_sample);
    w.close();
    w.open("for (; n < samples; ++n) {");
    one_sample("n", "", {});
    w.close();
  }
  body.store_state(w, "st");
  w.close();
}

// The chunked scan's matrix `from` (float64, transposed: a[q * D + r] is row r, column q) as
// `a`: copied into shared memory when it fits (the caller synchronizes before reading it),
// else read through the cache.
void emit_scan_matrix(Writer& w, int d, const std::string& from) {
  if (d * d <= kCudaSharedMatrixCells) {
    w.line("__shared__ double a[" + str(static_cast<long long>(d) * d) + "];  // " + from + ", transposed");
    w.line("for (int i = threadIdx.x; i < D * D; i += blockDim.x) a[i] = " + from + "[i];");
  } else {
    w.line("const double* const a = " + from + ";  // too large for shared memory: read through the cache");
  }
}

// The chunk passes' wavefront (CudaKernelInfo::wavefront): in iteration n, stage q of the
// pipeline works on sample n - q of the chunk, taking stage q - 1's result of the previous
// iteration from pipeline register p<q>. A stage is one step of the chain (a section, or a
// gain, clip or tanh stage), or past ir::kGpuWavefrontMaxStages steps a group of
// ir::wavefront_group consecutive ones run one after another. The stages of one iteration are
// independent, so a thread's FMA latencies overlap instead of adding up (the CPU backend's
// section wavefront, codegen/cpu/emit_chain.cpp, in the same order). Each section still sees
// exactly the chunk's samples in order, with the same arithmetic: the outputs and states are
// those of the sample-by-sample loop, bit for bit.
class Wavefront {
 public:
  Wavefront(const ChainBody& body, const Types& ty, std::size_t end, bool output)
      : body_(body), ty_(ty), output_(output) {
    const std::vector<ChainBody::Step> steps = body.steps(end);
    const std::size_t group = static_cast<std::size_t>(ir::wavefront_group(static_cast<int>(steps.size())));
    for (std::size_t i = 0; i < steps.size(); i += group)
      stages_.emplace_back(steps.begin() + static_cast<std::ptrdiff_t>(i),
                           steps.begin() + static_cast<std::ptrdiff_t>(std::min(i + group, steps.size())));
  }

  /// Samples between a sample's entry into the first stage and its result leaving the last.
  long long lag() const { return static_cast<long long>(stages_.size()) - 1; }

  /// The pipeline registers, zero (the first iterations' unused stages read them).
  void declare(Writer& w) const {
    for (std::size_t q = 1; q < stages_.size(); ++q)
      w.line(body_.step_type(stages_[q - 1].back()) + " p" + str(static_cast<long long>(q)) + " = 0;  // stage " +
             str(static_cast<long long>(q)) + "'s next input");
  }

  /// Iteration `n` (a long long variable): `load` gives input sample `n` (source), `store`
  /// writes a result (source) as output sample `m` (source). `predicated`: the chunk's first
  /// and last `lag` iterations, where a stage whose sample m = n - q lies outside [0, count)
  /// leaves its state alone and writes nothing.
  template <class Load, class Store>
  void iteration(Writer& w, bool predicated, const Load& load, const Store& store) const {
    const long long last = lag();
    for (long long q = last; q >= 0; --q) {
      const std::vector<ChainBody::Step>& stage = stages_[static_cast<std::size_t>(q)];
      bool stateful = false;
      for (const ChainBody::Step& step : stage)
        stateful = stateful || std::holds_alternative<ir::SosCascade>(body_.stage_of(step));
      const bool checks = predicated && (q == 0 || stateful || (q == last && output_));
      w.open("{  // stage " + str(q) + (predicated ? "" : " on sample n - " + str(q)));
      if (checks) w.line("const bool ok = n - " + str(q) + " >= 0 && n - " + str(q) + " < count;");
      // The stage's steps one after another, each on its own variable (v, then v1, v2, ...: the
      // steps of a mixed chain change type).
      std::string value;
      for (std::size_t j = 0; j < stage.size(); ++j) {
        const std::string type = body_.step_type(stage[j]);
        const std::string name = j == 0 ? "v" : "v" + str(static_cast<long long>(j));
        std::string input;
        if (j > 0) {
          input = body_.step_type(stage[j - 1]) == type ? value : type + "(" + value + ")";
        } else if (q == 0) {
          input = checks ? "ok ? " + load("n") + " : " + type + "(0)" : load("n");
        } else {
          const std::string from = body_.step_type(stages_[static_cast<std::size_t>(q - 1)].back());
          input = from == type ? "p" + str(q) : type + "(p" + str(q) + ")";
        }
        w.line(type + " " + name + " = " + input + ";");
        body_.step(w, stage[j], name, checks ? "ok" : "");
        value = name;
      }
      if (q < last) w.line("p" + str(q + 1) + " = " + value + ";");
      else if (output_) w.line((checks ? "if (ok) " : "") + store("n - " + str(last), ty_.store(value)) + ";");
      w.close();
    }
  }

 private:
  const ChainBody& body_;
  const Types& ty_;
  std::vector<std::vector<ChainBody::Step>> stages_;
  bool output_;
};

// Passes 0 and 4 share the chunk loop: pass 0 runs the scanned prefix from zero state and
// stores only its final state; pass 4 runs the whole chain from the chunk's true start state,
// writes the output and, for a channel's last chunk, the stream's new state.
void emit_chunk_pass(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain, bool output) {
  Types ty = types_of(k, chain);
  const Scalar& s = ty.compute;
  const std::string& T = ty.signal.t;
  ChainBody body(chain, s);
  const ChainLayout& l = body.layout();
  const std::size_t stop = output ? chain.stages.size() : ir::scanned_prefix(chain.stages);
  const std::string& symbol = output ? k.symbol : k.entries[0].symbol;
  const Wavefront wave(body, ty, stop, output);
  const std::string threads = str(k.wavefront ? kCudaWavefrontThreads : kCudaBlockThreads);
  const std::string lag = str(wave.lag());
  w.open("extern \"C\" __global__ void " + symbol + "(");
  if (output) {
    w.line("const " + T + "* __restrict__ in, " + T + "* __restrict__ out, " + kSignalArgs + ",");
    w.line("const " + s.t + "* __restrict__ params, const double* __restrict__ chunk_state, " + s.t +
           "* __restrict__ state) {");
  } else {
    w.line("const " + T + "* __restrict__ in, " + kSignalArgs + ",");
    w.line("const " + s.t + "* __restrict__ params, double* __restrict__ chunk_state) {");
  }
  w.line("const long long L = " + str(k.chunk_length) + ";");
  w.line("const long long D = " + str(l.state_per_channel) + ";");
  w.line("const long long chunks = (samples + L - 1) / L;");
  w.line("const long long rows = channels * chunks;  // (channel, chunk) pairs");
  body.load_params(w);
  // The chunk's start and end: the true start state (pass 4) or zero (pass 0).
  auto start = [&](const std::string& row) {
    if (output) {
      w.line("const double* const st = chunk_state + (" + row + ") * D;  // the chunk's true start state");
      body.load_state(w, ChainBody::Start::chunk);
    } else {
      body.load_state(w, ChainBody::Start::zero);
    }
  };
  auto finish = [&]() {
    if (output) {
      w.open("if (k == chunks - 1) {  // the channel's last chunk ends where the stream goes on");
      w.line(s.t + "* const fin = state + c * D;");
      body.store_state(w, "fin");
      w.close();
    } else {
      w.line("double* const e = chunk_state + (c * chunks + k) * D;");
      body.store_state(w, "e");
    }
  };
  // The wavefront's iterations from `from` up to (not including) `below` (sources; the loop
  // variable n is declared before), predicated or not.
  auto iterations = [&](const std::string& from, const std::string& below, bool predicated, const auto& load,
                        const auto& store) {
    w.open("for (" + from + "; " + below + "; ++n) {");
    wave.iteration(w, predicated, load, store);
    w.close();
  };

  // A wavefront's output pass keeps a ring of 64 samples per chunk (sample m at column m % 64);
  // its chunk_states pass, which writes no output, the tile of 32 (column m % 32). Without the
  // wavefront the tile's two halves of kCudaTileHalf samples take turns.
  const bool ring = k.wavefront && output;
  const std::string mask = ring ? "63" : "31";
  if (ring) {
    w.line("// Planar: a ring of 64 samples per chunk: sample m at column m % 64. A result leaves the");
    w.line("// wavefront " + lag + " samples after its input came in, into its input's column; it leaves the");
    w.line("// ring before that column takes sample m + 64.");
    w.line("__shared__ " + T + " tile[" + threads + "][65];  // padded: a thread's row has no bank conflicts");
  } else if (k.wavefront) {
    w.line("// Planar: a tile of 32 samples per chunk. Interleaved: a thread's next samples, in its row.");
    w.line("__shared__ " + T + " tile[" + threads + "][33];  // padded: a thread's row has no bank conflicts");
  } else {
    // Rows 16 bytes of banks apart (kCudaTileBytes): 36 float32 or 34 float64 samples.
    const std::string stride = str(ty.signal.bytes == 4 ? 36 : 34);
    w.line("// Planar: a tile of 32 samples per chunk, rows 16-byte aligned and 16 bytes of banks apart.");
    w.line("// Interleaved: a thread's next samples, in its row of 33 (no bank conflicts).");
    w.line("__shared__ __align__(16) " + T + " tile[" + threads + "][" + stride + "];");
  }
  static_assert(kCudaSampleAhead <= 32, "the interleaved passes stage a thread's samples in its row of the tile");
  static_assert(2 * kCudaTileHalf == 32 && kCudaBlockThreads % 32 == 0 && kCudaWavefrontThreads % 32 == 0);
  // `warps` is the launch's (cuda_launch launches exactly `threads` a block): every row's table
  // entry is written.
  const std::string warps = str((k.wavefront ? kCudaWavefrontThreads : kCudaBlockThreads) / 32);
  const std::string half = str(kCudaTileHalf);
  w.open("if (sample_stride == 1) {");
  w.line("// Planar: the block's threads take neighbouring chunks, and their samples go through a shared");
  w.line("// tile that warps fill (and empty) with neighbouring samples of one chunk, one transaction,");
  w.line("// instead of loads L samples apart.");
  w.line("const long long first = (long long)blockIdx.x * blockDim.x;");
  w.line("const long long t = first + threadIdx.x;");
  w.line("const long long c = t / chunks, k = t % chunks;");
  w.line("const long long begin = k * L, end = begin + L < samples ? begin + L : samples;");
  w.line("const int lane = threadIdx.x % 32;");
  w.line("// Each tile row's chunk, from the thread that runs it: where it starts in the signal and how");
  w.line("// many samples it has (none past the last row). Read at every step instead of dividing by");
  w.line("// `chunks` for every row a thread copies.");
  w.line("__shared__ long long row_at[" + threads + "];");
  w.line("__shared__ int row_count[" + threads + "];");
  w.line("row_at[threadIdx.x] = t < rows ? c * channel_stride + begin : 0;");
  w.line("row_count[threadIdx.x] = t < rows ? (int)(end - begin) : 0;");
  start("t < rows ? t : 0");
  if (k.wavefront) {
    w.line("const long long count = t < rows ? end - begin : 0;  // this thread's samples");
    wave.declare(w);
    w.open("for (long long j = 0; j < L; j += 32) {  // every thread takes every step: they synchronize");
    w.line("__syncthreads();  // the last tile is done with (and, the first time, the row tables are written)");
    w.line("// Warp w takes rows w, w + " + warps + ", ...: its 32 rows' copies are all in flight before it waits.");
    w.line("#pragma unroll");
    w.open("for (int r = 0; r < 32; ++r) {");
    w.line("const int i = threadIdx.x / 32 + r * " + warps + ";");
    w.line("const long long at = row_at[i];");
    if (output) {
      w.line("// Samples j - 64 .. j - 33 left the wavefront by iteration j - 33 + " + lag + " < j: out, before");
      w.line("// their columns take samples j .. j + 31 (the same thread reads a column, then copies into it).");
      w.line("if (j >= 64 && j - 64 + lane < row_count[i]) out[at + j - 64 + lane] = tile[i][(j + lane) & 63];");
    }
    w.line("const bool valid = j + lane < row_count[i];");
    w.line("fxc_copy_async<sizeof(" + T + ")>(&tile[i][(j + lane) & " + mask + "], in + at + (valid ? j + lane : 0), valid ? sizeof(" +
           T + ") : 0u);");
    w.close();
    w.line("fxc_copy_commit();");
    w.line("fxc_copy_wait<0>();  // this thread's copies are in");
    w.line("__syncthreads();  // and every thread's");
    auto load = [&](const std::string& n) { return ty.load("tile[threadIdx.x][(" + n + ") & " + mask + "]"); };
    auto store = [&](const std::string& m, const std::string& v) { return "tile[threadIdx.x][(" + m + ") & " + mask + "] = " + v; };
    w.open("if (count > j) {  // the thread's chunk has samples in this tile");
    w.line("long long n = j;");
    w.line("// The first iterations: steps beyond the first sample wait (predicated).");
    iterations("", "n < j + 32 && n < " + lag, true, load, store);
    iterations("", "n < j + 32 && n < count", false, load, store);
    w.open("if (count <= j + 32) {  // the chunk ends in this tile: its last samples through the later steps");
    iterations("n = count > " + lag + " ? count : " + lag, "n < count + " + lag, true, load, store);
    w.close();
    w.close();
    w.close();
    if (output) {
      const long long tiles_end = (static_cast<long long>(k.chunk_length) + 31) / 32 * 32;
      w.line("__syncthreads();");
      w.open("for (int i = threadIdx.x / 32; i < blockDim.x; i += blockDim.x / 32) {  // the ring's last 64 samples out");
      w.line("const long long at = row_at[i];");
      w.open("for (long long m = " + str(tiles_end - 64) + " + lane; m < " + str(tiles_end) + "; m += 32) {");
      w.line("if (m >= 0 && m < row_count[i]) out[at + m] = tile[i][m & 63];");
      w.close();
      w.close();
    }
  } else {
    // Narrow copies (4 or 8 bytes a lane, any alignment): copy r of warp w takes rows
    // i0 + (r % per) * warps + (r / per) * 32, i0 = w + (lane / 16) * 16: two rows 16 apart (their
    // halves of a row fall on different banks), all of the block's rows over the 16 copies, at
    // offsets from i0 that unrolling makes constants.
    constexpr int kWarps = kCudaBlockThreads / 32, kPer = kCudaTileHalf / kWarps;
    static_assert(kCudaTileHalf % kWarps == 0);
    auto pair_row = [&]() {
      w.line("const int i = i0 + (r % " + str(kPer) + ") * " + str(kWarps) + " + (r / " + str(kPer) + ") * 32;");
    };
    // Wide copies (16 bytes a lane, V samples, where every row starts 16-byte aligned): a row's
    // half is 16 / V lanes, so a copy takes 2V rows, and a thread 16 / V copies. Copy r of warp
    // w takes rows 2V (w + warps r) + the lane's slot; in float32 the slots are permuted so that
    // the two rows of a quarter warp (whose 16-byte accesses go together) are 4 apart, 64 bytes
    // of banks apart at the row stride of 144 bytes.
    const int v = kCudaTileBytes / ty.signal.bytes;  // samples in 16 bytes
    const std::string V = str(v), lanes_per_row = str(kCudaTileHalf / v), rows_per_copy = str(2 * v);
    auto wide_row = [&]() {
      const std::string slot = "lane / " + lanes_per_row;
      w.line("const int i = " + rows_per_copy + " * (threadIdx.x / 32 + r * " + str(kWarps) + ") + " +
             (v == 4 ? "(" + slot + ") / 2 + ((" + slot + ") % 2) * 4" : slot) + ";");
      w.line("const int c0 = (lane % " + lanes_per_row + ") * " + V + ";  // the copy's first column in the half");
    };
    const std::string vec = ty.signal.t + str(v);  // float4, double2
    const char* const member[] = {"x", "y", "z", "w"};
    w.line("// The tile's two halves of " + half + " samples take turns: while the block computes from one, the");
    w.line("// next samples copy into the other, so only a chunk's first step waits for memory. Where");
    w.line("// every row starts 16-byte aligned and holds whole groups of " + V + " samples, a lane copies, reads and");
    w.line("// stores " + V + " at a time.");
    w.line("const bool wide = ((unsigned long long)in & 15) == 0 && " +
           std::string(output ? "((unsigned long long)out & 15) == 0 && " : "") + "channel_stride % " + V +
           " == 0 && samples % " + V + " == 0 && L % " + V + " == 0;");
    w.line("const int i0 = threadIdx.x / 32 + (lane / 16) * 16;  // narrow copies: this thread's first row");
    w.open("for (int j = -" + half + "; j < L; j += " + half + ") {  // samples j + " + half +
           " on copy in, samples j on are computed");
    w.line("__syncthreads();  // the half they copy into is done with (the first time: the row tables are written)");
    w.open("if (j + " + half + " < L) {");
    w.line("const int h = (j + " + half + ") & " + half + ";  // that half's first column");
    w.open("if (wide) {");
    w.line("#pragma unroll");
    w.open("for (int r = 0; r < " + str(kCudaTileHalf / v) + "; ++r) {");
    wide_row();
    w.line("const int m = j + " + half + " + c0;  // the copy's first sample in its chunk: all " + V + " in it, or none");
    w.line("const bool valid = m < row_count[i];");
    w.line("fxc_copy_async<16>(&tile[i][h + c0], in + row_at[i] + (valid ? m : 0), valid ? 16u : 0u);");
    w.close();
    w.reopen("} else {");
    w.line("#pragma unroll");
    w.open("for (int r = 0; r < " + half + "; ++r) {");
    pair_row();
    w.line("const int m = j + " + half + " + lane % 16;  // the sample in its chunk");
    w.line("const bool valid = m < row_count[i];");
    w.line("fxc_copy_async<sizeof(" + T + ")>(&tile[i][h + lane % 16], in + row_at[i] + (valid ? m : 0), valid ? sizeof(" +
           T + ") : 0u);");
    w.close();
    w.close();
    w.close();
    w.line("fxc_copy_commit();");
    w.line("if (j < 0) continue;");
    w.line("fxc_copy_wait<1>();  // this thread's copies of samples j on are in (those of the next half may not be)");
    w.line("__syncthreads();  // and every thread's");
    w.line("const int h = j & " + half + ";");
    w.line("const int count = t < rows && end - begin > j ? (int)(end - begin - j < " + half + " ? end - begin - j : " + half +
           ") : 0;  // this thread's samples in the half");
    w.line("int i = 0;");
    w.open("for (; i + " + V + " <= count; i += " + V + ") {  // " + V + " samples a shared-memory access");
    w.line("const " + vec + " q = *reinterpret_cast<const " + vec + "*>(&tile[threadIdx.x][h + i]);");
    if (output) w.line(vec + " r;");
    for (int e = 0; e < v; ++e) {
      w.open("{");
      w.line(ty.value.t + " v = " + ty.load(std::string("q.") + member[e]) + ";");
      body.sample(w, stop);
      if (output) w.line(std::string("r.") + member[e] + " = " + ty.store(body.result()) + ";");
      w.close();
    }
    if (output) w.line("*reinterpret_cast<" + vec + "*>(&tile[threadIdx.x][h + i]) = r;");
    w.close();
    w.open("for (; i < count; ++i) {  // the chunk's last samples");
    w.line(ty.value.t + " v = " + ty.load("tile[threadIdx.x][h + i]") + ";");
    body.sample(w, stop);
    if (output) w.line("tile[threadIdx.x][h + i] = " + ty.store(body.result()) + ";");
    w.close();
    if (output) {
      w.line("__syncthreads();");
      w.open("if (wide) {");
      w.line("#pragma unroll");
      w.open("for (int r = 0; r < " + str(kCudaTileHalf / v) + "; ++r) {");
      wide_row();
      w.line("const int m = j + c0;");
      w.line("if (m < row_count[i]) *reinterpret_cast<" + vec + "*>(out + row_at[i] + m) = *reinterpret_cast<const " + vec +
             "*>(&tile[i][h + c0]);");
      w.close();
      w.reopen("} else {");
      w.line("#pragma unroll");
      w.open("for (int r = 0; r < " + half + "; ++r) {");
      pair_row();
      w.line("const int m = j + lane % 16;");
      w.line("if (m < row_count[i]) out[row_at[i] + m] = tile[i][h + lane % 16];");
      w.close();
      w.close();
    }
    w.close();
  }
  w.open("if (t < rows) {");
  finish();
  w.close();
  w.reopen("} else {");
  w.line("// Interleaved: neighbouring threads take neighbouring channels of one chunk, so a warp's loads");
  w.line("// of sample n are adjacent.");
  w.line("const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
  w.line("if (t >= rows) return;");
  w.line("const long long c = t % channels, k = t / channels;");
  w.line("const long long begin = k * L, end = begin + L < samples ? begin + L : samples;");
  start("c * chunks + k");
  w.line("const " + T + "* const x = in + c * channel_stride;");
  if (output) w.line(T + "* const y = out + c * channel_stride;");
  if (k.wavefront) {
    auto load = [&](const std::string& n) { return ty.load("x[(begin + " + n + ") * sample_stride]"); };
    auto store = [&](const std::string& m, const std::string& v) { return "y[(begin + " + m + ") * sample_stride] = " + v; };
    w.line("const long long count = end - begin;");
    wave.declare(w);
    w.line("long long n = 0;");
    iterations("", "n < " + lag, true, load, store);
    iterations("", "n < count", false, load, store);
    iterations("n = count > " + lag + " ? count : " + lag, "n < count + " + lag, true, load, store);
  } else {
    if (!k.wavefront) w.line(T + " (* const ahead)[33] = reinterpret_cast<" + T + " (*)[33]>(&tile[0][0]);  // rows of 33");
    const std::string row = k.wavefront ? "tile[threadIdx.x]" : "ahead[threadIdx.x]";
    emit_samples_ahead(w, ty, "begin", "end", row, [&](const std::string& n, const std::string& input) {
      w.line(ty.value.t + " v = " + ty.load(input) + ";");
      body.sample(w, stop);
      if (output) w.line("y[" + n + " * sample_stride] = " + ty.store(body.result()) + ";");
    });
  }
  finish();
  w.close();
  w.close();
}

// Passes 1 and 3: one block per (channel, group), a thread per state row, walking the group's
// chunks in turn with A^L. Pass 1 sums the group from a zero start; pass 3 starts from the
// group's true start and writes each chunk's true start state over its zero-state end.
void emit_group_walk(Writer& w, const CudaKernelInfo& k, bool starts) {
  const int d = k.state_dimension;
  // A block of more than 256 threads has fewer than 255 registers a thread (65536 an SM): the
  // launch's block size as a bound keeps a wide state's walk within them (spilling if it must;
  // without it ptxas took 127 for 640 rows, and the launch would fail for want of registers).
  const int threads = carry_block_threads(d);
  w.open("extern \"C\" __global__ void " + (threads > 256 ? "__launch_bounds__(" + str(threads) + ") " : std::string()) +
         k.entries[starts ? 3 : 1].symbol + "(");
  if (starts)
    w.line("long long channels, long long samples, const double* __restrict__ a_chunk, "
           "const double* __restrict__ group_starts, double* __restrict__ chunk_state) {");
  else
    w.line("long long channels, long long samples, const double* __restrict__ a_chunk, "
           "const double* __restrict__ chunk_state, double* __restrict__ totals) {");
  w.line("const long long L = " + str(k.chunk_length) + ", G = " + str(kCudaCarryGroup) + ";");
  w.line("const long long chunks = (samples + L - 1) / L, groups = (chunks + G - 1) / G;");
  w.line("const long long c = blockIdx.x / groups, g = blockIdx.x % groups;  // one block per (channel, group)");
  w.line("const int r = threadIdx.x;  // the state row this thread carries");
  w.line("const int D = " + str(d) + ";");
  emit_scan_matrix(w, d, "a_chunk");
  w.line("__shared__ double s[" + str(d) + "];");
  w.line(starts ? "if (r < D) s[r] = group_starts[(c * groups + g) * D + r];"
                : "if (r < D) s[r] = 0;  // the group's sum from a zero start");
  w.line("__syncthreads();");
  w.line(std::string(starts ? "" : "const ") + "double* const e = chunk_state + c * chunks * D;");
  w.line("const long long last = (g + 1) * G < chunks ? (g + 1) * G : chunks;");
  w.line("// The group's zero-state ends, loaded before the walk: G independent loads in flight instead");
  w.line("// of one DRAM round trip per step (unrolled, so they stay in registers).");
  w.line("double ahead[" + str(kCudaCarryGroup) + "];");
  w.line("#pragma unroll");
  w.line("for (int j = 0; j < G; ++j) ahead[j] = r < D && g * G + j < last ? e[(g * G + j) * D + r] : 0.0;");
  const bool row_in_registers = d <= kCudaCarryRowRegisters;
  if (row_in_registers) {
    w.line("// This thread's row of A^L in registers: the matrix is the same at every step, so a step");
    w.line("// loads only s, and its loads do not wait on its FMAs.");
    w.line("double row[D];");
    w.line("#pragma unroll");
    w.line("for (int q = 0; q < D; ++q) row[q] = r < D ? a[q * D + r] : 0.0;");
  }
  const std::string P = str(kCudaCarryPartialSums);
  w.line("#pragma unroll");
  w.open("for (int j = 0; j < G; ++j) {");
  w.line("const long long k = g * G + j;");
  w.line("if (k >= last) break;  // the same for every thread of the block");
  w.line("double next = 0;");
  w.open("if (r < D) {");
  w.line("// A^L s + e[k] in " + P + " independent chains of FMAs (a step waits on D / " + P + " FMA latencies,");
  w.line("// not D); chunk k's end state from zero starts the first.");
  w.line("double part[" + P + "] = {ahead[j]};");
  static_assert(kCudaCarryPartialSums == 4, "the lines below take four partial sums");
  if (row_in_registers) {
    w.line("#pragma unroll");
    w.line("for (int q = 0; q < D; ++q) part[q % 4] = fma(row[q], s[q], part[q % 4]);");
  } else {
    // A wide state: a loop of four products a round, not D unrolled ones (ptxas took minutes
    // over hundreds of rows), the rest after it; part[] keeps constant indices, so registers.
    w.open("for (int q = 0; q + 3 < D; q += 4) {");
    for (int p = 0; p < 4; ++p)
      w.line("part[" + str(p) + "] = fma(a[(q + " + str(p) + ") * D + r], s[q + " + str(p) + "], part[" + str(p) + "]);");
    w.close();
    for (int q = d / 4 * 4; q < d; ++q)
      w.line("part[" + str(q % 4) + "] = fma(a[" + str(q) + " * D + r], s[" + str(q) + "], part[" + str(q % 4) + "]);");
  }
  w.line("next = (part[0] + part[1]) + (part[2] + part[3]);");
  w.close();
  w.line("__syncthreads();  // every row has read s");
  if (starts) {
    w.open("if (r < D) {");
    w.line("e[k * D + r] = s[r];  // chunk k's true start state replaces its zero-state end");
    w.line("s[r] = next;");
    w.close();
  } else {
    w.line("if (r < D) s[r] = next;");
  }
  w.line("__syncthreads();");
  w.close();
  if (!starts) w.line("if (r < D) totals[(c * groups + g) * D + r] = s[r];");
  w.close();
}

// Pass 2: one step of a Kogge-Stone scan over each channel's groups, a thread per (channel,
// group, state row). After the steps, group g holds sum_h (A^(L G))^(g - h) x[h] over h <= g,
// where x[0] is the stream's state and x[h] group h - 1's sum: group g's true start state.
void emit_group_scan(Writer& w, const CudaKernelInfo& k) {
  const std::string S = types_of(k).compute.t;
  const int d = k.state_dimension;
  w.open("extern \"C\" __global__ void " + k.entries[2].symbol + "(");
  w.line("long long channels, long long samples, long long step, const double* __restrict__ a_step,");
  w.line("const double* __restrict__ from, double* __restrict__ to, const " + S + "* __restrict__ state) {");
  w.line("const long long L = " + str(k.chunk_length) + ", G = " + str(kCudaCarryGroup) + ";");
  w.line("const long long chunks = (samples + L - 1) / L, groups = (chunks + G - 1) / G;");
  w.line("const int D = " + str(d) + ";");
  emit_scan_matrix(w, d, "a_step");
  w.line("__syncthreads();");
  w.line("const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
  w.line("if (t >= channels * groups * D) return;");
  w.line("const int r = t % D;");
  w.line("const long long g = t / D % groups, c = t / D / groups;");
  w.line("const long long offset = 1LL << step;");
  w.line("// Step 0 reads x itself (the state, then the sums shifted by one group), later steps the");
  w.line("// previous step's partial sums.");
  w.line("const double* const x = from + c * groups * D;");
  w.line("const " + S + "* const s0 = state + c * D;");
  w.line("double acc = step > 0 ? x[g * D + r] : g == 0 ? double(s0[r]) : x[(g - 1) * D + r];");
  w.open("if (g >= offset) {  // acc += (A^(L G))^(2^step) x[g - offset]");
  w.line("const long long h = g - offset;");
  w.line("if (step > 0) for (int q = 0; q < D; ++q) acc = fma(a[q * D + r], x[h * D + q], acc);");
  w.line("else if (h == 0) for (int q = 0; q < D; ++q) acc = fma(a[q * D + r], double(s0[q]), acc);");
  w.line("else for (int q = 0; q < D; ++q) acc = fma(a[q * D + r], x[(h - 1) * D + q], acc);");
  w.close();
  w.line("to[(c * groups + g) * D + r] = acc;");
  w.close();
}

void emit_chunked_scan(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain) {
  Types ty = types_of(k);
  ChainBody body(chain, ty.compute);
  header(w, k, chain, body.layout(), ty);
  const std::string d = str(k.state_dimension);
  w.line("// Chunked scan over time, chunks of L = " + str(k.chunk_length) + " samples in groups of " +
         str(kCudaCarryGroup) + " (chunk_state: double[channels][chunks][" + d + "]):");
  w.line("// 0. " + k.entries[0].symbol + ": each chunk from zero state, its final state e[k] only;");
  w.line("// 1. " + k.entries[1].symbol + ": each group's sum from a zero start, t = A^L t + e[k];");
  w.line("// 2. " + k.entries[2].symbol + ": log-depth scan over the groups from the stream's state;");
  w.line("// 3. " + k.entries[3].symbol + ": each chunk's true start state s[k] within its group;");
  w.line("// 4. " + k.symbol + ": each chunk again from s[k], writing the output" +
         std::string(ir::scanned_prefix(chain.stages) < chain.stages.size() ? " (the memoryless tail too)" : "") + ".");
  emit_chunk_pass(w, k, chain, false);
  w.line();
  emit_group_walk(w, k, false);
  w.line();
  emit_group_scan(w, k);
  w.line();
  emit_group_walk(w, k, true);
  w.line();
  emit_chunk_pass(w, k, chain, true);
}

// Where a lone FIR's ring (its last inputs, for the next block's first outputs) and the
// ring's position are, in the source of fir_tiled's and fir_fft's kernels (channel `c`).
struct FirRing {
  std::string taps, ring_at, pos_at;
};
FirRing fir_ring_of(const ChainLayout& l, const ir::Chain& chain) {
  const auto& fir = std::get<ir::FirFilter>(chain.stages[0]);
  const StageLayout& at = l.stages[0];
  return {str(static_cast<long long>(fir.taps.size())),
          "state + c * " + str(l.state_per_channel) + " + " + str(at.state_offset),
          "positions[c * " + str(l.positions_per_channel()) + " + " + str(l.delay_count + at.ring_index) + "]"};
}

// The source of input sample m of channel c for a lone FIR (into `v`): the signal, the ring
// for the TAPS - 1 samples before it, zeros after it.
void emit_fir_input(Writer& w, const Types& ty, const std::string& m, const std::string& v) {
  w.line("if (" + m + " >= 0 && " + m + " < samples) " + v + " = " + ty.load("x[" + m + " * sample_stride]") + ";");
  w.line("else if (" + m + " < 0 && " + m + " >= -TAPS) " + v + " = ring[pos + " + m + " < 0 ? pos + " + m +
         " + TAPS : pos + " + m + "];");
}

// What emit_fir_input reads for channel c: its input `x`, and its `ring` and `pos` for the
// inputs before sample 0.
void emit_fir_history(Writer& w, const Types& ty, const FirRing& r) {
  w.line("const " + ty.signal.t + "* const x = in + c * channel_stride;");
  w.line("const " + ty.compute.t + "* const ring = " + r.ring_at + ";  // the inputs before sample 0");
  w.line("const long long pos = " + r.pos_at + ";  // x[-1] is ring[pos - 1]");
}

// The last entry of a lone FIR's kernels (fir_tiled, fir_fft, fir_partitioned): the block's
// last inputs into the ring, one CUDA block per channel and a thread per input (input m goes to
// ring[(pos + m) % TAPS], so no two threads write the same cell). Every thread reads the
// position before thread 0 moves it: a walk of TAPS dependent steps by one thread cost a cache
// latency per tap.
void emit_fir_ring(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain, const Types& ty) {
  const Scalar& s = ty.compute;
  const FirRing r = fir_ring_of(layout_of(chain), chain);
  w.open("extern \"C\" __global__ void " + k.entries.back().symbol + "(");
  w.line("const " + ty.signal.t + "* __restrict__ in, " + kSignalArgs + ",");
  w.line(s.t + "* __restrict__ state, long long* __restrict__ positions) {");
  w.line("const long long c = blockIdx.x;  // one block per channel");
  w.line("if (c >= channels) return;");
  w.line("const long long TAPS = " + r.taps + ";");
  w.line(s.t + "* const ring = " + r.ring_at + ";");
  w.line("const " + ty.signal.t + "* const x = in + c * channel_stride;");
  w.line("const long long first = samples > TAPS ? samples - TAPS : 0;  // earlier inputs are overwritten anyway");
  w.line("const long long pos = " + r.pos_at + ";");
  w.line("for (long long m = first + threadIdx.x; m < samples; m += blockDim.x) ring[(pos + m) % TAPS] = " +
         ty.load("x[m * sample_stride]") + ";");
  w.line("__syncthreads();  // every thread has read pos");
  w.line("if (threadIdx.x == 0) " + r.pos_at + " = (pos + samples) % TAPS;");
  w.close();
}

void emit_fir_tiled(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain) {
  Types ty = types_of(k);
  const Scalar& s = ty.compute;
  const ChainLayout l = layout_of(chain);
  const FirRing r = fir_ring_of(l, chain);
  header(w, k, chain, l, ty);
  w.line("// Direct form in shared-memory tiles: a block computes " + str(kCudaFirTile) +
         " samples of one channel, " + str(kCudaFirTile) + " taps at a time,");
  w.line("// from tap 0 up with fma (the thread-per-channel kernel's order). Then " + k.entries[1].symbol);
  w.line("// writes the last inputs into the ring. in != out.");
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + ty.signal.t + "* __restrict__ in, " + ty.signal.t + "* __restrict__ out, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ params, const " + s.t + "* __restrict__ state, const long long* __restrict__ positions) {");
  w.line("const long long TAPS = " + r.taps + ";");
  w.line("const int TILE = " + str(kCudaFirTile) + ";  // = blockDim.x = taps per shared tile");
  w.line("__shared__ " + s.t + " h[" + str(kCudaFirTile) + "];");
  w.line("__shared__ " + s.t + " xs[" + str(2 * kCudaFirTile - 1) + "];  // samples n0 - t0 - (TILE - 1) ...");
  w.line("const long long tiles = (samples + TILE - 1) / TILE;");
  w.line("const long long c = blockIdx.x / tiles;");
  w.line("const long long n0 = (blockIdx.x % tiles) * TILE;");
  w.line("const int i = threadIdx.x;");
  emit_fir_history(w, ty, r);
  w.line(s.t + " acc = " + s.t + "(0);");
  w.open("for (long long t0 = 0; t0 < TAPS; t0 += TILE) {");
  w.line("__syncthreads();  // the previous tile is read");
  w.line("if (t0 + i < TAPS) h[i] = params[" + str(l.stages[0].param_offset) + " + t0 + i];");
  w.open("for (int j = i; j < 2 * TILE - 1; j += TILE) {");
  w.line("const long long m = n0 - t0 - (TILE - 1) + j;");
  w.line(s.t + " v = " + s.t + "(0);");
  emit_fir_input(w, ty, "m", "v");
  w.line("xs[j] = v;");
  w.close();
  w.line("__syncthreads();");
  w.line("const long long count = TAPS - t0 < TILE ? TAPS - t0 : TILE;");
  w.line("for (int k = 0; k < count; ++k) acc = " + s.fma + "(h[k], xs[i + TILE - 1 - k], acc);");
  w.close();
  w.line("const long long n = n0 + i;");
  w.line("if (n < samples) out[c * channel_stride + n * sample_stride] = " + ty.store("acc") + ";");
  w.close();
  w.line();
  emit_fir_ring(w, k, chain, ty);
}

// A stage loop of fir_fft's transforms (`stages` opens it: which spans, in which order), then
// each thread's butterflies of the stage: the pair (i, j = i + 2^b) and its twiddle (wr, wi).
// Both loops are left open for the butterfly's body.
void open_butterflies(Writer& w, const Scalar& s, const std::string& stages) {
  w.open(stages);
  w.line("__syncthreads();");
  w.open("for (int t = threadIdx.x; t < FFT / 2; t += blockDim.x) {");
  w.line("const int q = t & ((1 << b) - 1), i = ((t >> b) << (b + 1)) | q, j = i + (1 << b);");
  w.line("const " + s.t + " wr = twiddles[2 * (q << (LOG2 - 1 - b))], wi = twiddles[2 * (q << (LOG2 - 1 - b)) + 1];");
}

// log2 of fir_fft's and fir_partitioned's FFT length (a power of two).
int fft_log2(const CudaKernelInfo& k) {
  int log2 = 0;
  while ((1 << log2) < k.fft_length) ++log2;
  return log2;
}

// The forward transform of the FFT points in shared `re` and `im`, in place: decimation in
// frequency, natural order in and bit-reversed out. Ends with the block synchronized.
void emit_forward_fft(Writer& w, const Scalar& s) {
  open_butterflies(w, s, "for (int b = LOG2 - 1; b >= 0; --b) {  // butterflies of span 2^b");
  w.line("const " + s.t + " ar = re[i], ai = im[i], br = re[j], bi = im[j];");
  w.line("const " + s.t + " dr = ar - br, di = ai - bi;");
  w.line("re[i] = ar + br;");
  w.line("im[i] = ai + bi;");
  w.line("re[j] = dr * wr - di * wi;");
  w.line("im[j] = dr * wi + di * wr;");
  w.close();
  w.close();
  w.line("__syncthreads();");
}

// The inverse transform (unnormalized, conjugate twiddles) of `re` and `im` in place:
// decimation in time, bit-reversed in and natural out. Ends with the block synchronized.
void emit_inverse_fft(Writer& w, const Scalar& s) {
  open_butterflies(w, s, "for (int b = 0; b < LOG2; ++b) {  // butterflies of span 2^b, conjugate twiddles");
  w.line("const " + s.t + " br = re[j], bi = im[j];");
  w.line("const " + s.t + " tr = br * wr + bi * wi, ti = bi * wr - br * wi;  // conj(w) (br + i bi)");
  w.line("const " + s.t + " ar = re[i], ai = im[i];");
  w.line("re[i] = ar + tr;");
  w.line("im[i] = ai + ti;");
  w.line("re[j] = ar - tr;");
  w.line("im[j] = ai - ti;");
  w.close();
  w.close();
  w.line("__syncthreads();");
}

// The shared arrays of an FFT's points, `re` and `im`.
void emit_fft_points(Writer& w, const Scalar& s, const CudaKernelInfo& k) {
  w.line("__shared__ " + s.t + " re[" + str(k.fft_length) + "];");
  w.line("__shared__ " + s.t + " im[" + str(k.fft_length) + "];");
}

// Two windows of FFT inputs of channel c into `re` and `im`, the first from input `first`, the
// second `gap` later (the ring before sample 0, zeros after the block).
// With `check`, `nonfinite` (declared here) says whether this thread loaded a NaN or an
// infinity (for emit_direct_if_nonfinite).
void emit_window_pair(Writer& w, const Types& ty, const std::string& first, const std::string& gap, bool check) {
  const Scalar& s = ty.compute;
  if (check) w.line("int nonfinite = 0;");
  w.open("for (int j = threadIdx.x; j < FFT; j += blockDim.x) {");
  w.line("const long long m = " + first + " + j, m2 = m + " + gap + ";");
  w.line(s.t + " v = " + s.t + "(0), v2 = " + s.t + "(0);");
  emit_fir_input(w, ty, "m", "v");
  emit_fir_input(w, ty, "m2", "v2");
  w.line("re[j] = v;");
  w.line("im[j] = v2;");
  if (check) w.line("nonfinite |= !isfinite(v) || !isfinite(v2);");
  w.close();
}

// Where any thread of the block has `nonfinite`: outputs `first` .. `first` + `count` - 1 of
// channel c (those inside the block) by direct convolution with `taps`, from tap 0 up with
// fma as fir_tiled, and the kernel returns. A NaN or an infinity would spread through a
// transform to every output of its segments; convolved directly it reaches only the outputs
// whose sums include it, as on the CPU (docs/errors.md).
void emit_direct_if_nonfinite(Writer& w, const Types& ty, const std::string& first, const std::string& count) {
  const Scalar& s = ty.compute;
  w.open("if (__syncthreads_or(nonfinite)) {  // the same for every thread of the block");
  w.line(ty.signal.t + "* const y = out + c * channel_stride;");
  w.open("for (long long j = threadIdx.x; j < " + count + " && " + first + " + j < samples; j += blockDim.x) {");
  w.line("const long long n = " + first + " + j;");
  w.line(s.t + " acc = " + s.t + "(0);");
  w.open("for (long long k = 0; k < TAPS; ++k) {");
  w.line("const long long m = n - k;");
  w.line(s.t + " v = " + s.t + "(0);");
  emit_fir_input(w, ty, "m", "v");
  w.line("acc = " + s.fma + "(taps[k], v, acc);");
  w.close();
  w.line("y[n * sample_stride] = " + ty.store("acc") + ";");
  w.close();
  w.line("return;");
  w.close();
}

// The outputs of an inverse transform of two windows (emit_window_pair's): its points from
// `from` on, free of wrap-around, are outputs `first` on (the real parts) and `gap` later (the
// imaginary parts), each written where it lies inside the block.
void emit_output_pair(Writer& w, const Types& ty, const std::string& from, const std::string& first,
                      const std::string& gap) {
  w.line(ty.signal.t + "* const y = out + c * channel_stride;");
  w.open("for (int j = " + from + " + threadIdx.x; j < FFT; j += blockDim.x) {");
  w.line("const long long n = " + first + " + (j - " + from + ");");
  w.line("if (n < samples) y[n * sample_stride] = " + ty.store("re[j]") + ";");
  w.line("if (n + " + gap + " < samples) y[(n + " + gap + ") * sample_stride] = " + ty.store("im[j]") + ";");
  w.close();
}

// `to` = `from` (an int below FFT) with its LOG2 bits reversed: where point `from` of a
// spectrum sits between the forward and the inverse transforms.
void emit_bit_reverse(Writer& w, const std::string& from, const std::string& to) {
  w.line("int " + to + " = 0;");
  w.line("for (int b = 0; b < LOG2; ++b) " + to + " |= (((" + from + ") >> b) & 1) << (LOG2 - 1 - b);");
}

void emit_fir_fft(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain) {
  Types ty = types_of(k);
  const Scalar& s = ty.compute;
  const ChainLayout l = layout_of(chain);
  const FirRing r = fir_ring_of(l, chain);
  header(w, k, chain, l, ty);
  w.line("// FFT overlap-save: a block convolves two segments of one channel, each FFT - (TAPS - 1)");
  w.line("// outputs, as the real and imaginary parts of one complex FFT of FFT points (the taps are");
  w.line("// real: the inverse gives the first segment's outputs in the real part, the second's in the");
  w.line("// imaginary one). Forward by decimation in frequency, natural order in and bit-reversed out;");
  w.line("// times the taps' spectrum / FFT (tables[0, 2 FFT), bit-reversed); inverse by decimation in");
  w.line("// time, bit-reversed in and natural out; twiddles exp(-2 pi i k / FFT) at tables[2 FFT, 3 FFT),");
  w.line("// the taps after them (a block with a NaN or an infinity convolves directly).");
  w.line("// A segment's first TAPS - 1 points wrap around and are dropped. Then " + k.entries[1].symbol);
  w.line("// writes the last inputs into the ring. in != out.");
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + ty.signal.t + "* __restrict__ in, " + ty.signal.t + "* __restrict__ out, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ tables, const " + s.t + "* __restrict__ state, const long long* __restrict__ positions) {");
  w.line("const long long TAPS = " + r.taps + ";");
  w.line("const int FFT = " + str(k.fft_length) + ", LOG2 = " + str(fft_log2(k)) + ";");
  w.line("const long long STEP = FFT - (TAPS - 1);  // outputs per segment");
  emit_fft_points(w, s, k);
  w.line("const long long pairs = ((samples + STEP - 1) / STEP + 1) / 2;");
  w.line("const long long c = blockIdx.x / pairs;");
  w.line("const long long n0 = (blockIdx.x % pairs) * 2 * STEP;  // the first segment's first output");
  emit_fir_history(w, ty, r);
  w.line("const " + s.t + "* const spectrum = tables;");
  w.line("const " + s.t + "* const twiddles = tables + 2 * FFT;");
  w.line("const " + s.t + "* const taps = tables + 3 * FFT;");
  emit_window_pair(w, ty, "n0 - (TAPS - 1)", "STEP", true);
  emit_direct_if_nonfinite(w, ty, "n0", "2 * STEP");
  emit_forward_fft(w, s);
  w.open("for (int j = threadIdx.x; j < FFT; j += blockDim.x) {");
  w.line("const " + s.t + " hr = spectrum[2 * j], hi = spectrum[2 * j + 1], zr = re[j], zi = im[j];");
  w.line("re[j] = zr * hr - zi * hi;");
  w.line("im[j] = zr * hi + zi * hr;");
  w.close();
  emit_inverse_fft(w, s);
  emit_output_pair(w, ty, "(int)(TAPS - 1)", "n0", "STEP");
  w.close();
  w.line();
  emit_fir_ring(w, k, chain, ty);
}

// The constants of fir_partitioned's two transform kernels: the sizes, and the segment counts of
// a block of `samples` (cuda_fir_spectra's rule).
void emit_partition_sizes(Writer& w, const CudaKernelInfo& k) {
  w.line("const int FFT = " + str(k.fft_length) + ", LOG2 = " + str(fft_log2(k)) + ", HALF = FFT / 2;  // HALF: a partition's taps, a segment's outputs");
  w.line("const long long PARTS = " + str(cuda_fir_partitions(k)) + ";");
  w.line("const long long output_pairs = ((samples + HALF - 1) / HALF + 1) / 2;");
  w.line("const long long stored = (2 * output_pairs + PARTS) / 2 * 2;  // spectra per channel: segments -(PARTS - 1) on");
  w.line("const long long BINS = HALF + 1;  // a real segment's half spectrum");
}

void emit_fir_partitioned(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain) {
  Types ty = types_of(k);
  const Scalar& s = ty.compute;
  const ChainLayout l = layout_of(chain);
  const FirRing r = fir_ring_of(l, chain);
  header(w, k, chain, l, ty);
  w.line("// Uniformly partitioned overlap-save: the taps in PARTS partitions of HALF, the input in");
  w.line("// segments of HALF. Segment m's output is the last HALF points of the inverse FFT of");
  w.line("// sum_p S[m - p] H[p], with S[m] the FFT of the inputs [(m - 1) HALF, (m + 1) HALF) and H[p]");
  w.line("// that of partition p padded to FFT (tables[0, 2 PARTS BINS), divided by FFT). " + k.entries[0].symbol);
  w.line("// stores every S, " + k.symbol + " sums and transforms back, " + k.entries[2].symbol);
  w.line("// writes the last inputs into the ring. Two real segments share each complex FFT. in != out.");
  w.open("extern \"C\" __global__ void " + k.entries[0].symbol + "(");
  w.line("const " + ty.signal.t + "* __restrict__ in, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ tables, const " + s.t + "* __restrict__ state, const long long* __restrict__ positions,");
  w.line(s.t + "* __restrict__ spectra) {");
  w.line("const long long TAPS = " + r.taps + ";");
  emit_partition_sizes(w, k);
  emit_fft_points(w, s, k);
  w.line("const long long pairs = stored / 2;");
  w.line("const long long c = blockIdx.x / pairs;");
  w.line("const long long first = (blockIdx.x % pairs) * 2;  // the pair's first stored segment: m = first - (PARTS - 1)");
  emit_fir_history(w, ty, r);
  w.line("const " + s.t + "* const twiddles = tables + 2 * PARTS * BINS;");
  emit_window_pair(w, ty, "(first - PARTS) * HALF", "HALF", false);  // the inverse pass checks its sums
  emit_forward_fft(w, s);
  w.line("// Z = S1 + i S2 for real segments: S1[f] = (Z[f] + conj Z[FFT - f]) / 2, S2[f] = (Z[f] - conj Z[FFT - f]) / 2i.");
  w.line(s.t + "* const to = spectra + (c * stored + first) * 2 * BINS;");
  w.open("for (int f = threadIdx.x; f < BINS; f += blockDim.x) {");
  emit_bit_reverse(w, "f", "rf");
  emit_bit_reverse(w, "(FFT - f) & (FFT - 1)", "rg");
  w.line("const " + s.t + " zr = re[rf], zi = im[rf], gr = re[rg], gi = im[rg];");
  w.line("to[2 * f] = " + s.t + "(0.5) * (zr + gr);");
  w.line("to[2 * f + 1] = " + s.t + "(0.5) * (zi - gi);");
  w.line("to[2 * (BINS + f)] = " + s.t + "(0.5) * (zi + gi);");
  w.line("to[2 * (BINS + f) + 1] = " + s.t + "(0.5) * (gr - zr);");
  w.close();
  w.close();
  w.line();
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + ty.signal.t + "* __restrict__ in, " + ty.signal.t + "* __restrict__ out, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ tables, const " + s.t + "* __restrict__ state, const long long* __restrict__ positions,");
  w.line("const " + s.t + "* __restrict__ spectra) {");
  w.line("const long long TAPS = " + r.taps + ";");
  emit_partition_sizes(w, k);
  emit_fft_points(w, s, k);
  w.line("const long long c = blockIdx.x / output_pairs;");
  w.line("const long long k0 = (blockIdx.x % output_pairs) * 2;  // the pair's first output segment");
  w.line("const " + s.t + "* const twiddles = tables + 2 * PARTS * BINS;");
  w.line("const " + s.t + "* const taps = twiddles + FFT;");
  w.line("const " + s.t + "* const from = spectra + c * stored * 2 * BINS;");
  w.line("int nonfinite = 0;  // a sum holds a NaN or an infinity: an input segment did");
  w.open("for (int f = threadIdx.x; f < BINS; f += blockDim.x) {");
  w.line(s.t + " ar = 0, ai = 0, br = 0, bi = 0;  // segment k0's sum, segment k0 + 1's");
  w.line("// Input segment k0 + 1 - q (stored at k0 + PARTS - q) meets partition q in output segment");
  w.line("// k0 + 1 and partition q - 1 in output segment k0.");
  w.open("for (long long q = 0; q <= PARTS; ++q) {");
  w.line("const " + s.t + "* const z = from + (k0 + PARTS - q) * 2 * BINS + 2 * f;");
  w.line("const " + s.t + " xr = z[0], xi = z[1];");
  // (re, im) += (xr + i xi) H[partition][f]
  auto multiply_add = [&](const std::string& when, const std::string& partition, const std::string& re,
                          const std::string& im) {
    w.open("if (" + when + ") {");
    w.line("const " + s.t + " hr = tables[2 * (" + partition + " * BINS + f)], hi = tables[2 * (" + partition +
           " * BINS + f) + 1];");
    w.line(re + " = " + s.fma + "(xr, hr, " + s.fma + "(-xi, hi, " + re + "));");
    w.line(im + " = " + s.fma + "(xr, hi, " + s.fma + "(xi, hr, " + im + "));");
    w.close();
  };
  multiply_add("q < PARTS", "q", "br", "bi");
  multiply_add("q > 0", "(q - 1)", "ar", "ai");
  w.close();
  w.line("nonfinite |= !isfinite(ar) || !isfinite(ai) || !isfinite(br) || !isfinite(bi);");
  w.line("// Both outputs are real: the spectrum A + i B, whose inverse is a + i b, at bit-reversed places.");
  emit_bit_reverse(w, "f", "rf");
  w.line("re[rf] = ar - bi;");
  w.line("im[rf] = ai + br;");
  w.open("if (f > 0 && f < HALF) {  // Z[FFT - f] = conj A[f] + i conj B[f]");
  emit_bit_reverse(w, "FFT - f", "rg");
  w.line("re[rg] = ar + bi;");
  w.line("im[rg] = br - ai;");
  w.close();
  w.close();
  emit_fir_history(w, ty, r);
  emit_direct_if_nonfinite(w, ty, "k0 * HALF", "2 * HALF");
  emit_inverse_fft(w, s);
  emit_output_pair(w, ty, "HALF", "k0 * HALF", "HALF");
  w.close();
  w.line();
  emit_fir_ring(w, k, chain, ty);
}

// The grid-stride loop of the elementwise kernels (sum, route, a feedback read) over sample n
// of channel c, opened; `planar` is the source of a bool saying the layout is [channel][sample].
void open_elementwise_loop(Writer& w, const std::string& planar) {
  w.line("const long long total = channels * samples;");
  w.line("if (total == 0) return;");
  w.line("// Consecutive threads take consecutive addresses in either layout.");
  w.line("const bool planar = " + planar + ";");
  w.line("const long long step = (long long)gridDim.x * blockDim.x;");
  w.line("// Element i is (outer, inner) = (i / width, i % width): planar (c, n), interleaved (n, c).");
  w.line("// Divided once here, for the first element and for the step; the loop then only adds");
  w.line("// (a 64-bit division per element cost more than a sum's arithmetic).");
  w.line("const long long width = planar ? samples : channels;");
  w.line("const long long i0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
  w.line("const long long step_outer = step / width, step_inner = step % width;");
  w.line("long long outer = i0 / width, inner = i0 % width;");
  w.open("for (long long i = i0; i < total; i += step, inner += step_inner,");
  w.line("     outer += step_outer + (inner >= width ? (inner -= width, 1) : 0)) {");
  w.line("const long long c = planar ? outer : inner;");
  w.line("const long long n = planar ? inner : outer;");
}

// A chain of delays and memoryless stages: no recursion, so each output sample stands alone.
// Walking back from the last stage, each delay of length D either moves the time D samples
// earlier (t >= D) or hands over the cell of its line written before the block (t < D; the
// line holds the last D values before the delay in time order: cell t is time t - D). The
// stages after that point then run on the value.
void emit_chain_walk(Writer& w, const ChainBody& body, const ir::Chain& chain, const Types& ty, std::size_t end,
                     const std::string& time) {
  const Scalar& s = ty.compute;
  const ChainLayout& l = body.layout();
  w.line("long long t = " + time + ";");
  w.line("long long start = 0;  // the first stage v has not been through");
  w.line(s.t + " v = " + s.t + "(0);");
  w.line("bool held = false;  // v is a delay line's cell");
  for (std::size_t i = end; i-- > 0;) {
    if (!std::holds_alternative<ir::Delay>(chain.stages[i])) continue;
    const std::string len = ChainBody::delay_len(i);
    w.open("if (!held) {  // stage " + str(static_cast<long long>(i)) + " (delay)");
    w.open("if (t < " + len + ") {");
    w.line("v = delay_lines[c * " + str(l.delay_count) + " + " + str(l.stages[i].delay_index) + "][t];");
    w.line("start = " + str(static_cast<long long>(i + 1)) + ";");
    w.line("held = true;");
    w.reopen("} else {");
    w.line("t -= " + len + ";");
    w.close();
    w.close();
  }
  w.line("if (!held) v = " + ty.load("x[t * sample_stride]") + ";");
  for (std::size_t i = 0; i < end; ++i) {
    if (std::holds_alternative<ir::Delay>(chain.stages[i])) continue;
    w.open("if (start <= " + str(static_cast<long long>(i)) + ") {");
    body.stage(w, i);
    w.close();
  }
}

void emit_elementwise(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain) {
  Types ty = types_of(k);
  const Scalar& s = ty.compute;
  const std::string& T = ty.signal.t;
  ChainBody body(chain, s);
  const ChainLayout& l = body.layout();
  header(w, k, chain, l, ty);
  w.line("// Delays and memoryless stages, elementwise over (channel, sample): each delay's line holds");
  w.line("// its last D inputs in time order (cell j: time j - D), so the block's first samples read it.");
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + T + "* __restrict__ in, " + T + "* __restrict__ out, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ params, const long long* __restrict__ delay_lengths, " + s.t +
         "* const* __restrict__ delay_lines) {");
  body.load_params(w);
  open_elementwise_loop(w, "sample_stride == 1");
  w.line("const " + T + "* const x = in + c * channel_stride;");
  emit_chain_walk(w, body, chain, ty, chain.stages.size(), "n");
  w.line("out[c * channel_stride + n * sample_stride] = " + ty.store("v") + ";");
  w.close();
  w.close();
  w.line();
  w.line("// Each delay's line after the block, into next_lines (the runtime then copies it over the lines):");
  w.line("// cell j is the value before the delay at block time samples - D + j, from the block, or for");
  w.line("// a block shorter than D, the line's cell j + samples.");
  w.open("extern \"C\" __global__ void " + k.entries[1].symbol + "(");
  w.line("const " + T + "* __restrict__ in, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ params, const long long* __restrict__ delay_lengths, " + s.t +
         "* const* __restrict__ delay_lines, " + s.t + "* const* __restrict__ next_lines) {");
  body.load_params(w);
  std::string cells;
  for (std::size_t i = 0; i < chain.stages.size(); ++i)
    if (std::holds_alternative<ir::Delay>(chain.stages[i]))
      cells += std::string(cells.empty() ? "" : " + ") + ChainBody::delay_len(i);
  w.line("const long long cells = " + (cells.empty() ? std::string("0") : cells) + ";  // per channel (no delay: nothing to do)");
  w.line("const long long step = (long long)gridDim.x * blockDim.x;");
  w.open("for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < channels * cells; i += step) {");
  w.line("const long long c = i / cells;");
  w.line("long long j = i % cells;");
  w.line("const " + T + "* const x = in + c * channel_stride;");
  for (std::size_t i = 0; i < chain.stages.size(); ++i) {
    if (!std::holds_alternative<ir::Delay>(chain.stages[i])) continue;
    const std::string len = ChainBody::delay_len(i);
    const std::string line = "[c * " + str(l.delay_count) + " + " + str(l.stages[i].delay_index) + "]";
    w.open("if (j < " + len + ") {  // stage " + str(static_cast<long long>(i)) + " (delay)");
    w.line("const long long when = samples - " + len + " + j;");
    w.open("if (when < 0) {");
    w.line("next_lines" + line + "[j] = delay_lines" + line + "[j + samples];");
    w.reopen("} else {");
    emit_chain_walk(w, body, chain, ty, i, "when");
    w.line("next_lines" + line + "[j] = v;");
    w.close();
    w.line("continue;");
    w.close();
    w.line("j -= " + len + ";");
  }
  w.close();
  w.close();
}

void emit_sum(Writer& w, const CudaKernelInfo& k, const ir::Sum& sum) {
  Scalar s = scalar_of(k.dtype);
  w.line("// sum %" + str(k.node) + ": " + str(static_cast<long long>(sum.weights.size())) +
         " operands; out = 0, then out += weights[i] * operands[i] in operand order");
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + s.t + "* const* __restrict__ operands, " + s.t + "* out, " + kSignalArgs + ",");
  w.line("const " + s.t + "* __restrict__ weights) {");
  open_elementwise_loop(w, "sample_stride == 1");
  w.line("const long long at = c * channel_stride + n * sample_stride;");
  w.line(s.t + " acc = " + s.t + "(0);");
  for (std::size_t i = 0; i < sum.weights.size(); ++i)
    w.line("acc = acc + weights[" + str(static_cast<long long>(i)) + "] * operands[" +
           str(static_cast<long long>(i)) + "][at];");
  w.line("out[at] = acc;");
  w.close();
  w.close();
}

std::string int_list(const std::vector<long long>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + str(values[i]);
  return out;
}

// A select, matrix or concat: the CPU runtime's run_route, elementwise. Where each output
// channel comes from is shape (indices, channel counts), so it is compiled in: a table of
// (operand, channel) pairs for select and concat, the operand's channel count for matrix.
void emit_route(Writer& w, const CudaKernelInfo& k, const ir::Graph& g) {
  const ir::Node& node = g.node(k.node);
  Scalar s = scalar_of(k.dtype);
  std::vector<long long> widths;
  for (ir::NodeId operand : node.operands) widths.push_back(g.node(operand).type.channels);
  const auto* matrix = std::get_if<ir::Matrix>(&node.op);
  const auto* link = std::get_if<ir::Link>(&node.op);
  const bool multiply = std::holds_alternative<ir::Multiply>(node.op);
  const std::string from = k.symbol + "_from", width = k.symbol + "_widths";
  if (multiply) {
    w.line("// multiply %" + str(k.node) + ": out[c] = a[c] * b[c * " + str(widths[1]) + " / " + str(widths[0]) + "]");
  } else if (link) {
    w.line("// link %" + str(k.node) + ": " + str(link->groups) + " group(s) of " + str(widths[0] / link->groups) +
           " channels; out[g] = the " + std::string(link->mode == design::LinkMode::max ? "largest" : "mean") +
           " |x_c| of group g, in channel order as the CPU runtime");
  } else if (matrix) {
    w.line("// matrix %" + str(k.node) + ": " + str(matrix->rows) + " x " + str(widths[0]) +
           "; out[r] = 0, then out[r] += gains[r * C + c] * x[c] for each nonzero gain, in column order");
  } else {
    std::vector<long long> sources;  // (operand, channel) per output channel
    if (const auto* select = std::get_if<ir::Select>(&node.op)) {
      w.line("// select %" + str(k.node) + ": channel k of out is channel indices[k] of the operand");
      for (int index : select->indices) sources.insert(sources.end(), {0, index});
    } else {
      w.line("// concat %" + str(k.node) + ": the operands' channels side by side, in order");
      for (std::size_t o = 0; o < widths.size(); ++o)
        for (long long c = 0; c < widths[o]; ++c) sources.insert(sources.end(), {static_cast<long long>(o), c});
    }
    w.line("__device__ const long long " + from + "[] = {" + int_list(sources) +
           "};  // (operand, channel) of each output channel");
    w.line("__device__ const long long " + width + "[] = {" + int_list(widths) + "};  // each operand's channel count");
  }
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + s.t + "* const* __restrict__ operands, " + s.t + "* out, " + kSignalArgs + ",");
  w.line("long long interleaved, const " + s.t + "* __restrict__ gains) {");
  open_elementwise_loop(w, "interleaved == 0");
  if (multiply) {
    w.line("const " + s.t + "* const a = operands[0];");
    w.line("const " + s.t + "* const b = operands[1];");
    w.line("const long long j = c * " + str(widths[1]) + " / " + str(widths[0]) + ";");
    w.line("const long long a_stride = interleaved ? " + str(widths[0]) + " : sample_stride;");
    w.line("const long long b_stride = interleaved ? " + str(widths[1]) + " : sample_stride;");
    w.line("out[c * channel_stride + n * sample_stride] = a[c * channel_stride + n * a_stride] * b[j * channel_stride + n * b_stride];");
  } else if (link) {
    const long long size = widths[0] / link->groups;
    w.line("const " + s.t + "* const x = operands[0];");
    w.line("const long long x_stride = interleaved ? " + str(widths[0]) + " : sample_stride;");
    w.line(s.t + " level = " + s.t + "(0);");
    w.open("for (long long k = c * " + str(size) + "; k < (c + 1) * " + str(size) + "; ++k) {");
    w.line("const " + s.t + " v = " + s.fabs + "(x[k * channel_stride + n * x_stride]);");
    w.line(link->mode == design::LinkMode::max ? "level = level < v ? v : level;" : "level = level + v;");
    w.close();
    w.line("out[c * channel_stride + n * sample_stride] = " +
           (link->mode == design::LinkMode::max ? std::string("level") : "level / " + s.t + "(" + str(size) + ")") + ";");
  } else if (matrix) {
    w.line("const long long C = " + str(widths[0]) + ";");
    w.line("const " + s.t + "* const x = operands[0];");
    w.line("const long long x_stride = interleaved ? C : sample_stride;  // the operand's sample stride");
    w.line(s.t + " acc = " + s.t + "(0);");
    w.open("for (long long k = 0; k < C; ++k) {");
    w.line("const " + s.t + " g = gains[c * C + k];");
    w.line("if (g != " + s.t + "(0)) acc = acc + g * x[k * channel_stride + n * x_stride];");
    w.close();
    w.line("out[c * channel_stride + n * sample_stride] = acc;");
  } else {
    w.line("const long long o = " + from + "[2 * c], j = " + from + "[2 * c + 1];");
    w.line("const long long o_stride = interleaved ? " + width + "[o] : sample_stride;  // the operand's sample stride");
    w.line("out[c * channel_stride + n * sample_stride] = operands[o][j * channel_stride + n * o_stride];");
  }
  w.close();
  w.close();
}

// A feedback node's read (y[n] = the line from the position on) and write (the operand into
// the line, the position on): the CPU runtime's read_feedback and write_feedback.
void emit_feedback(Writer& w, const CudaKernelInfo& k) {
  Scalar s = scalar_of(k.dtype);
  w.line("// feedback %" + str(k.node) + ": y[n] = x[n - length]; the line is line[cell * channels + c], length");
  w.line("// cells per channel. A pass of its loop, samples <= length: " + k.symbol + " at the node's place,");
  w.line("// then " + k.entries[1].symbol + " after the loop's other kernels.");
  w.open("extern \"C\" __global__ void " + k.symbol + "(");
  w.line("const " + s.t + "* __restrict__ line, " + s.t + "* __restrict__ out, " + kSignalArgs + ",");
  w.line("const long long* __restrict__ positions, long long length) {");
  open_elementwise_loop(w, "sample_stride == 1");
  w.line("const long long cell = (positions[c] + n) % length;");
  w.line("out[c * channel_stride + n * sample_stride] = line[cell * channels + c];");
  w.close();
  w.close();
  w.line();
  w.open("extern \"C\" __global__ void " + k.entries[1].symbol + "(");
  w.line("const " + s.t + "* __restrict__ in, " + kSignalArgs + ",");
  w.line(s.t + "* __restrict__ line, long long* __restrict__ positions, long long length) {");
  w.line("const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
  w.line("if (c >= channels) return;");
  w.line("long long p = positions[c];");
  w.open("for (long long n = 0; n < samples; ++n) {");
  w.line("line[p * channels + c] = in[c * channel_stride + n * sample_stride];");
  w.line("p = p + 1 >= length ? 0 : p + 1;");
  w.close();
  w.line("positions[c] = p;");
  w.close();
}

// The entries of a kernel, with their parameter types.
std::vector<CudaEntry> entries_of(const CudaKernelInfo& k) {
  std::string t = scalar_of(k.dtype).t, s = scalar_of(k.state_dtype).t;
  auto signal = [](std::vector<std::string> head) {
    head.insert(head.end(), kSignalParams.begin(), kSignalParams.end());
    return head;
  };
  auto with = [](std::vector<std::string> v, std::initializer_list<std::string> more) {
    v.insert(v.end(), more);
    return v;
  };
  switch (k.kind) {
    case CudaKernelKind::chain_thread_per_channel:
      return {{k.symbol,
               with(signal({"const " + t + "*", t + "*"}),
                    {"const " + s + "*", "const long long*", s + "*", s + "* const*", "long long*"}),
               false}};
    case CudaKernelKind::chain_chunked_scan:
      return {{k.symbol + "_chunk_states", with(signal({"const " + t + "*"}), {"const " + s + "*", "double*"}), true},
              {k.symbol + "_group_sums", {"long long", "long long", "const double*", "const double*", "double*"}, true},
              {k.symbol + "_group_scan",
               {"long long", "long long", "long long", "const double*", "const double*", "double*", "const " + s + "*"},
               true},
              {k.symbol + "_chunk_starts", {"long long", "long long", "const double*", "const double*", "double*"}, true},
              {k.symbol, with(signal({"const " + t + "*", t + "*"}), {"const " + s + "*", "const double*", s + "*"}), true}};
    case CudaKernelKind::chain_elementwise:
      return {{k.symbol, with(signal({"const " + t + "*", t + "*"}), {"const " + s + "*", "const long long*", s + "* const*"}), false},
              {k.symbol + "_next_lines",
               with(signal({"const " + t + "*"}), {"const " + s + "*", "const long long*", s + "* const*", s + "* const*"}),
               false}};
    case CudaKernelKind::fir_tiled:
    case CudaKernelKind::fir_fft:  // params or tables first
      return {{k.symbol, with(signal({"const " + t + "*", t + "*"}), {"const " + s + "*", "const " + s + "*", "const long long*"}), true},
              {k.symbol + "_ring", with(signal({"const " + t + "*"}), {s + "*", "long long*"}), true}};
    case CudaKernelKind::fir_partitioned:
      return {{k.symbol + "_spectra", with(signal({"const " + t + "*"}), {"const " + s + "*", "const " + s + "*", "const long long*", s + "*"}), true},
              {k.symbol, with(signal({"const " + t + "*", t + "*"}), {"const " + s + "*", "const " + s + "*", "const long long*", "const " + s + "*"}), true},
              {k.symbol + "_ring", with(signal({"const " + t + "*"}), {s + "*", "long long*"}), true}};
    case CudaKernelKind::sum:
      return {{k.symbol, with(signal({"const " + t + "* const*", t + "*"}), {"const " + t + "*"}), false}};
    case CudaKernelKind::route:
      return {{k.symbol, with(signal({"const " + t + "* const*", t + "*"}), {"long long", "const " + t + "*"}), false}};
    case CudaKernelKind::feedback:
      return {{k.symbol, with(signal({"const " + t + "*", t + "*"}), {"const long long*", "long long"}), false},
              {k.symbol + "_write", with(signal({"const " + t + "*"}), {t + "*", "long long*", "long long"}), false}};
  }
  return {};
}

// No recursion and no FIR: delays, gains, clips and tanh only.
bool is_elementwise(const ir::Chain& chain) {
  for (const ir::Stage& stage : chain.stages)
    if (!std::holds_alternative<ir::Delay>(stage) && !std::holds_alternative<ir::Gain>(stage) &&
        !std::holds_alternative<ir::Clip>(stage) && !std::holds_alternative<ir::Tanh>(stage))
      return false;
  return true;
}

bool is_lone_fir(const ir::Chain& chain) {
  return chain.stages.size() == 1 && std::holds_alternative<ir::FirFilter>(chain.stages[0]);
}

}  // namespace

bool cuda_chunked_scan_applies(const ir::Chain& chain) {
  return ir::scanned_prefix(chain.stages) > 0 && layout_of(chain).state_per_channel <= 1024;
}

int cuda_carry_steps(long long chunks) {
  const long long groups = (chunks + kCudaCarryGroup - 1) / kCudaCarryGroup;
  int steps = 1;
  while ((1LL << steps) < groups) ++steps;
  return steps;
}

long long cuda_fir_partitions(const CudaKernelInfo& k) {
  const long long half = k.fft_length / 2;
  return (k.fir_taps + half - 1) / half;
}

namespace {

// fir_partitioned: the pairs of output segments of a block of `samples` (emit_partition_sizes'
// `output_pairs`), a block of its inverse pass each.
long long fir_output_pairs(const CudaKernelInfo& k, long long samples) {
  const long long half = k.fft_length / 2;
  return ((samples + half - 1) / half + 1) / 2;
}

}  // namespace

long long cuda_fir_spectra(const CudaKernelInfo& k, long long samples) {
  return (2 * fir_output_pairs(k, samples) + cuda_fir_partitions(k)) / 2 * 2;  // emit_partition_sizes' `stored`
}

CudaLaunch cuda_launch(const CudaKernelInfo& k, std::size_t entry, long long channels, long long samples) {
  if (channels <= 0 || samples <= 0) return {};
  auto blocks = [](long long threads) { return (threads + kCudaBlockThreads - 1) / kCudaBlockThreads; };
  switch (k.kind) {
    case CudaKernelKind::chain_thread_per_channel:
      return {blocks(channels), kCudaBlockThreads};
    case CudaKernelKind::chain_chunked_scan: {
      const long long chunks = (samples + k.chunk_length - 1) / k.chunk_length;
      const long long groups = (chunks + kCudaCarryGroup - 1) / kCudaCarryGroup;
      if (entry == 1 || entry == 3) return {channels * groups, carry_block_threads(k.state_dimension)};
      if (entry == 2) return {(channels * groups * k.state_dimension + kCudaScanThreads - 1) / kCudaScanThreads, kCudaScanThreads};
      const int block = k.wavefront ? kCudaWavefrontThreads : kCudaBlockThreads;  // the chunk passes
      return {(channels * chunks + block - 1) / block, block};
    }
    case CudaKernelKind::fir_tiled:
      if (entry == 0) return {channels * ((samples + kCudaFirTile - 1) / kCudaFirTile), kCudaFirTile};
      return {channels, kCudaBlockThreads};  // the ring: a block per channel
    case CudaKernelKind::fir_fft:
      if (entry == 0) {
        const long long step = k.fft_length - (k.fir_taps - 1);
        const long long pairs = ((samples + step - 1) / step + 1) / 2;
        return {channels * pairs, std::min(kCudaFftThreads, k.fft_length / 2)};
      }
      return {channels, kCudaBlockThreads};  // the ring: a block per channel
    case CudaKernelKind::fir_partitioned: {
      const int threads = std::min(kCudaFftThreads, k.fft_length / 2);
      if (entry == 0) return {channels * (cuda_fir_spectra(k, samples) / 2), threads};
      if (entry == 1) return {channels * fir_output_pairs(k, samples), threads};
      return {channels, kCudaBlockThreads};  // the ring: a block per channel
    }
    case CudaKernelKind::feedback:
      if (entry == 1) return {blocks(channels), kCudaBlockThreads};
      [[fallthrough]];
    case CudaKernelKind::chain_elementwise:
    case CudaKernelKind::sum:
    case CudaKernelKind::route: {
      long long grid = (channels * samples + 255) / 256;
      return {grid < 4096 ? grid : 4096, 256};
    }
  }
  return {};
}

Expected<std::vector<CudaKernelInfo>, std::string> cuda_kernels(const ir::Graph& g) {
  std::vector<CudaKernelInfo> out;
  using S = ir::IirStrategy;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& node = g.node(id);
    std::string where = "node %" + str(id) + " (" + std::string(ir::kind_name(node.op)) + ")";
    if (ir::holds<ir::Input>(node) || ir::holds<ir::Output>(node)) continue;
    if (auto* sum = std::get_if<ir::Sum>(&node.op)) {
      CudaKernelInfo k;
      k.symbol = "fxc_sum_" + str(id);
      k.node = id;
      k.kind = CudaKernelKind::sum;
      k.dtype = k.state_dtype = node.type.dtype;
      k.note = "elementwise weighted sum of " + str(static_cast<long long>(sum->weights.size())) + " operands";
      k.entries = entries_of(k);
      out.push_back(std::move(k));
      continue;
    }
    if (ir::is_routing(node.op) || ir::holds<ir::Feedback>(node)) {
      CudaKernelInfo k;
      k.node = id;
      k.dtype = k.state_dtype = node.type.dtype;
      if (ir::holds<ir::Feedback>(node)) {
        k.symbol = "fxc_feedback_" + str(id);
        k.kind = CudaKernelKind::feedback;
        k.note = "a feedback node's delay line: read at its place, written after each pass of its loop";
      } else {
        k.symbol = "fxc_route_" + str(id);
        k.kind = CudaKernelKind::route;
        k.note = "channel routing (" + std::string(ir::kind_name(node.op)) + "), elementwise";
        bool known = node.type.channels > 0;
        for (ir::NodeId operand : node.operands) known = known && g.node(operand).type.channels > 0;
        const auto* matrix = std::get_if<ir::Matrix>(&node.op);
        if (!known || (matrix && (matrix->rows != node.type.channels ||
                                  matrix->gains.size() != static_cast<std::size_t>(matrix->rows) *
                                                              static_cast<std::size_t>(g.node(node.operands[0]).type.channels))))
          return Unexpected{where + " has no known channel counts: run the pass pipeline (infer-types) first"};
      }
      k.entries = entries_of(k);
      out.push_back(std::move(k));
      continue;
    }
    auto* chain = std::get_if<ir::Chain>(&node.op);
    if (!chain)
      return Unexpected{where + " was not scheduled into a kernel: run the pass pipeline (fuse-chains) first"};
    const bool fft = chain->fir_method == ir::FirMethod::fft_overlap_save;
    if (fft && !is_lone_fir(*chain))
      return Unexpected{where + ": an FFT overlap-save FIR must be alone in its chain on the GPU; schedule with --target cuda"};
    CudaKernelInfo k;
    k.symbol = cuda_chain_symbol(id);
    k.node = id;
    k.dtype = node.type.dtype;
    k.state_dtype = ir::float64_state(chain->state_precision) ? DType::f64 : node.type.dtype;
    switch (chain->strategy) {
      case S::gpu_thread_per_channel:
        k.note = "one thread per channel (gpu_thread_per_channel)";
        break;
      case S::none:
        k.note = "no IIR stage: one thread per channel";
        break;
      case S::gpu_chunked_scan:
      case S::gpu_chunked_wavefront:
        if (cuda_chunked_scan_applies(*chain)) {
          k.kind = CudaKernelKind::chain_chunked_scan;
          k.chunk_length = chain->chunk_length;
          k.state_dimension = layout_of(*chain).state_per_channel;
          k.wavefront = chain->strategy == S::gpu_chunked_wavefront;
          k.note = std::string(ir::name(chain->strategy)) + ", L=" + str(chain->chunk_length) +
                   ": one thread per (channel, chunk)";
          if (k.wavefront) {
            const int steps = ir::wavefront_steps(chain->stages);
            if (steps < 2)
              return Unexpected{where + ": a wavefront of " + str(steps) + " step; the chunk passes pipeline 2 or "
                                "more (schedule with --target cuda)"};
            k.note += ", its " + str(steps) + " steps as a wavefront" +
                      (ir::wavefront_group(steps) > 1 ? " of " + str(ir::wavefront_stages(steps)) + " stages" : std::string());
          }
        } else {
          k.note = "gpu_chunked_scan does not apply (a delay, FIR or dynamics stage, or a section after a clip or tanh): one thread per channel";
        }
        break;
      default:
        return Unexpected{where + " has the CPU strategy " + std::string(ir::name(chain->strategy)) +
                          ": schedule the graph with --target cuda"};
    }
    if (fft) {
      const long long taps = static_cast<long long>(std::get<ir::FirFilter>(chain->stages[0]).taps.size());
      const long long bytes = 2LL * chain->fft_block * static_cast<long long>(size_of(k.state_dtype));
      if (chain->fft_block < 4 || (chain->fft_block & (chain->fft_block - 1)) != 0)
        return Unexpected{where + ": FFT block " + str(chain->fft_block) + " is not a power of two of 4 or more"};
      if (bytes > kCudaFftSharedBytes)
        return Unexpected{where + ": an FFT of " + str(chain->fft_block) + " points needs " + str(bytes) +
                          " bytes of shared memory, more than the " + str(kCudaFftSharedBytes) +
                          " the kernel may take; schedule with --target cuda"};
      k.fft_length = chain->fft_block;
      k.fir_taps = static_cast<int>(taps);
      if (2 * taps <= chain->fft_block) {  // at least as many new samples as taps per FFT
        k.kind = CudaKernelKind::fir_fft;
        k.note = "a lone FIR stage of " + str(taps) + " taps: FFT overlap-save, " + str(chain->fft_block) +
                 " points, two segments per complex FFT";
      } else {
        k.kind = CudaKernelKind::fir_partitioned;
        k.note = "a lone FIR stage of " + str(taps) + " taps: partitioned FFT overlap-save, " +
                 str(cuda_fir_partitions(k)) + " partitions of " + str(chain->fft_block / 2) + " taps, " +
                 str(chain->fft_block) + "-point FFTs";
      }
    }
    if (k.kind == CudaKernelKind::chain_thread_per_channel && is_lone_fir(*chain)) {
      k.kind = CudaKernelKind::fir_tiled;
      k.note = "a lone FIR stage: direct form, shared-memory tiles of " + str(kCudaFirTile) + " samples";
    }
    if (k.kind == CudaKernelKind::chain_thread_per_channel && is_elementwise(*chain)) {
      k.kind = CudaKernelKind::chain_elementwise;
      k.note = "delays and memoryless stages: elementwise over (channel, sample), lines read for the first samples";
    }
    if (k.kind == CudaKernelKind::chain_chunked_scan && k.chunk_length < 1)
      return Unexpected{where + ": gpu_chunked_scan without a chunk length"};
    k.entries = entries_of(k);
    out.push_back(std::move(k));
  }
  return out;
}

namespace {

// fxc_interleave and fxc_deinterleave (cuda_layout_entries): a block moves one 32 x 32 tile,
// 8 rows of 32 threads at a time; it reads along its source's rows and writes along its
// destination's, through a padded tile (no bank conflicts in either direction).
void emit_layout_kernels(Writer& w, DType signal) {
  const std::string T = scalar_of(signal).t;
  w.line("// Layout: planar rows <-> frames of channels, for the copies of an interleaved stream.");
  for (bool interleave : {true, false}) {
    w.open(std::string("extern \"C\" __global__ void ") + (interleave ? "fxc_interleave" : "fxc_deinterleave") + "(");
    w.line("const " + T + "* __restrict__ from, " + T + "* __restrict__ to, long long channels, long long frames) {");
    w.line("__shared__ " + T + " tile[32][33];");
    w.line("const long long frame_tiles = (frames + 31) / 32;");
    w.line("const long long c0 = blockIdx.x / frame_tiles * 32, f0 = blockIdx.x % frame_tiles * 32;");
    w.line("const int x = threadIdx.x % 32, y = threadIdx.x / 32;");
    if (interleave) {
      w.line("for (int r = y; r < 32; r += 8)  // tile[channel][frame], along the planar rows");
      w.line("  if (c0 + r < channels && f0 + x < frames) tile[r][x] = from[(c0 + r) * frames + f0 + x];");
      w.line("__syncthreads();");
      w.line("for (int r = y; r < 32; r += 8)  // along the frames");
      w.line("  if (f0 + r < frames && c0 + x < channels) to[(f0 + r) * channels + c0 + x] = tile[x][r];");
    } else {
      w.line("for (int r = y; r < 32; r += 8)  // tile[frame][channel], along the frames");
      w.line("  if (f0 + r < frames && c0 + x < channels) tile[r][x] = from[(f0 + r) * channels + c0 + x];");
      w.line("__syncthreads();");
      w.line("for (int r = y; r < 32; r += 8)  // along the planar rows");
      w.line("  if (c0 + r < channels && f0 + x < frames) to[(c0 + r) * frames + f0 + x] = tile[x][r];");
    }
    w.close();
  }
}

}  // namespace

DType cuda_signal_dtype(const ir::Graph& g) {
  return g.outputs().empty() ? DType::f32 : g.node(g.outputs()[0]).type.dtype;
}

std::vector<CudaEntry> cuda_layout_entries(DType signal) {
  const std::string T = scalar_of(signal).t;
  const std::vector<std::string> parameters = {"const " + T + "*", T + "*", "long long", "long long"};
  return {{"fxc_interleave", parameters, true}, {"fxc_deinterleave", parameters, true}};
}

CudaLaunch cuda_layout_launch(long long channels, long long frames) {
  if (channels <= 0 || frames <= 0) return {};
  return {((channels + 31) / 32) * ((frames + 31) / 32), 256};
}

// The float pair type and its arithmetic, for the chains whose float64 arithmetic runs in
// pairs (state_precision pairs and mixed_pairs; float_pair_scalar).
void emit_float_pairs(Writer& w) {
  const char* lines[] = {
      "// Float pairs (state_precision pairs and mixed_pairs), for GPUs whose float64 is slow: a value is",
      "// hi + lo, two floats with |lo| <= ulp(hi) / 2, about 48 bits of significand. Built from error-free",
      "// transforms (TwoSum, Fast2Sum, a product's error by fmaf) as in Joldes, Muller and Popescu, \"Tight",
      "// and rigorous error bounds for basic building blocks of double-word arithmetic\" (ACM TOMS 44(2),",
      "// 2017): their AccurateDWPlusDW (relative error about 3u^2, u = 2^-24) and DWTimesDW1 (below 7u^2).",
      "// --fmad=false keeps every rounding where it is written. A pair's range is float's: an infinity or a",
      "// NaN in hi makes lo a NaN, and the value (hi + lo) is not finite where float64's would not be",
      "// (whether NaN or infinite may differ, as it may between fused and unfused float64 arithmetic).",
      "struct fxc_ff {",
      "  float hi, lo;",
      "  fxc_ff() = default;",
      "  __device__ fxc_ff(int v) : hi(float(v)), lo(0.0f) {}",
      "  __device__ fxc_ff(float v) : hi(v), lo(0.0f) {}",
      "  // From float64 buffers (coefficients, state): hi is v rounded, lo what that left (0 for an",
      "  // infinity or a NaN, whose difference would be a NaN).",
      "  __device__ fxc_ff(double v) : hi(float(v)), lo(0.0f) {",
      "    if (fabsf(hi) <= 3.40282347e38f) lo = float(v - double(hi));",
      "  }",
      "  __device__ explicit operator float() const { return hi + lo; }",
      "  __device__ explicit operator double() const { return double(hi) + double(lo); }",
      "};",
      "__device__ inline fxc_ff fxc_ff_of(float hi, float lo) {",
      "  fxc_ff r;",
      "  r.hi = hi;",
      "  r.lo = lo;",
      "  return r;",
      "}",
      "// Fast2Sum: hi + lo == a + b exactly, for |a| >= |b|.",
      "__device__ inline fxc_ff fxc_fast_two_sum(float a, float b) {",
      "  const float s = a + b;",
      "  return fxc_ff_of(s, b - (s - a));",
      "}",
      "// TwoSum: hi + lo == a + b exactly, in either order.",
      "__device__ inline fxc_ff fxc_two_sum(float a, float b) {",
      "  const float s = a + b, bb = s - a;",
      "  return fxc_ff_of(s, (a - (s - bb)) + (b - bb));",
      "}",
      "__device__ inline fxc_ff operator-(fxc_ff x) { return fxc_ff_of(-x.hi, -x.lo); }",
      "// AccurateDWPlusDW: 20 float operations.",
      "__device__ inline fxc_ff operator+(fxc_ff x, fxc_ff y) {",
      "  const fxc_ff s = fxc_two_sum(x.hi, y.hi), t = fxc_two_sum(x.lo, y.lo);",
      "  const fxc_ff v = fxc_fast_two_sum(s.hi, s.lo + t.hi);",
      "  return fxc_fast_two_sum(v.hi, t.lo + v.lo);",
      "}",
      "// DWTimesDW1: 8 float operations.",
      "__device__ inline fxc_ff operator*(fxc_ff x, fxc_ff y) {",
      "  const float ch = x.hi * y.hi;",
      "  const float cl1 = fmaf(x.hi, y.hi, -ch);",
      "  const float cl2 = fmaf(x.lo, y.hi, x.hi * y.lo);",
      "  return fxc_fast_two_sum(ch, cl1 + cl2);",
      "}",
      "__device__ inline fxc_ff fxc_ff_fma(fxc_ff a, fxc_ff b, fxc_ff c) { return a * b + c; }",
  };
  for (const char* line : lines) w.line(line);
}

Expected<std::string, std::string> emit_cuda_source(const ir::Graph& g) {
  auto kernels = cuda_kernels(g);
  if (!kernels) return Unexpected{kernels.error()};
  Writer w;
  w.line("// CUDA C++ generated by fxc for graph \"" + g.name + "\". Compile with NVRTC and the options of");
  w.line("// codegen::cuda_compile_options (--fmad=false: only the fma() calls below are fused).");
  w.line("// Sample (c, n) of a signal is at base[c * channel_stride + n * sample_stride]:");
  w.line("//   planar [channel][sample]: channel_stride = samples, sample_stride = 1;");
  w.line("//   interleaved [sample][channel]: channel_stride = 1, sample_stride = channels (coalesced");
  w.line("//   for one thread per channel: a warp's 32 loads of sample n are adjacent).");
  // Helpers go in once, before the first kernel that uses them.
  auto any_chain = [&](auto holds) {
    return std::any_of(kernels->begin(), kernels->end(), [&](const CudaKernelInfo& k) {
      const auto* chain = std::get_if<ir::Chain>(&g.node(k.node).op);
      return chain && holds(*chain);
    });
  };
  if (any_chain([](const ir::Chain& c) { return ir::float_pairs(c.state_precision); })) {
    w.line();
    emit_float_pairs(w);
  }
  if (any_chain([](const ir::Chain& c) { return ir::has_loop(c.stages); })) {
    w.line();
    emit_prefetch(w);
  }
  if (std::any_of(kernels->begin(), kernels->end(),
                  [](const CudaKernelInfo& k) { return k.kind == CudaKernelKind::chain_chunked_scan; })) {
    w.line();
    emit_async_copy(w);
  }
  for (const CudaKernelInfo& k : *kernels) {
    w.line();
    const ir::Node& node = g.node(k.node);
    switch (k.kind) {
      case CudaKernelKind::chain_thread_per_channel:
        emit_thread_per_channel(w, k, std::get<ir::Chain>(node.op));
        break;
      case CudaKernelKind::chain_chunked_scan:
        emit_chunked_scan(w, k, std::get<ir::Chain>(node.op));
        break;
      case CudaKernelKind::fir_tiled:
        emit_fir_tiled(w, k, std::get<ir::Chain>(node.op));
        break;
      case CudaKernelKind::fir_fft:
        emit_fir_fft(w, k, std::get<ir::Chain>(node.op));
        break;
      case CudaKernelKind::fir_partitioned:
        emit_fir_partitioned(w, k, std::get<ir::Chain>(node.op));
        break;
      case CudaKernelKind::chain_elementwise:
        emit_elementwise(w, k, std::get<ir::Chain>(node.op));
        break;
      case CudaKernelKind::sum:
        emit_sum(w, k, std::get<ir::Sum>(node.op));
        break;
      case CudaKernelKind::route:
        emit_route(w, k, g);
        break;
      case CudaKernelKind::feedback:
        emit_feedback(w, k);
        break;
    }
  }
  w.line();
  emit_layout_kernels(w, cuda_signal_dtype(g));
  return w.str();
}

}  // namespace fxc::codegen

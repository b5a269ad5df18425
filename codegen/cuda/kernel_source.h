// SPDX-License-Identifier: Apache-2.0
// What every CUDA kernel emitter shares (emit_cuda.cpp, emit_chunked_scan.cpp, emit_fir.cpp): the
// source writer, the sample and arithmetic types, a chain's per-sample body with its state, and
// a thread's walk over its own samples with the inputs loaded ahead. Internal to codegen/cuda.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "codegen/chain_layout.h"
#include "codegen/cuda/emit_cuda.h"
#include "support/float_format.h"

namespace fxc::codegen::cuda_source {

// CUDA kernels keep their own names (docs/cuda.md): fxc_chain_<id> and fxc_sum_<id>.
inline std::string cuda_chain_symbol(std::uint32_t id) { return "fxc_chain_" + std::to_string(id); }

inline std::string str(long long v) { return std::to_string(v); }

// The carry's group walks: a thread per state row, in whole warps.
inline int carry_block_threads(int state_dimension) { return (state_dimension + 31) / 32 * 32; }

// The scalar type and the math functions of one dtype. The float functions are named
// explicitly so no overload resolution can pick a double function for a float.
struct Scalar {
  std::string t, fma, tanh, fabs, sqrt, log10, exp;
  int bytes = 0;  // of one value
};
inline Scalar scalar_of(DType dtype) {
  if (dtype == DType::f32) return {"float", "fmaf", "tanhf", "fabsf", "sqrtf", "log10f", "expf", 4};
  return {"double", "fma", "tanh", "fabs", "sqrt", "log10", "exp", 8};
}
// Float64 arithmetic in pairs of floats (state_precision pairs and mixed_pairs; the type and
// its operators: emit_float_pairs). Only sections and gains compute in it: products and fused
// multiply-adds.
inline Scalar float_pair_scalar() { return {"fxc_ff", "fxc_ff_fma", "", "", "", "", "", 8}; }

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

inline std::string stage_kind(const ir::Stage& stage) {
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

inline std::string describe_chain(const ir::Chain& chain) {
  std::string out;
  for (const ir::Stage& stage : chain.stages) {
    if (!out.empty()) out += " | ";
    out += stage_kind(stage);
    if (auto* sos = std::get_if<ir::SosCascade>(&stage)) out += "(" + str(static_cast<long long>(sos->sections.size())) + ")";
    if (auto* fir = std::get_if<ir::FirFilter>(&stage)) out += "(" + str(static_cast<long long>(fir->taps.size())) + ")";
  }
  return out;
}

inline constexpr const char* kSignalArgs =
    "long long channels, long long samples, long long channel_stride, long long sample_stride";
inline const std::vector<std::string> kSignalParams = {"long long", "long long", "long long", "long long"};

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
inline Types types_of(const CudaKernelInfo& k) {
  return {scalar_of(k.dtype), scalar_of(k.state_dtype), scalar_of(k.state_dtype)};
}
// A chain's: its samples enter the first stage's arithmetic.
inline Types types_of(const CudaKernelInfo& k, const ir::Chain& chain) {
  Types ty = types_of(k);
  if (ir::float_pairs(chain.state_precision)) ty.value = float_pair_scalar();
  return ty;
}

inline void header(Writer& w, const CudaKernelInfo& k, const ir::Chain& chain, const ChainLayout& l, const Types& ty) {
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

}  // namespace fxc::codegen::cuda_source

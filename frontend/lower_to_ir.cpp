// SPDX-License-Identifier: Apache-2.0
// Lowering of the .fx syntax tree to the IR. See lower_to_ir.h.
//
// Algorithm:
//   1. Note where every name is bound, so a use before its binding can say so.
//   2. Walk the statements in order. Each expression evaluates to a Value: a signal (an IR
//      node), a chain (stages not yet applied to a signal), a constant, or an error (already
//      reported; it silences errors that would only repeat it).
//   3. `signal | chain` instantiates the chain's stages on the signal; outputs become output
//      nodes; at the end a graph without input or output is reported.
//   4. Feedback (version 2). A name used before its binding reads a placeholder node; when the
//      binding is lowered, the placeholder's readers are pointed at its value, which may close
//      a cycle. At the end, every delay inside a loop (a strongly connected component) becomes
//      a feedback node, whose operand edge is a back edge; a cycle left without one has no
//      delay and is an error at the use that closed it. A use before the binding that closes
//      no loop stays an error, as in version 1.
#include "frontend/lower_to_ir.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "frontend/stage_args.h"
#include "ir/graph_algorithms.h"
#include "ir/rewrite.h"
#include "frontend/stage_table.h"
#include "support/float_format.h"
#include "support/strings.h"

namespace fxc::frontend {
namespace {

constexpr const char* kCode = "fx-lower";
// eval() frames: one expression's depth (the parser's kMaxExpressionDepth) and what the
// functions it calls add, each call counting kCallDepth. About 3 KB of stack a level in a
// release build and 12 KB a call level in a debug AddressSanitizer one (which overflowed
// 8 MB between 500 and 700 nested calls), so both stay well inside a thread's 8 MB.
constexpr int kMaxLoweringDepth = 1500;
constexpr int kCallDepth = 8;

struct FnCall;

// One stage of a chain, ready to be instantiated on a signal: an IR operation, or a call of a
// function that processes the signal piped into it (`x | echo(250 ms)`).
struct Step {
  ir::Op op;
  SourceLoc loc;
  std::map<std::string, SourceLoc> arg_locs;
  std::shared_ptr<const FnCall> call;  // set for a function call; `op` is unused then
  // A dynamics stage with a side-chain (key=) or linked channels (link=): `op` then makes the
  // gain from the key's (or the linked) level, and the signal is multiplied by it.
  std::optional<ir::NodeId> key;
  SourceLoc key_loc;
  std::optional<design::LinkMode> link;
};

enum class Kind { error, signal, chain, constant, tuple };

struct Value {
  Kind kind = Kind::error;
  SourceLoc loc;             // where the expression starts
  std::string name;          // the name it was read from, for messages; empty otherwise
  ir::NodeId node = 0;       // signal
  std::vector<Step> steps;   // chain
  NumberExpr number;         // constant, as written (products have no unit)
  std::vector<Value> items;  // tuple: what a function returns with `return a, b`
};

// A call of a user function, its arguments evaluated where it was written.
struct FnCall {
  const FnStmt* fn = nullptr;
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keywords;
  std::vector<SourceLoc> keyword_locs;
  SourceLoc loc;
};

struct Binding {
  Value value;
  SourceLoc loc;
};

class Lowerer {
 public:
  Lowerer(const Ast& ast, DiagnosticEngine& diags) : ast_(ast), diags_(diags) {}

  std::optional<ir::Graph> run(bool ast_is_partial) {
    std::size_t errors_before = diags_.error_count();
    for (const auto& imported : ast_.imported) register_functions(*imported);
    register_functions(ast_);
    statements_ = &ast_.statements;
    bound_at_ = bindings_of(ast_.statements);
    graph_bound_at_ = bound_at_;
    for (std::size_t i = 0; i < ast_.statements.size(); ++i) {
      const Stmt& s = ast_.statements[i];
      statement_ = i;
      std::visit([&](const auto& stmt) { lower(stmt, s, i); }, s.node);
    }
    close_loops();
    if (!ast_is_partial) {
      SourceLoc file{ast_.file, 0, 0};
      if (first_input_.empty())
        diags_.error(file,
                     "the graph has no input; declare one with 'input NAME' or "
                     "'input NAME : CHANNELS'",
                     kCode);
      if (!has_output_) {
        Diagnostic& d = diags_.error(file, "the graph has no output; add one with 'output EXPR'", kCode);
        // `output = x | ...` binds a name (the contract reserves no word): a likely slip.
        if (auto named = bound_at_.find("output"); named != bound_at_.end())
          note(d, named->second, "'output' is bound as a name here; to output a signal, write 'output EXPR' (no '=')");
      }
    }
    if (diags_.error_count() == errors_before) outputs_fed_by_inputs();
    if (diags_.error_count() > errors_before) return std::nullopt;
    return std::move(graph_);
  }

 private:
  // ---- statements ----
  void lower(const GraphStmt& g, const Stmt& s, std::size_t index) {
    if (graph_stmt_) {
      note(error(g.name_loc, "the graph is already named '" + graph_.name + "'"), *graph_stmt_,
           "named here");
      return;
    }
    graph_stmt_ = s.loc;
    graph_.name = g.name;
    if (index != 0)
      note(error(s.loc, "'graph' must be the first statement"), ast_.statements.front().loc,
           "the first statement is here");
  }

  void lower(const InputStmt& in, const Stmt&, std::size_t) {
    ir::Node node;
    node.op = ir::Input{in.name};
    node.type.channels = in.channels;
    node.loc = in.name_loc;
    if (in.channels_loc.valid()) node.arg_locs["channels"] = in.channels_loc;
    Value v;
    v.kind = Kind::signal;
    v.loc = in.name_loc;
    if (!define(in.name, in.name_loc)) return;
    v.node = graph_.add(std::move(node));
    if (first_input_.empty()) first_input_ = in.name;
    names_[in.name] = {std::move(v), in.name_loc};
  }

  // ---- functions (language version 2) ----

  static std::map<std::string, SourceLoc> bindings_of(const std::vector<Stmt>& statements) {
    std::map<std::string, SourceLoc> out;
    for (const Stmt& s : statements) {
      if (const auto* b = std::get_if<BindingStmt>(&s.node)) out.emplace(b->name, b->name_loc);
      if (const auto* in = std::get_if<InputStmt>(&s.node)) out.emplace(in->name, in->name_loc);
      if (const auto* o = std::get_if<OutputStmt>(&s.node); o && !o->name.empty()) out.emplace(o->name, o->name_loc);
      if (const auto* split = std::get_if<SplitStmt>(&s.node))
        for (std::size_t k = 0; k < split->names.size(); ++k) out.emplace(split->names[k], split->name_locs[k]);
    }
    return out;
  }

  void register_functions(const Ast& ast) {
    for (const Stmt& s : ast.statements) {
      const auto* fn = std::get_if<FnStmt>(&s.node);
      if (!fn) continue;
      if (find_stage(fn->name)) {
        error(fn->name_loc, "'" + fn->name + "' is a stage; a function cannot take its name");
        continue;
      }
      auto [it, fresh] = functions_.emplace(fn->name, fn);
      if (!fresh)
        note(error(fn->name_loc, "the function '" + fn->name + "' is already defined"), it->second->name_loc,
             "first defined here");
      check_names(*fn);
    }
  }

  // A function's parameters are distinct, and neither they nor its bindings take the name
  // `in` (the signal piped into it): either would silently shadow a value.
  // A function with such a name is broken: its calls add no report of their own.
  void check_names(const FnStmt& fn) {
    const std::size_t errors_before = diags_.error_count();
    for (std::size_t i = 0; i < fn.params.size(); ++i) {
      const Param& p = fn.params[i];
      if (p.name == "in")
        error(p.loc, "'in' is the signal piped into a function; a parameter cannot take its name");
      for (std::size_t j = 0; j < i; ++j)
        if (fn.params[j].name == p.name)
          note(error(p.loc, "'" + fn.name + "' has two parameters named '" + p.name + "'"), fn.params[j].loc,
               "the first is here");
    }
    auto binds_in = [&](const std::string& name, const SourceLoc& loc) {
      if (name == "in") error(loc, "'in' is the signal piped into a function; a binding cannot take its name");
    };
    for (const Stmt& s : fn.body) {
      if (const auto* b = std::get_if<BindingStmt>(&s.node)) binds_in(b->name, b->name_loc);
      if (const auto* split = std::get_if<SplitStmt>(&s.node))
        for (std::size_t k = 0; k < split->names.size(); ++k) binds_in(split->names[k], split->name_locs[k]);
    }
    if (diags_.error_count() > errors_before) broken_functions_.insert(&fn);
  }

  void lower(const FnStmt&, const Stmt&, std::size_t) {}      // registered before the statements
  void lower(const ImportStmt&, const Stmt&, std::size_t) {}  // read by the frontend (fx_file.h)
  void lower(const ReturnStmt&, const Stmt& s, std::size_t) {
    error(s.loc, "'return' outside a function");
  }

  // `a, b = EXPR`: a function's values, or a signal's channels, one name each.
  void lower(const SplitStmt& split, const Stmt&, std::size_t) {
    std::vector<bool> fresh;
    for (std::size_t k = 0; k < split.names.size(); ++k) fresh.push_back(define(split.names[k], split.name_locs[k]));
    Value v = eval(split.value, true);
    const std::size_t n = split.names.size();
    std::vector<Value> parts(n);
    if (v.kind == Kind::tuple) {
      if (v.items.size() != n)
        error(split.value.loc, std::to_string(n) + " names for " + std::to_string(v.items.size()) + " values");
      else
        parts = v.items;
    } else if (v.kind == Kind::signal) {
      int channels = graph_.node(v.node).type.channels;
      if (channels != 0 && static_cast<std::size_t>(channels) != n) {
        error(split.value.loc, std::to_string(n) + " names for a signal of " + channels_text(channels) +
                                   "; splitting a signal takes a name per channel");
      } else {
        for (std::size_t k = 0; k < n; ++k)
          parts[k] = signal(add_routing(ir::Select{{static_cast<int>(k)}, static_cast<int>(n)}, {v.node},
                                        split.name_locs[k]));
      }
    } else if (v.kind != Kind::error) {
      error(split.value.loc, "expected a signal to split into channels, or a function's values, found a " +
                                 kind_text(v.kind));
    }
    for (std::size_t k = 0; k < n; ++k) {
      if (!fresh[k]) continue;
      resolve_forward_uses(split.names[k], parts[k], split.name_locs[k]);
      names_[split.names[k]] = {parts[k], split.name_locs[k]};
    }
  }

  // A call of the user function `call.fn`, with `piped` the signal before `|` when the call
  // is a stage of a chain. The body is lowered in a scope of its own: its parameters, its
  // bindings, and `in`. Errors inside it get a note at the call.
  Value call_function(const FnCall& call, std::optional<ir::NodeId> piped) {
    std::size_t first_diagnostic = diags_.diagnostics().size();
    const ir::NodeId first_node = static_cast<ir::NodeId>(graph_.size());
    Value result = call_body(call, piped);
    for (ir::NodeId id = first_node; id < graph_.size(); ++id) graph_.node(id).calls.push_back(call.loc);
    diags_.add_note_from(first_diagnostic, {Severity::note, call.loc, "in this call", {}, {}});
    return result;
  }

  Value call_body(const FnCall& call, std::optional<ir::NodeId> piped) {
    const FnStmt& fn = *call.fn;
    if (std::find(active_calls_.begin(), active_calls_.end(), &fn) != active_calls_.end()) {
      note(error(call.loc, "'" + fn.name + "' calls itself; functions cannot be recursive"), fn.name_loc,
           "'" + fn.name + "' is defined here");
      return {};
    }
    // A function reads `in` exactly when it is called piped: one that reads it is a chain
    // until a signal is piped in (chain_without_signal says so otherwise), one that does not
    // is called at once, its result a signal.
    FXC_INTERNAL_ASSERT(fn.uses_in == piped.has_value(), "a function called with a signal it does not read, or without one it reads");
    // Parameters: positional in order, then keywords, then defaults.
    std::map<std::string, Binding> params;
    bool ok = true;
    if (call.positional.size() > fn.params.size()) {
      note(error(call.positional[fn.params.size()].loc,
                 "too many arguments for '" + fn.name + "': it takes " + std::to_string(fn.params.size())),
           fn.name_loc, "'" + fn.name + "' is defined here");
      ok = false;
    }
    for (std::size_t i = 0; i < call.positional.size() && i < fn.params.size(); ++i)
      params[fn.params[i].name] = {call.positional[i], call.positional[i].loc};
    for (std::size_t i = 0; i < call.keywords.size(); ++i) {
      const auto& [keyword, value] = call.keywords[i];
      auto param = std::find_if(fn.params.begin(), fn.params.end(), [&](const Param& p) { return p.name == keyword; });
      if (param == fn.params.end()) {
        std::vector<std::string_view> names;
        for (const Param& p : fn.params) names.push_back(p.name);
        Diagnostic& d = error(call.keyword_locs[i], "'" + fn.name + "' has no parameter '" + keyword + "'");
        if (auto near = nearest_name(keyword, names)) note(d, {}, "did you mean '" + *near + "'?");
        ok = false;
      } else if (!params.emplace(keyword, Binding{value, value.loc}).second) {
        error(call.keyword_locs[i], "'" + keyword + "' is given twice");
        ok = false;
      }
    }
    if (!ok) return {};

    // A call takes several times an expression level's stack (the body's scope, its
    // statements): it counts as kCallDepth levels of kMaxLoweringDepth.
    const DepthGuard call_depth(eval_depth_, kCallDepth);
    Scope saved = enter_scope(fn.body);
    active_calls_.push_back(&fn);
    if (piped) names_["in"] = {signal(*piped), call.loc};
    for (const Param& p : fn.params) {
      defined_at_.emplace(p.name, p.loc);
      if (auto given = params.find(p.name); given != params.end()) {
        names_[p.name] = given->second;
      } else if (p.default_value) {
        names_[p.name] = {eval(*p.default_value), p.loc};
      } else {
        note(error(call.loc, "missing argument '" + p.name + "' for '" + fn.name + "'"), p.loc,
             "the parameter is declared here");
        ok = false;
      }
    }
    Value result;
    bool returned = false;
    for (std::size_t i = 0; ok && i < fn.body.size(); ++i) {
      const Stmt& s = fn.body[i];
      statement_ = i;
      if (returned) {
        error(s.loc, "this statement comes after 'return', so it is never used");
        break;
      }
      if (const auto* r = std::get_if<ReturnStmt>(&s.node)) {
        returned = true;
        std::vector<Value> values;
        // `return f(x)` may pass on f's several values; `return a, b` takes one each.
        for (const Expr& e : r->values) values.push_back(eval(e, r->values.size() == 1));
        for (const Value& v : values)
          if (v.kind == Kind::error) ok = false;
        if (values.size() == 1) {
          result = std::move(values[0]);
        } else {
          result.kind = Kind::tuple;
          result.items = std::move(values);
        }
        result.loc = call.loc;
        continue;
      }
      std::visit([&](const auto& stmt) { lower(stmt, s, i); }, s.node);
    }
    if (ok && !returned) error(fn.name_loc, "the function '" + fn.name + "' has no 'return'");
    active_calls_.pop_back();
    leave_scope(std::move(saved));
    if (!ok || !returned) return {};
    result.name.clear();
    return result;
  }

  // What a function's body replaces while it is lowered.
  struct Scope {
    std::map<std::string, Binding> names;
    std::map<std::string, SourceLoc> defined_at, bound_at;
    const std::vector<Stmt>* statements = nullptr;
    std::size_t statement = 0;
    int id = 0;
  };

  // In a function's body, a name the graph binds (but the body cannot see): a note that says
  // so, where a word or an unknown name was the only message.
  void note_graph_name(Diagnostic& d, const std::string& name) {
    if (active_calls_.empty() || names_.count(name)) return;
    if (auto at = graph_bound_at_.find(name); at != graph_bound_at_.end())
      note(d, at->second,
           "'" + name + "' is a name of the graph, which a function's body does not see: pass it as a parameter");
  }

  Scope enter_scope(const std::vector<Stmt>& body) {
    Scope saved{std::move(names_), std::move(defined_at_), std::move(bound_at_), statements_, statement_, scope_};
    names_.clear();
    defined_at_.clear();
    bound_at_ = bindings_of(body);
    statements_ = &body;
    statement_ = 0;
    scope_ = ++scopes_;
    return saved;
  }

  void leave_scope(Scope saved) {
    names_ = std::move(saved.names);
    defined_at_ = std::move(saved.defined_at);
    bound_at_ = std::move(saved.bound_at);
    statements_ = saved.statements;
    statement_ = saved.statement;
    scope_ = saved.id;
  }

  void lower(const BindingStmt& b, const Stmt&, std::size_t) {
    bool fresh = define(b.name, b.name_loc);
    Value v = eval(b.value);
    if (fresh) resolve_forward_uses(b.name, v, b.name_loc);
    if (fresh) names_[b.name] = {std::move(v), b.name_loc};
  }

  void lower(const OutputStmt& o, const Stmt& s, std::size_t) {
    has_output_ = true;
    bool fresh = o.name.empty() || define(o.name, o.name_loc);
    Value v = eval(o.value);
    if (v.kind == Kind::chain) chain_without_signal(v);
    if (v.kind == Kind::constant)
      error(v.loc, "an output must be a signal, found the number " + written(v.number));
    if (v.kind != Kind::signal) v = Value{};  // an error from here on
    if (!o.name.empty() && fresh) resolve_forward_uses(o.name, v, o.name_loc);
    if (!o.name.empty() && fresh) names_[o.name] = {v, o.name_loc};
    if (v.kind != Kind::signal) return;
    ir::Node node;
    node.op = ir::Output{o.name};
    node.operands = {v.node};
    node.type = graph_.node(v.node).type;
    node.loc = o.name.empty() ? s.loc : o.name_loc;
    graph_.add(std::move(node));
  }

  // A signal no input reaches can only come from a feedback loop with nothing fed into it
  // (`y = y | delay(1)`): silence, and surely not what was meant. Said here, at the output or
  // at the loop, rather than by the IR's verifier. An output of such a loop alone is named;
  // a loop mixed into a fed signal (`output x + y`) is named at the loop (it had no check
  // before 2026-11-29: the reference interpreter crashed on it, the kernels' channel inference
  // asked for a count the input declared).
  void outputs_fed_by_inputs() {
    std::vector<ir::NodeId> inputs, outputs;
    for (ir::NodeId id = 0; id < graph_.size(); ++id) {
      if (std::holds_alternative<ir::Input>(graph_.node(id).op)) inputs.push_back(id);
      if (std::holds_alternative<ir::Output>(graph_.node(id).op)) outputs.push_back(id);
    }
    std::vector<bool> fed = ir::reachable_from(graph_, inputs);
    const std::string hint = "a feedback loop needs a signal fed into it, as in 'y = x + y | delay(1)'";
    std::vector<ir::NodeId> unfed_outputs;
    for (ir::NodeId id : outputs) {
      if (fed[id]) continue;
      const auto& out = std::get<ir::Output>(graph_.node(id).op);
      note(error(graph_.node(id).loc, (out.name.empty() ? std::string("this output") : "the output '" + out.name + "'") +
                                          " does not depend on any input"),
           {}, hint);
      unfed_outputs.push_back(id);
    }
    std::vector<bool> named = ir::reaching(graph_, unfed_outputs);
    std::vector<bool> used = ir::reaching(graph_, outputs);
    for (ir::NodeId id = 0; id < graph_.size(); ++id)
      if (std::holds_alternative<ir::Feedback>(graph_.node(id).op) && !fed[id] && used[id] && !named[id])
        note(error(graph_.node(id).loc, "this feedback loop has nothing fed into it: it is silence where an output uses it"),
             {}, hint);
  }

  // Claims `name`; reports it and returns false when it is already bound.
  bool define(const std::string& name, const SourceLoc& loc) {
    auto [it, fresh] = defined_at_.emplace(name, loc);
    if (!fresh)
      note(error(loc, "'" + name + "' is already defined; names cannot be rebound"), it->second,
           "'" + name + "' was first defined here");
    return fresh;
  }

  // ---- expressions ----
  // A function's several values (`return a, b`) are taken only by `a, b = ...` (`tuples`).
  Value eval(const Expr& e, bool tuples = false) {
    // The parser bounds one expression's depth; calls of functions add their bodies' depth to
    // it, so the lowering keeps its own count (kMaxLoweringDepth) and stops with an error
    // before the recursion outgrows the stack.
    const DepthGuard depth(eval_depth_, 1);
    if (eval_depth_ > kMaxLoweringDepth) {
      if (!reported_depth_)
        note(error(e.loc, "this expression, with the functions it calls, nests more than " +
                              std::to_string(kMaxLoweringDepth) + " levels deep"),
             {}, "a call counts as " + std::to_string(kCallDepth) +
                     " levels: split the expression into named steps, or nest the calls less deeply");
      reported_depth_ = true;
      return {};
    }
    Value v = std::visit([&](const auto& node) { return eval_node(node, e); }, e.node);
    v.loc = e.loc;
    if (v.kind == Kind::tuple && !tuples) {
      error(e.loc, "this call returns " + std::to_string(v.items.size()) +
                       " values; bind them to as many names first: 'a, b = ...'");
      return {};
    }
    return v;
  }

  Value eval_node(const ErrorExpr&, const Expr&) { return {}; }
  Value eval_node(const StringExpr&, const Expr& e) {
    error(e.loc, "expected a signal, found a string");
    return {};
  }
  // `[a, b]`: the signals' channels side by side (language version 2).
  Value eval_node(const ListExpr& list, const Expr& e) {
    std::vector<Value> items;
    for (const Expr& item : list.items) items.push_back(eval(item));
    bool signals = !items.empty();
    for (const Value& v : items) {
      if (v.kind == Kind::error) return {};
      signals = signals && v.kind == Kind::signal;
    }
    if (!signals) {
      error(e.loc, items.empty() ? "an empty list has no channels"
                                 : "expected a signal, found a list (a list of signals puts their channels side by "
                                   "side; this one holds a " + kind_text(items[0].kind == Kind::signal ? items.back().kind
                                                                                                      : items[0].kind) + ")");
      return {};
    }
    std::vector<ir::NodeId> operands;
    for (const Value& v : items) operands.push_back(v.node);
    return signal(add_routing(ir::Concat{}, operands, e.loc));
  }

  // `x[0]`, `x[1:3]`, `x[0, 2]`: a selection of channels.
  Value eval_node(const IndexExpr& ix, const Expr& e) {
    Value base = eval(*ix.base);
    if (base.kind == Kind::error) return {};
    if (base.kind != Kind::signal) {
      error(e.loc, "only a signal has channels to select; this is a " + kind_text(base.kind));
      return {};
    }
    const int channels = graph_.node(base.node).type.channels;
    std::vector<int> indices;
    for (const IndexItem& item : ix.items) {
      int last = item.first + 1;
      if (item.slice && item.last) {
        last = *item.last;
      } else if (item.slice) {
        if (channels == 0) {
          error(item.loc, "write where the range ends ('" + std::to_string(item.first) + ":N'): the channel count of "
                          "this signal is not known until the graph runs");
          return {};
        }
        last = channels;
      }
      if (last <= item.first) {
        error(item.loc, "the range " + std::to_string(item.first) + ":" + std::to_string(last) +
                            " selects no channel (it ends where it starts, or before)");
        return {};
      }
      for (int k = item.first; k < last; ++k) {
        if (channels != 0 && k >= channels) {
          error(item.loc, "channel " + std::to_string(k) + " does not exist: the signal has " + channels_text(channels) +
                              " (channels count from 0)");
          return {};
        }
        indices.push_back(k);
      }
    }
    return signal(add_routing(ir::Select{std::move(indices), 0}, {base.node}, e.loc));
  }

  // A routing node on `operands`, with the channel count it makes where it is known.
  ir::NodeId add_routing(ir::Op op, std::vector<ir::NodeId> operands, const SourceLoc& loc) {
    ir::Node node;
    node.op = std::move(op);
    node.operands = std::move(operands);
    node.type.channels = routed_channels(node);
    node.loc = loc;
    return graph_.add(std::move(node));
  }

  // The channel count a node makes from its operands' (0 while unknown).
  int routed_channels(const ir::Node& node) const {
    if (const auto* s = std::get_if<ir::Select>(&node.op)) return static_cast<int>(s->indices.size());
    if (const auto* m = std::get_if<ir::Matrix>(&node.op)) return m->rows;
    if (const auto* l = std::get_if<ir::Link>(&node.op)) return l->groups;
    int sum = 0;
    for (ir::NodeId operand : node.operands) {
      int c = graph_.node(operand).type.channels;
      if (c == 0) return 0;
      sum += c;
    }
    if (std::holds_alternative<ir::Concat>(node.op)) return sum;
    return node.operands.empty() ? 0 : graph_.node(node.operands[0]).type.channels;
  }

  Value eval_node(const NumberExpr& n, const Expr&) {
    Value v;
    v.kind = Kind::constant;
    v.number = n;
    return v;
  }

  Value eval_node(const NameExpr& n, const Expr& e) {
    auto it = names_.find(n.name);
    if (it != names_.end()) {
      Value v = it->second.value;
      v.name = n.name;
      return v;
    }
    if (auto later = bound_at_.find(n.name); later != bound_at_.end() && binds_signal_later(n.name)) {
      // Perhaps a feedback loop: decided when the name is bound (close_loops).
      ir::Node placeholder;
      placeholder.op = ir::Gain{1};
      placeholder.loc = e.loc;
      ir::NodeId id = graph_.add(std::move(placeholder));
      forward_uses_.push_back({n.name, id, e.loc, later->second, scope_, std::nullopt});
      Value v = signal(id);
      v.name = n.name;
      return v;
    }
    Diagnostic& d = error(e.loc, "unknown name '" + n.name + "'");
    if (!active_calls_.empty() && graph_bound_at_.count(n.name)) {
      note_graph_name(d, n.name);
    } else if (auto later = bound_at_.find(n.name); later != bound_at_.end()) {
      const SourceLoc& at = later->second;
      if (at.line == e.loc.line && at.col < e.loc.col)
        note(d, {}, "a name cannot be used in its own definition");
      else
        note(d, at,
             "'" + n.name +
                 "' is defined here, after its use; a name must be defined "
                 "before it is used");
    } else if (std::optional<std::string> near = nearest_name(n.name, known_names())) {
      note(d, {}, "did you mean '" + *near + "'?");
    } else if (const StageSpec* stage = find_stage(n.name)) {
      note(d, {}, "'" + n.name + "' is a stage; call it with parentheses: " + signature(*stage));
    }
    return {};
  }

  Value eval_node(const CallExpr& call, const Expr& e) {
    if (auto fn = functions_.find(call.callee); fn != functions_.end()) return function_call(*fn->second, call, e);
    // Perhaps a function of the file an import could not read: that error is out.
    if (ast_.import_failed && !find_stage(call.callee)) return {};
    CallExpr resolved{call.callee, {}};
    Step step;
    bool side_chain = call.callee == "compressor" || call.callee == "expander" || call.callee == "gate" ||
                      call.callee == "limiter";
    bool ok = true;
    for (const Arg& a : call.args) {
      if (side_chain && a.keyword == "key") {
        Value key = eval(*a.value);
        if (key.kind == Kind::error) {
          ok = false;
        } else if (key.kind != Kind::signal) {
          error(a.value->loc, "'key' takes a signal (the side-chain), found a " + kind_text(key.kind));
          ok = false;
        } else {
          step.key = key.node;
          step.key_loc = a.value->loc;
        }
        continue;
      }
      if (side_chain && a.keyword == "link") {
        const auto* word = a.value->as<NameExpr>();
        std::optional<design::LinkMode> mode = word ? design::parse_enum<design::LinkMode>(word->name) : std::nullopt;
        if (word && word->name == "none") continue;
        if (!mode) {
          error(a.value->loc, "expected none, max or mean for 'link'");
          ok = false;
        }
        step.link = mode;
        continue;
      }
      if (names_failed_binding(*a.value)) return {};  // its error was reported at the binding
      resolved.args.push_back(
          {a.keyword, a.keyword_loc, std::make_unique<Expr>(substitute_constants(*a.value))});
    }
    const std::size_t first_diagnostic = diags_.diagnostics().size();
    std::vector<std::string_view> function_names;
    for (const auto& [name, fn] : functions_) function_names.push_back(name);
    std::optional<StageOp> op = build_stage(resolved, e.loc, diags_, function_names);
    if (!op) {
      // A word the stage refused may be a graph's name that a function's body cannot see.
      for (const Arg& a : resolved.args)
        if (const auto* word = a.value->as<NameExpr>())
          for (std::size_t k = first_diagnostic; k < diags_.diagnostics().size(); ++k)
            if (diags_.diagnostics()[k].loc == a.value->loc) note_graph_name(diags_.diagnostic(k), word->name);
    }
    if (!op || !ok) return {};
    step.op = std::move(op->op);
    step.loc = e.loc;
    step.arg_locs = std::move(op->arg_locs);
    Value v;
    v.kind = Kind::chain;
    v.steps.push_back(std::move(step));
    return v;
  }

  // A user function's call: called now, or, when its body reads `in`, a chain whose one step
  // calls it on the signal piped in.
  Value function_call(const FnStmt& fn, const CallExpr& call, const Expr& e) {
    auto c = std::make_shared<FnCall>();
    c->fn = &fn;
    c->loc = e.loc;
    for (const Arg& a : call.args) {
      Value v = eval(*a.value);
      if (v.kind == Kind::error) return {};
      if (a.keyword.empty()) {
        c->positional.push_back(std::move(v));
      } else {
        c->keywords.emplace_back(a.keyword, std::move(v));
        c->keyword_locs.push_back(a.keyword_loc);
      }
    }
    // Its definition's errors are out; its calls would only repeat them in other words.
    if (fn.damaged || broken_functions_.contains(&fn)) return {};
    if (!fn.uses_in) return call_function(*c, std::nullopt);
    Value v;
    v.kind = Kind::chain;
    Step step;
    step.loc = e.loc;
    step.call = std::move(c);
    v.steps.push_back(std::move(step));
    return v;
  }

  // Whether `e` names (or lists) a binding whose value failed: `f = 1 kHz * 2 Hz`, then
  // `lowpass(f)` would add a second error, about the word 'f'.
  bool names_failed_binding(const Expr& e) const {
    if (const auto* n = e.as<NameExpr>()) {
      auto it = names_.find(n->name);
      return it != names_.end() && it->second.value.kind == Kind::error;
    }
    if (const auto* list = e.as<ListExpr>())
      return std::any_of(list->items.begin(), list->items.end(), [&](const Expr& item) { return names_failed_binding(item); });
    return false;
  }

  // An argument naming a bound constant (`fc = 1 kHz; lowpass(fc)`) reads as that number.
  Expr substitute_constants(const Expr& e) {
    if (const auto* n = e.as<NameExpr>()) {
      auto it = names_.find(n->name);
      if (it != names_.end() && it->second.value.kind == Kind::constant)
        return Expr{it->second.value.number, e.loc};
    }
    if (const auto* list = e.as<ListExpr>()) {
      ListExpr copy;
      for (const Expr& item : list->items) copy.items.push_back(substitute_constants(item));
      return Expr{std::move(copy), e.loc};
    }
    return clone(e);
  }

  Value eval_node(const BinaryExpr& b, const Expr& e) {
    switch (b.op) {
      case BinaryOp::pipe:
        return pipe(b);
      case BinaryOp::multiply:
        return multiply(b);
      case BinaryOp::add:
      case BinaryOp::subtract:
        return sum(e);
    }
    return {};
  }

  Value pipe(const BinaryExpr& b) {
    Value lhs = eval(*b.lhs), rhs = eval(*b.rhs);
    if (lhs.kind == Kind::error || rhs.kind == Kind::error) return {};
    bool ok = true;
    if (lhs.kind == Kind::constant) {
      note(error(lhs.loc, "expected a signal or a stage before '|', found the number " +
                              written(lhs.number)),
           {}, "to scale a signal, multiply it: '" + lhs.number.text + " * " + input_hint() + "'");
      ok = false;
    }
    if (rhs.kind == Kind::constant) {
      note(error(rhs.loc,
                 "expected a stage or a chain after '|', found the number " + written(rhs.number)),
           {}, "to scale a signal, write 'gain(" + written(rhs.number) + ")'");
      ok = false;
    } else if (rhs.kind == Kind::signal) {
      auto forward = std::find_if(forward_uses_.begin(), forward_uses_.end(),
                                  [&](const ForwardUse& f) { return f.placeholder == rhs.node; });
      if (forward != forward_uses_.end()) {
        // A name bound later (`y = x | eq`, then `eq = lowpass(1 kHz)`) reads as a signal closing
        // a feedback loop, which cannot follow '|': say what it is, once (the loop is not closed).
        note(error(rhs.loc, "'" + forward->name + "' is used before its binding; what follows '|' must be a "
                                "stage or a chain bound before it"),
             forward->bound_at, "'" + forward->name + "' is bound here");
        forward_uses_.erase(forward);
      } else {
        std::string what = rhs.name.empty() ? "this" : "'" + rhs.name + "'";
        error(rhs.loc, what +
                           " is a signal, not a stage or a chain; only stages and chains can "
                           "follow '|'");
      }
      ok = false;
    }
    if (!ok) return {};
    if (lhs.kind == Kind::chain) {
      for (Step& s : rhs.steps) lhs.steps.push_back(std::move(s));
      lhs.name.clear();
      return lhs;
    }
    // A function straight after '|' may return several values (`x | lr4_crossover3(...)`).
    if (rhs.steps.size() == 1 && rhs.steps[0].call) return call_function(*rhs.steps[0].call, lhs.node);
    return signal(instantiate(rhs.steps, lhs.node));
  }

  Value multiply(const BinaryExpr& b) {
    Value lhs = eval(*b.lhs), rhs = eval(*b.rhs);
    if (lhs.kind == Kind::error || rhs.kind == Kind::error) return {};
    if (lhs.kind == Kind::constant && rhs.kind == Kind::constant) {
      // A frequency, time or sample count scaled by a plain number keeps its unit
      // (`2 * 10 ms`); two such numbers have no product here.
      auto measured = [](const Value& v) { return v.number.unit != Unit::none && v.number.unit != Unit::db; };
      if (measured(lhs) || measured(rhs)) {
        const Value& with_unit = measured(lhs) ? lhs : rhs;
        const Value& factor = measured(lhs) ? rhs : lhs;
        if (factor.number.unit != Unit::none) {
          note(error(b.op_loc, "cannot multiply " + written(lhs.number) + " by " + written(rhs.number)),
               {}, "a plain number scales a number with a unit ('2 * 10 ms'); two numbers with units have no product");
          return {};
        }
        Value v;
        v.kind = Kind::constant;
        v.number.value = with_unit.number.value * factor.number.value;
        v.number.unit = with_unit.number.unit;
        if (!std::isfinite(v.number.value)) {
          error(b.op_loc, "the product of " + written(lhs.number) + " and " + written(rhs.number) + " is too large");
          return {};
        }
        v.number.text = format_double(v.number.value);
        return v;
      }
      std::optional<double> l = linear(lhs), r = linear(rhs);
      if (!l || !r) return {};
      if (!std::isfinite(*l * *r)) {
        error(b.op_loc, "the product of " + written(lhs.number) + " and " + written(rhs.number) +
                            " is too large for a gain");
        return {};
      }
      Value v;
      v.kind = Kind::constant;
      v.number.value = *l * *r;
      v.number.text = format_double(v.number.value);
      v.number.gain_of_levels = lhs.number.unit == Unit::db || rhs.number.unit == Unit::db ||
                                lhs.number.gain_of_levels || rhs.number.gain_of_levels;
      return v;
    }
    if (lhs.kind != Kind::constant && rhs.kind != Kind::constant) {
      error(b.op_loc, "'*' needs a constant number on one side (a gain), " +
                          (lhs.kind == rhs.kind ? "but both sides are " + kind_text(lhs.kind) + "s"
                                                : "found a " + kind_text(lhs.kind) + " and a " +
                                                      kind_text(rhs.kind)));
      return {};
    }
    Value& constant = lhs.kind == Kind::constant ? lhs : rhs;
    Value& other = lhs.kind == Kind::constant ? rhs : lhs;
    std::optional<double> g = linear(constant);
    if (!g) return {};
    Step step{ir::Gain{*g}, b.op_loc, {{"g", constant.loc}}};
    if (other.kind == Kind::chain) {
      other.steps.push_back(std::move(step));
      other.name.clear();
      return other;
    }
    return signal(instantiate({step}, other.node));
  }

  // `a + b - c`: one sum node over the left-associative run of '+' and '-'.
  Value sum(const Expr& e) {
    struct Term {
      const Expr* expr;
      double weight;
      BinaryOp op;  // the operator before this term (after it, for the first)
      SourceLoc op_loc;
    };
    std::vector<Term> terms;
    const Expr* cur = &e;
    while (const auto* b = cur->as<BinaryExpr>()) {
      if (b->op != BinaryOp::add && b->op != BinaryOp::subtract) break;
      terms.push_back({b->rhs.get(), b->op == BinaryOp::add ? 1.0 : -1.0, b->op, b->op_loc});
      cur = b->lhs.get();
    }
    terms.push_back({cur, 1.0, terms.back().op, terms.back().op_loc});
    std::reverse(terms.begin(), terms.end());

    bool ok = true;
    std::vector<Value> values;
    for (const Term& t : terms) values.push_back(eval(*t.expr));
    if (std::all_of(values.begin(), values.end(), [](const Value& v) { return v.kind == Kind::constant; }))
      return constant_sum(values, terms);
    for (std::size_t i = 0; i < terms.size(); ++i) {
      const Term& t = terms[i];
      Value& v = values[i];
      std::string op(op_text(t.op));
      if (v.kind == Kind::chain) chain_without_signal(v);
      if (v.kind == Kind::constant)
        error(v.loc, "expected a signal on both sides of '" + op + "', found the number " +
                         written(v.number));
      ok = ok && v.kind == Kind::signal;
    }
    if (!ok) return {};

    int channels = 0;
    std::size_t first = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      int c = graph_.node(values[i].node).type.channels;
      if (c == 0) continue;
      if (channels == 0) {
        channels = c;
        first = i;
      } else if (c != channels) {
        Diagnostic& d =
            error(terms[i].op_loc,
                  std::string(terms[i].op == BinaryOp::add ? "cannot add" : "cannot subtract") +
                      " signals with different channel counts (" + std::to_string(channels) +
                      " and " + std::to_string(c) + ")");
        note(d, values[first].loc, "this signal has " + channels_text(channels));
        note(d, values[i].loc, "this signal has " + channels_text(c));
        return {};
      }
    }
    ir::Node node;
    ir::Sum op;
    for (std::size_t i = 0; i < values.size(); ++i) {
      node.operands.push_back(values[i].node);
      op.weights.push_back(terms[i].weight);
    }
    node.op = std::move(op);
    node.type.channels = channels;
    node.loc = terms[1].op_loc;
    return signal(graph_.add(std::move(node)));
  }

  // ---- feedback ----

  // Whether `name` is bound by a statement after the current one that may give a signal
  // (`NAME = EXPR` or `output NAME = EXPR`; not an input).
  bool binds_signal_later(const std::string& name) const {
    for (std::size_t i = statement_; i < statements_->size(); ++i) {
      const auto& node = (*statements_)[i].node;
      if (const auto* b = std::get_if<BindingStmt>(&node); b && b->name == name) return !b->range;
      if (const auto* o = std::get_if<OutputStmt>(&node); o && o->name == name) return true;
      if (const auto* split = std::get_if<SplitStmt>(&node))
        for (const std::string& n : split->names)
          if (n == name) return true;
    }
    return false;
  }

  // `name` is now bound to `v`: its earlier uses read v's node, or are errors if v is no signal.
  void resolve_forward_uses(const std::string& name, const Value& v, const SourceLoc& bound_at) {
    for (ForwardUse& use : forward_uses_) {
      if (use.name != name || use.scope != scope_) continue;
      if (v.kind == Kind::signal) {
        use.target = v.node;
        continue;
      }
      if (v.kind == Kind::error) continue;
      note(error(use.loc, "'" + name + "' is used before its binding, and is bound to a " + kind_text(v.kind) +
                              "; only a signal can be used before its binding (to close a feedback loop)"),
           bound_at, "'" + name + "' is bound here");
    }
  }

  // Step 4: points each forward use at its value, turns the delays of every loop into
  // feedback nodes, and reports loops without a delay and forward uses that close no loop.
  // These come after the other errors; the frontend reports all of them in file order.
  void close_loops() {
    // A use whose binding failed or gave no signal has its error already; the graph is not used.
    if (forward_uses_.empty() ||
        std::any_of(forward_uses_.begin(), forward_uses_.end(), [](const ForwardUse& u) { return !u.target; }))
      return;
    // A name bound to another name used before its binding (`a = b`, `b = a`, or `y = y`) is
    // bound to that placeholder: follow such chains to a real node. One that comes back to
    // where it started names no signal at all.
    std::map<ir::NodeId, std::size_t> use_of;  // placeholder -> its use
    for (std::size_t i = 0; i < forward_uses_.size(); ++i) use_of[forward_uses_[i].placeholder] = i;
    bool aliases_ok = true;
    for (ForwardUse& use : forward_uses_) {
      std::set<ir::NodeId> seen{use.placeholder};
      while (use_of.count(*use.target)) {
        if (!seen.insert(*use.target).second) {
          error(use.loc, "'" + use.name + "' is bound only to itself, through names that name each other: a loop "
                         "with no signal in it");
          aliases_ok = false;
          break;
        }
        use.target = forward_uses_[use_of[*use.target]].target;
      }
    }
    if (!aliases_ok) return;
    std::vector<bool> keep(graph_.size(), true);
    std::vector<std::vector<ir::NodeId>> users = graph_.users();
    std::vector<std::vector<ir::NodeId>> readers(forward_uses_.size());
    for (std::size_t i = 0; i < forward_uses_.size(); ++i) {
      const ForwardUse& use = forward_uses_[i];
      keep[use.placeholder] = false;
      readers[i] = users[use.placeholder];
      if (use.target) ir::replace_uses(graph_, use.placeholder, *use.target);
    }
    std::vector<std::vector<ir::NodeId>> loops = ir::loops(graph_);
    std::vector<int> loop_of(graph_.size(), -1);
    for (std::size_t l = 0; l < loops.size(); ++l)
      for (ir::NodeId id : loops[l]) loop_of[id] = static_cast<int>(l);
    for (const auto& loop : loops)
      for (ir::NodeId id : loop)
        if (const auto* delay = std::get_if<ir::Delay>(&graph_.node(id).op)) {
          ir::Node& node = graph_.node(id);
          // Found once the calls are done: the notes at them come from the node.
          if (delay->unit == ir::DelayUnit::samples && delay->amount < 1)
            ir::note_calls(error(node.loc_of("d"), "a delay inside a feedback loop must be at least one sample, found " +
                                                       format_double(delay->amount)),
                           node);
          node.op = ir::Feedback{delay->amount, delay->unit, {}};
        }

    // Which loop each forward use closes (-1: none).
    std::vector<int> closes(forward_uses_.size(), -1);
    for (std::size_t i = 0; i < forward_uses_.size(); ++i) {
      const ForwardUse& use = forward_uses_[i];
      if (!use.target) continue;
      for (ir::NodeId reader : readers[i])
        if (loop_of[*use.target] >= 0 && loop_of[reader] == loop_of[*use.target]) closes[i] = loop_of[reader];
    }
    for (std::size_t l = 0; l < loops.size(); ++l) {
      std::vector<bool> within(graph_.size(), false);
      for (ir::NodeId id : loops[l]) within[id] = true;
      std::vector<ir::NodeId> cycle = ir::find_cycle(graph_, false, &within);
      if (cycle.empty()) continue;
      std::reverse(cycle.begin(), cycle.end());  // in the direction the signal flows
      SourceLoc at = graph_.node(cycle.front()).loc;
      for (std::size_t i = 0; i < forward_uses_.size(); ++i) {
        auto target = std::find(cycle.begin(), cycle.end(), *forward_uses_[i].target);
        if (closes[i] != static_cast<int>(l) || target == cycle.end()) continue;
        at = forward_uses_[i].loc;
        std::rotate(cycle.begin(), target, cycle.end());  // from the name's value on
        break;
      }
      Diagnostic& d = error(at, "this feedback loop has no delay: every path around a loop must pass "
                                      "through a delay of at least one sample");
      for (ir::NodeId id : cycle) {
        const ir::Node& node = graph_.node(id);
        std::string what = ir::holds<ir::Sum>(node) ? "a mix" : "'" + std::string(ir::kind_name(node.op)) + "'";
        note(d, node.loc, "the loop passes through " + what + " here");
      }
    }
    for (std::size_t i = 0; i < forward_uses_.size(); ++i) {
      const ForwardUse& use = forward_uses_[i];
      if (!use.target || closes[i] >= 0) continue;
      Diagnostic& d = error(use.loc, "unknown name '" + use.name + "'");
      note(d, use.bound_at,
           "'" + use.name + "' is defined here, after its use; a name must be defined before it is used");
      note(d, {}, "only a feedback loop may use a name before its binding, and this use closes none");
    }
    graph_ = ir::compact(graph_, keep);
  }

  // `n` in `unit`, where both are one quantity: kHz and Hz, ms and s (`1 kHz + 500 Hz`, and
  // `d + 1 ms` after --set gave `d` in seconds).
  static std::optional<double> in_unit(const NumberExpr& n, Unit unit) {
    if (n.unit == unit) return n.value;
    if (n.unit == Unit::khz && unit == Unit::hz) return n.value * 1000;
    if (n.unit == Unit::hz && unit == Unit::khz) return n.value / 1000;
    if (n.unit == Unit::s && unit == Unit::ms) return n.value * 1000;
    if (n.unit == Unit::ms && unit == Unit::s) return n.value / 1000;
    return std::nullopt;
  }

  // `1 - damp`, `1116 + spread` (language version 2): numbers of one unit, or without one;
  // units of one quantity are converted to the first term's.
  template <class Term>
  Value constant_sum(const std::vector<Value>& values, const std::vector<Term>& terms) {
    Value v;
    v.kind = Kind::constant;
    v.number.unit = values[0].number.unit;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const NumberExpr& n = values[i].number;
      if (std::optional<double> converted = in_unit(n, v.number.unit)) {
        v.number.value += terms[i].weight * *converted;
        v.number.gain_of_levels = v.number.gain_of_levels || n.gain_of_levels;
        continue;
      }
      note(error(terms[i].op_loc, "cannot " + std::string(terms[i].op == BinaryOp::add ? "add" : "subtract") +
                                      " numbers in different units (" + written(values[0].number) + " and " +
                                      written(n) + ")"),
           {}, "write both with units of one quantity (Hz and kHz, s and ms), or without a unit");
      return {};
    }
    if (!std::isfinite(v.number.value)) {
      error(terms[1].op_loc, "the sum is too large for a number");
      return {};
    }
    v.number.text = format_double(v.number.value);
    return v;
  }

  // ---- helpers ----
  // The chain's steps on `operand`; nullopt after an error (in a function's body).
  std::optional<ir::NodeId> instantiate(const std::vector<Step>& steps, ir::NodeId operand) {
    for (const Step& s : steps) {
      if (s.call) {
        Value out = call_function(*s.call, operand);
        if (out.kind == Kind::error) return std::nullopt;
        if (out.kind != Kind::signal) {
          error(s.loc, "'" + s.call->fn->name + "' returns a " + kind_text(out.kind) +
                           "; a function used after '|' must return one signal");
          return std::nullopt;
        }
        operand = out.node;
        continue;
      }
      if (s.key || s.link) {
        std::optional<ir::NodeId> out = side_chain(s, operand);
        if (!out) return std::nullopt;
        operand = *out;
        continue;
      }
      ir::Node node;
      node.op = s.op;
      node.operands = {operand};
      node.type = graph_.node(operand).type;
      node.loc = s.loc;
      node.arg_locs = s.arg_locs;
      if (ir::is_routing(node.op)) node.type.channels = routed_channels(node);
      operand = graph_.add(std::move(node));
    }
    return operand;
  }

  // A dynamics stage keyed or linked (docs/fx-language.md, "Side-chains and linking"): the
  // stage makes the gain from the key's level (or the input's), linked to one level when
  // asked, and the signal (delayed by a limiter's lookahead) is multiplied by that gain.
  std::optional<ir::NodeId> side_chain(const Step& s, ir::NodeId signal) {
    ir::NodeId level = s.key ? *s.key : signal;
    const int channels = graph_.node(signal).type.channels, key_channels = graph_.node(level).type.channels;
    // Linked, a key of any count is one level (its channels' max or mean), as it is when the
    // count is known only at binding (infer-types checks the linked level, of one channel).
    if (s.key && !s.link && channels != 0 && key_channels != 0 && key_channels != channels && key_channels != 1) {
      error(s.key_loc, "a side-chain key must have as many channels as the signal, or one: the signal has " +
                           channels_text(channels) + ", the key " + channels_text(key_channels));
      return std::nullopt;
    }
    auto add = [&](ir::Op op, std::vector<ir::NodeId> operands, int out_channels) {
      ir::Node node;
      node.op = std::move(op);
      node.operands = std::move(operands);
      node.type = graph_.node(signal).type;
      node.type.channels = out_channels;
      node.loc = s.loc;
      node.arg_locs = s.arg_locs;
      return graph_.add(std::move(node));
    };
    if (s.link) level = add(ir::Link{*s.link, 1}, {level}, 1);
    ir::Dynamics gain = std::get<ir::Dynamics>(s.op);
    gain.output_gain = true;
    level = add(gain, {level}, graph_.node(level).type.channels);
    if (gain.type == design::DynamicsType::limiter && gain.lookahead > 0)
      signal = add(ir::Delay{gain.lookahead, ir::DelayUnit::seconds}, {signal}, channels);
    return add(ir::Multiply{1}, {signal, level}, channels);
  }

  Value signal(std::optional<ir::NodeId> id) { return id ? signal(*id) : Value{}; }

  static Value signal(ir::NodeId id) {
    Value v;
    v.kind = Kind::signal;
    v.node = id;
    return v;
  }

  // A constant as a linear gain: plain, or dB with the unit.
  std::optional<double> linear(const Value& v) {
    const NumberExpr& n = v.number;
    if (n.unit == Unit::none) return n.value;
    if (n.unit == Unit::db) {
      double g = std::pow(10.0, n.value / 20);
      if (std::isfinite(g)) return g;
      error(v.loc, "a gain of " + written(n) + " is too large (10^(gain/20) overflows)");
      return std::nullopt;
    }
    error(v.loc, "expected a gain (a plain number, or a level in dB), found " + written(n) + " (" +
                     std::string(unit_quantity(n.unit)) + ")");
    return std::nullopt;
  }

  void chain_without_signal(const Value& v) {
    // A call of a function whose body reads `in` is a chain too: say why, at the function.
    if (v.steps.size() == 1 && v.steps[0].call) {
      const FnStmt& fn = *v.steps[0].call->fn;
      note(error(v.loc, "'" + fn.name + "' processes the signal piped into it (its body reads 'in'): write '" +
                            input_hint() + " | " + fn.name + "(...)'"),
           fn.name_loc, "'" + fn.name + "' is defined here");
      return;
    }
    error(v.loc, "this is a chain with no input signal; apply it to a signal with '" +
                     input_hint() + " | ...'");
  }

  std::string input_hint() const { return first_input_.empty() ? "x" : first_input_; }

  static std::string kind_text(Kind k) {
    switch (k) {
      case Kind::tuple:
        return "list of values";
      case Kind::signal:
        return "signal";
      case Kind::chain:
        return "chain";
      case Kind::constant:
        return "number";
      case Kind::error:
        break;
    }
    return "error";
  }

  static std::string channels_text(int c) {
    return std::to_string(c) + (c == 1 ? " channel" : " channels");
  }

  std::vector<std::string_view> known_names() const {
    std::vector<std::string_view> out;
    for (const auto& [name, binding] : names_) out.push_back(name);
    return out;
  }

  Diagnostic& error(const SourceLoc& loc, std::string message) {
    return diags_.error(loc, std::move(message), kCode);
  }
  static Diagnostic& note(Diagnostic& d, SourceLoc loc, std::string message) {
    d.notes.push_back({Severity::note, std::move(loc), std::move(message), {}, {}});
    return d;
  }

  const Ast& ast_;
  DiagnosticEngine& diags_;
  ir::Graph graph_;
  std::map<std::string, Binding> names_;         // names bound so far, to their values
  std::map<std::string, SourceLoc> defined_at_;  // every name claimed so far
  std::map<std::string, SourceLoc> graph_bound_at_;  // the names the file's statements bind
  std::map<std::string, SourceLoc> bound_at_;    // every binding in the file (step 1)
  std::optional<SourceLoc> graph_stmt_;
  // A name read before its binding (step 4).
  struct ForwardUse {
    std::string name;
    ir::NodeId placeholder = 0;
    SourceLoc loc;
    SourceLoc bound_at;
    int scope = 0;                     // the function call it was read in (0: the file)
    std::optional<ir::NodeId> target;  // the value it is bound to, once bound as a signal
  };
  std::map<std::string, const FnStmt*> functions_;  // by name, from the file and its imports
  std::set<const FnStmt*> broken_functions_;         // check_names reported their names
  std::vector<const FnStmt*> active_calls_;         // the calls being lowered, outermost first
  // Adds `by` to the lowering's depth for a scope's lifetime.
  struct DepthGuard {
    DepthGuard(int& counter, int amount) : depth(counter), by(amount) { depth += by; }
    ~DepthGuard() { depth -= by; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    int& depth;
    int by;
  };
  int eval_depth_ = 0;                               // eval() frames open (kMaxLoweringDepth)
  bool reported_depth_ = false;
  const std::vector<Stmt>* statements_ = nullptr;   // the statements of the current scope
  int scope_ = 0, scopes_ = 0;
  std::vector<ForwardUse> forward_uses_;
  std::size_t statement_ = 0;                          // the statement being lowered
  std::string first_input_;
  bool has_output_ = false;
};

}  // namespace

std::optional<ir::Graph> lower_to_ir(const Ast& ast, DiagnosticEngine& diags, bool ast_is_partial) {
  return Lowerer(ast, diags).run(ast_is_partial);
}

}  // namespace fxc::frontend

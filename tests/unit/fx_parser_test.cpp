// SPDX-License-Identifier: Apache-2.0
// The .fx parser: statements, expressions, precedence, arguments, recovery, and AST dumps.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

#include "frontend/ast_dump.h"
#include "frontend/fx_file.h"
#include "frontend/lexer.h"
#include "frontend/parser.h"
#include "support/strings.h"

namespace fxc::frontend {
namespace {

Ast parse_ok(std::string_view text) {
  DiagnosticEngine diags;
  std::optional<Ast> ast = parse_fx_source(text, "p.fx", diags);
  REQUIRE_MESSAGE(ast.has_value(), diags.str());
  return std::move(*ast);
}

// The value of the only binding or output in `text`.
const Expr& value_of(const Ast& ast, std::size_t index = 0) {
  const Stmt& s = ast.statements.at(index);
  if (const auto* b = std::get_if<BindingStmt>(&s.node)) return b->value;
  return std::get<OutputStmt>(s.node).value;
}

// A compact form of an expression: (op lhs rhs), name, number, call(args).
std::string shape(const Expr& e) {
  if (const auto* n = e.as<NameExpr>()) return n->name;
  if (const auto* n = e.as<NumberExpr>()) {
    std::string text = n->text;
    if (n->unit != Unit::none) text += std::string(unit_text(n->unit));
    return text;
  }
  if (const auto* s = e.as<StringExpr>()) return "\"" + s->value + "\"";
  if (const auto* l = e.as<ListExpr>()) {
    std::string out = "[";
    for (std::size_t i = 0; i < l->items.size(); ++i) out += (i ? " " : "") + shape(l->items[i]);
    return out + "]";
  }
  if (const auto* c = e.as<CallExpr>()) {
    std::string out = c->callee + "(";
    for (std::size_t i = 0; i < c->args.size(); ++i) {
      out += i ? " " : "";
      if (!c->args[i].keyword.empty()) out += c->args[i].keyword + "=";
      out += shape(*c->args[i].value);
    }
    return out + ")";
  }
  if (e.as<ErrorExpr>()) return "<error>";
  const auto& b = std::get<BinaryExpr>(e.node);
  return "(" + std::string(op_text(b.op)) + " " + shape(*b.lhs) + " " + shape(*b.rhs) + ")";
}

std::string shape_of(const std::string& expr) {
  Ast ast = parse_ok("y = " + expr + "\n");
  return shape(value_of(ast));
}

TEST_CASE("fx parser: every statement") {
  Ast ast = parse_ok(
      "graph vocal\ninput x : 2\ninput side\nwet = x | tanh()\noutput wet\noutput y = wet\n");
  REQUIRE(ast.statements.size() == 6);
  CHECK(ast.file == "p.fx");
  const auto& g = std::get<GraphStmt>(ast.statements[0].node);
  CHECK(g.name == "vocal");
  const auto& in = std::get<InputStmt>(ast.statements[1].node);
  CHECK(in.name == "x");
  CHECK(in.channels == 2);
  CHECK(in.channels_loc == SourceLoc{"p.fx", 2, 11});
  CHECK(std::get<InputStmt>(ast.statements[2].node).channels == 0);
  const auto& b = std::get<BindingStmt>(ast.statements[3].node);
  CHECK(b.name == "wet");
  CHECK(b.name_loc == SourceLoc{"p.fx", 4, 1});
  CHECK(shape(b.value) == "(| x tanh())");
  const auto& o1 = std::get<OutputStmt>(ast.statements[4].node);
  CHECK(o1.name.empty());
  CHECK(ast.statements[4].loc == SourceLoc{"p.fx", 5, 1});
  const auto& o2 = std::get<OutputStmt>(ast.statements[5].node);
  CHECK(o2.name == "y");
  CHECK(o2.name_loc == SourceLoc{"p.fx", 6, 8});
}

TEST_CASE("fx parser: ';' separates statements and may end a line") {
  Ast ast = parse_ok("input x; y = x | tanh(); output y;\n;\n");
  CHECK(ast.statements.size() == 3);
}

TEST_CASE("fx parser: precedence is | then * then + and -, all left-associative") {
  CHECK(shape_of("0.5 * x | tanh()") == "(* 0.5 (| x tanh()))");
  CHECK(shape_of("a + b - c") == "(- (+ a b) c)");
  CHECK(shape_of("a - b + c") == "(+ (- a b) c)");
  CHECK(shape_of("a | b | c") == "(| (| a b) c)");
  CHECK(shape_of("2 * a * 3") == "(* (* 2 a) 3)");
  CHECK(shape_of("0.7 * wet + 0.3 * (x | delay(5 ms))") ==
        "(+ (* 0.7 wet) (* 0.3 (| x delay(5ms))))");
  CHECK(shape_of("a + b * c | d") == "(+ a (* b (| c d)))");
}

TEST_CASE("fx parser: a '-' that starts an operand is the sign of a number") {
  CHECK(shape_of("-0.5 * x") == "(* -0.5 x)");
  CHECK(shape_of("-6 dB * x") == "(* -6dB x)");
  CHECK(shape_of("a - 0.5 * b") == "(- a (* 0.5 b))");
  CHECK(shape_of("a + -0.5 * b") == "(+ a (* -0.5 b))");
  CHECK(shape_of("a-1") == "(- a 1)");
  Ast ast = parse_ok("y = -6 dB * x\n");
  const auto& mul = std::get<BinaryExpr>(value_of(ast).node);
  CHECK(mul.lhs->loc == SourceLoc{"p.fx", 1, 5});
  CHECK(mul.lhs->as<NumberExpr>()->value == -6);
  CHECK(mul.op_loc == SourceLoc{"p.fx", 1, 11});
}

TEST_CASE("fx parser: calls with positional and keyword arguments, each with its location") {
  Ast ast = parse_ok("y = x | butter(4, 80 Hz, btype=highpass)\n");
  const auto& pipe = std::get<BinaryExpr>(value_of(ast).node);
  const Expr& call_expr = *pipe.rhs;
  CHECK(call_expr.loc == SourceLoc{"p.fx", 1, 9});
  const auto& call = std::get<CallExpr>(call_expr.node);
  CHECK(call.callee == "butter");
  REQUIRE(call.args.size() == 3);
  CHECK(call.args[0].keyword.empty());
  CHECK(call.args[0].loc() == SourceLoc{"p.fx", 1, 16});
  CHECK(call.args[1].value->loc == SourceLoc{"p.fx", 1, 19});
  CHECK(call.args[1].value->as<NumberExpr>()->unit == Unit::hz);
  CHECK(call.args[2].keyword == "btype");
  CHECK(call.args[2].loc() == SourceLoc{"p.fx", 1, 26});
  CHECK(call.args[2].value->loc == SourceLoc{"p.fx", 1, 32});
  CHECK(shape_of("tanh()") == "tanh()");
}

TEST_CASE("fx parser: argument values are numbers, words, strings and lists") {
  CHECK(shape_of("sos([[1, 0, 0, 1, -0.5, 0], [1, 2, 1, 1, 0, 0]])") ==
        "sos([[1 0 0 1 -0.5 0] [1 2 1 1 0 0]])");
  CHECK(shape_of("butter(4, 1 kHz, \"highpass\")") == "butter(4 1kHz \"highpass\")");
  CHECK(shape_of("clip(-1, hi=1)") == "clip(-1 hi=1)");
  // Extensions: a trailing comma, and an empty list (rejected later with a message).
  CHECK(shape_of("fir([0.5, 0.5,],)") == "fir([0.5 0.5])");
  CHECK(shape_of("fir([])") == "fir([])");
}

TEST_CASE("fx parser: continuation lines, comments and brackets over several lines") {
  Ast ast = parse_ok(
      "input x\n"
      "y = x |      # the rumble filter\n"
      "    butter(4,\n"
      "           80 Hz,   # the corner\n"
      "           highpass) |\n"
      "    tanh()\n"
      "z = y +\n"
      "    y -\n"
      "    x\n"
      "output z * 0.5\n");
  REQUIRE(ast.statements.size() == 4);
  CHECK(shape(value_of(ast, 1)) == "(| (| x butter(4 80Hz highpass)) tanh())");
  CHECK(shape(value_of(ast, 2)) == "(- (+ y y) x)");
}

TEST_CASE("fx parser: errors say what was expected, and parsing resumes at the next statement") {
  DiagnosticEngine diags;
  std::string text =
      "input x\n"
      "a = x | lowpass(1 kHz,, 0.7)\n"
      "b = x | * tanh()\n"
      "c = x | tanh() tanh()\n"
      "d x\n"
      "e = (x | tanh()\n"
      "output a\n";
  Ast ast = parse(lex(text, "p.fx", diags), "p.fx", diags);
  CHECK(diags.error_count() == 5);
  std::string out = diags.str();
  CHECK(out.find("p.fx:2:23: error: expected an argument") != std::string::npos);
  CHECK(out.find("p.fx:3:9: error: expected a stage after '|', found '*'") != std::string::npos);
  CHECK(out.find("p.fx:4:16: error: expected the end of the statement") != std::string::npos);
  CHECK(out.find("p.fx:5:3: error: expected '=' after 'd'") != std::string::npos);
  CHECK(out.find("p.fx:6:16: error: expected ')', found end of line") != std::string::npos);
  // Bindings whose value failed keep their name (with an error value); the output parsed.
  REQUIRE(ast.statements.size() == 6);
  CHECK(value_of(ast, 1).as<ErrorExpr>() != nullptr);
  CHECK(std::holds_alternative<OutputStmt>(ast.statements.back().node));
}

TEST_CASE("fx parser: more syntax errors") {
  struct Case {
    const char* text;
    const char* message;
  };
  for (Case c : {Case{"input : 2", "expected an input name after 'input', found ':'"},
                 Case{"input x : 0", "channel count must be a whole number of at least 1"},
                 Case{"input x : kHz", "expected a channel count after ':'"},
                 Case{"graph", "expected a graph name after 'graph', found end of file"},
                 Case{"outptu x", "found identifier 'outptu'"}, Case{"| x", "expected a statement"},
                 Case{"y = -x", "expected a number after the sign '-', found identifier 'x'"},
                 Case{"y = x |", "expected a stage after '|', found end of file"},
                 Case{"y = x +", "expected a signal after '+', found end of file"},
                 Case{"y =", "expected an expression after '=', found end of file"},
                 Case{"y = f(a b)", "expected ',' or ')' after an argument of 'f'"},
                 Case{"y = f(k=)", "expected a value for 'k'"},
                 Case{"y = f([1 2])", "expected ',' or ']' in the list"},
                 Case{"y = f(-a)", "expected a number after the sign '-'"}}) {
    INFO(c.text);
    DiagnosticEngine diags;
    CHECK_FALSE(parse_fx_source(c.text, "p.fx", diags).has_value());
    CHECK(diags.error_count() == 1);
    CHECK(diags.str().find(c.message) != std::string::npos);
  }
}

TEST_CASE("fx parser: the AST dumps as text, JSON and dot") {
  Ast ast = parse_ok("input x : 2\ny = 0.5 * x | butter(4, 80 Hz, btype=highpass)\noutput y\n");
  std::string text = ast_to_text(ast);
  CHECK(text ==
        "ast \"p.fx\"\n"
        "  input x channels=2 @1:1\n"
        "  binding y @2:1\n"
        "    multiply @2:9\n"
        "      number 0.5 @2:5\n"
        "      pipe @2:13\n"
        "        name x @2:11\n"
        "        call butter @2:15\n"
        "          arg #0 @2:22\n"
        "            number 4 @2:22\n"
        "          arg #1 @2:25\n"
        "            number 80 Hz @2:25\n"
        "          arg btype= @2:32\n"
        "            name highpass @2:38\n"
        "  output @3:1\n"
        "    name y @3:8\n");
  nlohmann::json j = ast_to_json(ast);
  CHECK(j["file"] == "p.fx");
  CHECK(j["statements"].size() == 3);
  CHECK(j["statements"][0]["channels"] == 2);
  const nlohmann::json& value = j["statements"][1]["value"];
  CHECK(value["kind"] == "binary");
  CHECK(value["op"] == "*");
  CHECK(value["rhs"]["rhs"]["callee"] == "butter");
  CHECK(value["rhs"]["rhs"]["args"][2]["keyword"] == "btype");
  CHECK(value["rhs"]["rhs"]["args"][1]["value"]["unit"] == "Hz");
  CHECK(value["loc"]["line"] == 2);
  std::string dot = ast_to_dot(ast);
  CHECK(dot.rfind("digraph ast {", 0) == 0);
  CHECK(dot.find("call butter\\n2:15") != std::string::npos);
  CHECK(dot.find("[label=\"btype\"]") != std::string::npos);
  CHECK(dot.back() == '\n');
  // Deterministic: the same tree prints the same text.
  CHECK(ast_to_text(parse_ok("input x : 2\ny = 0.5 * x | butter(4, 80 Hz, btype=highpass)\n"
                             "output y\n")) == text);
}


// Sources that would nest deeper than the passes after the parser can recurse: each is refused
// with one error instead of overflowing the stack, and the deepest accepted ones compile.
std::string repeat(std::string_view piece, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += piece;
  return out;
}
std::string errors_of(std::string_view text) {
  DiagnosticEngine diags;
  std::optional<ir::Graph> graph = compile_fx_source(text, "deep.fx", diags);
  CHECK_FALSE(graph.has_value());
  return diags.str();
}

TEST_CASE("fx parser: expressions deeper than kMaxExpressionDepth are one error, not a crash") {
  // A chain of n gains is n + 2 deep (each call holds its argument).
  const int deepest_chain = kMaxExpressionDepth - 2;
  SUBCASE("the deepest chain compiles, one more stage does not") {
    DiagnosticEngine diags;
    std::optional<ir::Graph> graph =
        compile_fx_source("input x\noutput x" + repeat(" | gain(1)", deepest_chain) + "\n", "deep.fx", diags);
    CHECK_MESSAGE(graph.has_value(), diags.str());
    std::string errors = errors_of("input x\noutput x" + repeat(" | gain(1)", deepest_chain + 1) + "\n");
    CHECK(errors.find("deep.fx:2:8: error: this expression nests more than 1000 levels deep [fx-parse]") == 0);
  }
  SUBCASE("parentheses, lists, sums and channel selections far past it") {
    for (const std::string& text :
         {"input x\noutput " + repeat("(", 100000) + "x" + repeat(")", 100000) + "\n",
          "input x\noutput x | fir(" + repeat("[", 100000) + "1" + repeat("]", 100000) + ")\n",
          "input x\noutput x" + repeat(" + x", 5000) + "\n",
          "input x : 2\noutput x" + repeat("[0:1]", 5000) + "\n"}) {
      std::string errors = errors_of(text);
      CHECK(errors.find("nests more than 1000 levels deep [fx-parse]") != std::string::npos);
      // Once per statement, whatever the depth, and the statements after it are still read.
      CHECK(errors.find("levels deep") == errors.rfind("levels deep"));
    }
    std::string two = errors_of("input x\ny = " + repeat("(", 2000) + "x" + repeat(")", 2000) + "\noutput " +
                                repeat("(", 2000) + "y" + repeat(")", 2000) + "\n");
    CHECK(two.find("deep.fx:2:") != std::string::npos);
    CHECK(two.find("deep.fx:3:") != std::string::npos);
  }
  SUBCASE("functions that call each other too deeply") {
    std::string text = "input x\n";
    for (int i = 0; i < 3000; ++i) text += "fn f" + std::to_string(i) + "() { return f" + std::to_string(i + 1) + "() }\n";
    text += "fn f3000() { return gain(1) }\noutput x | f0()\n";
    std::string errors = errors_of(text);
    CHECK(errors.find("this expression, with the functions it calls, nests more than 1500 levels deep [fx-lower]") !=
          std::string::npos);
  }
}

TEST_CASE("fx parser: a binary file given as a program is one error, named by its format") {
  struct Case {
    std::string text, message;
  };
  std::string wav("RIFF\x24\x00\x00\x00WAVEfmt ", 16);
  for (const Case& c : {Case{wav, "cannot read 'deep.fx': it is a WAV audio file, not a .fx program [fx-lex]"},
                        Case{std::string("input x\noutput x\n\0\x01", 20),
                             "cannot read 'deep.fx': it holds binary data (a NUL byte on line 3), not the text of a .fx "
                             "program [fx-lex]"}}) {
    std::string errors = errors_of(c.text);
    CHECK(errors == "error: " + c.message + "\n");
  }
  // A name that is also a signature is a program as ever.
  DiagnosticEngine diags;
  CHECK(compile_fx_source("input RIFF\noutput RIFF | gain(2)\n", "riff.fx", diags).has_value());
  // Binary data without a NUL byte (a compressed file): the lexer gives up on bytes that are
  // not UTF-8, and that is one error, not twenty reports of single bytes.
  std::string noise;
  std::uint32_t state = 12345;
  for (int i = 0; i < 4000; ++i) {
    state = state * 1664525u + 1013904223u;
    noise += static_cast<char>(1 + (state >> 24) % 255);
  }
  CHECK(errors_of("input x\n" + noise) ==
        "error: cannot read 'deep.fx': it holds binary data (the byte 0x" +
            hex_digits(static_cast<unsigned char>(noise[*first_invalid_utf8(noise)])) +
            " on line " + std::to_string(2 + std::count(noise.begin(), noise.begin() + *first_invalid_utf8(noise), '\n')) +
            " is not UTF-8), not the text of a .fx program [fx-lex]\n");
  // Text with a stray Latin-1 byte in a comment reads as before, and its other mistakes are
  // reported as they are, not as binary data.
  DiagnosticEngine latin1;
  CHECK(compile_fx_source("# caf\xe9 au lait\ninput x\noutput x\n", "latin1.fx", latin1).has_value());
  const std::string dollars = errors_of("# caf\xe9\ninput x\noutput x " + std::string(25, '$') + "\n");
  CHECK(dollars.find("binary") == std::string::npos);
  CHECK(dollars.find("unexpected character '$'") != std::string::npos);
}

TEST_CASE("graph, input and output bind names as any identifier does (the contract reserves no word)") {
  DiagnosticEngine diags;
  auto graph = compile_fx_source("input input\ngraph = input | gain(2)\noutput = graph | tanh()\noutput output\n",
                                 "kw.fx", diags);
  INFO(diags.str());
  REQUIRE(graph.has_value());
  CHECK(graph->size() == 4);  // input, gain, tanh, output
}

TEST_CASE("nearest_name: within a third of the word, else the one name of 4 or more characters it begins with") {
  const std::string_view names[] = {"butter", "bessel", "lowpass", "lowshelf", "gain"};
  CHECK(nearest_name("buter", names) == "butter");
  CHECK(nearest_name("butterworth", names) == "butter");
  CHECK(nearest_name("lowpassfilter", names) == "lowpass");
  CHECK(nearest_name("low", names) == std::nullopt);  // too short to say which
  CHECK(nearest_name("compressor", names) == std::nullopt);
  const std::string_view both[] = {"highpass", "highshelf"};
  CHECK(nearest_name("high", both) == std::nullopt);  // the start of two names: neither
  const std::string_view nested[] = {"fold", "folder"};
  CHECK(nearest_name("folderitemslist", nested) == std::nullopt);  // begins with both: ambiguous
}

TEST_CASE("first_invalid_utf8: RFC 3629's well-formed sequences, and where the first other byte is") {
  CHECK_FALSE(first_invalid_utf8("plain ascii"));
  CHECK_FALSE(first_invalid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\xb5"));  // é € and a 4-byte emoji
  CHECK(first_invalid_utf8("ab\xe9" "cd") == 2u);            // Latin-1
  CHECK(first_invalid_utf8("\xc0\xaf") == 0u);            // overlong '/'
  CHECK(first_invalid_utf8("x\xed\xa0\x80") == 1u);       // a surrogate
  CHECK(first_invalid_utf8("xy\xe2\x82") == 2u);          // cut short at the end
  CHECK(first_invalid_utf8("\xf4\x90\x80\x80") == 0u);   // past U+10FFFF
  CHECK(first_invalid_utf8("\x80") == 0u);                // a lone continuation byte
}

TEST_CASE("fx lexer: a run of unexpected characters stops after 20, and the echoed line stays printable") {
  std::string text = "input x\noutput x" + std::string(20000, '\x01') + "\n";
  std::string errors = errors_of(text);
  std::size_t unexpected = 0;
  for (std::size_t at = errors.find("unexpected character '"); at != std::string::npos;
       at = errors.find("unexpected character '", at + 1))
    ++unexpected;
  CHECK(unexpected == 20);
  CHECK(errors.find("20 unexpected characters: this does not look like a .fx program, so the rest of it is not read "
                    "[fx-lex]") != std::string::npos);
  // Source lines are shown around the column, at most 160 characters and the dots, control bytes as '?'.
  CHECK(errors.find('\x01') == std::string::npos);
  CHECK(errors.find("output x????") != std::string::npos);
  for (std::size_t start = 0, end; (end = errors.find('\n', start)) != std::string::npos; start = end + 1)
    CHECK(end - start <= 3 + 160 + 3);
}

}  // namespace
}  // namespace fxc::frontend

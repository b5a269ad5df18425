// SPDX-License-Identifier: Apache-2.0
#include "support/diagnostics.h"

#include <algorithm>
#include <ostream>
#include <sstream>

namespace fxc {
namespace {

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::note: return "note";
  }
  return "error";
}

const char* severity_colour(Severity s) {
  switch (s) {
    case Severity::error: return "\033[1;31m";
    case Severity::warning: return "\033[1;35m";
    case Severity::note: return "\033[1;36m";
  }
  return "";
}

// The 1-based line `line` of `text`, whose lines start at `starts`, without its newline.
std::string_view line_of(std::string_view text, const std::vector<std::size_t>& starts, std::uint32_t line) {
  if (line == 0 || line > starts.size()) return {};
  const std::size_t start = starts[line - 1];
  std::size_t end = text.find('\n', start);
  std::string_view l = text.substr(start, end == std::string_view::npos ? text.npos : end - start);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

}  // namespace

void DiagnosticEngine::add_source(const std::string& file, std::string text) {
  std::vector<std::size_t> starts{0};
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', nl + 1)) starts.push_back(nl + 1);
  line_starts_[file] = std::move(starts);
  sources_[file] = std::move(text);
}

Diagnostic& DiagnosticEngine::report(Diagnostic diagnostic) {
  if (diagnostic.severity == Severity::error) ++error_count_;
  diagnostics_.push_back(std::move(diagnostic));
  return diagnostics_.back();
}

void DiagnosticEngine::add_note_from(std::size_t first, const Diagnostic& note) {
  for (std::size_t i = first; i < diagnostics_.size(); ++i) diagnostics_[i].notes.push_back(note);
}

Diagnostic& DiagnosticEngine::error(SourceLoc loc, std::string message, std::string code) {
  return report({Severity::error, std::move(loc), std::move(message), std::move(code), {}});
}

Diagnostic& DiagnosticEngine::warning(SourceLoc loc, std::string message, std::string code) {
  return report({Severity::warning, std::move(loc), std::move(message), std::move(code), {}});
}

void DiagnosticEngine::clear() {
  diagnostics_.clear();
  error_count_ = 0;
}

void DiagnosticEngine::render_one(std::ostream& out, const Diagnostic& d, bool colour) const {
  const char* bold = colour ? "\033[1m" : "";
  const char* reset = colour ? "\033[0m" : "";
  std::string where = to_string(d.loc);
  if (!where.empty()) out << bold << where << ": " << reset;
  out << (colour ? severity_colour(d.severity) : "") << severity_name(d.severity) << ": " << reset
      << bold << d.message << reset;
  if (!d.code.empty()) out << " [" << d.code << "]";
  out << '\n';
  if (d.loc.valid()) {
    auto it = sources_.find(d.loc.file);
    if (it != sources_.end()) {
      std::string_view text = line_of(it->second, line_starts_.at(d.loc.file), d.loc.line);
      // A long line is shown around the column, and control characters as '?', so that a
      // binary file given as a program cannot flood or drive the terminal.
      constexpr std::size_t kShown = 160;
      // The column counts characters (UTF-8 continuation bytes are not counted): its byte.
      std::size_t col = 0;
      for (std::uint32_t chars = 1; col < text.size(); ++col) {
        if ((static_cast<unsigned char>(text[col]) & 0xC0) == 0x80) continue;
        if (chars++ == d.loc.col || d.loc.col == 0) break;
      }
      std::size_t first = text.size() > kShown && col > kShown / 2 ? std::min(col - kShown / 2, text.size() - kShown) : 0;
      std::string_view window = text.substr(first, kShown);
      std::string shown = first > 0 ? "..." : "";
      for (char c : window) shown += (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == '\x7f' ? '?' : c;
      if (first + window.size() < text.size()) shown += "...";
      out << shown << '\n';
      // Keep tabs so the caret lines up under the same column in a terminal.
      std::string pad = first > 0 ? "   " : "";
      for (std::size_t i = first; i < col && i < first + window.size(); ++i)
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) pad += text[i] == '\t' ? '\t' : ' ';
      out << pad << (colour ? "\033[1;32m" : "") << '^' << reset << '\n';
    }
  }
  for (const Diagnostic& note : d.notes) render_one(out, note, colour);
}

void DiagnosticEngine::render(std::ostream& out, bool colour) const {
  for (const Diagnostic& d : diagnostics_) render_one(out, d, colour);
}

std::string DiagnosticEngine::str() const {
  std::ostringstream out;
  render(out, false);
  return out.str();
}

void internal_error(const std::string& message, const char* file, int line) {
  throw InternalError("internal error (a bug in fxc, please report it): " + message + " at " +
                      file + ":" + std::to_string(line));
}

}  // namespace fxc

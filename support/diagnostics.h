// SPDX-License-Identifier: Apache-2.0
// User-facing diagnostics: errors, warnings and notes with source locations, rendered as
// `file:line:col: error: message [code]`, the source line, and a caret.
//
// User errors travel as values through a DiagnosticEngine; they are never thrown through the
// pipeline. Internal errors (bugs in fxc) are InternalError exceptions, caught at the top.
#pragma once

#include <iosfwd>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/source_location.h"

// InternalError (a bug in fxc, exit status 3) is public: the API lets it through.
#include <fxc/error.h>

namespace fxc {

enum class Severity { error, warning, note };

struct Diagnostic {
  Severity severity = Severity::error;
  SourceLoc loc;
  std::string message;
  std::string code;  ///< short machine-readable tag, e.g. "fx-parse"; may be empty
  std::vector<Diagnostic> notes;
};

class DiagnosticEngine {
 public:
  /// Registers a file's text so rendered diagnostics can show the offending line.
  void add_source(const std::string& file, std::string text);
  /// The texts add_source registered, by file.
  const std::map<std::string, std::string>& sources() const { return sources_; }

  /// Records a diagnostic; returns it so notes can be attached.
  Diagnostic& report(Diagnostic diagnostic);
  Diagnostic& error(SourceLoc loc, std::string message, std::string code = {});
  Diagnostic& warning(SourceLoc loc, std::string message, std::string code = {});
  /// Appends `note` to every diagnostic from position `first` on (the context they were
  /// found in, such as the call of a function whose body they are in).
  void add_note_from(std::size_t first, const Diagnostic& note);

  bool has_errors() const { return error_count_ > 0; }
  std::size_t error_count() const { return error_count_; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  /// Diagnostic `k` (0: the first reported), to attach a note found later.
  Diagnostic& diagnostic(std::size_t k) { return diagnostics_.at(k); }
  void clear();

  /// Writes every diagnostic, in the order reported.
  void render(std::ostream& out, bool colour = false) const;
  /// Every diagnostic rendered without colour.
  std::string str() const;

 private:
  void render_one(std::ostream& out, const Diagnostic& d, bool colour) const;

  std::vector<Diagnostic> diagnostics_;
  std::map<std::string, std::string> sources_;
  /// Where each source's lines start, so that a caret's line is found without reading the
  /// text from its start for every report (20,000 reports on a 40,000-line file took seconds).
  std::map<std::string, std::vector<std::size_t>> line_starts_;
  std::size_t error_count_ = 0;
};


/// Throws InternalError with the message and the C++ location, when `condition` is false.
#define FXC_INTERNAL_ASSERT(condition, message)                                       \
  do {                                                                                \
    if (!(condition))                                                                 \
      ::fxc::internal_error(std::string(message) + " (" #condition ")", __FILE__, __LINE__); \
  } while (0)

[[noreturn]] void internal_error(const std::string& message, const char* file, int line);

}  // namespace fxc

// SPDX-License-Identifier: Apache-2.0
// The one error type at the boundary of the public API.
#pragma once

#include <stdexcept>
#include <string>

namespace fxc {

/// A problem with what the caller gave: a graph that does not compile, a cutoff above
/// Nyquist, a signal with the wrong channel count, an unknown parameter, a value outside its
/// range, a file that cannot be read. Every function of the API reports these by throwing
/// Error (Processor::process, which cannot fail, excepted).
///
/// what() is the whole report as the command line prints it, every diagnostic with its
/// source line and caret; the accessors give the first error's parts.
class Error : public std::runtime_error {
 public:
  Error(std::string report, std::string message, std::string code = {}, std::string file = {},
        int line = 0, int column = 0, std::string coloured_report = {})
      : std::runtime_error(report),
        report_(std::move(report)),
        coloured_report_(std::move(coloured_report)),
        message_(std::move(message)),
        code_(std::move(code)),
        file_(std::move(file)),
        line_(line),
        column_(column) {}

  /// The report as what() gives it, or with ANSI colours (as the command line prints it on a
  /// terminal) when `colour` is true.
  const std::string& report(bool colour) const {
    return colour && !coloured_report_.empty() ? coloured_report_ : report_;
  }
  /// The first error's message, without location or code.
  const std::string& message() const { return message_; }
  /// Its machine-readable code ("fx-parse", "fxc-param", ...); may be empty.
  const std::string& code() const { return code_; }
  /// Where it was found: a .fx file (or the name given to source text, or a C++ file for
  /// the DSL); empty with line 0 when it has no place in a source.
  const std::string& file() const { return file_; }
  int line() const { return line_; }      ///< 1-based; 0 when there is no location
  int column() const { return column_; }  ///< 1-based; 0 when there is no location

 private:
  std::string report_, coloured_report_;
  std::string message_, code_, file_;
  int line_, column_;
};

/// A bug in fxc, not a user error: thrown when fxc finds itself inconsistent. The command
/// line reports it with exit status 3. Please report it.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace fxc

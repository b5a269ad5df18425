// SPDX-License-Identifier: Apache-2.0
// Outputs of a run (fxc run, and each file of a corpus), written under pending names and renamed into place together, so that a
// run that fails anywhere leaves every output path as it was.
#pragma once

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unistd.h>
#include <utility>
#include <vector>

#include "formats/signal_file.h"
#include "support/file_io.h"

namespace fxc::corpus {

/// How an output's pending name starts: ".fxc-pending-PID-N-NAME" (remove_abandoned_pending
/// parses it).
inline constexpr std::string_view kPendingPrefix = ".fxc-pending-";

/// NAME in an output's pending name: the output's file name, cut (name_within) where the
/// pending name and its temporary ("." + it + ".tmp-XXXXXX") would not fit in 255 bytes with
/// the longest PID (10 digits) and count (20).
inline std::string pending_name_part(const std::string& output_name) {
  return name_within(output_name, 255 - 12 - kPendingPrefix.size() - 10 - 1 - 20 - 1);
}

// Each output is first written beside its destination under a pending name (keeping its
// extension, which picks the format), and all are renamed only once every one was written:
// a run that fails at its second output leaves the first output as it was. A symbolic link is
// followed, so the link stays and the file it names is replaced. A device or a pipe
// (/dev/null, /dev/full, a FIFO) is written at once instead: it has no earlier content to
// keep, and a rename over it would replace the device itself.
class PendingOutputs {
 public:
  ~PendingOutputs() {
    std::error_code ignored;
    for (const File& file : files_) std::filesystem::remove(file.pending, ignored);
  }
  Expected<std::monostate, std::string> write(const std::string& path, const Signal& signal,
                                              std::optional<double> fs_hz, const WriteOptions& o) {
    return write_with(path, [&](const std::string& name) {
      WriteOptions options = o;
      if (name != path) options.at_link = AtLink::replace;  // a pending name: fxc's own
      return write_signal_file(name, signal, fs_hz, options);
    });
  }
  /// Bytes as they are (a stream state), under a pending name like the signals.
  Expected<std::monostate, std::string> write_bytes(const std::string& path, const std::string& bytes) {
    return write_to(path, [&](int fd) { return write_all(fd, bytes.data(), bytes.size()); });
  }
  /// An output whose bytes `write(fd)` writes to its open file (readable too), under a pending
  /// name like the signals: what a run writing its outputs a block at a time calls once per
  /// output, the next output's write_to (and at the last, the run) inside it. Errors name
  /// `path`; an error `write` returns is its reason ("cannot write 'PATH': " goes before it).
  template <class Write>
  Expected<std::monostate, std::string> write_to(const std::string& path, Write write) {
    return write_with(path, [&](const std::string& name) {
      return write_file_atomically(
          name, [&](int fd, const std::string&) { return write(fd); },
          name != path ? AtLink::replace : AtLink::follow);
    });
  }
  /// Renames every output written into place, all or none: an existing file is exchanged with
  /// its pending one (renameat2 RENAME_EXCHANGE), so that its old bytes stay under the pending
  /// name until every rename succeeded; when one fails (an immutable or bind-mounted file) the
  /// done ones are undone, and every output path is as it was. (A file system without the
  /// exchange gets plain renames, which cannot be undone.)
  Expected<std::monostate, std::string> commit();

 private:
  // `write(name)` writes the output under `name`: a pending one beside `path`, or `path` itself
  // for a device or a pipe.
  template <class Write>
  Expected<std::monostate, std::string> write_with(const std::string& path, Write write) {
    namespace fs = std::filesystem;
    const fs::path target = written_path(path);
    std::error_code error;
    // Anything but a regular file or a new name is written (or refused) where it is, never
    // replaced by a rename: a device or a pipe in place, a directory or a socket refused.
    fs::file_type type = fs::status(target, error).type();
    // Links that lead round in a loop: renamed over, the link would become a file.
    if (error == std::errc::too_many_symbolic_link_levels)
      return Unexpected{"cannot write '" + path + "': " + error.message()};
    if (type != fs::file_type::regular && type != fs::file_type::not_found && type != fs::file_type::none)
      return write(path);
    // The number keeps two outputs of one name (in a batch, through links; the files of a
    // corpus written by several threads) apart.
    static std::atomic<unsigned long long> written{0};
    std::string pending = (target.parent_path() / (std::string(kPendingPrefix) + std::to_string(getpid()) + "-" +
                                                   std::to_string(written++) + "-" +
                                                   pending_name_part(fs::path(path).filename().string())))
                              .string();
    UnfinishedFile unfinished(pending);  // listed before it exists: an interrupt removes it
    auto ok = write(pending);
    if (!ok) {
      // The message names the file the user gave, not the pending one.
      std::string message = ok.error(), prefix = "cannot write '" + pending + "'";
      if (message.rfind(prefix, 0) == 0) message = "cannot write '" + path + "'" + message.substr(prefix.size());
      return Unexpected{message};
    }
    if (type == fs::file_type::regular)
      if (auto kept = keep_access(target.string(), pending); !kept) return Unexpected{"cannot write '" + path + "': " + kept.error()};
    files_.push_back({pending, target.string(), path, std::move(unfinished)});
    return std::monostate{};
  }
  struct File {
    std::string pending;  ///< the name it is written under
    std::string target;   ///< where it is renamed to (a symbolic link's target)
    std::string path;     ///< as the user gave it, for messages
    UnfinishedFile unfinished;  ///< the pending name, listed until the output is placed
  };
  std::vector<File> files_;
};

}  // namespace fxc::corpus

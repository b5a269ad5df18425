// SPDX-License-Identifier: Apache-2.0
// Outputs of a run (fxc run, and each file of a corpus), written under pending names and renamed into place together, so that a
// run that fails anywhere leaves every output path as it was.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
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
    return write_with(path, [&](const std::string& name) {
      return write_file_atomically(
          name, [&](int fd, const std::string&) { return write_all(fd, bytes.data(), bytes.size()); },
          name != path ? AtLink::replace : AtLink::follow);
    });
  }
  /// Renames every output written into place, all or none: an existing file is exchanged with
  /// its pending one (renameat2 RENAME_EXCHANGE), so that its old bytes stay under the pending
  /// name until every rename succeeded; when one fails (an immutable or bind-mounted file) the
  /// done ones are undone, and every output path is as it was. (A file system without the
  /// exchange gets plain renames, which cannot be undone.)
  Expected<std::monostate, std::string> commit() {
    enum class How { exchanged, created, replaced };  // replaced: a plain rename, not undone
    std::vector<std::pair<const File*, How>> placed;
    auto undo = [&] {
      for (auto it = placed.rbegin(); it != placed.rend(); ++it) {
        const File& f = *it->first;
        if (it->second == How::exchanged)
          ::renameat2(AT_FDCWD, f.pending.c_str(), AT_FDCWD, f.target.c_str(), RENAME_EXCHANGE);
        else if (it->second == How::created)
          ::rename(f.target.c_str(), f.pending.c_str());  // removed with the pending ones
      }
    };
    // No interrupt between the first exchange and the last (or the undo): its handler removes
    // pending names, which hold the replaced files' old bytes once exchanged.
    sigset_t interrupts, before;
    sigemptyset(&interrupts);
    for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&interrupts, signal_number);
    pthread_sigmask(SIG_BLOCK, &interrupts, &before);
    struct Unblock {
      sigset_t* mask;
      ~Unblock() { pthread_sigmask(SIG_SETMASK, mask, nullptr); }
    } unblock{&before};
    for (const File& file : files_) {
      // The exchange, unlike a rename, would also take a directory made at the name since
      // write() looked: it would end up under the pending name.
      struct stat there {};
      if (::lstat(file.target.c_str(), &there) == 0 && S_ISDIR(there.st_mode)) {
        undo();
        return Unexpected{"cannot write '" + file.path + "': it is a directory"};
      }
      if (::renameat2(AT_FDCWD, file.pending.c_str(), AT_FDCWD, file.target.c_str(), RENAME_EXCHANGE) == 0) {
        placed.emplace_back(&file, How::exchanged);
        continue;
      }
      int error = errno;
      // No file there yet (ENOENT), or no exchange on this file system: a rename.
      if (error == ENOENT || error == EINVAL || error == ENOSYS || error == EOPNOTSUPP) {
        struct stat st {};
        const How how = ::lstat(file.target.c_str(), &st) == 0 ? How::replaced : How::created;
        if (::rename(file.pending.c_str(), file.target.c_str()) == 0) {
          placed.emplace_back(&file, how);
          continue;
        }
        error = errno;
      }
      undo();
      return Unexpected{"cannot write '" + file.path + "': " + std::strerror(error)};
    }
    // Done: what the pending names hold now is the replaced files' old bytes.
    for (const auto& [file, how] : placed)
      if (how == How::exchanged) ::unlink(file->pending.c_str());
    files_.clear();
    return std::monostate{};
  }

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
    if (type != fs::file_type::regular && type != fs::file_type::not_found && type != fs::file_type::none)
      return write(path);
    // The number keeps two outputs of one name (in a batch, through links; the files of a
    // corpus written by several threads) apart.
    static std::atomic<unsigned long long> written{0};
    std::string pending = (target.parent_path() / (std::string(kPendingPrefix) + std::to_string(getpid()) + "-" +
                                                   std::to_string(written++) + "-" +
                                                   fs::path(path).filename().string()))
                              .string();
    UnfinishedFile unfinished(pending);  // listed before it exists: an interrupt removes it
    auto ok = write(pending);
    if (!ok) {
      // The message names the file the user gave, not the pending one.
      std::string message = ok.error(), prefix = "cannot write '" + pending + "'";
      if (message.rfind(prefix, 0) == 0) message = "cannot write '" + path + "'" + message.substr(prefix.size());
      return Unexpected{message};
    }
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

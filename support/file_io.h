// SPDX-License-Identifier: Apache-2.0
// Files written whole or not at all, and read whole, with the system's reasons in the errors:
// what signal outputs, saved states and kernel-cache entries are written with.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <variant>

#include "support/expected.h"

namespace fxc {

/// What can be known about writing `path` before writing it: not a directory, and its
/// directory exists (one that cannot be looked into is left for the write to report). Errors
/// read "cannot write 'PATH': REASON".
Expected<std::monostate, std::string> check_write_place(const std::string& path);

/// What writing a name that is a symbolic link does.
enum class AtLink {
  /// Replaces the file the link leads to and keeps the link (a user's output: a link made to
  /// send it elsewhere); a device or a pipe there is written in place.
  follow,
  /// Replaces the link itself, never writing anywhere else: names fxc makes for its own files
  /// (kernel-cache entries, pending outputs), where a link found is a stray or a trap and
  /// following it would overwrite a file that is none of the run's.
  replace,
};

/// Fills a new file beside `path` through `write` (given the open descriptor and the temporary
/// file's name), flushes it to disk and renames it over `path`. If `write` or anything after
/// it fails, the temporary file is removed and `path` is left as it was. `write` returns the
/// reason on failure; the result's message is "cannot write 'PATH': REASON".
Expected<std::monostate, std::string> write_file_atomically(
    const std::string& path,
    const std::function<Expected<std::monostate, std::string>(int fd, const std::string& temp_path)>& write,
    AtLink at_link = AtLink::follow);

/// Where writing `path` puts the bytes: `path` itself, or the name its symbolic links lead to
/// (followed one by one, the last relative to its link's directory), whether or not that file
/// exists yet: a link made in advance to send an output elsewhere is kept, not replaced by the
/// output. A chain of more than 40 links (a loop) is left as it is: the write replaces the
/// link named.
std::filesystem::path written_path(const std::string& path);

/// The file `path` reaches: absolute, with `.`, `..` and symbolic links resolved as far as it
/// exists. Two names of one file (`a.wav`, `./a.wav`, a link to it) give the same string.
std::string file_identity(const std::string& path);

/// What a whole read takes besides regular files. A device other than a terminal is never read
/// whole (/dev/zero would fill the memory), nor a directory.
enum class AlsoRead {
  nothing,              ///< kernel-cache entries: anything else there is damage
  pipes,                ///< a FIFO or a socket (process substitution, <(...))
  pipes_and_terminals,  ///< and a terminal: a graph typed at /dev/stdin
};

/// The whole of a file, as bytes. Errors read "cannot read 'PATH': REASON"; a FIFO is waited
/// on for a writer, as any reader of one does.
Expected<std::string, std::string> read_whole_file(const std::string& path, AlsoRead also = AlsoRead::pipes);

/// A file being written under a name of fxc's own (a temporary or a pending name), listed for
/// the whole of its life so that remove_unfinished_files() can take it away: an interrupted
/// command (Ctrl-C) left hundreds of megabytes of half-written hidden files. At most 256 at a
/// time are listed; others are simply not (removing them is a courtesy, not a guarantee).
class UnfinishedFile {
 public:
  UnfinishedFile() = default;
  explicit UnfinishedFile(const std::string& path);
  UnfinishedFile(const UnfinishedFile&) = delete;
  UnfinishedFile& operator=(const UnfinishedFile&) = delete;
  UnfinishedFile(UnfinishedFile&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }
  UnfinishedFile& operator=(UnfinishedFile&& other) noexcept;
  ~UnfinishedFile() { finish(); }
  /// The file was renamed into place or removed: no longer listed.
  void finish();

 private:
  int slot_ = -1;
};

/// `name` (a file name) in at most `max_bytes` bytes, for a name of fxc's own made from it (a
/// temporary, a pending output): a longer one keeps its start, cut at a character's boundary,
/// then "~", 8 hex digits of the whole name's hash, and its extension (which picks the format). Names of 240-255 bytes, legal
/// themselves, failed with "File name too long" because the names made from them were longer.
std::string name_within(const std::string& name, std::size_t max_bytes);

/// Removes every file listed as unfinished. Async-signal-safe.
void remove_unfinished_files() noexcept;

/// The whole of a handler of SIGINT, SIGTERM or SIGHUP (the fxc command installs one): removes
/// every file listed as unfinished, then ends the process by the signal's default action, as
/// it would have ended (the shell sees the signal's status). While outputs are being placed
/// (InterruptsDeferred), the last placement to end does this instead, so that a placement is
/// all or none whichever thread the signal reaches: a thread's signal mask covers only that
/// thread, and another thread's handler removed the pending names that held the replaced
/// files' old bytes. Async-signal-safe.
void end_interrupted_process(int signal_number) noexcept;

/// For its lifetime, process-wide, an interrupt waits (end_interrupted_process): for the renames
/// that place a run's outputs, which take milliseconds. Made after an interrupt, it does not
/// return: the process ends when the last placement under way does (or at once, with none).
class InterruptsDeferred {
 public:
  InterruptsDeferred() noexcept;
  ~InterruptsDeferred();
  InterruptsDeferred(const InterruptsDeferred&) = delete;
  InterruptsDeferred& operator=(const InterruptsDeferred&) = delete;
};

/// Writes all `size` bytes to `fd`, resuming after short writes and interrupted calls.
/// Returns the system's reason on failure (e.g. "No space left on device").
Expected<std::monostate, std::string> write_all(int fd, const void* data, std::size_t size);

/// Gives `replacement` the permission bits and, where the writer may, the group of `existing`,
/// the file it is about to be renamed over: a private recording processed in place stays
/// private. The owner is whoever writes, as for any new file. Errors are the system's words.
Expected<std::monostate, std::string> keep_access(const std::string& existing, const std::string& replacement);

}  // namespace fxc

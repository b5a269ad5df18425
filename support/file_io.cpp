// SPDX-License-Identifier: Apache-2.0
#include "support/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace fxc {
namespace {

Unexpected<std::string> cannot_write(const std::string& path, const std::string& reason) {
  return Unexpected{"cannot write '" + path + "': " + reason};
}

}  // namespace

std::string name_within(const std::string& name, std::size_t max_bytes) {
  if (name.size() <= max_bytes) return name;
  // The whole name's hash after the "~": two names alike in their first bytes stay apart (an
  // abandoned pending file is found by its output's cut name; another output's must not match).
  std::uint32_t hash = 2166136261u;  // FNV-1a
  for (unsigned char c : name) hash = (hash ^ c) * 16777619u;
  char tag[10];
  std::snprintf(tag, sizeof tag, "~%08x", static_cast<unsigned>(hash));
  std::string extension = std::filesystem::path(name).extension().string();
  if (extension.size() + 10 > max_bytes) extension.clear();
  std::size_t keep = max_bytes - extension.size() - 9;
  // Not inside a UTF-8 character: back to the byte that starts one.
  while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;
  return name.substr(0, keep) + tag + extension;
}

namespace {

// Six random characters: enough that guessing collisions never matter, since O_EXCL retries.
std::string random_suffix() {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<std::size_t> pick(0, sizeof kChars - 2);
  std::string s(6, ' ');
  for (char& c : s) c = kChars[pick(rng)];
  return s;
}

// The unfinished files' names, for a signal handler: fixed slots, no allocation, no lock.
struct UnfinishedSlot {
  std::atomic<int> state{0};              // 0 free, 1 being filled, 2 listed
  std::atomic<unsigned> generation{0};    // one more at each filling
  char path[4096];
};
UnfinishedSlot unfinished_slots[256];

// InterruptsDeferred's count, and the interrupt that came meanwhile (0: none).
std::atomic<int> placements{0};
std::atomic<int> deferred_signal{0};
// Other threads go on while an interrupt's handler removes the unfinished files (a corpus
// run's jobs): a temporary or pending file one of them made after the handler looked stayed
// behind, and a write whose temporary the handler took failed with a message. So `ending` is
// set before the files are removed, and each step that makes such a file appear (a create, a
// rename: MakingFile) is counted: the handler waits for the steps under way, and a step that
// begins or ends once the process is ending removes what is unfinished (its own file among it)
// and waits for the signal to end the process instead of going on.
std::atomic<bool> ending{false};
std::atomic<int> making{0};
std::atomic<int> ending_signal{0};
// This thread is inside a MakingFile (a handler may be: so volatile sig_atomic_t, what a
// handler may share with the thread it interrupts), and an interrupt's handler left the end to
// its step. making_here covers the count on both sides: set before the increment, cleared after
// the decrement.
thread_local volatile std::sig_atomic_t making_here = 0;
thread_local volatile std::sig_atomic_t end_here = 0;

void remove_unfinished_files_and_end(int signal_number) noexcept;

// Called inside a step (counted) or after a write (not).
[[noreturn]] void remove_unfinished_files_and_wait(bool counted) noexcept {
  remove_unfinished_files();
  if (counted) making.fetch_sub(1);
  making_here = 0;
  for (;;) ::pause();
}

class MakingFile {
 public:
  MakingFile() noexcept {
    making_here = 1;
    making.fetch_add(1);
    // A handler that came since making_here was set left the end to this step (end_here).
    if (ending.load() && !end_here) remove_unfinished_files_and_wait(true);
  }
  ~MakingFile() {
    if (ending.load() && !end_here) remove_unfinished_files_and_wait(true);
    making.fetch_sub(1);
    making_here = 0;
    if (end_here) remove_unfinished_files_and_end(ending_signal.load());
  }
  MakingFile(const MakingFile&) = delete;
  MakingFile& operator=(const MakingFile&) = delete;
};

void remove_unfinished_files_and_end(int signal_number) noexcept {
  ending.store(true);
  if (making_here && !end_here) {
    // The signal came into a step of this thread: whether its file exists yet is not known
    // here, so the step ends the process when it is done (~MakingFile). A second signal ends
    // it at once.
    ending_signal.store(signal_number);
    end_here = 1;
    return;
  }
  remove_unfinished_files();
  // The steps under way (a system call each) end in microseconds; a file system that hangs
  // one does not hold the interrupt longer than a second.
  const int mine = making_here ? 1 : 0;
  for (int waited = 0; making.load() > mine && waited < 10000; ++waited) {
    struct timespec pause_100us {0, 100000};
    ::nanosleep(&pause_100us, nullptr);
  }
  remove_unfinished_files();
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(signal_number, &default_action, nullptr);
  ::raise(signal_number);
}

// Owns the temporary file until it is renamed: any early return or exception removes it.
class TempFile {
 public:
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }

  /// Creates `.NAME.tmp-XXXXXX` in `dir`; returns errno on failure.
  int create(const std::filesystem::path& dir, const std::string& name) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      // "." and ".tmp-XXXXXX": 12 bytes more than the name, within a file name's 255.
      std::string candidate = (dir / ("." + name_within(name, 255 - 12) + ".tmp-" + random_suffix())).string();
      MakingFile making_it;  // created and listed before an interrupt's removal, or not at all
      // 0666 rather than mkstemp's 0600, so the umask decides, as for any newly created file.
      int fd = ::open(candidate.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) {
        fd_ = fd;
        path_ = std::move(candidate);
        unfinished_ = UnfinishedFile(path_);
        return 0;
      }
      if (errno != EEXIST) return errno;
    }
    return EEXIST;
  }

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  /// Flushes to disk and closes; returns errno on failure. Late write errors (NFS, a full
  /// disk with delayed allocation) surface here, not in write().
  int sync_and_close() {
    int err = ::fsync(fd_) == 0 ? 0 : errno;
    int closed = ::close(fd_);
    fd_ = -1;
    if (err == 0 && closed != 0) err = errno;
    return err;
  }

  /// Renames over `target`; afterwards the destructor leaves the file alone.
  int commit(const std::string& target) {
    MakingFile making_it;  // a pending name appears here
    if (::rename(path_.c_str(), target.c_str()) != 0) return errno;
    path_.clear();
    unfinished_.finish();
    return 0;
  }

 private:
  int fd_ = -1;
  std::string path_;
  // Listed once created (not before: a name O_EXCL refused is someone else's), unlisted once
  // renamed, or when destroyed, just after the destructor's body removed the file.
  UnfinishedFile unfinished_;
};

std::string creation_error(int err, const std::filesystem::path& dir) {
  std::error_code error;
  // ENOENT also comes from a directory that exists but takes no new files (/proc).
  if (err == ENOENT && std::filesystem::is_directory(dir.empty() ? "." : dir, error))
    return "no file can be created in '" + (dir.empty() ? std::string(".") : dir.string()) + "' (" +
           std::strerror(err) + ")";
  if (err == ENOENT) return "directory '" + dir.string() + "' does not exist";
  if (err == ENOTDIR) return "'" + dir.string() + "' is not a directory";
  return std::strerror(err);
}

// Makes the rename itself durable; a failure here loses nothing already visible, so it is
// not reported.
void sync_directory(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

UnfinishedFile::UnfinishedFile(const std::string& path) {
  if (path.size() >= sizeof(UnfinishedSlot::path)) return;
  for (int k = 0; k < static_cast<int>(std::size(unfinished_slots)); ++k) {
    int free = 0;
    UnfinishedSlot& slot = unfinished_slots[k];
    if (!slot.state.compare_exchange_strong(free, 1)) continue;
    slot.generation.fetch_add(1);
    std::memcpy(slot.path, path.c_str(), path.size() + 1);
    slot.state.store(2);
    slot_ = k;
    return;
  }
}

UnfinishedFile& UnfinishedFile::operator=(UnfinishedFile&& other) noexcept {
  if (this != &other) {
    finish();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

void UnfinishedFile::finish() {
  if (slot_ >= 0) unfinished_slots[slot_].state.store(0);
  slot_ = -1;
}

void remove_unfinished_files() noexcept {
  // Another thread may free a slot and fill it again while this reads it: the name is copied,
  // and removed only if the slot still lists the same filling (no torn mixture of two names).
  char path[sizeof(UnfinishedSlot::path)];
  for (UnfinishedSlot& slot : unfinished_slots) {
    const unsigned generation = slot.generation.load();
    if (slot.state.load() != 2) continue;
    std::memcpy(path, slot.path, sizeof path);
    path[sizeof path - 1] = '\0';
    if (slot.state.load() == 2 && slot.generation.load() == generation) ::unlink(path);
  }
}

void end_interrupted_process(int signal_number) noexcept {
  // Stored before the count is read, as InterruptsDeferred counts before it reads this: one
  // of the two sees the other, so a placement either defers this or does not begin.
  deferred_signal.store(signal_number);
  if (placements.load() > 0) return;
  remove_unfinished_files_and_end(signal_number);
}

InterruptsDeferred::InterruptsDeferred() noexcept {
  placements.fetch_add(1);
  // An interrupt came first: nothing is placed, and nothing more is said. The last placement
  // under way ends the process, or this, when none is.
  if (int signal_number = deferred_signal.load(); signal_number != 0) {
    if (placements.fetch_sub(1) == 1) remove_unfinished_files_and_end(signal_number);
    for (;;) ::pause();
  }
}

InterruptsDeferred::~InterruptsDeferred() {
  if (placements.fetch_sub(1) == 1)
    if (int signal_number = deferred_signal.load(); signal_number != 0) remove_unfinished_files_and_end(signal_number);
}

Expected<std::monostate, std::string> check_write_place(const std::string& path) {
  std::error_code error;
  std::filesystem::path dir = written_path(path).parent_path();
  if (std::filesystem::is_directory(path, error)) return cannot_write(path, "it is a directory");
  if (!dir.empty() && !std::filesystem::is_directory(dir, error) && error != std::errc::permission_denied)
    return cannot_write(path, creation_error(std::filesystem::exists(dir, error) ? ENOTDIR : ENOENT, dir));
  return std::monostate{};
}

Expected<std::monostate, std::string> write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    // Linux moves at most about 2 GiB per call; smaller pieces keep the loop honest elsewhere.
    std::size_t piece = std::min<std::size_t>(size, std::size_t{1} << 30);
    ssize_t n = ::write(fd, p, piece);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Unexpected{std::string(std::strerror(errno))};
    }
    if (n == 0) return Unexpected{std::string("the write made no progress")};
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return std::monostate{};
}

Expected<std::string, std::string> read_whole_file(const std::string& path, AlsoRead also) {
  auto fail = [&](const std::string& reason) { return Unexpected{"cannot read '" + path + "': " + reason}; };
  // A FIFO is opened waiting for its writer, as any reader does (and never opened twice: a
  // second open lost what the first had let the writer put in it); anything else without
  // waiting, to see what it is before reading (a FIFO that appears in its place meanwhile
  // opens at once, and reads as it is).
  struct stat named {};
  const bool fifo = ::stat(path.c_str(), &named) == 0 && S_ISFIFO(named.st_mode) && also != AlsoRead::nothing;
  // This process's own descriptor (/dev/stdin, /dev/fd/N, /proc/self/fd/N) is read as it is:
  // opened again, a FIFO whose writer has finished would wait for another writer forever.
  int own = -1;
  if (path == "/dev/stdin") own = 0;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"})
    if (path.rfind(prefix, 0) == 0 && path.size() > std::strlen(prefix) &&
        path.find_first_not_of("0123456789", std::strlen(prefix)) == std::string::npos)
      own = std::atoi(path.c_str() + std::strlen(prefix));
  int fd = fifo && own >= 0 && ::fcntl(own, F_GETFD) != -1
               ? ::fcntl(own, F_DUPFD_CLOEXEC, 0)
               : ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (fifo ? 0 : O_NONBLOCK));
  if (fd < 0) return fail(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return fail(std::strerror(err));
  }
  const bool pipe = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
  const bool terminal = S_ISCHR(st.st_mode) && ::isatty(fd);
  std::string reason = S_ISDIR(st.st_mode)                                               ? "it is a directory"
                       : S_ISREG(st.st_mode)                                             ? ""
                       : pipe && also != AlsoRead::nothing                               ? ""
                       : terminal && also == AlsoRead::pipes_and_terminals               ? ""
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "it is a device, not a file"
                                                                    : "not a regular file";
  if (!reason.empty()) {
    ::close(fd);
    return fail(reason);
  }
  // Reads wait from here on (for a terminal's lines, a socket's bytes).
  if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
    const int err = errno;
    ::close(fd);
    return fail(std::strerror(err));
  }
  std::string bytes;
  if (S_ISREG(st.st_mode)) bytes.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return fail(std::strerror(err));
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return bytes;
}

Expected<std::monostate, std::string> keep_access(const std::string& existing, const std::string& replacement) {
  struct stat st {};
  if (::stat(existing.c_str(), &st) != 0) return Unexpected{std::string(std::strerror(errno))};
  // A group the writer is not in cannot be given: the writer's stays. Before the mode, which a
  // change of group may clear bits of.
  [[maybe_unused]] const int group_given = ::chown(replacement.c_str(), static_cast<uid_t>(-1), st.st_gid);
  if (::chmod(replacement.c_str(), st.st_mode & 0777) != 0) return Unexpected{std::string(std::strerror(errno))};
  return std::monostate{};
}

namespace {

Expected<std::monostate, std::string> write_file_now(
    const std::string& path,
    const std::function<Expected<std::monostate, std::string>(int fd, const std::string& temp_path)>& write,
    AtLink at_link) {
  // Through a symbolic link to the file it names, so the link survives the rename; or over the
  // link itself (the rename replaces a name, never what it leads to).
  const std::filesystem::path target = at_link == AtLink::follow ? written_path(path) : std::filesystem::path(path);
  std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") return cannot_write(path, "not a file name");
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";

  // Found now rather than at the rename, after all the work.
  struct stat st {};
  const bool exists = (at_link == AtLink::follow ? ::stat(target.c_str(), &st) : ::lstat(target.c_str(), &st)) == 0;
  // Links that lead round in a loop: written over, the link would become a file.
  if (!exists && errno == ELOOP) return cannot_write(path, std::strerror(ELOOP));
  if (exists && S_ISDIR(st.st_mode)) return cannot_write(path, "it is a directory");
  // A device or a pipe (/dev/null, /dev/full, a FIFO) is written in place: a rename would
  // replace the device itself (as root it can), and there is no earlier content to keep. (Not
  // at a name of fxc's own, where whatever is there is replaced.)
  const bool replace_any = at_link == AtLink::replace;
  if (exists && !replace_any && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return cannot_write(path, std::strerror(errno));
    auto written = write(fd, target.string());
    int closed = ::close(fd) == 0 ? 0 : errno;
    if (!written) return cannot_write(path, written.error());
    if (closed) return cannot_write(path, std::strerror(closed));
    return std::monostate{};
  }
  if (exists && !replace_any && !S_ISREG(st.st_mode)) return cannot_write(path, "it is not a regular file");

  TempFile temp;
  if (int err = temp.create(dir, name)) return cannot_write(path, creation_error(err, dir));
  if (exists && !replace_any)
    if (auto kept = keep_access(target.string(), temp.path()); !kept) return cannot_write(path, kept.error());
  auto written = write(temp.fd(), temp.path());
  if (!written) return cannot_write(path, written.error());
  if (int err = temp.sync_and_close()) return cannot_write(path, std::strerror(err));
  if (int err = temp.commit(target.string())) return cannot_write(path, std::strerror(err));
  sync_directory(dir);
  return std::monostate{};
}

}  // namespace

Expected<std::monostate, std::string> write_file_atomically(
    const std::string& path,
    const std::function<Expected<std::monostate, std::string>(int fd, const std::string& temp_path)>& write,
    AtLink at_link) {
  auto written = write_file_now(path, write, at_link);
  // A write that failed because an interrupt took its temporary says nothing.
  if (ending.load()) remove_unfinished_files_and_wait(false);
  return written;
}

std::filesystem::path written_path(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path target(path);
  std::error_code error;
  for (int links = 0; fs::is_symlink(fs::symlink_status(target, error)); ++links) {
    if (links == 40) return fs::path(path);
    fs::path next = fs::read_symlink(target, error);
    if (error) return fs::path(path);
    // Joined, not normalised: `..` after a directory that is itself a link is the kernel's to
    // resolve (the link target's parent), not the text's.
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return target;
}

// weakly_canonical leaves a relative name that does not exist as it is: the absolute path first.
// A link to a file not yet written is followed by hand (written_path): weakly_canonical stops
// at a name that leads nowhere.
std::string file_identity(const std::string& path) {
  std::error_code error;
  auto absolute = std::filesystem::absolute(written_path(path), error);
  if (error) return path;
  auto canonical = std::filesystem::weakly_canonical(absolute, error);
  return (error ? absolute.lexically_normal() : canonical).string();
}

}  // namespace fxc

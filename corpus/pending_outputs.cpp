// SPDX-License-Identifier: Apache-2.0
#include "corpus/pending_outputs.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace fxc::corpus {

Expected<std::monostate, std::string> PendingOutputs::commit() {
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
  InterruptsDeferred deferred;
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

}  // namespace fxc::corpus

// SPDX-License-Identifier: Apache-2.0
// The input files of a corpus run: glob patterns, directories and plain paths expanded to one
// sorted list, and that list split into shards for job arrays.
#pragma once

#include <string>
#include <vector>

#include "support/expected.h"

namespace fxc::corpus {

/// One input of a corpus, and where it sits under the root it was found from.
struct InputFile {
  std::string path;          ///< as it can be opened: the root joined with the relative path
  std::string relative_dir;  ///< its directory relative to its root: "" or "a/b" (no trailing '/')

  friend bool operator==(const InputFile&, const InputFile&) = default;
};

/// Why the file at `path` cannot be read as a signal (a symbolic link to nothing, a FIFO, a
/// socket, a device: opening a FIFO would block), or "" for a regular file. Listing keeps such
/// files where their names look like signals, so that a run reports them instead of leaving
/// them out unsaid; it reads none.
std::string why_unreadable(const std::string& path);

/// True when `spec` holds a wildcard (`*`, `?` or `[`) and so is a glob pattern.
bool is_glob(const std::string& spec);

/// True when a directory listing takes `path` as a signal file: an extension libsndfile reads
/// (.wav .flac .ogg .aiff .caf .w64 .mp3 ..., any case) or .npy.
bool has_signal_extension(const std::string& path);

/// Expands each spec and returns every file once, sorted by path:
///  - a glob (`*`, `?`, `[...]` within a name; `**` as a whole component for any number of
///    directories, none included): its root is the part before the first component with a
///    wildcard, and matches are files of any extension under it; a name starting with '.' is
///    matched only by a pattern that starts with '.';
///  - a directory: every file with a signal extension under it, recursively, skipping names
///    that start with '.' (hidden files, fxc's pending outputs) and not following links to
///    directories; the directory is the root;
///  - anything else: that file (any extension), its relative_dir "".
/// A spec that names an existing file is that file even if it holds wildcard characters.
/// Errors: a glob that matches no file, a directory without signal files, a missing path.
/// Nothing a directory or a glob finds under one of `outputs_within` is listed: a run's
/// --out-dir inside its input directory, whose files a run again (--skip-existing) took for
/// inputs and then refused to replace.
Expected<std::vector<InputFile>, std::string> list_inputs(const std::vector<std::string>& specs,
                                                         const std::vector<std::string>& outputs_within = {});

/// The part of the sorted `files` that shard `index` of `count` runs: the k-th file (counting
/// from 0) goes to shard k mod count + 1. Shards 1..count partition the list. Throws
/// std::invalid_argument unless 1 <= index <= count.
std::vector<InputFile> shard(std::vector<InputFile> files, int index, int count);

}  // namespace fxc::corpus

// SPDX-License-Identifier: Apache-2.0
#include "corpus/file_list.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string_view>

#include "support/file_io.h"

namespace fxc::corpus {
namespace {

namespace fs = std::filesystem;

// What libsndfile reads (recognised by content; these names only choose what a directory
// listing picks up) and .npy.
constexpr std::array<std::string_view, 31> kSignalExtensions = {
    ".wav", ".wave", ".bwf", ".rf64", ".w64", ".flac", ".ogg", ".oga", ".opus", ".aif", ".aiff",
    ".aifc", ".caf", ".au", ".snd", ".mp3", ".sph", ".nist", ".voc", ".paf", ".svx", ".8svx",
    ".iff", ".sf", ".ircam", ".htk", ".mat4", ".mat5", ".pvf", ".xi", ".npy"};

std::string join(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a.back() == '/' ? a + b : a + "/" + b;
}

bool hidden(const std::string& name) { return !name.empty() && name[0] == '.'; }

std::vector<std::string> split_path(const std::string& spec) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : spec) {
    if (c == '/') {
      if (!part.empty()) parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (!part.empty()) parts.push_back(part);
  return parts;
}

bool is_file(const fs::path& p) {
  std::error_code error;
  return fs::is_regular_file(p, error);  // follows links
}

bool is_dir(const fs::path& p) {
  std::error_code error;
  return fs::is_directory(p, error);
}

// The entries of `dir` (files and directories), sorted, or none where it cannot be read.
std::vector<fs::directory_entry> entries(const fs::path& dir) {
  std::vector<fs::directory_entry> out;
  std::error_code error;
  for (fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, error), end; !error && it != end;
       it.increment(error))
    out.push_back(*it);
  return out;
}

// Glob matching, one pattern component at a time. `dir` is where to look on disk, `relative`
// the path matched so far below the root.
struct Globber {
  std::string root;
  std::vector<std::string> pattern;
  std::vector<InputFile>* out;

  fs::path on_disk(const std::string& relative) const {
    std::string p = join(root, relative);
    return p.empty() ? fs::path(".") : fs::path(p);
  }

  void add(const std::string& relative) const {
    std::string dir = fs::path(relative).parent_path().generic_string();
    out->push_back({join(root, relative), dir});
  }
  // A match named like a signal that is no file to read (not a directory either) is listed:
  // the run reports it (why_unreadable).
  void add_unreadable(const std::string& relative) const {
    if (has_signal_extension(relative) && !is_dir(on_disk(relative))) add(relative);
  }

  void match(const std::string& relative, std::size_t i) const {
    if (i == pattern.size()) return;
    const std::string& component = pattern[i];
    bool last = i + 1 == pattern.size();
    if (component == "**") {
      if (last) {  // a trailing ** matches every file below
        for (const fs::directory_entry& e : entries(on_disk(relative))) {
          std::string name = e.path().filename().string();
          if (hidden(name)) continue;
          std::string below = join(relative, name);
          if (is_file(e.path())) add(below);
          else if (!e.is_symlink() && is_dir(e.path())) match(below, i);
          else add_unreadable(below);
        }
        return;
      }
      match(relative, i + 1);  // no directory at all
      for (const fs::directory_entry& e : entries(on_disk(relative))) {
        std::string name = e.path().filename().string();
        // Links to directories are not followed (a link to an ancestor would never end).
        if (!hidden(name) && !e.is_symlink() && is_dir(e.path())) match(join(relative, name), i);
      }
      return;
    }
    if (!is_glob(component)) {
      std::string next = join(relative, component);
      if (last) {
        // Only what is there: 'gl/*/take.wav' listed 'gl/s2/take.wav' in every directory of
        // gl, as a file that could not be read (a FIFO or a broken link is there, and listed).
        std::error_code error;
        if (is_file(on_disk(next))) add(next);
        else if (fs::symlink_status(on_disk(next), error).type() != fs::file_type::not_found) add_unreadable(next);
      } else if (is_dir(on_disk(next))) {
        match(next, i + 1);
      }
      return;
    }
    for (const fs::directory_entry& e : entries(on_disk(relative))) {
      std::string name = e.path().filename().string();
      if (fnmatch(component.c_str(), name.c_str(), FNM_PERIOD) != 0) continue;
      std::string next = join(relative, name);
      if (last) {
        if (is_file(e.path())) add(next);
        else add_unreadable(next);
      } else if (is_dir(e.path())) {
        match(next, i + 1);
      }
    }
  }
};

// A glob's part before its first component with a wildcard ("" for the working directory).
std::string glob_root(const std::string& spec) {
  std::vector<std::string> parts = split_path(spec);
  std::string root = spec.starts_with("/") ? "/" : "";
  for (std::size_t i = 0; i < parts.size() && !is_glob(parts[i]); ++i) root = join(root, parts[i]);
  return root;
}

Expected<std::monostate, std::string> expand_glob(const std::string& spec, std::vector<InputFile>& out) {
  std::vector<std::string> parts = split_path(spec);
  std::size_t first = 0;
  while (first < parts.size() && !is_glob(parts[first])) ++first;
  Globber globber;
  globber.root = glob_root(spec);
  globber.pattern.assign(parts.begin() + static_cast<std::ptrdiff_t>(first), parts.end());
  globber.out = &out;
  std::size_t before = out.size();
  globber.match("", 0);
  if (out.size() == before) return Unexpected{"'" + spec + "' matches no file"};
  return std::monostate{};
}

Expected<std::monostate, std::string> expand_directory(const std::string& spec, std::vector<InputFile>& out) {
  std::string root = spec;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  std::size_t before = out.size();
  std::error_code error;
  // A directory that cannot be read is an error, not a smaller corpus: a run must not report
  // success over files it never saw. (increment() with an error ends the iteration, so the
  // error is checked after the loop too.)
  fs::recursive_directory_iterator it(root, error), end;
  if (error) return Unexpected{"cannot read '" + spec + "': " + error.message()};
  fs::path last_directory = root;  // the one an error while stepping is most likely about
  for (; it != end; it.increment(error)) {
    std::string name = it->path().filename().string();
    std::error_code kind;
    if (hidden(name)) {
      if (it->is_directory(kind)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory(kind)) last_directory = it->path();
    // Named like a signal: listed, and a FIFO or a broken link then reported by the run.
    if (!has_signal_extension(name) || is_dir(it->path())) continue;
    fs::path relative = it->path().lexically_relative(root);
    out.push_back({join(root, relative.generic_string()), relative.parent_path().generic_string()});
  }
  if (error)
    return Unexpected{"cannot read all of '" + spec + "' ('" + last_directory.generic_string() + "'): " + error.message()};
  if (out.size() == before)
    return Unexpected{"'" + spec + "' holds no audio or .npy file (searched recursively; names starting with '.' are skipped)"};
  return std::monostate{};
}

}  // namespace

std::string why_unreadable(const std::string& path) {
  if (is_file(path)) return {};
  std::error_code error;
  const fs::file_status link = fs::symlink_status(path, error);
  if (!fs::exists(link)) return "No such file or directory";
  if (fs::is_symlink(link) && !fs::exists(fs::status(path, error))) return "a symbolic link to nothing";
  if (is_dir(path)) return "it is a directory";
  return "not a regular file (a FIFO, a socket or a device)";
}

bool is_glob(const std::string& spec) { return spec.find_first_of("*?[") != std::string::npos; }

bool has_signal_extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::find(kSignalExtensions.begin(), kSignalExtensions.end(), ext) != kSignalExtensions.end();
}

Expected<std::vector<InputFile>, std::string> list_inputs(const std::vector<std::string>& specs,
                                                         const std::vector<std::string>& outputs_within) {
  std::vector<std::string> skipped;  // as file_identity gives them, each with a final '/'
  for (const std::string& dir : outputs_within)
    if (is_dir(dir)) skipped.push_back(file_identity(dir) + "/");
  // What `root` (a directory, or a glob's part before its first wildcard) found from `from` on,
  // but what lies under an output directory strictly inside the root: the root itself, or a
  // directory above it, as an output directory is the command's mistake to report (its
  // outputs would replace its inputs), not a reason to list nothing.
  auto drop_outputs = [&](const std::string& root, std::vector<InputFile>& found, std::size_t from) {
    if (skipped.empty()) return;
    const std::string root_id = file_identity(root.empty() ? "." : root) + "/";
    std::vector<std::string> inside;
    for (const std::string& s : skipped)
      if (s.size() > root_id.size() && s.starts_with(root_id)) inside.push_back(s);
    if (inside.empty()) return;
    std::erase_if(found, [&, k = std::size_t{0}](const InputFile& f) mutable {
      if (k++ < from) return false;
      const std::string id = file_identity(f.path);
      return std::any_of(inside.begin(), inside.end(), [&](const std::string& s) { return id.starts_with(s); });
    });
  };
  std::vector<InputFile> files;
  for (const std::string& spec : specs) {
    if (spec.empty()) return Unexpected{std::string("an input path is empty")};
    const std::size_t before = files.size();
    if (is_dir(spec)) {
      if (auto ok = expand_directory(spec, files); !ok) return Unexpected{ok.error()};
      drop_outputs(spec, files, before);
      if (files.size() == before)
        return Unexpected{"'" + spec + "' holds no audio or .npy file outside the output directory"};
    } else if (is_file(spec)) {
      files.push_back({spec, ""});
    } else if (is_glob(spec)) {
      if (auto ok = expand_glob(spec, files); !ok) return Unexpected{ok.error()};
      drop_outputs(glob_root(spec), files, before);
      if (files.size() == before) return Unexpected{"'" + spec + "' matches no file outside the output directory"};
    } else {
      // Something there that is no file to read (a FIFO, a broken link) is one of the run's
      // failures, as inside a directory; a name of nothing is a mistake in the command.
      std::error_code error;
      if (fs::exists(fs::symlink_status(spec, error))) files.push_back({spec, ""});
      else return Unexpected{"cannot read '" + spec + "': No such file or directory"};
    }
  }
  std::sort(files.begin(), files.end(), [](const InputFile& a, const InputFile& b) {
    return a.path != b.path ? a.path < b.path : a.relative_dir < b.relative_dir;
  });
  // Each file once, however it is named (`c/a.wav`, `./c/a.wav`, through a link): the first
  // name in this order stands for it.
  std::set<std::string> seen;
  std::erase_if(files, [&](const InputFile& f) { return !seen.insert(file_identity(f.path)).second; });
  return files;
}

std::vector<InputFile> shard(std::vector<InputFile> files, int index, int count) {
  if (count < 1 || index < 1 || index > count)
    throw std::invalid_argument("a shard is I/N with 1 <= I <= N, got " + std::to_string(index) + "/" +
                                std::to_string(count));
  std::vector<InputFile> mine;
  mine.reserve(files.size() / static_cast<std::size_t>(count) + 1);
  for (std::size_t k = static_cast<std::size_t>(index - 1); k < files.size(); k += static_cast<std::size_t>(count))
    mine.push_back(std::move(files[k]));
  return mine;
}

}  // namespace fxc::corpus

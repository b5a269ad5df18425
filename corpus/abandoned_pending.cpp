// SPDX-License-Identifier: Apache-2.0
#include "corpus/abandoned_pending.h"

#include "corpus/pending_outputs.h"

#include <filesystem>
#include <map>
#include <string_view>

namespace fxc::corpus {

namespace fs = std::filesystem;

namespace {

// NAME in ".fxc-pending-PID-N-NAME" or "..fxc-pending-PID-N-NAME.tmp-XXXXXX" (the candidate
// with and without the temporary suffix), or nothing for another name.
std::vector<std::string_view> pending_targets(std::string_view entry) {
  // The temporary one is write_file_atomically's "." + the pending name + ".tmp-XXXXXX".
  bool temporary = entry.size() > kPendingPrefix.size() && entry[0] == '.' && entry.substr(1).starts_with(kPendingPrefix);
  if (!temporary && !entry.starts_with(kPendingPrefix)) return {};
  std::string_view rest = entry.substr(kPendingPrefix.size() + (temporary ? 1 : 0));
  for (int field = 0; field < 2; ++field) {  // PID-, N-
    std::size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits == 0 || digits >= rest.size() || rest[digits] != '-') return {};
    rest.remove_prefix(digits + 1);
  }
  if (!temporary) return {rest};
  std::size_t tmp = rest.rfind(".tmp-");
  if (tmp == std::string_view::npos) return {};
  return {rest.substr(0, tmp)};
}

}  // namespace

std::size_t remove_abandoned_pending(const std::vector<std::string>& outputs) {
  // Directory -> output name -> when the output was written.
  std::map<fs::path, std::map<std::string, fs::file_time_type, std::less<>>> by_directory;
  for (const std::string& output : outputs) {
    fs::path path(output);
    std::error_code error;
    fs::file_time_type written = fs::last_write_time(path, error);
    if (error) continue;  // not written (failed or skipped): nothing of it to clean
    fs::path directory = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    by_directory[directory][pending_name_part(path.filename().string())] = written;
  }
  std::size_t removed = 0;
  for (const auto& [directory, names] : by_directory) {
    std::error_code error;
    fs::directory_iterator it(directory, error), end;
    std::vector<fs::path> stale;
    for (; !error && it != end; it.increment(error)) {
      std::string entry = it->path().filename().string();
      for (std::string_view target : pending_targets(entry)) {
        auto output = names.find(target);
        if (output == names.end()) continue;
        std::error_code ignored;
        fs::file_time_type when = fs::last_write_time(it->path(), ignored);
        if (!ignored && when <= output->second) stale.push_back(it->path());
      }
    }
    for (const fs::path& p : stale) {
      std::error_code ignored;
      if (fs::remove(p, ignored)) ++removed;
    }
  }
  return removed;
}

}  // namespace fxc::corpus

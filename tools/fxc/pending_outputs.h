// Outputs of a run, written under pending names and renamed into place together, so that a
// run that fails anywhere leaves every output path as it was.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include "runtime/signal_file.h"

namespace fxc::cli {

// Each output is first written beside its destination under a pending name (keeping its
// extension, which picks the format), and all are renamed only once every one was written:
// a run that fails at its second output leaves the first output as it was.
class PendingOutputs {
 public:
  ~PendingOutputs() {
    for (const auto& [pending, final_path] : files_) std::filesystem::remove(pending);
  }
  Expected<std::monostate, std::string> write(const std::string& path, const Signal& signal,
                                              std::optional<double> fs, const WriteOptions& o) {
    std::filesystem::path target(path);
    std::string pending = (target.parent_path() / (".fxc-pending-" + std::to_string(getpid()) +
                                                   "-" + target.filename().string()))
                              .string();
    auto ok = write_signal_file(pending, signal, fs, o);
    if (!ok) return Unexpected{ok.error()};
    files_.emplace_back(pending, path);
    return std::monostate{};
  }
  Expected<std::monostate, std::string> commit() {
    for (const auto& [pending, final_path] : files_) {
      std::error_code error;
      std::filesystem::rename(pending, final_path, error);
      if (error) return Unexpected{"cannot write '" + final_path + "': " + error.message()};
    }
    files_.clear();
    return std::monostate{};
  }

 private:
  std::vector<std::pair<std::string, std::string>> files_;
};

}  // namespace fxc::cli

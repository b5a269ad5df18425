// SPDX-License-Identifier: Apache-2.0
#include "codegen/cuda/nvrtc_search.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <tuple>

namespace fxc::codegen {
namespace {

namespace fs = std::filesystem;

// "12.4.127" -> {12, 4, 127}; empty if `text` is not dot-separated numbers.
std::vector<int> dotted_numbers(const std::string& text) {
  std::vector<int> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = text.find('.', at);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(at, end - at);
    if (part.empty() || part.size() > 6 ||
        !std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c); }))
      return {};
    out.push_back(std::stoi(part));
    at = end + 1;
  }
  return out;
}

// The version numbers after "libnvrtc.so": {} for "libnvrtc.so", nullopt-like {-1} when the
// name is not an NVRTC library.
std::optional<std::vector<int>> name_numbers(const std::string& name) {
  static const std::string kStem = "libnvrtc.so";
  if (name.compare(0, kStem.size(), kStem) != 0) return std::nullopt;
  if (name.size() == kStem.size()) return std::vector<int>{};
  if (name[kStem.size()] != '.') return std::nullopt;
  std::vector<int> numbers = dotted_numbers(name.substr(kStem.size() + 1));
  if (numbers.empty()) return std::nullopt;
  return numbers;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// The subdirectories of `dir` named `prefix` + a version, newest first; names whose rest is
// not a version come last, by name.
std::vector<fs::path> versioned_subdirectories(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<std::vector<int>, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0 || !it->is_directory(ec)) continue;
    found.emplace_back(dotted_numbers(name.substr(prefix.size())), name);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if (a.first.empty() != b.first.empty()) return b.first.empty();  // versions before the rest
    if (a.first != b.first) return a.first > b.first;                 // newest first
    return a.second < b.second;
  });
  std::vector<fs::path> out;
  for (const auto& f : found) out.push_back(dir / f.second);
  return out;
}

std::string canonical_or_self(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  return ec ? p.string() : c.string();
}

// The NVRTC files in `dir`, one per real file: shown under its shortest versioned name
// (libnvrtc.so.13 rather than libnvrtc.so or libnvrtc.so.13.0.48), with the most precise
// version any of its names (or its target's) gives.
std::vector<std::pair<std::string, NvrtcCandidate>> files_in(const fs::path& dir, const std::string& origin) {
  struct Found {
    std::string name;
    std::vector<int> numbers;
  };
  std::map<std::string, std::vector<Found>> by_file;  // canonical path -> its names here
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    auto numbers = name_numbers(name);
    if (!numbers || !it->is_regular_file(ec)) continue;  // follows symlinks
    by_file[canonical_or_self(it->path())].push_back({name, *numbers});
  }
  std::vector<std::pair<std::string, NvrtcCandidate>> out;
  for (auto& [canonical, names] : by_file) {
    std::sort(names.begin(), names.end(), [](const Found& a, const Found& b) {
      std::size_t ka = a.numbers.empty() ? 99 : a.numbers.size(), kb = b.numbers.empty() ? 99 : b.numbers.size();
      return ka != kb ? ka < kb : a.name < b.name;
    });
    std::vector<int> best;
    for (const Found& f : names)
      if (f.numbers.size() > best.size()) best = f.numbers;
    if (auto target = name_numbers(fs::path(canonical).filename().string()); target && target->size() > best.size())
      best = *target;
    NvrtcCandidate c;
    c.path = (dir / names.front().name).string();
    c.origin = origin;
    if (!best.empty()) c.major = best[0];
    if (best.size() > 1) c.minor = best[1];
    out.emplace_back(canonical, c);
  }
  // Newest first within a directory (pip's cu13 and a CUDA 12 file side by side), then by name.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::pair(a.second.major, a.second.minor) > std::pair(b.second.major, b.second.minor);
  });
  return out;
}

}  // namespace

std::pair<int, int> nvrtc_name_version(const std::string& file_name) {
  auto numbers = name_numbers(file_name);
  if (!numbers || numbers->empty()) return {-1, -1};
  return {(*numbers)[0], numbers->size() > 1 ? (*numbers)[1] : -1};
}

NvrtcEnvironment nvrtc_environment() {
  NvrtcEnvironment e;
  e.explicit_library = env("FXC_NVRTC_LIBRARY");
  e.cuda_home = env("CUDA_HOME");
  e.cuda_path = env("CUDA_PATH");
  e.virtual_env = env("VIRTUAL_ENV");
  e.home = env("HOME");
  return e;
}

std::vector<std::pair<std::string, std::string>> nvrtc_search_directories(const NvrtcEnvironment& e) {
  std::vector<std::pair<std::string, std::string>> candidates;  // (origin, directory)
  if (!e.cuda_home.empty()) candidates.emplace_back("$CUDA_HOME", (fs::path(e.cuda_home) / "lib64").string());
  if (!e.cuda_path.empty()) candidates.emplace_back("$CUDA_PATH", (fs::path(e.cuda_path) / "lib64").string());
  fs::path root(e.root.empty() ? "/" : e.root);
  fs::path usr_local = root / "usr" / "local";
  candidates.emplace_back("/usr/local/cuda", (usr_local / "cuda" / "lib64").string());
  for (const fs::path& versioned : versioned_subdirectories(usr_local, "cuda-"))
    candidates.emplace_back("/usr/local/" + versioned.filename().string(), (versioned / "lib64").string());

  // pip's wheels: nvidia-cuda-nvrtc (CUDA 13: nvidia/cu13/lib; CUDA 12: nvidia/cuda_nvrtc/lib).
  std::vector<std::pair<std::string, fs::path>> sites;
  auto add_pythons = [&](const std::string& origin, const fs::path& lib, const char* packages) {
    for (const fs::path& python : versioned_subdirectories(lib, "python3."))
      sites.emplace_back(origin, python / packages);
  };
  if (!e.virtual_env.empty()) add_pythons("pip ($VIRTUAL_ENV)", fs::path(e.virtual_env) / "lib", "site-packages");
  if (!e.home.empty()) add_pythons("pip (~/.local)", fs::path(e.home) / ".local" / "lib", "site-packages");
  add_pythons("pip (/usr/local/lib)", usr_local / "lib", "dist-packages");
  sites.emplace_back("pip (/usr/lib/python3)", root / "usr" / "lib" / "python3" / "dist-packages");
  for (const auto& [origin, site] : sites) {
    candidates.emplace_back(origin, (site / "nvidia" / "cu13" / "lib").string());
    candidates.emplace_back(origin, (site / "nvidia" / "cuda_nvrtc" / "lib").string());
  }

  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> seen;
  for (const auto& [origin, dir] : candidates) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    if (!seen.insert(canonical_or_self(dir)).second) continue;
    out.emplace_back(origin, dir);
  }
  return out;
}

std::vector<NvrtcCandidate> nvrtc_candidates(const NvrtcEnvironment& e) {
  std::vector<NvrtcCandidate> out;
  std::set<std::string> seen;  // canonical files, and sonames by name
  auto add = [&](const std::string& key, NvrtcCandidate c) {
    if (seen.insert(key).second) out.push_back(std::move(c));
  };
  if (!e.explicit_library.empty()) {
    NvrtcCandidate c;
    c.path = e.explicit_library;
    c.origin = "$FXC_NVRTC_LIBRARY";
    c.explicit_choice = true;
    bool is_path = e.explicit_library.find('/') != std::string::npos;
    std::string key = is_path ? canonical_or_self(e.explicit_library) : e.explicit_library;
    auto [major, minor] = nvrtc_name_version(fs::path(key).filename().string());
    if (major < 0) std::tie(major, minor) = nvrtc_name_version(fs::path(e.explicit_library).filename().string());
    c.major = major;
    c.minor = minor;
    add(key, c);
  }
  for (const std::string& soname : e.sonames) {
    NvrtcCandidate c;
    c.path = soname;
    c.origin = "soname";
    std::tie(c.major, c.minor) = nvrtc_name_version(soname);
    add(soname, c);
  }
  for (const auto& [origin, dir] : nvrtc_search_directories(e))
    for (auto& [canonical, c] : files_in(dir, origin)) add(canonical, c);
  return out;
}

std::vector<NvrtcCandidate> nvrtc_load_order(std::vector<NvrtcCandidate> candidates, int driver_version) {
  int driver_major = driver_version > 0 ? driver_version / 1000 : 0;
  // Rank: 0 explicit, 1 known and usable (<= the driver's major, or any without a driver),
  // 2 unknown version, 3 newer than the driver.
  auto rank = [&](const NvrtcCandidate& c) {
    if (c.explicit_choice) return 0;
    if (c.major < 0) return 2;
    if (driver_major > 0 && c.major > driver_major) return 3;
    return 1;
  };
  std::stable_sort(candidates.begin(), candidates.end(), [&](const NvrtcCandidate& a, const NvrtcCandidate& b) {
    int ra = rank(a), rb = rank(b);
    if (ra != rb) return ra < rb;
    if (ra == 1) return a.major > b.major;  // newest usable first
    if (ra == 3) return a.major < b.major;  // the nearest to the driver first
    return false;
  });
  return candidates;
}

}  // namespace fxc::codegen

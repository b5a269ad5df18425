// SPDX-License-Identifier: Apache-2.0
// fxc cache list|stats|clear: look at or empty the kernel cache.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <filesystem>
#include <iostream>
#include <memory>

#include "driver/kernel_cache.h"
#include "tools/fxc/commands.h"

namespace fxc::cli {
namespace {

struct CacheOptions {
  std::string what;
  std::string cache_dir;
};

int cache(const CacheOptions& o) {
  // Not CLI11's required(): its "what is required" reads as a question, not as what to type.
  if (o.what.empty()) throw UsageError{"fxc cache needs what to do: list, stats or clear"};
  KernelCache cache(cache_directory(o.cache_dir));
  if (cache.directory() == "none") {
    std::cout << "the kernel cache is in memory only (--cache-dir none, or no home directory): nothing on disk\n";
    return kSuccess;
  }
  // A directory that is not there is an empty cache; something else in its place is no cache.
  std::error_code error;
  if (std::filesystem::exists(cache.directory(), error) && !std::filesystem::is_directory(cache.directory(), error))
    return user_error("the kernel cache '" + cache.directory() + "' is not a directory");
  if (o.what == "clear") {
    auto cleared = cache.clear();
    if (!cleared) return user_error(cleared.error());
    const std::size_t removed = *cleared;
    std::cout << "removed " << removed << " entr" << (removed == 1 ? "y" : "ies") << " from "
              << cache.directory() << '\n';
    return kSuccess;
  }
  std::vector<CacheEntryInfo> entries = cache.list();
  if (o.what == "list") {
    for (const CacheEntryInfo& e : entries)
      std::cout << fmt::format("{}  {:>9} bytes  {}\n", e.key.substr(0, 16), e.bytes, e.graph_name);
    return kSuccess;
  }
  std::uint64_t total = 0;
  for (const CacheEntryInfo& e : entries) total += e.bytes;
  std::cout << "directory: " << cache.directory() << "\nentries:   " << entries.size()
            << "\nbytes:     " << total << '\n';
  return kSuccess;
}

}  // namespace

void add_cache_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<CacheOptions>();
  CLI::App* cmd = app.add_subcommand("cache", "List, count or clear the kernel cache.");
  cmd->add_option("what", o->what, "list, stats or clear")
      ->check(CLI::IsMember({"list", "stats", "clear"}));
  cmd->add_option("--cache-dir", o->cache_dir, "Kernel cache directory");
  cmd->footer("Examples:\n  fxc cache stats\n  fxc cache list --cache-dir /tmp/fxc-cache\n  fxc cache clear");
  cmd->callback([&action, o] { action = [o] { return cache(*o); }; });
}

}  // namespace fxc::cli

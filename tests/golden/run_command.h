// SPDX-License-Identifier: Apache-2.0
// Runs a program with an argument vector (no shell), in a given working directory, and
// captures its standard output, standard error and exit status. Shared by the golden and the
// end-to-end tiers, which both drive the fxc binary from outside.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace fxc::test {

struct CommandResult {
  int exit_code = -1;  ///< the exit status, or 128 + the signal number if it was killed
  std::string out;     ///< standard output
  std::string err;     ///< standard error
};

inline std::string read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// Runs `argv[0]` (a path, not looked up in PATH) with `argv`, in `cwd`, with standard input
/// from `stdin_path` (/dev/null unless given) and `extra_env` ("NAME=VALUE") added to this
/// process's environment.
/// NO_COLOR=1 is always set so messages are plain text. Throws std::runtime_error if the
/// program cannot be started at all.
inline CommandResult run_command(const std::vector<std::string>& argv,
                                 const std::filesystem::path& cwd,
                                 const std::vector<std::string>& extra_env = {},
                                 const std::filesystem::path& stdin_path = "/dev/null") {
  namespace fs = std::filesystem;
  // Capture into temporary files rather than pipes: no risk of a deadlock on a full pipe,
  // and nothing to multiplex.
  std::string out_template = (fs::temp_directory_path() / "fxc-test-out-XXXXXX").string();
  std::string err_template = (fs::temp_directory_path() / "fxc-test-err-XXXXXX").string();
  int out_fd = mkstemp(out_template.data());
  int err_fd = mkstemp(err_template.data());
  if (out_fd < 0 || err_fd < 0) throw std::runtime_error("mkstemp failed: " + std::string(std::strerror(errno)));

  std::vector<std::string> env_storage;
  // A name given in extra_env replaces this process's value (getenv reads the first of two).
  auto overridden = [&](const std::string& entry) {
    if (entry.rfind("NO_COLOR=", 0) == 0) return true;
    for (const std::string& e : extra_env)
      if (const std::size_t eq = e.find('='); eq != std::string::npos && entry.compare(0, eq + 1, e, 0, eq + 1) == 0)
        return true;
    return false;
  };
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    if (overridden(entry)) continue;
    env_storage.push_back(entry);
  }
  env_storage.push_back("NO_COLOR=1");
  for (const std::string& e : extra_env) env_storage.push_back(e);
  std::vector<char*> envp;
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (std::string& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  std::string stdin_string = stdin_path.is_absolute() ? stdin_path.string() : (cwd / stdin_path).string();
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, stdin_string.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, out_fd);
  posix_spawn_file_actions_addclose(&actions, err_fd);
  std::string cwd_string = cwd.string();
  posix_spawn_file_actions_addchdir_np(&actions, cwd_string.c_str());

  pid_t pid = 0;
  int spawn_error = posix_spawn(&pid, argp[0], &actions, nullptr, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out_fd);
  close(err_fd);
  CommandResult result;
  if (spawn_error == 0) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
    result.out = read_file_bytes(out_template);
    result.err = read_file_bytes(err_template);
  }
  std::error_code ignored;
  fs::remove(out_template, ignored);
  fs::remove(err_template, ignored);
  if (spawn_error != 0)
    throw std::runtime_error("cannot start '" + argv.at(0) + "': " + std::strerror(spawn_error));
  return result;
}

}  // namespace fxc::test

// SPDX-License-Identifier: Apache-2.0
// The bad-input catalogue (docs/errors.md): every cases/NAME.case makes the files it needs in
// a fresh temporary directory, runs fxc commands there with a kernel cache of its own
// (FXC_CACHE_DIR=%t/cache), and checks each command's exit status and exact standard error,
// and what the commands leave behind. A case is a list of directives, one per line (`#`
// starts a comment line):
//
//   category NAME            what the case is about (the catalogue must cover every one)
//   requires non-root        the case needs file permissions to apply: as root (CI), its fxc
//                            commands run as the unprivileged user nobody (setpriv), with %t
//                            handed to that user first; `requires avx2` skips the case when
//                            the host lacks AVX2 and FMA (a case that needs a strategy)
//   file NAME <<END          a text file: the lines up to END
//   bytes NAME TEXT          a file of TEXT, with \n, \t, \\ and \xNN escapes
//   append NAME COUNT TEXT   TEXT (escaped as for bytes) COUNT times at the end of NAME: a
//                            file nested 1000 levels deep without a 10 KB line in the case
//   npy NAME K=V...          a .npy file: descr=<f8 shape=2,64 fortran=False data=BYTES
//                            values=0.5,nan,inf (cycled; default a sine) at=I:V,... (sample
//                            I, counted over the whole array, is V) header=DICT
//   wav NAME K=V...          a WAV file: channels=1 frames=64 rate=48000 format=pcm16|float
//                            values=... (cycled, interleaved)
//   patch NAME OFFSET HEX    overwrite bytes; truncate NAME BYTES cuts a file
//   mkdir NAME, chmod MODE NAME, symlink NAME TARGET, mkfifo NAME, env NAME=VALUE
//   limit-fsize BYTES|none   RLIMIT_FSIZE for the commands after it (a full disk)
//   limit-stack KB|unlimited|none   the commands after it run under `ulimit -s` (a shell
//                            sets it, for fxc alone): the main thread's stack, and in glibc
//                            the default for other threads (2 MB under unlimited)
//   cache-truncate EXT BYTES, cache-write EXT TEXT, cache-remove EXT, cache-flip EXT OFFSET
//                            damage every entry file KEY.EXT in the cache directory
//   run fxc ARGS...          run fxc in %t (words split at spaces, "..." groups); then:
//     exit N                 the expected exit status (default 0)
//     stderr <<END           standard error, exactly (default: empty), after the case
//                            directory is replaced by %t and cache keys by <KEY>
//     stderr-contains TEXT   a part of standard error instead
//     stdout <<END, stdout-contains TEXT
//   absent PATH, exists PATH, only-entries DIR NAME...   (DIR . is %t)
//   is-link NAME TARGET      NAME is still a symbolic link to TARGET
//   npy-check NAME shape=C,N [descr=<f8] [nonfinite=K] [nan=K] [zeros=K]
//   npy-match A B [tol=T]    same shape, non-finite values (NaN or infinite: which one may
//                            differ, a fused multiply-add overflows differently) at the same
//                            places, the others within T relative (default 1e-9)
//   wav-check NAME channels=C frames=N
//   cache-entries N          the cache holds N whole entries
//
// Whatever the case says, these hold after every command that fails: each -o, --output and
// --trace path is as it was before (absent, or the same bytes, or the same device); and
// after every case: no pending or temporary file (.fxc-pending-*, .*.tmp-*) is left anywhere
// in %t, every cache entry is whole (each KEY.meta names an object of the size it records,
// no object lacks its .meta) and `fxc cache list` works without a word on standard error.
//
// FXC_UPDATE_GOLDEN=1 rewrites the `stderr <<END` and `stdout <<END` blocks from what the
// commands printed (never `exit`): review the diff by eye.
#define DOCTEST_CONFIG_IMPLEMENT
#include "test_main.h"

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../golden/case_text.h"
#include "../golden/run_command.h"

namespace fs = std::filesystem;
using fxc::test::CommandResult;
using fxc::test::read_file_bytes;

namespace {

// The categories of the list; every one must have a case.
const std::vector<std::string> kCategories = {
    "parameters", "unstable", "sample-rate", "channels", "empty", "nonfinite",
    "input-file", "output",   "cache",       "huge"};

// ---- reading a case ---------------------------------------------------------------------

struct Directive {
  int line = 0;                    // 1-based, for messages
  std::string verb;
  std::vector<std::string> words;  // after the verb
  std::string rest;                // the text after the verb, as written
  std::optional<std::string> body;  // a <<END block
  std::size_t body_begin = 0, body_end = 0;  // its lines, 0-based [begin, end), for rewriting
};

using fxc::test::split_lines;
using fxc::test::split_words;
using fxc::test::trim;

std::vector<Directive> parse_case(const std::vector<std::string>& lines) {
  std::vector<Directive> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string line = trim(lines[i]);
    if (line.empty() || line[0] == '#') continue;
    Directive d;
    d.line = static_cast<int>(i + 1);
    std::size_t space = line.find_first_of(" \t");
    d.verb = line.substr(0, space);
    d.rest = space == std::string::npos ? "" : trim(line.substr(space));
    d.words = split_words(d.rest);
    if (!d.words.empty() && d.words.back() == "<<END") {
      d.words.pop_back();
      std::string body;
      std::size_t j = i + 1;
      while (j < lines.size() && lines[j] != "END") body += lines[j++] + "\n";
      if (j == lines.size()) throw std::runtime_error("line " + std::to_string(d.line) + ": no END");
      d.body = body;
      d.body_begin = i + 1;
      d.body_end = j;
      i = j;
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::map<std::string, std::string> key_values(const std::vector<std::string>& words, std::size_t from) {
  std::map<std::string, std::string> kv;
  for (std::size_t i = from; i < words.size(); ++i) {
    std::size_t eq = words[i].find('=');
    if (eq == std::string::npos) throw std::runtime_error("expected KEY=VALUE, got '" + words[i] + "'");
    kv[words[i].substr(0, eq)] = words[i].substr(eq + 1);
  }
  return kv;
}

std::vector<std::uint64_t> parse_shape(const std::string& text) {
  std::vector<std::uint64_t> dims;
  std::istringstream in(text);
  for (std::string d; std::getline(in, d, ',');) dims.push_back(std::stoull(d));
  return dims;
}

std::vector<double> parse_values(const std::string& text) {
  std::vector<double> values;
  std::istringstream in(text);
  for (std::string v; std::getline(in, v, ',');) {
    if (v == "nan") values.push_back(std::numeric_limits<double>::quiet_NaN());
    else if (v == "inf") values.push_back(std::numeric_limits<double>::infinity());
    else if (v == "-inf") values.push_back(-std::numeric_limits<double>::infinity());
    else values.push_back(std::stod(v));
  }
  return values;
}

// The i-th sample of a generated file: the given values cycled, or a quiet sine.
double sample_value(const std::vector<double>& values, std::uint64_t i) {
  if (!values.empty()) return values[i % values.size()];
  return 0.5 * std::sin(0.05 * static_cast<double>(i));
}

std::string unescape(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    char c = text[++i];
    if (c == 'n') out += '\n';
    else if (c == 't') out += '\t';
    else if (c == 'x' && i + 2 < text.size()) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else out += c;
  }
  return out;
}

template <class T>
void append_le(std::string& out, T value) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // the test hosts are little-endian, as .npy says '<'
  out.append(reinterpret_cast<const char*>(bytes), sizeof(T));
}

// ---- making files -----------------------------------------------------------------------

std::string make_npy(const std::map<std::string, std::string>& kv) {
  auto get = [&](const std::string& k, const std::string& fallback) {
    auto it = kv.find(k);
    return it == kv.end() ? fallback : it->second;
  };
  std::string descr = get("descr", "<f8");
  std::vector<std::uint64_t> shape = parse_shape(get("shape", "64"));
  std::string shape_text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) shape_text += (i ? ", " : "") + std::to_string(shape[i]);
  shape_text += shape.size() == 1 ? ",)" : ")";
  std::string dict = get("header", "{'descr': '" + descr + "', 'fortran_order': " + get("fortran", "False") +
                                       ", 'shape': " + shape_text + ", }");
  std::size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  append_le<std::uint16_t>(out, static_cast<std::uint16_t>(dict.size()));
  out += dict;

  std::size_t item = descr.size() == 3 && descr[2] >= '1' && descr[2] <= '8' ? descr[2] - '0' : 8;
  std::uint64_t count = 1;
  bool overflow = false;
  for (std::uint64_t d : shape) overflow |= __builtin_mul_overflow(count, d, &count);
  overflow |= __builtin_mul_overflow(count, item, &count);
  if (overflow && !kv.count("data")) throw std::runtime_error("a shape this large needs data=BYTES");
  std::uint64_t data = kv.count("data") ? std::stoull(kv.at("data")) : count;
  std::vector<double> values = parse_values(get("values", ""));
  std::map<std::uint64_t, double> put;  // at=INDEX:VALUE,...: single samples
  std::istringstream at_list(get("at", ""));
  for (std::string item; std::getline(at_list, item, ',');)
    put[std::stoull(item.substr(0, item.find(':')))] = parse_values(item.substr(item.find(':') + 1)).at(0);
  std::string bytes;
  for (std::uint64_t i = 0; bytes.size() < data; ++i) {
    double v = put.count(i) ? put[i] : sample_value(values, i);
    if (descr == "<f8") append_le(bytes, v);
    else if (descr == "<f4") append_le(bytes, static_cast<float>(v));
    else bytes.append(item, '\0');
  }
  bytes.resize(data);
  return out + bytes;
}

std::string make_wav(const std::map<std::string, std::string>& kv) {
  auto get = [&](const std::string& k, const std::string& fallback) {
    auto it = kv.find(k);
    return it == kv.end() ? fallback : it->second;
  };
  std::uint16_t channels = static_cast<std::uint16_t>(std::stoi(get("channels", "1")));
  std::uint32_t frames = static_cast<std::uint32_t>(std::stoul(get("frames", "64")));
  std::uint32_t rate = static_cast<std::uint32_t>(std::stoul(get("rate", "48000")));
  bool is_float = get("format", "pcm16") == "float";
  std::vector<double> values = parse_values(get("values", ""));
  std::uint16_t bytes_per_sample = is_float ? 4 : 2;
  std::string data;
  for (std::uint64_t i = 0; i < std::uint64_t{frames} * channels; ++i) {
    double v = sample_value(values, i);
    if (is_float) append_le(data, static_cast<float>(v));
    else append_le(data, static_cast<std::int16_t>(std::lround(std::clamp(v, -1.0, 1.0) * 32767)));
  }
  std::string out = "RIFF";
  append_le<std::uint32_t>(out, static_cast<std::uint32_t>(36 + data.size()));
  out += "WAVEfmt ";
  append_le<std::uint32_t>(out, 16);
  append_le<std::uint16_t>(out, is_float ? 3 : 1);
  append_le<std::uint16_t>(out, channels);
  append_le<std::uint32_t>(out, rate);
  append_le<std::uint32_t>(out, rate * channels * bytes_per_sample);
  append_le<std::uint16_t>(out, static_cast<std::uint16_t>(channels * bytes_per_sample));
  append_le<std::uint16_t>(out, static_cast<std::uint16_t>(8 * bytes_per_sample));
  out += "data";
  append_le<std::uint32_t>(out, static_cast<std::uint32_t>(data.size()));
  return out + data;
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// ---- reading what fxc wrote -------------------------------------------------------------

struct NpyData {
  std::string descr;
  std::vector<std::uint64_t> shape;
  std::vector<double> values;
};

// Reads the .npy files fxc writes (version 1.0, '<f4' or '<f8', C order).
std::optional<NpyData> read_npy(const fs::path& path, std::string& why) {
  std::string bytes = read_file_bytes(path);
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    why = "not a .npy file";
    return std::nullopt;
  }
  std::size_t header = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  std::string dict = bytes.substr(10, header);
  NpyData npy;
  std::smatch m;
  if (!std::regex_search(dict, m, std::regex("'descr': '([<>|a-z0-9]+)'"))) {
    why = "no descr";
    return std::nullopt;
  }
  npy.descr = m[1];
  if (!std::regex_search(dict, m, std::regex("'shape': \\(([0-9, ]*)\\)"))) {
    why = "no shape";
    return std::nullopt;
  }
  std::string dims = m[1];
  dims.erase(std::remove(dims.begin(), dims.end(), ' '), dims.end());
  if (!dims.empty() && dims.back() == ',') dims.pop_back();
  npy.shape = parse_shape(dims);
  std::size_t item = npy.descr == "<f4" ? 4 : 8;
  for (std::size_t at = 10 + header; at + item <= bytes.size(); at += item) {
    if (item == 4) {
      float f;
      std::memcpy(&f, bytes.data() + at, 4);
      npy.values.push_back(f);
    } else {
      double d;
      std::memcpy(&d, bytes.data() + at, 8);
      npy.values.push_back(d);
    }
  }
  return npy;
}

std::string shape_string(const std::vector<std::uint64_t>& shape) {
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s;
}

// Channels and frames of a WAV file, from its fmt and data chunks.
std::optional<std::pair<unsigned, std::uint64_t>> wav_info(const fs::path& path) {
  std::string b = read_file_bytes(path);
  if (b.size() < 12 || b.compare(0, 4, "RIFF") != 0 || b.compare(8, 4, "WAVE") != 0) return std::nullopt;
  unsigned channels = 0, block = 0;
  for (std::size_t at = 12; at + 8 <= b.size();) {
    std::uint32_t size;
    std::memcpy(&size, b.data() + at + 4, 4);
    std::string id = b.substr(at, 4);
    if (id == "fmt " && at + 8 + 14 <= b.size()) {
      std::uint16_t c, a;
      std::memcpy(&c, b.data() + at + 10, 2);
      std::memcpy(&a, b.data() + at + 20, 2);
      channels = c, block = a;
    } else if (id == "data" && block) {
      return std::make_pair(channels, std::uint64_t{size} / block);
    }
    at += 8 + size + (size & 1);
  }
  return std::nullopt;
}

// ---- checks on the directory and the cache ----------------------------------------------

// Pending outputs and the temporary files of write_file_atomically: none may survive a run.
std::vector<std::string> leftover_files(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, error);
       it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (error) break;
    std::string name = it->path().filename().string();
    if (name.find(".fxc-pending-") != std::string::npos || (name[0] == '.' && name.find(".tmp-") != std::string::npos))
      found.push_back(fs::relative(it->path(), dir).string());
  }
  return found;
}

// Whole entries in the cache directory; problems go to `problems`.
int whole_cache_entries(const fs::path& cache, std::vector<std::string>& problems) {
  int whole = 0;
  std::error_code error;
  std::set<std::string> metas, objects;
  for (const fs::directory_entry& e : fs::directory_iterator(cache, error)) {
    std::string ext = e.path().extension().string(), key = e.path().stem().string();
    if (ext == ".meta") metas.insert(key);
    else if (ext == ".o" || ext == ".cubin") objects.insert(key + ext);
  }
  for (const std::string& key : metas) {
    std::string meta = read_file_bytes(cache / (key + ".meta"));
    std::smatch m;
    if (!std::regex_search(meta, m, std::regex("\nobject_bytes ([0-9]+)\n"))) {
      problems.push_back(key.substr(0, 12) + ".meta has no object size");
      continue;
    }
    std::uint64_t bytes = std::stoull(m[1]);
    std::string object = objects.count(key + ".o") ? key + ".o" : key + ".cubin";
    std::error_code e;
    if (!fs::is_regular_file(cache / object, e) || fs::file_size(cache / object, e) != bytes)
      problems.push_back(key.substr(0, 12) + ".meta names a missing or wrong-sized object");
    else
      ++whole;
  }
  for (const std::string& object : objects)
    if (!metas.count(fs::path(object).stem().string()))
      problems.push_back(object.substr(0, 12) + "... has no .meta");
  return whole;
}

// What a path is now, to compare before and after a failed command.
std::string path_state(const fs::path& path) {
  std::error_code error;
  fs::file_status link = fs::symlink_status(path, error);
  if (error || !fs::exists(link)) return "absent";
  if (fs::is_symlink(link)) {
    fs::file_status target = fs::status(path, error);
    return "symlink to " + fs::read_symlink(path, error).string() +
           (fs::is_character_file(target) ? " (a character device)" : "") +
           (fs::is_regular_file(target) ? " holding " + read_file_bytes(path) : "");
  }
  if (fs::is_character_file(link)) return "a character device";
  if (fs::is_directory(link)) return "a directory";
  return "a file holding " + read_file_bytes(path);
}

std::vector<std::string> output_paths(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "-o" || args[i] == "--output" || args[i] == "--trace") out.push_back(args[i + 1]);
  return out;
}

// ---- running a case ---------------------------------------------------------------------

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "fxc-badinput-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    // A case may have made directories read-only: give the owner its rights back first.
    std::error_code error;
    for (auto it = fs::recursive_directory_iterator(path_, error); !error && it != fs::recursive_directory_iterator();
         it.increment(error))
      if (it->is_directory(error) && !it->is_symlink(error))
        fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, error);
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, error);
    fs::remove_all(path_, error);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string normalize(std::string text, const fs::path& dir) {
  for (const std::string& d : {fs::weakly_canonical(dir).string(), dir.string()})
    for (std::size_t at; (at = text.find(d)) != std::string::npos;) text.replace(at, d.size(), "%t");
  static const std::regex key("(^|[^0-9A-Za-z])([0-9a-f]{64}|[0-9a-f]{12})(?![0-9A-Za-z])");
  return std::regex_replace(text, key, "$1<KEY>");
}

std::string substitute(std::string text, const fs::path& dir) {
  for (std::size_t at; (at = text.find("%t")) != std::string::npos;) text.replace(at, 2, dir.string());
  return text;
}

// An unprivileged user to run a case's commands as, where the tests run as root.
struct RunAs {
  uid_t uid;
  gid_t gid;
};

constexpr const char* kSetpriv = "/usr/bin/setpriv";  // util-linux, in every Debian

// nobody:nogroup, for cases whose checks need file permissions to apply (not to root).
RunAs unprivileged_user() {
  const passwd* user = getpwnam("nobody");
  const group* group = getgrnam("nogroup");
  if (!user || !group) throw std::runtime_error("no user nobody or group nogroup to run permission cases as");
  if (access(kSetpriv, X_OK) != 0) throw std::runtime_error(std::string(kSetpriv) + " is needed to run permission cases as root");
  return {user->pw_uid, group->gr_gid};
}

// Gives `dir` and everything in it to `user` (modes stay), so that the user meets exactly the
// permissions the case set, as their owner would.
void hand_over(const fs::path& dir, const RunAs& user) {
  auto give = [&](const fs::path& p) {
    if (lchown(p.c_str(), user.uid, user.gid) != 0)
      throw std::runtime_error("cannot hand " + p.string() + " to uid " + std::to_string(user.uid) + ": " + std::strerror(errno));
  };
  give(dir);
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) give(e.path());
}

// Runs fxc with RLIMIT_FSIZE set for the child when `fsize` is given, and as `user` through
// setpriv when given. SIGXFSZ keeps its default action (the end of the process): fxc ignores
// it itself, so that a write past the limit fails with EFBIG, as on a full disk (until
// 2026-11-29 this runner ignored it for fxc, and hid that fxc was killed without a word).
CommandResult run_fxc(std::vector<std::string> args, const fs::path& dir, const std::vector<std::string>& env,
                      std::optional<rlim_t> fsize, const std::optional<RunAs>& user = std::nullopt,
                      const std::optional<std::string>& stack_kb = std::nullopt) {
  args.front() = FXC_BINARY;
  // The stack limit is set by a shell that then becomes fxc: set here, it would bound this
  // process's own stack while it waits.
  if (stack_kb) args.insert(args.begin(), {"/bin/sh", "-c", "ulimit -s " + *stack_kb + " && exec \"$0\" \"$@\""});
  if (user)
    args.insert(args.begin(), {kSetpriv, "--reuid=" + std::to_string(user->uid), "--regid=" + std::to_string(user->gid),
                               "--clear-groups", "--"});
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  if (fsize) {
    rlimit limited = saved;
    limited.rlim_cur = *fsize;
    setrlimit(RLIMIT_FSIZE, &limited);
  }
  CommandResult r = fxc::test::run_command(args, dir, env);
  if (fsize) setrlimit(RLIMIT_FSIZE, &saved);
  return r;
}

// As in the golden tier: the CPU strategies assume 32-byte vectors on hosts with AVX2 and FMA.
bool host_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool is_expectation(const std::string& verb) {
  return verb == "exit" || verb == "stderr" || verb == "stderr-contains" || verb == "stdout" ||
         verb == "stdout-contains";
}

struct Rewrite {
  std::size_t begin, end;
  std::string text;
};

struct CaseRun {
  std::vector<std::string> categories;
  int commands = 0;
  bool skipped = false;
};

// Runs one case; failures are reported through doctest.
CaseRun run_case(const fs::path& file, bool rewrite) {
  const std::string name = file.filename().string();
  std::vector<std::string> lines = split_lines(read_file_bytes(file));
  std::vector<Directive> directives = parse_case(lines);
  CaseRun result;
  TempDir tmp;
  const fs::path& dir = tmp.path();
  std::vector<std::string> env = {"FXC_CACHE_DIR=" + (dir / "cache").string()};
  fs::path cache = dir / "cache";
  std::optional<rlim_t> fsize;
  std::optional<std::string> stack_kb;  // limit-stack
  std::optional<RunAs> user;  // set by `requires non-root` when running as root
  std::vector<Rewrite> rewrites;

  for (std::size_t k = 0; k < directives.size(); ++k) {
    const Directive& d = directives[k];
    INFO(name << ":" << d.line << ": " << d.verb << " " << d.rest);
    const std::vector<std::string>& w = d.words;
    auto at = [&](const std::string& p) { return dir / p; };
    auto need = [&](std::size_t n) {
      if (w.size() < n) throw std::runtime_error(name + ":" + std::to_string(d.line) + ": '" + d.verb + "' needs " + std::to_string(n) + " argument(s)");
    };

    if (d.verb == "category") {
      need(1);
      result.categories.push_back(w[0]);
    } else if (d.verb == "requires") {
      need(1);
      if (w[0] == "non-root") {
        if (geteuid() == 0) user = unprivileged_user();
      } else if (w[0] == "avx2") {
        if (!host_has_avx2()) {
          MESSAGE("skipping " << name << ": the strategy it needs is chosen on hosts with AVX2 and FMA");
          result.skipped = true;
          return result;
        }
      } else {
        throw std::runtime_error("unknown requirement " + w[0]);
      }
    } else if (d.verb == "file") {
      need(1);
      REQUIRE_MESSAGE(d.body.has_value(), "'file' needs a <<END block");
      write_bytes(at(w[0]), *d.body);
    } else if (d.verb == "bytes") {
      need(1);
      write_bytes(at(w[0]), unescape(d.rest.substr(d.rest.find(w[0]) + w[0].size() + 1)));
    } else if (d.verb == "append") {
      need(3);
      const std::string piece = unescape(d.rest.substr(d.rest.find(w[1], d.rest.find(w[0]) + w[0].size()) + w[1].size() + 1));
      std::string bytes = fs::exists(at(w[0])) ? read_file_bytes(at(w[0])) : std::string();
      for (unsigned long i = 0, n = std::stoul(w[1]); i < n; ++i) bytes += piece;
      write_bytes(at(w[0]), bytes);
    } else if (d.verb == "npy") {
      need(1);
      write_bytes(at(w[0]), make_npy(key_values(w, 1)));
    } else if (d.verb == "wav") {
      need(1);
      write_bytes(at(w[0]), make_wav(key_values(w, 1)));
    } else if (d.verb == "patch") {
      need(3);
      std::string bytes = read_file_bytes(at(w[0]));
      std::size_t offset = std::stoul(w[1]);
      for (std::size_t i = 0; i + 1 < w[2].size(); i += 2)
        bytes.at(offset + i / 2) = static_cast<char>(std::stoi(w[2].substr(i, 2), nullptr, 16));
      write_bytes(at(w[0]), bytes);
    } else if (d.verb == "truncate") {
      need(2);
      fs::resize_file(at(w[0]), std::stoull(w[1]));
    } else if (d.verb == "mkdir") {
      need(1);
      fs::create_directories(at(w[0]));
    } else if (d.verb == "chmod") {
      need(2);
      fs::permissions(at(w[1]), static_cast<fs::perms>(std::stoi(w[0], nullptr, 8)));
    } else if (d.verb == "symlink") {
      need(2);
      fs::create_symlink(w[1], at(w[0]));
    } else if (d.verb == "mkfifo") {
      need(1);
      REQUIRE(::mkfifo(at(w[0]).c_str(), 0600) == 0);
    } else if (d.verb == "env") {
      need(1);
      std::string setting = substitute(w[0], dir);
      std::string key = setting.substr(0, setting.find('='));
      std::erase_if(env, [&](const std::string& e) { return e.rfind(key + "=", 0) == 0; });
      env.push_back(setting);
      if (key == "FXC_CACHE_DIR") cache = setting.substr(key.size() + 1);
    } else if (d.verb == "limit-stack") {
      need(1);
      if (w[0] == "none") stack_kb.reset();
      else if (std::all_of(w[0].begin(), w[0].end(), ::isdigit)) stack_kb = w[0];
      else if (w[0] == "unlimited") {
        // Where the hard limit is lower (some containers), its value: as large as it gets.
        rlimit hard{};
        getrlimit(RLIMIT_STACK, &hard);
        stack_kb = hard.rlim_max == RLIM_INFINITY ? w[0] : std::to_string(hard.rlim_max / 1024);
      }
      else throw std::runtime_error("limit-stack takes a number of KB, 'unlimited' or 'none'");
    } else if (d.verb == "limit-fsize") {
      need(1);
      if (w[0] == "none") fsize.reset();
      else fsize = static_cast<rlim_t>(std::stoull(w[0]));
    } else if (d.verb.rfind("cache-", 0) == 0 && d.verb != "cache-entries") {
      need(1);
      int damaged = 0;
      std::error_code error;
      for (const fs::directory_entry& e : fs::directory_iterator(cache, error)) {
        if (e.path().extension() != "." + w[0]) continue;
        ++damaged;
        if (d.verb == "cache-truncate") {
          need(2);
          fs::resize_file(e.path(), std::stoull(w[1]));
        } else if (d.verb == "cache-write") {
          write_bytes(e.path(), unescape(d.rest.substr(d.rest.find(w[0]) + w[0].size() + 1)));
        } else if (d.verb == "cache-remove") {
          fs::remove(e.path());
        } else if (d.verb == "cache-flip") {
          need(2);
          std::string bytes = read_file_bytes(e.path());
          bytes.at(std::stoul(w[1])) ^= 0x55;
          write_bytes(e.path(), bytes);
        } else {
          throw std::runtime_error("unknown directive " + d.verb);
        }
      }
      CHECK_MESSAGE(damaged > 0, "no ." << w[0] << " file in the cache to damage");
    } else if (d.verb == "run") {
      need(2);
      REQUIRE_MESSAGE(w[0] == "fxc", "a command starts with 'fxc'");
      std::vector<std::string> args;
      for (const std::string& a : w) args.push_back(substitute(a, dir));
      std::map<std::string, std::string> before;
      for (const std::string& o : output_paths(args)) before[o] = path_state(dir / o);
      if (user) hand_over(dir, *user);
      CommandResult r = run_fxc(args, dir, env, fsize, user, stack_kb);
      ++result.commands;
      std::string err = normalize(r.err, dir), out = normalize(r.out, dir);
      int want_exit = 0;
      bool stderr_checked = false;
      for (; k + 1 < directives.size() && is_expectation(directives[k + 1].verb); ++k) {
        const Directive& e = directives[k + 1];
        INFO(name << ":" << e.line << ": " << e.verb);
        if (e.verb == "exit") {
          want_exit = std::stoi(e.words.at(0));
        } else if (e.verb == "stderr" || e.verb == "stdout") {
          REQUIRE_MESSAGE(e.body.has_value(), "'" << e.verb << "' needs a <<END block");
          const std::string& got = e.verb == "stderr" ? err : out;
          stderr_checked |= e.verb == "stderr";
          if (rewrite) rewrites.push_back({e.body_begin, e.body_end, got});
          else CHECK_MESSAGE(got == *e.body, e.verb << " differs.\nexpected:\n" << *e.body << "actual:\n" << got);
        } else {
          const std::string& got = e.verb == "stderr-contains" ? err : out;
          stderr_checked |= e.verb == "stderr-contains";
          CHECK_MESSAGE(got.find(e.rest) != std::string::npos,
                        e.verb << " '" << e.rest << "' not found in:\n" << got);
        }
      }
      CHECK_MESSAGE(r.exit_code == want_exit, "'" << d.rest << "' exited with " << r.exit_code << ", expected "
                                                  << want_exit << "\nstderr:\n" << err);
      if (!stderr_checked) CHECK_MESSAGE(err.empty(), "unexpected standard error:\n" << err);
      if (r.exit_code != 0)
        for (const auto& [path, state] : before) {
          std::string now = path_state(dir / path);
          CHECK_MESSAGE(now == state, "the failed command changed its output '" << path << "': it was " << state
                                                                                 << ", it is " << now);
        }
    } else if (d.verb == "absent") {
      need(1);
      std::error_code error;
      CHECK_MESSAGE(!fs::exists(fs::symlink_status(at(w[0]), error)), w[0] << " exists");
    } else if (d.verb == "exists") {
      need(1);
      CHECK_MESSAGE(fs::exists(at(w[0])), w[0] << " does not exist");
    } else if (d.verb == "is-link") {
      need(2);
      std::error_code error;
      CHECK_MESSAGE(fs::is_symlink(fs::symlink_status(at(w[0]), error)), w[0] << " is not a symbolic link");
      CHECK_MESSAGE(fs::read_symlink(at(w[0]), error).string() == w[1], w[0] << " does not lead to " << w[1]);
    } else if (d.verb == "only-entries") {
      need(1);
      std::vector<std::string> want(w.begin() + 1, w.end()), got;
      for (const fs::directory_entry& e : fs::directory_iterator(at(w[0]))) got.push_back(e.path().filename().string());
      std::sort(want.begin(), want.end());
      std::sort(got.begin(), got.end());
      std::string got_text;
      for (const std::string& g : got) got_text += " " + g;
      CHECK_MESSAGE(got == want, w[0] << " holds:" << got_text);
    } else if (d.verb == "npy-check") {
      need(1);
      std::string why;
      std::optional<NpyData> npy = read_npy(at(w[0]), why);
      REQUIRE_MESSAGE(npy.has_value(), w[0] << ": " << why);
      for (const auto& [key, value] : key_values(w, 1)) {
        if (key == "shape") CHECK_MESSAGE(shape_string(npy->shape) == value, "shape " << shape_string(npy->shape));
        else if (key == "descr") CHECK_MESSAGE(npy->descr == value, "descr " << npy->descr);
        else {
          std::size_t count = 0;
          for (double v : npy->values)
            count += key == "nan" ? std::isnan(v) : key == "nonfinite" ? !std::isfinite(v) : key == "zeros" ? v == 0 : 0;
          if (key != "nan" && key != "nonfinite" && key != "zeros") FAIL("unknown npy-check key " << key);
          CHECK_MESSAGE(std::to_string(count) == value, key << " = " << count << ", expected " << value);
        }
      }
    } else if (d.verb == "npy-match") {
      need(2);
      std::string why;
      std::optional<NpyData> a = read_npy(at(w[0]), why), b = read_npy(at(w[1]), why);
      REQUIRE_MESSAGE((a && b), why);
      double tol = std::stod(key_values(w, 2).count("tol") ? key_values(w, 2).at("tol") : "1e-9");
      CHECK_MESSAGE(a->shape == b->shape, "shapes " << shape_string(a->shape) << " and " << shape_string(b->shape));
      std::size_t differ = 0, first = 0;
      for (std::size_t i = 0; i < std::min(a->values.size(), b->values.size()); ++i) {
        double x = a->values[i], y = b->values[i];
        bool same = !std::isfinite(x) ? !std::isfinite(y)
                                      : std::isfinite(y) && std::abs(x - y) <= tol * std::max(1.0, std::abs(x));
        if (!same && differ++ == 0) first = i;
      }
      CHECK_MESSAGE(differ == 0, differ << " value(s) differ, the first at flat index " << first << ": "
                                        << a->values[first] << " and " << b->values[first]);
    } else if (d.verb == "wav-check") {
      need(1);
      auto info = wav_info(at(w[0]));
      REQUIRE_MESSAGE(info.has_value(), w[0] << " is not a WAV file fxc wrote");
      auto kv = key_values(w, 1);
      if (kv.count("channels")) CHECK(std::to_string(info->first) == kv["channels"]);
      if (kv.count("frames")) CHECK(std::to_string(info->second) == kv["frames"]);
    } else if (d.verb == "cache-entries") {
      need(1);
      std::vector<std::string> problems;
      CHECK(whole_cache_entries(cache, problems) == std::stoi(w[0]));
    } else {
      FAIL("unknown directive '" << d.verb << "'");
    }
  }

  // What must hold after any case.
  INFO(name << ": after the case");
  std::vector<std::string> left = leftover_files(dir);
  std::string left_text;
  for (const std::string& f : left) left_text += " " + f;
  CHECK_MESSAGE(left.empty(), "left behind:" << left_text);
  std::error_code error;
  if (fs::is_directory(cache, error)) {
    std::vector<std::string> problems;
    whole_cache_entries(cache, problems);
    std::string text;
    for (const std::string& p : problems) text += "\n  " + p;
    CHECK_MESSAGE(problems.empty(), "broken cache entries:" << text);
    CommandResult list = run_fxc({"fxc", "cache", "list"}, dir, env, std::nullopt);
    CHECK_MESSAGE((list.exit_code == 0 && list.err.empty()), "fxc cache list: exit " << list.exit_code << "\n" << list.err);
  }

  if (rewrite && !rewrites.empty()) {
    std::sort(rewrites.begin(), rewrites.end(), [](const Rewrite& a, const Rewrite& b) { return a.begin > b.begin; });
    for (const Rewrite& r : rewrites) {
      std::vector<std::string> body = split_lines(r.text);
      lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(r.begin), lines.begin() + static_cast<std::ptrdiff_t>(r.end));
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(r.begin), body.begin(), body.end());
    }
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    write_bytes(file, text);
  }
  return result;
}

std::vector<fs::path> case_files() {
  std::vector<fs::path> out;
  for (const fs::directory_entry& e : fs::directory_iterator(FXC_BADINPUT_DIR))
    if (e.path().extension() == ".case") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("every bad-input case fails (or succeeds) as its file says, and leaves nothing broken") {
  const char* update = std::getenv("FXC_UPDATE_GOLDEN");
  const bool rewrite = update && std::string(update) == "1";
  std::vector<fs::path> all = case_files();
  CHECK(all.size() >= 40);
  std::set<std::string> covered;
  for (const fs::path& file : all) {
    INFO("case: " << file.filename().string());
    CaseRun run;
    try {
      run = run_case(file, rewrite);
    } catch (const std::exception& e) {
      FAIL_CHECK("the case could not run: " << e.what());
      continue;
    }
    CHECK_MESSAGE(!run.categories.empty(), "a case names its category");
    for (const std::string& c : run.categories) {
      CHECK_MESSAGE(std::find(kCategories.begin(), kCategories.end(), c) != kCategories.end(),
                    "unknown category '" << c << "'");
      covered.insert(c);
    }
    if (!run.skipped) CHECK_MESSAGE(run.commands > 0, "a case runs fxc at least once");
  }
  for (const std::string& c : kCategories) CHECK_MESSAGE(covered.count(c), "no case for category '" << c << "'");
}

TEST_CASE("normalization replaces the case directory and cache keys only") {
  fs::path dir = "/tmp/fxc-badinput-abc";
  CHECK(normalize("cannot write '/tmp/fxc-badinput-abc/x.npy'", dir) == "cannot write '%t/x.npy'");
  CHECK(normalize("entry 0123456789ab in", dir) == "entry <KEY> in");
  CHECK(normalize("got 1234567890123 samples", dir) == "got 1234567890123 samples");
  CHECK(normalize("0123456789abcdef", dir) == "0123456789abcdef");
}

// The cases set FXC_CACHE_DIR themselves; nothing from the caller's environment may choose
// another cache or turn colour on.
int main(int argc, char** argv) {
  unsetenv("FXC_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  return fxc::test::run_tests(argc, argv);
}

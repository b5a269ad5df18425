// SPDX-License-Identifier: Apache-2.0
// corpus/: list_inputs (globs, **, directories, errors), shard (a partition, deterministic),
// output_paths and all_output_paths (fields, --out-dir, clashes), and CorpusRunner (written,
// skipped and failed files; outputs equal to a direct Program run written as fxc run does).
#define DOCTEST_CONFIG_IMPLEMENT
#include "test_main.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "corpus/abandoned_pending.h"
#include "corpus/corpus_runner.h"
#include "corpus/file_list.h"
#include "corpus/output_names.h"
#include "corpus/pending_outputs.h"
#include "corpus/sample_scan.h"
#include "expected_text.h"
#include "formats/signal_file.h"

namespace fs = std::filesystem;
using fxc::corpus::InputFile;

namespace {

// A fresh directory, and the process working in it, for the length of a test.
class Workspace {
 public:
  Workspace() {
    std::string pattern = (fs::temp_directory_path() / "fxc-corpus-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
    old_ = fs::current_path();
    fs::current_path(path_);
  }
  ~Workspace() {
    fs::current_path(old_);
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_, old_;
};

void touch(const std::string& path) {
  fs::create_directories(fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path());
  std::ofstream(path) << "x";
}

std::vector<std::string> paths_of(const std::vector<InputFile>& files) {
  std::vector<std::string> out;
  for (const InputFile& f : files) out.push_back(f.path);
  return out;
}

// A short mono or stereo noise file in the given format.
void write_noise(const std::string& path, double fs_hz, std::size_t channels, std::optional<std::string> subtype,
                 unsigned seed = 1) {
  fxc::Signal s(channels, 2000, fxc::DType::f64);
  unsigned state = seed;
  for (std::size_t c = 0; c < channels; ++c)
    for (double& x : s.f64(c)) {
      state = state * 1664525u + 1013904223u;
      x = (static_cast<double>(state >> 8) / 16777216.0 - 0.5) * 0.5;
    }
  fs::create_directories(fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path());
  auto ok = fxc::write_signal_file(path, s, fs_hz, fxc::WriteOptions{std::move(subtype)});
  REQUIRE(ok);
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

constexpr const char* kStereoGraph = "input x : 2\noutput y = x | butter(2, 3 kHz, highpass) | gain(-1 dB)\n";
constexpr const char* kAnyGraph = "input x\noutput y = x | butter(2, 3 kHz)\n";

}  // namespace

TEST_CASE("list_inputs expands globs within a directory and ** across directories") {
  Workspace w;
  for (const char* p : {"c/a.wav", "c/b.WAV", "c/n.npy", "c/t.txt", "c/s/d.wav", "c/s/t/e.wav", "c/.h.wav"}) touch(p);
  auto top = fxc::corpus::list_inputs({"c/*.wav"});
  REQUIRE(top);
  CHECK(paths_of(*top) == std::vector<std::string>{"c/a.wav"});  // case matters in a glob; .h.wav is hidden
  auto deep = fxc::corpus::list_inputs({"c/**/*.wav"});
  REQUIRE(deep);
  CHECK(paths_of(*deep) == std::vector<std::string>{"c/a.wav", "c/s/d.wav", "c/s/t/e.wav"});
  CHECK((*deep)[2].relative_dir == "s/t");
  CHECK((*deep)[0].relative_dir == "");
  auto chars = fxc::corpus::list_inputs({"c/?.[nw]*"});
  REQUIRE(chars);
  CHECK(paths_of(*chars) == std::vector<std::string>{"c/a.wav", "c/n.npy"});
  auto mid = fxc::corpus::list_inputs({"c/*/d.wav"});
  REQUIRE(mid);
  CHECK(paths_of(*mid) == std::vector<std::string>{"c/s/d.wav"});
  CHECK((*mid)[0].relative_dir == "s");
  // A literal last name is listed only where it is: 'c/**/d.wav' listed c/d.wav and c/s/t/d.wav
  // too (and 'c/*/d.wav' the same name in every directory), each then failing as unreadable.
  touch("c/u/x.txt");
  auto literal = fxc::corpus::list_inputs({"c/**/d.wav"});
  REQUIRE(literal);
  CHECK(paths_of(*literal) == std::vector<std::string>{"c/s/d.wav"});
  mid = fxc::corpus::list_inputs({"c/*/d.wav"});
  REQUIRE(mid);
  CHECK(paths_of(*mid) == std::vector<std::string>{"c/s/d.wav"});
  // What is there but cannot be read (a broken link) is listed, for the run to report.
  fs::create_symlink("nowhere.wav", "c/u/d.wav");
  mid = fxc::corpus::list_inputs({"c/*/d.wav"});
  REQUIRE(mid);
  CHECK(paths_of(*mid) == std::vector<std::string>{"c/s/d.wav", "c/u/d.wav"});
}

// A run's --out-dir inside its input directory: a second run (--skip-existing, to finish an
// interrupted one) listed the first run's outputs as inputs and refused to replace them.
TEST_CASE("list_inputs leaves out what is under the run's output directory") {
  Workspace w;
  for (const char* p : {"c/a.wav", "c/s/b.wav", "c/out/a.wav", "c/out/s/b.wav"}) touch(p);
  auto files = fxc::corpus::list_inputs({"c"}, {"c/out"});
  REQUIRE(files);
  CHECK(paths_of(*files) == std::vector<std::string>{"c/a.wav", "c/s/b.wav"});
  files = fxc::corpus::list_inputs({"c/**/*.wav"}, {"./c/out/"});  // however the directory is named
  REQUIRE(files);
  CHECK(paths_of(*files) == std::vector<std::string>{"c/a.wav", "c/s/b.wav"});
  files = fxc::corpus::list_inputs({"c"}, {"elsewhere"});  // not there yet: nothing left out
  REQUIRE(files);
  CHECK(files->size() == 4);
  files = fxc::corpus::list_inputs({"c/out/a.wav"}, {"c/out"});  // a file named as such is taken
  REQUIRE(files);
  CHECK(files->size() == 1);
  // The input directory itself, or one above it, as the output directory: everything is
  // listed, for the run to refuse outputs over inputs (not a corpus of nothing, exit 0).
  files = fxc::corpus::list_inputs({"c"}, {"c"});
  REQUIRE(files);
  CHECK(files->size() == 4);
  files = fxc::corpus::list_inputs({"c/out"}, {"c"});
  REQUIRE(files);
  CHECK(files->size() == 2);
  files = fxc::corpus::list_inputs({"c/out/*.wav"}, {"."});
  REQUIRE(files);
  CHECK(files->size() == 1);
  // Nothing left once the output directory is left out: said, as for an empty directory.
  fs::remove("c/a.wav");
  fs::remove_all("c/s");
  files = fxc::corpus::list_inputs({"c"}, {"c/out"});
  REQUIRE_FALSE(files);
  CHECK(files.error() == "'c' holds no audio or .npy file outside the output directory");
}

TEST_CASE("list_inputs takes directories recursively with signal extensions only") {
  Workspace w;
  for (const char* p : {"c/a.wav", "c/b.WAV", "c/n.npy", "c/t.txt", "c/s/d.flac", "c/.hidden/x.wav", "c/.fxc-pending-1-0-a.wav"})
    touch(p);
  auto files = fxc::corpus::list_inputs({"c/"});
  REQUIRE(files);
  CHECK(paths_of(*files) == std::vector<std::string>{"c/a.wav", "c/b.WAV", "c/n.npy", "c/s/d.flac"});
  CHECK((*files)[3].relative_dir == "s");
}

TEST_CASE("list_inputs sorts and removes duplicates across specs") {
  Workspace w;
  for (const char* p : {"c/b.wav", "c/a.wav", "z.wav"}) touch(p);
  auto files = fxc::corpus::list_inputs({"z.wav", "c", "c/*.wav", "c/a.wav"});
  REQUIRE(files);
  CHECK(paths_of(*files) == std::vector<std::string>{"c/a.wav", "c/b.wav", "z.wav"});
}

TEST_CASE("list_inputs reports a missing path and a glob or directory without files") {
  Workspace w;
  touch("c/t.txt");
  auto missing = fxc::corpus::list_inputs({"nothing.wav"});
  REQUIRE_FALSE(missing);
  CHECK(missing.error() == "cannot read 'nothing.wav': No such file or directory");
  auto no_match = fxc::corpus::list_inputs({"c/*.wav"});
  REQUIRE_FALSE(no_match);
  CHECK(no_match.error() == "'c/*.wav' matches no file");
  auto empty_dir = fxc::corpus::list_inputs({"c"});
  REQUIRE_FALSE(empty_dir);
  CHECK(empty_dir.error().find("holds no audio or .npy file") != std::string::npos);
}

TEST_CASE("shard partitions the sorted list: union is the list and shards are disjoint") {
  std::vector<InputFile> files;
  for (int i = 0; i < 23; ++i) files.push_back({"f" + std::to_string(100 + i) + ".wav", ""});
  for (int count : {1, 2, 3, 7, 23, 40}) {
    std::multiset<std::string> seen;
    for (int index = 1; index <= count; ++index) {
      auto part = fxc::corpus::shard(files, index, count);
      CHECK(part == fxc::corpus::shard(files, index, count));  // deterministic
      for (std::size_t j = 0; j < part.size(); ++j) {
        // The rule as documented: file k (from 0) goes to shard k mod N + 1.
        CHECK(part[j] == files[static_cast<std::size_t>(index - 1) + j * static_cast<std::size_t>(count)]);
        seen.insert(part[j].path);
      }
    }
    CHECK(seen.size() == files.size());
    CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == files.size());
  }
  CHECK_THROWS_AS(fxc::corpus::shard(files, 0, 3), std::invalid_argument);
  CHECK_THROWS_AS(fxc::corpus::shard(files, 4, 3), std::invalid_argument);
}

TEST_CASE("output_paths fills every field of a pattern") {
  InputFile in{"corpus/a/b/take.1.wav", "a/b"};
  auto one = fxc::corpus::output_paths({"", "out/{dir}/{stem}_eq.{ext}"}, in, {"y"});
  REQUIRE(one);
  CHECK(*one == std::vector<std::string>{"out/a/b/take.1_eq.wav"});
  auto named = fxc::corpus::output_paths({"", "o/{name}.{output}.npy"}, in, {"low", "high"});
  REQUIRE(named);
  CHECK(*named == std::vector<std::string>{"o/take.1.wav.low.npy", "o/take.1.wav.high.npy"});
  auto root = fxc::corpus::output_paths({"", "{dir}/{stem}.flac"}, InputFile{"x.wav", ""}, {"y"});
  REQUIRE(root);
  CHECK(*root == std::vector<std::string>{"x.flac"});  // no leading '/' for an empty {dir}
  auto braces = fxc::corpus::output_paths({"", "o/{{{stem}}}.wav"}, in, {"y"});
  REQUIRE(braces);
  CHECK(*braces == std::vector<std::string>{"o/{take.1}.wav"});
}

TEST_CASE("has_pattern_field: a {word} makes a pattern, an escaped {{ does not") {
  using fxc::corpus::has_pattern_field;
  CHECK(has_pattern_field("out/{stem}.wav"));
  CHECK(has_pattern_field("{{x}}{stem}.wav"));
  CHECK(has_pattern_field("{stme}.wav"));  // a misspelt field is a pattern (and then an error)
  CHECK_FALSE(has_pattern_field("lit{{x}}.wav"));
  CHECK_FALSE(has_pattern_field("a{}.wav"));
  CHECK_FALSE(has_pattern_field("plain.wav"));
}

TEST_CASE("output_paths under --out-dir mirrors the input's directory") {
  InputFile in{"corpus/a/take.wav", "a"};
  auto one = fxc::corpus::output_paths({"out/", ""}, in, {"y"});
  REQUIRE(one);
  CHECK(*one == std::vector<std::string>{"out/a/take.wav"});
  auto two = fxc::corpus::output_paths({"out", ""}, in, {"low", "high"});
  REQUIRE(two);
  CHECK(*two == std::vector<std::string>{"out/a/take_low.wav", "out/a/take_high.wav"});
  // An input without an extension has none to give: said at the field, not as a "take." output
  // whose extension '.' is unknown. A pattern that names its own extension is fine.
  auto bare = fxc::corpus::output_paths({"out", ""}, InputFile{"corpus/take", ""}, {"y"});
  REQUIRE_FALSE(bare);
  CHECK(bare.error() ==
        "the input 'corpus/take' has no extension to give its output ({ext}): name the outputs with a pattern that "
        "has one, such as -o 'out/{dir}/{stem}.wav'");
  auto named = fxc::corpus::output_paths({"", "out/{stem}.flac"}, InputFile{"corpus/take", ""}, {"y"});
  REQUIRE(named);
  CHECK(*named == std::vector<std::string>{"out/take.flac"});
}

TEST_CASE("output_paths refuses unknown fields and several outputs without {output}") {
  InputFile in{"a.wav", ""};
  auto unknown = fxc::corpus::output_paths({"", "o/{base}.wav"}, in, {"y"});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().find("unknown field '{base}'") != std::string::npos);
  // A brace meant literally (`take{1}.wav`) is told how to write one.
  CHECK(unknown.error().find("'{{' and '}}' are literal braces") != std::string::npos);
  auto unclosed = fxc::corpus::output_paths({"", "o/{stem.wav"}, in, {"y"});
  REQUIRE_FALSE(unclosed);
  auto several = fxc::corpus::output_paths({"", "o/{stem}.wav"}, in, {"low", "high"});
  REQUIRE_FALSE(several);
  CHECK(several.error().find("needs {output}") != std::string::npos);
}

TEST_CASE("all_output_paths finds two inputs that map to one output and an output over its input") {
  std::vector<InputFile> files{{"c/a/x.wav", "a"}, {"c/b/x.wav", "b"}};
  auto flat = fxc::corpus::all_output_paths({"", "out/{stem}.wav"}, files, {"y"});
  REQUIRE_FALSE(flat);
  CHECK(flat.error() == "'c/a/x.wav' and 'c/b/x.wav' map to the same output 'out/x.wav' (add {dir} or {ext} to the "
                        "pattern, or rename one)");
  // A pattern without the input's name is told to add it: {dir} alone is empty at the root.
  std::vector<InputFile> root{{"c/x.wav", ""}, {"c/y.wav", ""}};
  auto nameless = fxc::corpus::all_output_paths({"", "out/{dir}.wav"}, root, {"y"});
  REQUIRE_FALSE(nameless);
  CHECK(nameless.error() ==
        "'c/x.wav' and 'c/y.wav' map to the same output 'out/.wav' (add {stem} or {name} to the pattern)");
  auto mirrored = fxc::corpus::all_output_paths({"out", ""}, files, {"y"});
  REQUIRE(mirrored);
  CHECK((*mirrored)[1] == std::vector<std::string>{"out/b/x.wav"});
  auto over_input = fxc::corpus::all_output_paths({"c", ""}, files, {"y"});
  REQUIRE_FALSE(over_input);
  CHECK(over_input.error().find("would replace the input 'c/a/x.wav'") != std::string::npos);
}

TEST_CASE("CorpusRunner writes what a Program run writes and keeps the input's subtype") {
  Workspace w;
  write_noise("in/a.wav", 44100, 2, "pcm16");
  fxc::corpus::CorpusRunner runner(kStereoGraph, true, {});
  CHECK(runner.output_names() == std::vector<std::string>{"y"});
  fxc::corpus::FileResult r = runner.process({"in/a.wav", ""}, {"out/a.wav"});
  INFO(r.message);
  REQUIRE(r.status == fxc::corpus::FileResult::Status::written);
  CHECK(r.frames == 2000);
  CHECK(r.sample_rate_hz == 44100);
  CHECK(r.channels == 2);
  CHECK(r.peak > 0);
  auto out = fxc::read_signal_file("out/a.wav", fxc::DType::f64);
  REQUIRE(out);
  CHECK(out->subtype == "pcm16");

  // The same through the public API, as fxc run does it (float64, constants compiled in).
  auto in = fxc::read_signal_file("in/a.wav", fxc::DType::f64);
  REQUIRE(in);
  fxc::Options o = fxc::corpus::default_corpus_options();
  o.sample_rate_hz = 44100;
  o.signal_length = 2000;
  o.max_block = 2000;
  fxc::Program program = fxc::Program::from_source(kStereoGraph, o, "<source>");
  fxc::Signal y = program.run(in->signal);
  auto ok = fxc::write_signal_file("direct.wav", y, 44100.0, fxc::WriteOptions{"pcm16"});
  REQUIRE(ok);
  CHECK(bytes_of("direct.wav") == bytes_of("out/a.wav"));
  double peak = 0;  // the manifest's peak: the run's largest |sample|, before the file's rounding
  for (std::size_t c = 0; c < y.channels(); ++c)
    for (double v : y.f64(c)) peak = std::max(peak, std::abs(v));
  CHECK(r.peak == peak);
}

namespace {

// The scans against plain loops, on signals whose lengths leave a tail past the scans' lanes.
template <class T>
fxc::Signal signal_of(const std::vector<std::vector<T>>& channels) {
  const fxc::DType dtype = sizeof(T) == 4 ? fxc::DType::f32 : fxc::DType::f64;
  fxc::Signal s(channels.size(), channels.empty() ? 0 : channels[0].size(), dtype);
  for (std::size_t c = 0; c < channels.size(); ++c)
    for (std::size_t i = 0; i < channels[c].size(); ++i) {
      if constexpr (sizeof(T) == 4) s.f32(c)[i] = channels[c][i];
      else s.f64(c)[i] = channels[c][i];
    }
  return s;
}

template <class T>
void check_scans_of_type() {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  for (std::size_t n : {0, 1, 7, 8, 9, 23, 1000}) {
    CAPTURE(n);
    std::vector<std::vector<T>> x(3, std::vector<T>(n));
    for (std::size_t c = 0; c < 3; ++c)
      for (std::size_t i = 0; i < n; ++i) x[c][i] = static_cast<T>(std::sin(0.37 * static_cast<double>(i * 3 + c)) * 0.9);
    double expect = 0;
    for (auto& ch : x)
      for (T v : ch) expect = std::max(expect, std::abs(static_cast<double>(v)));
    CHECK(fxc::corpus::peak_magnitude(signal_of(x)) == expect);
    CHECK(fxc::corpus::non_finite_samples(signal_of(x)).nans == 0);
    if (n == 0) continue;
    // The largest magnitude negative, in the last sample (the tail past the lanes where n % 8).
    x[2][n - 1] = T(-1.5);
    CHECK(fxc::corpus::peak_magnitude(signal_of(x)) == 1.5);
    x[1][n / 2] = -inf;
    CHECK(fxc::corpus::peak_magnitude(signal_of(x)) == std::numeric_limits<double>::infinity());
    // A NaN anywhere makes the peak NaN, before or after the infinity.
    x[0][n - 1] = nan;
    CHECK(std::isnan(fxc::corpus::peak_magnitude(signal_of(x))));
    const fxc::corpus::NonFiniteSamples f = fxc::corpus::non_finite_samples(signal_of(x));
    CHECK(f.nans == 1);
    CHECK(f.infinities == 1);
    // The first by sample index, then by channel: the infinity at n / 2 (channel 1) unless the
    // NaN's n - 1 is lower, which it never is; equal (n = 1) goes to channel 0.
    CHECK(f.first_sample == n / 2);
    CHECK(f.first_channel == (n / 2 == n - 1 ? 0u : 1u));
  }
}

}  // namespace

TEST_CASE("the corpus's sample scans: peak (NaN wins), non-finite counts and the first place") {
  check_scans_of_type<float>();
  check_scans_of_type<double>();
  CHECK(std::isnan(fxc::corpus::larger_peak(std::nan(""), 2.0)));
  CHECK(std::isnan(fxc::corpus::larger_peak(2.0, std::nan(""))));
  CHECK(fxc::corpus::larger_peak(2.0, 3.0) == 3.0);
  const std::string warning = fxc::corpus::non_finite_warning(
      signal_of(std::vector<std::vector<double>>{{0, 1, std::nan("")}, {0, -INFINITY, 0}}), "x.wav");
  CHECK(warning.find("holds 1 NaN and 1 infinite sample(s), the first at sample 1 of channel 1") != std::string::npos);
}

TEST_CASE("CorpusRunner runs each file at its own rate and channel count") {
  Workspace w;
  write_noise("a.wav", 48000, 1, "pcm16");
  write_noise("b.wav", 22050, 3, "pcm24");
  fxc::corpus::CorpusRunner runner(kAnyGraph, true, {});
  auto a = runner.process({"a.wav", ""}, {"o/a.flac"});
  auto b = runner.process({"b.wav", ""}, {"o/b.wav"});
  INFO(a.message << b.message);
  REQUIRE(a.status == fxc::corpus::FileResult::Status::written);
  REQUIRE(b.status == fxc::corpus::FileResult::Status::written);
  auto fa = fxc::read_signal_file("o/a.flac", fxc::DType::f64);
  auto fb = fxc::read_signal_file("o/b.wav", fxc::DType::f64);
  REQUIRE(fa);
  REQUIRE(fb);
  CHECK(fa->sample_rate_hz == 48000);
  CHECK(fa->subtype == "pcm16");  // FLAC holds pcm16: kept
  CHECK(fb->signal.channels() == 3);
  CHECK(fb->subtype == "pcm24");
}

TEST_CASE("CorpusRunner reports a failed file with its path and writes nothing for it") {
  Workspace w;
  write_noise("mono.wav", 48000, 1, "pcm16");
  write_noise("low.wav", 4000, 2, "pcm16");  // 3 kHz is above its Nyquist frequency
  touch("junk.wav");
  fxc::corpus::CorpusRunner runner(kStereoGraph, true, {});
  auto channels = runner.process({"mono.wav", ""}, {"o/mono.wav"});
  CHECK(channels.status == fxc::corpus::FileResult::Status::failed);
  CHECK(channels.message.find("'mono.wav' has 1") != std::string::npos);
  auto nyquist = runner.process({"low.wav", ""}, {"o/low.wav"});
  CHECK(nyquist.status == fxc::corpus::FileResult::Status::failed);
  CHECK(nyquist.message.find("'low.wav' (4000 Hz, 2 channel(s)): ") == 0);
  auto junk = runner.process({"junk.wav", ""}, {"o/junk.wav"});
  CHECK(junk.status == fxc::corpus::FileResult::Status::failed);
  CHECK(junk.message.find("cannot read 'junk.wav'") == 0);
  for (const char* p : {"o/mono.wav", "o/low.wav", "o/junk.wav"}) CHECK_FALSE(fs::exists(p));
}

TEST_CASE("CorpusRunner skips a file whose outputs exist when asked") {
  Workspace w;
  write_noise("a.wav", 48000, 2, "pcm16");
  touch("o/a.wav");
  fxc::corpus::RunnerOptions options;
  options.skip_existing = true;
  fxc::corpus::CorpusRunner runner(kStereoGraph, true, options);
  CHECK(runner.process({"a.wav", ""}, {"o/a.wav"}).status == fxc::corpus::FileResult::Status::skipped);
  CHECK(bytes_of("o/a.wav") == "x");
  fxc::corpus::CorpusRunner again(kStereoGraph, true, {});
  CHECK(again.process({"a.wav", ""}, {"o/a.wav"}).status == fxc::corpus::FileResult::Status::written);
}

TEST_CASE("CorpusRunner refuses a graph with two inputs and a graph that does not parse") {
  CHECK_THROWS_AS(fxc::corpus::CorpusRunner("input a\ninput b\noutput y = a + b\n", true, {}), fxc::Error);
  CHECK_THROWS_AS(fxc::corpus::CorpusRunner("input x\noutput y = x | butterr(2, 1 kHz)\n", true, {}), fxc::Error);
}

int main(int argc, char** argv) {
  std::string cache = (fs::temp_directory_path() / ("fxc-corpus-cache-" + std::to_string(getpid()))).string();
  setenv("FXC_CACHE_DIR", cache.c_str(), 1);
  int status = fxc::test::run_tests(argc, argv);
  std::error_code ignored;
  fs::remove_all(cache, ignored);
  return status;
}

TEST_CASE("CorpusRunner from several threads at once writes what each file gives alone") {
  // fxc run --jobs and the Dask workers' threads share one runner: its Programs, the kernel
  // cache and the pending outputs. Mixed rates and channel counts make shapes compile while
  // other threads run (scripts/tsan.sh runs this case under ThreadSanitizer).
  Workspace w;
  constexpr int kFiles = 12;
  for (int k = 0; k < kFiles; ++k)
    write_noise("in/f" + std::to_string(k) + ".wav", k % 3 == 0 ? 44100 : 48000, 1 + k % 2, "pcm16",
                static_cast<unsigned>(k + 1));
  fxc::corpus::CorpusRunner alone(kAnyGraph, true, {});
  for (int k = 0; k < kFiles; ++k) {
    std::string name = "f" + std::to_string(k) + ".wav";
    REQUIRE(alone.process({"in/" + name, ""}, {"alone/" + name}).status == fxc::corpus::FileResult::Status::written);
  }
  fxc::corpus::CorpusRunner shared(kAnyGraph, true, {});
  std::atomic<int> next{0}, written{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int k; (k = next++) < kFiles;) {
        std::string name = "f" + std::to_string(k) + ".wav";
        if (shared.process({"in/" + name, ""}, {"shared/" + name}).status == fxc::corpus::FileResult::Status::written)
          ++written;
      }
    });
  for (std::thread& t : threads) t.join();
  CHECK(written == kFiles);
  for (int k = 0; k < kFiles; ++k) {
    std::string name = "f" + std::to_string(k) + ".wav";
    CHECK(bytes_of("shared/" + name) == bytes_of("alone/" + name));
  }
}

TEST_CASE("remove_abandoned_pending removes exactly an output's older pending and temporary files") {
  Workspace w;
  auto make = [](const std::string& path, std::filesystem::file_time_type when) {
    std::ofstream(path) << "x";
    fs::last_write_time(path, when);
  };
  auto now = fs::file_time_type::clock::now();
  make("a.wav", now);
  make(".fxc-pending-12-0-a.wav", now - std::chrono::seconds(5));            // abandoned
  make("..fxc-pending-12-1-a.wav.tmp-Ab12Cd", now - std::chrono::seconds(5)); // its temporary
  make(".fxc-pending-12-2-b-a.wav", now - std::chrono::seconds(5));           // another output's
  make(".fxc-pending-13-0-a.wav", now + std::chrono::seconds(5));             // in flight: newer
  make(".fxc-pending-x-0-a.wav", now - std::chrono::seconds(5));              // not a pending name
  CHECK(fxc::corpus::remove_abandoned_pending({"a.wav", "missing.wav"}) == 2);
  CHECK_FALSE(fs::exists(".fxc-pending-12-0-a.wav"));
  CHECK_FALSE(fs::exists("..fxc-pending-12-1-a.wav.tmp-Ab12Cd"));
  for (const char* kept : {"a.wav", ".fxc-pending-12-2-b-a.wav", ".fxc-pending-13-0-a.wav", ".fxc-pending-x-0-a.wav"})
    CHECK(fs::exists(kept));
}

// The outputs of a run are placed all or none: when one cannot be renamed into place (here its
// directory went away; in the hunt, an immutable or bind-mounted file), the outputs placed
// before it are put back, old bytes and all, and a new one is taken away again. Before
// 2026-11-29 the first output stayed replaced, although the run failed.
TEST_CASE("PendingOutputs places every output or none") {
  Workspace w;
  fs::create_directories("a");
  fs::create_directories("b");
  std::ofstream("a/old.npy") << "old bytes";
  fxc::Signal s(1, 8);
  fxc::corpus::PendingOutputs pending;
  REQUIRE(pending.write("a/old.npy", s, std::nullopt, {}));
  REQUIRE(pending.write("a/new.npy", s, std::nullopt, {}));
  REQUIRE(pending.write_bytes("b/state.bin", "state"));
  fs::remove_all("b");  // the last one cannot be placed
  auto committed = pending.commit();
  REQUIRE_FALSE(committed);
  CHECK(committed.error().find("cannot write 'b/state.bin'") != std::string::npos);
  std::ifstream old("a/old.npy");
  CHECK(std::string(std::istreambuf_iterator<char>(old), {}) == "old bytes");
  CHECK_FALSE(fs::exists("a/new.npy"));
}

TEST_CASE("PendingOutputs: a replaced output keeps its permissions; a loop of links is refused") {
  // Until 2026-11-29 a file processed in place (-i take.wav -o take.wav) came back with a new
  // file's permissions (0644 under the usual umask): a private recording became readable by all.
  Workspace w;
  fxc::Signal s(1, 8);
  for (mode_t mode : {0600, 0640, 0444}) {
    CAPTURE(mode);
    fs::remove("take.npy");
    std::ofstream("take.npy") << "old bytes";
    REQUIRE(::chmod("take.npy", mode) == 0);
    fxc::corpus::PendingOutputs pending;
    REQUIRE(pending.write("take.npy", s, std::nullopt, {}));
    REQUIRE(pending.commit());
    struct stat st {};
    REQUIRE(::stat("take.npy", &st) == 0);
    CHECK((st.st_mode & 0777) == mode);
    CHECK(st.st_size > 9);  // the new bytes
  }
  // Written over, a link in a loop became a file; now the system's error, and the links stay.
  fs::create_symlink("loop2.npy", "loop1.npy");
  fs::create_symlink("loop1.npy", "loop2.npy");
  fxc::corpus::PendingOutputs pending;
  auto looped = pending.write("loop1.npy", s, std::nullopt, {});
  REQUIRE_FALSE(looped);
  CHECK(looped.error() == "cannot write 'loop1.npy': Too many levels of symbolic links");
  CHECK(fs::is_symlink("loop1.npy"));
}

// An interrupt is process-wide, and reaches whichever thread does not block it: a corpus job's
// placement blocked it on its own thread only, so another thread's handler could remove the
// pending names that held replaced files' old bytes while the job was halfway. Since
// 2026-11-29 the handler defers to every placement in progress (InterruptsDeferred), a
// placement that would begin after it places nothing, and the last to end removes the
// unfinished files and ends the process with the signal. Forked: the child dies of its SIGTERM.
TEST_CASE("an interrupt waits for the placements in progress, and a later one places nothing") {
  Workspace w;
  std::ofstream("a.npy") << "old a";
  std::ofstream("b.npy") << "old b";
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    struct sigaction on_term {};
    on_term.sa_handler = [](int signal_number) { fxc::end_interrupted_process(signal_number); };
    sigemptyset(&on_term.sa_mask);
    ::sigaction(SIGTERM, &on_term, nullptr);
    fxc::Signal s(1, 8);
    fxc::corpus::PendingOutputs pending;
    if (!pending.write("a.npy", s, std::nullopt, {}) || !pending.write("b.npy", s, std::nullopt, {})) _exit(3);
    std::atomic<bool> holding{false};
    std::thread other_job([&] {  // another job's placement, under way when the signal comes
      fxc::InterruptsDeferred placing;
      holding = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      std::ofstream("alive") << "the handler deferred";
    });  // its end ends the process
    while (!holding) std::this_thread::yield();
    ::kill(::getpid(), SIGTERM);
    (void)pending.commit();  // does not return: it would begin after the interrupt
    std::ofstream("placed") << "";
    _exit(4);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK(fs::exists("alive"));
  CHECK_FALSE(fs::exists("placed"));
  std::ifstream a("a.npy"), b("b.npy");
  CHECK(std::string(std::istreambuf_iterator<char>(a), {}) == "old a");
  CHECK(std::string(std::istreambuf_iterator<char>(b), {}) == "old b");
  std::vector<std::string> names;  // the pending files went with the process
  for (const auto& e : fs::directory_iterator(".")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"a.npy", "alive", "b.npy"});
}

// A file name of 200-255 bytes is legal, but the pending name and its temporary, about 30 and
// 42 bytes longer, were not: "File name too long" (from 224 bytes, about 75 CJK characters).
// Since 2026-11-29 fxc's own names are cut to fit (name_within), and an abandoned pending file
// of such a name is still found by the output it was for.
TEST_CASE("outputs of names up to 255 bytes are written, and their abandoned pending files found") {
  Workspace w;
  std::string cjk;
  for (int i = 0; i < 83; ++i) cjk += "\xe9\x9f\xb3";  // U+97F3, 3 bytes: 249 bytes
  const std::string name = cjk + ".npy";                  // 253 bytes
  REQUIRE(name.size() == 253);
  const std::string cut = fxc::name_within(name, 100);
  CHECK(cut.size() <= 100);
  CHECK(cut.ends_with(".npy"));
  CHECK(cut[cut.size() - 13] == '~');  // "~" and 8 hex digits of the whole name's hash
  CHECK(cut.size() == 3 * 29 + 13);    // whole characters only
  // Alike in their first bytes, two names stay apart.
  CHECK(fxc::name_within(cjk + "a.npy", 100) != fxc::name_within(cjk + "b.npy", 100));
  CHECK(fxc::name_within("short.wav", 100) == "short.wav");
  fxc::Signal s(1, 8);
  {
    fxc::corpus::PendingOutputs pending;
    REQUIRE(pending.write(name, s, std::nullopt, {}));
    REQUIRE(pending.commit());
  }
  CHECK(fxc::read_signal_file(name, fxc::DType::f64).value().signal.samples() == 8);
  REQUIRE(fxc::write_signal_file(name, s, std::nullopt, {}));  // through a temporary of its own
  // A killed run's pending file for it, older than the output: removed by the next run's end.
  const std::string abandoned = std::string(fxc::corpus::kPendingPrefix) + "123-4-" + fxc::corpus::pending_name_part(name);
  CHECK(abandoned.size() <= 255 - 12);
  std::ofstream(abandoned) << "half";
  fs::last_write_time(abandoned, fs::last_write_time(name) - std::chrono::seconds(5));
  CHECK(fxc::corpus::remove_abandoned_pending({name}) == 1);
  CHECK_FALSE(fs::exists(abandoned));
}

TEST_CASE("PendingOutputs replaces existing outputs and leaves no pending file") {
  Workspace w;
  std::ofstream("old.npy") << "old bytes";
  fxc::Signal s(1, 8);
  {
    fxc::corpus::PendingOutputs pending;
    REQUIRE(pending.write("old.npy", s, std::nullopt, {}));
    REQUIRE(pending.write("new.npy", s, std::nullopt, {}));
    REQUIRE(pending.commit());
  }
  CHECK(fxc::read_signal_file("old.npy", fxc::DType::f64).value().signal.samples() == 8);
  CHECK(fxc::read_signal_file("new.npy", fxc::DType::f64).value().signal.samples() == 8);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(".")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"new.npy", "old.npy"});
}

// SPDX-License-Identifier: Apache-2.0
// libsndfile behind fxc's Signal: planar samples in, interleaved frames out, and the other way.
#include "formats/audio_file.h"

#include <fcntl.h>
#include <sndfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "support/file_io.h"
#include "support/float_format.h"

namespace fxc {
namespace {

struct Subtype {
  const char* name;
  int candidates[2];  // the first one the container accepts is used; 0 ends the list
};

// pcm8 is signed in most containers but unsigned in WAV, hence two candidates.
constexpr Subtype kSubtypes[] = {
    {"pcm8", {SF_FORMAT_PCM_S8, SF_FORMAT_PCM_U8}},
    {"pcm16", {SF_FORMAT_PCM_16, 0}},
    {"pcm24", {SF_FORMAT_PCM_24, 0}},
    {"pcm32", {SF_FORMAT_PCM_32, 0}},
    {"float", {SF_FORMAT_FLOAT, 0}},
    {"double", {SF_FORMAT_DOUBLE, 0}},
    {"ulaw", {SF_FORMAT_ULAW, 0}},
    {"alaw", {SF_FORMAT_ALAW, 0}},
    {"vorbis", {SF_FORMAT_VORBIS, 0}},
    {"opus", {SF_FORMAT_OPUS, 0}},
};

struct Container {
  const char* extension;
  const char* name;
  int sf_container;
  const char* default_subtype;
};

// WAV and AIFF default to float so that nothing a graph computes is clipped or quantised;
// FLAC has no float encoding and 24 bits is the most it holds; Ogg is lossy either way.
constexpr Container kContainers[] = {
    {".wav", "WAV", SF_FORMAT_WAV, "float"},   {".flac", "FLAC", SF_FORMAT_FLAC, "pcm24"},
    {".ogg", "Ogg", SF_FORMAT_OGG, "vorbis"},  {".aiff", "AIFF", SF_FORMAT_AIFF, "float"},
    {".aif", "AIFF", SF_FORMAT_AIFF, "float"},
};

const Container* find_container(const std::string& extension) {
  for (const Container& c : kContainers)
    if (extension == c.extension) return &c;
  return nullptr;
}

const Subtype* find_subtype(const std::string& name) {
  for (const Subtype& s : kSubtypes)
    if (name == s.name) return &s;
  return nullptr;
}

// The libsndfile format for this pair, or 0 when the container cannot hold the subtype.
int combine(const Container& container, const Subtype& subtype) {
  for (int candidate : subtype.candidates) {
    if (candidate == 0) break;
    SF_INFO info{};
    info.samplerate = 48000;
    info.channels = 1;
    info.format = container.sf_container | candidate;
    if (sf_format_check(&info)) return info.format;
  }
  return 0;
}

// The --subtype name of a libsndfile format's encoding; unset for one fxc does not write
// (ADPCM, GSM, MPEG, ...).
std::optional<std::string> subtype_name(int sf_format) {
  const int encoding = sf_format & SF_FORMAT_SUBMASK;
  for (const Subtype& s : kSubtypes)
    for (int candidate : s.candidates)
      if (candidate != 0 && candidate == encoding) return std::string(s.name);
  return std::nullopt;
}

// libsndfile's messages read "System error : No such file or directory." or "Error : Opus
// only supports ..."; inside ours they read better without the prefix and the full stop.
std::string tidy(std::string message) {
  for (const std::string prefix : {"System error : ", "Internal error : ", "Error : "})
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
  while (!message.empty() &&
         (message.back() == '.' || message.back() == '\n' || message.back() == ' '))
    message.pop_back();
  return message;
}

// libsndfile reads a WAV, AIFF, CAF, AU, RF64 or W64 file whose samples run past the end of the
// file as a shorter file, and says so only in its log ("data : 8000 (should be 3912)", and
// other words for the others). Sizes of 0 and from
// 0x7fffffff up are the placeholders of writers that stream and never come back to fix the
// header; those files are whole.
std::optional<std::string> truncation_in_log(SNDFILE* sf) {
  std::vector<char> log(1 << 16, '\0');
  sf_command(sf, SFC_GET_LOG_INFO, log.data(), static_cast<int>(log.size() - 1));
  std::string_view rest(log.data());
  while (!rest.empty()) {
    std::size_t end = rest.find('\n');
    std::string line(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    unsigned long long declared = 0, actual = 0;
    char chunk[5] = {};
    // RF64 states its length in frames; libsndfile counts those the file holds.
    if (std::sscanf(line.c_str(), "*** Calculated frame count %llu does not match value from 'ds64' chunk of %llu",
                    &actual, &declared) == 2) {
      if (declared > actual)
        return "truncated: the header promises " + std::to_string(declared) + " frames but the file holds " +
               std::to_string(actual);
      continue;
    }
    // WAV's and CAF's data chunk, AIFF's SSND, AU's data size; W64's whole-file size (its lower-case
    // riff, which WAV's "RIFF" is not: a WAV's RIFF size is often wrong on whole files).
    if (std::sscanf(line.c_str(), " Data Size : %llu (should be %llu)", &declared, &actual) == 2)
      std::strcpy(chunk, "data");
    else if (std::sscanf(line.c_str(), " %4s : %llu (should be %llu)", chunk, &declared, &actual) != 3)
      continue;
    if (std::strcmp(chunk, "data") != 0 && std::strcmp(chunk, "SSND") != 0 && std::strcmp(chunk, "riff") != 0)
      continue;
    if (declared == 0 || declared >= 0x7fffffffULL || declared <= actual) continue;
    return "truncated: the header promises " + std::to_string(declared) +
           (std::strcmp(chunk, "riff") == 0 ? " bytes" : " bytes of samples") + " but the file holds " +
           std::to_string(actual);
  }
  return std::nullopt;
}

// About a megabyte of interleaved doubles per libsndfile call, whatever the channel count.
std::size_t frames_per_chunk(std::size_t channels) {
  return std::max<std::size_t>(1, (std::size_t{1} << 17) / channels);
}

struct SndfileCloser {
  void operator()(SNDFILE* f) const { sf_close(f); }
};
using SndfilePtr = std::unique_ptr<SNDFILE, SndfileCloser>;

// Why sf_open_fd failed, in words. Called under open_sndfile's lock: it reads libsndfile's global error.
std::string open_error(int mode) {
  int code = sf_error(nullptr);
  if (mode != SFM_READ || code == SF_ERR_SYSTEM) return tidy(sf_strerror(nullptr));
  if (code == SF_ERR_UNRECOGNISED_FORMAT)
    return "not a format libsndfile recognises (WAV, FLAC, Ogg, AIFF, ...)";
  // Everything else is about the file's contents; libsndfile's own words follow.
  return "a damaged or unsupported header (libsndfile: " + tidy(sf_strerror(nullptr)) + ")";
}

// The one way this file opens libsndfile on a descriptor; the caller keeps `fd` open and
// closes it itself. Two things in libsndfile (1.2) make a plain sf_open_fd unsafe when
// several files are read at once (fxc run --jobs):
// - a failed sf_open_fd closes the descriptor even when told not to, so the caller's own
//   close would later close whatever file another thread had opened on the same number;
//   libsndfile is therefore given a duplicate that it owns and always closes;
// - the reason for a failed open is a global, so opening and reading the reason is one
//   critical section (opening reads only a header: short).
// Held while libsndfile opens a file and its reason for a failure (a global) is read, by every
// way this file opens one (open_sndfile, open_sndfile_stream).
std::mutex& sndfile_open_lock() {
  static std::mutex lock;
  return lock;
}

Expected<SndfilePtr, std::string> open_sndfile(int fd, int mode, SF_INFO& info) {
  const std::lock_guard<std::mutex> lock(sndfile_open_lock());
  const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) return Unexpected{std::string(std::strerror(errno))};
  SNDFILE* sf = sf_open_fd(own, mode, &info, SF_TRUE);
  if (!sf) return Unexpected{open_error(mode)};
  return SndfilePtr(sf);
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Expected<SignalFile, std::string> read_audio_file(const std::string& path, DType dtype) {
  // Opened here so that a missing file reads as the system says it, not as libsndfile does.
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return Unexpected{"cannot read '" + path + "': " + std::strerror(errno)};
  return read_audio_fd(file.fd, path, dtype);
}

namespace {

// An audio file opened for reading, its header checked. `promised` is the frame count the
// header gives where the file's size can hold it, else 0 (an unknown length). The header only
// guides a reader: a damaged one must not make it allocate gigabytes, so a count the file's
// size cannot hold (even at 64 samples per byte, beyond any codec's ratio on real audio) reads
// as unknown.
struct OpenedAudio {
  SndfilePtr sf;
  SF_INFO info{};
  std::size_t promised = 0;
};

// Returns the reason when the file cannot be read.
Expected<OpenedAudio, std::string> open_for_reading(int fd) {
  using E = Unexpected<std::string>;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) return E{std::string("it is a directory")};
  OpenedAudio file;
  auto opened = open_sndfile(fd, SFM_READ, file.info);
  if (!opened) return E{opened.error()};
  file.sf = std::move(opened).value();
  if (file.info.channels <= 0) return E{std::string("the file has no channels")};
  if (file.info.samplerate <= 0) return E{std::string("the file has no valid sample rate")};
  if (auto truncated = truncation_in_log(file.sf.get())) return E{*truncated};
  const auto channels = static_cast<std::size_t>(file.info.channels);
  if (file.info.frames > 0 && file.info.frames != SF_COUNT_MAX &&
      static_cast<double>(file.info.frames) * static_cast<double>(channels) <=
          64.0 * static_cast<double>(st.st_size) + static_cast<double>(std::size_t{1} << 24))
    file.promised = static_cast<std::size_t>(file.info.frames);
  return file;
}

// Frames [0, frames) of the interleaved `from` into samples [start, start + frames) of each of
// `to`'s channels, while they are in cache.
void spread(const double* from, std::size_t frames, Signal& to, std::size_t start) {
  const std::size_t channels = to.channels();
  for (std::size_t c = 0; c < channels; ++c) {
    if (to.dtype() == DType::f64) {
      double* out = to.f64(c).data() + start;
      for (std::size_t i = 0; i < frames; ++i) out[i] = from[i * channels + c];
    } else {
      float* out = to.f32(c).data() + start;
      for (std::size_t i = 0; i < frames; ++i) out[i] = static_cast<float>(from[i * channels + c]);
    }
  }
}

std::string short_by(sf_count_t promised, std::size_t read) {
  return "truncated: the header promises " + std::to_string(promised) + " frames but only " + std::to_string(read) +
         " could be read";
}

class AudioReader final : public SignalReader {
 public:
  AudioReader(OpenedAudio file, std::string name)
      : file_(std::move(file)), name_(std::move(name)),
        chunk_frames_(frames_per_chunk(static_cast<std::size_t>(file_.info.channels))),
        chunk_(chunk_frames_ * static_cast<std::size_t>(file_.info.channels)) {
    channels_ = static_cast<std::size_t>(file_.info.channels);
    frames_ = file_.promised;
    sample_rate_hz_ = static_cast<double>(file_.info.samplerate);
    subtype_ = subtype_name(file_.info.format);
  }

  Expected<std::monostate, std::string> read(Signal& into, std::size_t frames) override {
    auto fail = [&](const std::string& reason) { return Unexpected{"cannot read '" + name_ + "': " + reason}; };
    for (std::size_t done = 0; done < frames;) {
      const std::size_t want = std::min({chunk_frames_, frames - done, frames_ - read_});
      const sf_count_t got = want ? sf_readf_double(file_.sf.get(), chunk_.data(), static_cast<sf_count_t>(want)) : 0;
      if (got > 0) {
        spread(chunk_.data(), static_cast<std::size_t>(got), into, done);
        done += static_cast<std::size_t>(got);
        read_ += static_cast<std::size_t>(got);
      }
      // A short read goes on as the whole read does, to the read that gives nothing: the file
      // ended early (or more was asked for than the header promised).
      if (got <= 0) {
        if (sf_error(file_.sf.get()) != SF_ERR_NO_ERROR) return fail(tidy(sf_strerror(file_.sf.get())));
        return fail(short_by(file_.info.frames, read_));
      }
    }
    // A whole read takes the frames past a header's count too; a stream, which promised its
    // length to the outputs' headers, cannot.
    if (read_ == frames_) {
      if (sf_readf_double(file_.sf.get(), chunk_.data(), 1) > 0)
        return fail("the file holds more frames than its header's " + std::to_string(frames_) +
                    " (a damaged header); read it whole: from standard input (-i - < FILE), or on "
                    "--target cpu without --block");
      if (sf_error(file_.sf.get()) != SF_ERR_NO_ERROR) return fail(tidy(sf_strerror(file_.sf.get())));
    }
    return std::monostate{};
  }

 private:
  OpenedAudio file_;
  std::string name_;
  std::size_t chunk_frames_;
  std::vector<double> chunk_;  // interleaved
  std::size_t read_ = 0;
};

}  // namespace

Expected<std::unique_ptr<SignalReader>, std::string> open_audio_reader(int fd, const std::string& name) {
  auto opened = open_for_reading(fd);
  if (!opened) return Unexpected{"cannot read '" + name + "': " + opened.error()};
  // No usable length: unknown, more than the file holds, or 0, which may be a placeholder (a
  // WAV saved from a pipe: read_signal_file reads it to its end) and is otherwise an empty
  // file, as cheap to read whole.
  if (opened->promised == 0) return std::unique_ptr<SignalReader>();
  return std::unique_ptr<SignalReader>(new AudioReader(std::move(opened).value(), name));
}

Expected<SignalFile, std::string> read_audio_fd(int fd, const std::string& name, DType dtype) {
  auto fail = [&](const std::string& reason) {
    return Unexpected{"cannot read '" + name + "': " + reason};
  };
  auto opened = open_for_reading(fd);
  if (!opened) return fail(opened.error());
  SNDFILE* sf = opened->sf.get();
  const SF_INFO& info = opened->info;
  const std::size_t promised = opened->promised;

  const auto channels = static_cast<std::size_t>(info.channels);
  const auto chunk_frames = static_cast<sf_count_t>(frames_per_chunk(channels));
  std::vector<double> chunk(static_cast<std::size_t>(chunk_frames) * channels);
  // Each chunk is spread into the channels of `head`, for the frames the header promises;
  // frames past the promise (or all of them, for an unknown length) collect in `rest`.
  Signal head(channels, promised, dtype, Signal::Uninitialized{});
  std::size_t total = 0;
  std::vector<double> rest;  // interleaved
  while (true) {
    sf_count_t n = sf_readf_double(sf, chunk.data(), chunk_frames);
    if (n <= 0) break;
    auto frames = static_cast<std::size_t>(n);
    std::size_t into_head = total < promised ? std::min(frames, promised - total) : 0;
    spread(chunk.data(), into_head, head, total);
    rest.insert(rest.end(), chunk.begin() + static_cast<std::ptrdiff_t>(into_head * channels),
                chunk.begin() + static_cast<std::ptrdiff_t>(frames * channels));
    total += frames;
  }
  if (sf_error(sf) != SF_ERR_NO_ERROR) return fail(tidy(sf_strerror(sf)));
  if (info.frames != SF_COUNT_MAX && total < static_cast<std::size_t>(info.frames))
    return fail(short_by(info.frames, total));

  Signal signal = std::move(head);
  if (!rest.empty()) {  // an unknown length, or frames past the header's count
    Signal all(channels, total, dtype, Signal::Uninitialized{});
    for (std::size_t c = 0; c < channels; ++c) {
      if (dtype == DType::f64) std::copy_n(signal.f64(c).data(), promised, all.f64(c).data());
      else std::copy_n(signal.f32(c).data(), promised, all.f32(c).data());
    }
    spread(rest.data(), total - promised, all, promised);
    signal = std::move(all);
  }
  return SignalFile{std::move(signal), static_cast<double>(info.samplerate), subtype_name(info.format)};
}

bool is_audio_extension(const std::string& extension) {
  return find_container(extension) != nullptr;
}

Expected<AudioFormat, std::string> audio_format_for(const std::string& extension,
                                                    const std::optional<std::string>& subtype) {
  const Container* container = find_container(extension);
  if (!container) return Unexpected{"'" + extension + "' is not an audio extension"};
  const std::string name = subtype.value_or(container->default_subtype);
  const Subtype* chosen = find_subtype(name);
  if (!chosen) {
    std::string known;
    for (const Subtype& s : kSubtypes) known += std::string(known.empty() ? "" : ", ") + s.name;
    return Unexpected{"unknown subtype '" + name + "' (expected one of " + known + ")"};
  }
  if (int format = combine(*container, *chosen))
    return AudioFormat{format, std::string(container->name) + " " + name};

  std::string available;
  for (const Subtype& s : kSubtypes)
    if (combine(*container, s)) available += std::string(available.empty() ? "" : ", ") + s.name;
  return Unexpected{"subtype '" + name + "' is not available for " + extension +
                    " (available: " + available + ")"};
}

namespace {

// The most channels `format` holds: FLAC's 8, Ogg Vorbis' and Opus' 255, libsndfile's 1024 for
// the others. libsndfile's own check knows FLAC's limit and its 1024; Vorbis and Opus
// encoders take at most 255 channels (their channel mapping family 255), which
// sf_format_check lets through and sf_open then refuses as "Format not recognised".
int max_channels(const AudioFormat& format) {
  const int subtype = format.sf_format & SF_FORMAT_SUBMASK;
  SF_INFO info{};
  info.samplerate = 48000;
  info.format = format.sf_format;
  auto holds = [&](int channels) {
    info.channels = channels;
    return sf_format_check(&info) != 0;
  };
  int most = 1, refused = (subtype == SF_FORMAT_VORBIS || subtype == SF_FORMAT_OPUS ? 255 : 1024) + 1;
  while (refused - most > 1) {  // holds(most), !holds(refused); about ten checks
    const int mid = most + (refused - most) / 2;
    (holds(mid) ? most : refused) = mid;
  }
  return most;
}

}  // namespace

std::optional<std::string> channels_beyond(const AudioFormat& format, std::size_t channels) {
  const int most = max_channels(format);
  if (channels <= static_cast<std::size_t>(most)) return std::nullopt;
  const std::string container = format.description.substr(0, format.description.find(' '));
  return container + " holds at most " + std::to_string(most) + " channels, not " + std::to_string(channels) +
         " (write " + (most < 1024 ? ".wav, up to 1024, or " : "") + ".npy)";
}

namespace {

// The bits of an integer encoding fxc quantises for (0: a float or lossy one, written as
// floats). Quantised here, not by libsndfile 1.2.0: its clipping path scales to 32 bits and
// shifts, which truncates (-0.5 LSB of bias, about 4x the rounding noise); its μ-law and
// A-law encoders wrap loud samples around (and index past their tables for huge ones), and
// its FLAC encoder refuses NaN.
int integer_bits(int subtype) {
  switch (subtype) {
    case SF_FORMAT_PCM_S8:
    case SF_FORMAT_PCM_U8:
      return 8;
    case SF_FORMAT_PCM_16:
    case SF_FORMAT_ULAW:  // libsndfile encodes μ-law and A-law from 16-bit samples' top bits
    case SF_FORMAT_ALAW:
      return 16;
    case SF_FORMAT_PCM_24:
      return 24;
    case SF_FORMAT_PCM_32:
      return 32;
    default:
      return 0;
  }
}

// Samples in an encoding of `bits`, as libsndfile's int samples hold them (the value in the
// top bits of 32): rounded to the nearest step of 2^-(bits-1), ties to even, clipped to
// [-1, 1 - step]; NaN is full-scale negative, as libsndfile wrote it before. `symmetric`
// clips to [-1 + step, ...]: libsndfile's μ-law and A-law encoders take the most negative int
// for the most positive. No library call per sample (ldexp and nearbyint were a third of a
// corpus run writing pcm24): the bounds are made once, and adding and taking away 1.5 x 2^52
// rounds |x| < 2^51 to the nearest integer, ties to even, in the default rounding mode, which
// fxc never changes (a host that sets another gets another rounding for negative values).
class Quantiser {
 public:
  Quantiser(int bits, bool symmetric)
      : full_(std::ldexp(1.0, bits - 1)),
        low_(symmetric ? 1 - full_ : -full_),
        high_(full_ - 1),
        step_(std::ldexp(1.0, 32 - bits)) {}

  std::int32_t operator()(double v) const {
    const double x = v >= -1.0 ? (v <= 1.0 ? v : 1.0) : -1.0;  // NaN fails the first test: -1
    const double k = std::clamp((x * full_ + kRound) - kRound, low_, high_);
    return static_cast<std::int32_t>(k * step_);  // exact: k x 2^(32 - bits) is in int32's range
  }

 private:
  static constexpr double kRound = 6755399441055744.0;  // 1.5 x 2^52
  double full_, low_, high_, step_;
};

// libsndfile 1.2.0 writes an AIFF of 8-bit samples (pcm8, μ-law, A-law) whose data is an
// odd number of bytes with its pad byte counted as data: COMM's frame count and SSND's size
// one byte too many, so every reader (libsndfile too) finds an extra frame. AIFF counts the
// pad outside the chunk; this puts the two fields right in the file libsndfile closed.
Expected<std::monostate, std::string> repair_aiff_frame_count(int fd, std::uint32_t frames,
                                                              std::uint64_t data_bytes) {
  using E = Unexpected<std::string>;
  auto read_u32 = [&](off_t at, std::uint32_t& v) {
    unsigned char b[4];
    if (::pread(fd, b, 4, at) != 4) return false;
    v = (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
    return true;
  };
  auto write_u32 = [&](off_t at, std::uint32_t v) {
    const unsigned char b[4] = {static_cast<unsigned char>(v >> 24), static_cast<unsigned char>(v >> 16),
                                static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
    return ::pwrite(fd, b, 4, at) == 4;
  };
  struct stat st{};
  if (::fstat(fd, &st) != 0) return E{std::strerror(errno)};
  // A device or a pipe written in place (`out.aiff` linked to /dev/null) cannot be read back:
  // what went there stays as libsndfile wrote it.
  if (!S_ISREG(st.st_mode)) return std::monostate{};
  bool comm = false, ssnd = false;
  for (off_t at = 12; at + 8 <= st.st_size && !(comm && ssnd);) {
    char id[4];
    std::uint32_t size = 0;
    if (::pread(fd, id, 4, at) != 4 || !read_u32(at + 4, size))
      return E{std::string("cannot read back the AIFF header libsndfile wrote")};
    if (std::memcmp(id, "COMM", 4) == 0) {
      if (!write_u32(at + 10, frames)) return E{std::string("cannot correct the AIFF header's frame count")};  // after numChannels
      comm = true;
    } else if (std::memcmp(id, "SSND", 4) == 0) {
      // offset and blockSize (8 bytes), then the samples; the pad byte follows the chunk.
      if (!write_u32(at + 4, static_cast<std::uint32_t>(8 + data_bytes)))
        return E{std::string("cannot correct the AIFF header's data size")};
      ssnd = true;
    }
    at += 8 + static_cast<off_t>(size) + static_cast<off_t>(size & 1);
  }
  if (!comm || !ssnd) return E{std::string("libsndfile wrote an AIFF file without COMM and SSND chunks")};
  return std::monostate{};
}

// The CRC of an Ogg page: polynomial 0x04C11DB7, not reflected, from 0, nothing xor-ed after
// (RFC 3533), over the page with its CRC field zero.
std::uint32_t ogg_crc(const unsigned char* page, std::size_t size) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t r = i << 24;
      for (int k = 0; k < 8; ++k) r = (r & 0x80000000u) ? (r << 1) ^ 0x04C11DB7u : r << 1;
      t[i] = r;
    }
    return t;
  }();
  std::uint32_t crc = 0;
  for (std::size_t i = 0; i < size; ++i) crc = (crc << 8) ^ table[((crc >> 24) ^ page[i]) & 0xFF];
  return crc;
}

// libsndfile gives an Ogg stream a serial number from the time of day, so that two writes of
// one signal differed in every page (the serial and each page's CRC). Files of one stream need
// no particular serial: every page gets the same fixed one, and its CRC again. A page at a
// time (at most 27 + 255 + 255 x 255 bytes), so that a long output is not held in memory.
Expected<std::monostate, std::string> fix_ogg_serial(int fd) {
  using E = Unexpected<std::string>;
  constexpr std::uint32_t kSerial = 0x66786301;  // "fxc", 1
  struct stat st{};
  if (::fstat(fd, &st) != 0) return E{std::strerror(errno)};
  if (!S_ISREG(st.st_mode)) return std::monostate{};  // a device or pipe written in place
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  std::vector<unsigned char> page(27 + 255 + 255 * 255);
  auto read_at = [&](unsigned char* to, std::size_t size, std::uint64_t at) {
    return ::pread(fd, to, size, static_cast<off_t>(at)) == static_cast<ssize_t>(size);
  };
  const E unreadable{std::string("libsndfile wrote an Ogg file fxc cannot read back")};
  for (std::uint64_t at = 0; at < file_size;) {
    // Header: "OggS", version, type, granule (8), serial (4) at 14, sequence (4), CRC (4) at
    // 22, segment count at 26, then the segment sizes and the body.
    if (file_size - at < 27 || !read_at(page.data(), 27, at) || std::memcmp(page.data(), "OggS", 4) != 0)
      return unreadable;
    const std::size_t segments = page[26];
    if (file_size - at < 27 + segments || !read_at(page.data() + 27, segments, at + 27)) return unreadable;
    std::size_t size = 27 + segments;
    for (std::size_t k = 0; k < segments; ++k) size += page[27 + k];
    if (file_size - at < size || !read_at(page.data() + 27 + segments, size - 27 - segments, at + 27 + segments))
      return unreadable;
    for (int k = 0; k < 4; ++k) {
      page[14 + static_cast<std::size_t>(k)] = static_cast<unsigned char>(kSerial >> (8 * k));
      page[22 + static_cast<std::size_t>(k)] = 0;
    }
    const std::uint32_t crc = ogg_crc(page.data(), size);
    for (int k = 0; k < 4; ++k) page[22 + static_cast<std::size_t>(k)] = static_cast<unsigned char>(crc >> (8 * k));
    if (::pwrite(fd, page.data(), size, static_cast<off_t>(at)) != static_cast<ssize_t>(size))
      return E{std::strerror(errno)};
    at += size;
  }
  return std::monostate{};
}

}  // namespace

namespace {

// A descriptor read or written from where it stands, front to back, as libsndfile's virtual
// I/O: sf_open_fd takes a descriptor that is not at its start (a regular file on standard
// input after the header fxc read) for a file embedded in another, which headerless samples
// cannot be, and may seek. This one cannot seek, on a pipe or a file alike.
struct FdStream {
  int fd = -1;
  sf_count_t position = 0;
  std::string error;  // why the last read or write failed (libsndfile sees a short one)

  static sf_count_t length(void*) { return std::numeric_limits<sf_count_t>::max() / 2; }  // to its end
  static sf_count_t seek(sf_count_t offset, int whence, void* self) {
    auto* s = static_cast<FdStream*>(self);
    const sf_count_t to = whence == SEEK_SET ? offset : whence == SEEK_CUR ? s->position + offset : -1;
    return to == s->position ? to : -1;
  }
  static sf_count_t read(void* into, sf_count_t count, void* self) {
    auto* s = static_cast<FdStream*>(self);
    sf_count_t done = 0;
    while (done < count) {
      const ssize_t n = ::read(s->fd, static_cast<char*>(into) + done, static_cast<std::size_t>(count - done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) s->error = std::strerror(errno);
      if (n <= 0) break;  // the end, or an error
      done += n;
    }
    s->position += done;
    return done;
  }
  static sf_count_t write(const void* from, sf_count_t count, void* self) {
    auto* s = static_cast<FdStream*>(self);
    auto ok = write_all(s->fd, from, static_cast<std::size_t>(count));
    if (!ok) {
      s->error = ok.error();
      return 0;
    }
    s->position += count;
    return count;
  }
  static sf_count_t tell(void* self) { return static_cast<FdStream*>(self)->position; }
};

// libsndfile on `stream`, which must outlive what it returns.
Expected<SndfilePtr, std::string> open_sndfile_stream(FdStream& stream, int mode, SF_INFO& info) {
  static SF_VIRTUAL_IO io{FdStream::length, FdStream::seek, FdStream::read, FdStream::write, FdStream::tell};
  const std::lock_guard<std::mutex> lock(sndfile_open_lock());
  SNDFILE* sf = sf_open_virtual(&io, mode, &info, &stream);
  if (!sf) return Unexpected{"libsndfile cannot take these samples: " + tidy(sf_strerror(nullptr))};
  return SndfilePtr(sf);
}

class AudioWriter final : public SignalWriter {
 public:
  // `flush_each_write`: every write's frames go to libsndfile before it returns (a live
  // stream's; only for encodings whose bytes do not depend on how the samples were split).
  AudioWriter(int fd, SndfilePtr sf, std::size_t channels, std::size_t frames, DType dtype, const AudioFormat& format,
              bool flush_each_write = false, std::shared_ptr<FdStream> stream = {})
      : fd_(fd), stream_(std::move(stream)), sf_(std::move(sf)), channels_(channels), frames_(frames), format_(format),
        flush_each_write_(flush_each_write),
        subtype_(format.sf_format & SF_FORMAT_SUBMASK), bits_(integer_bits(subtype_)),
        quantised_(bits_ ? bits_ : 32, subtype_ == SF_FORMAT_ULAW || subtype_ == SF_FORMAT_ALAW),
        chunk_frames_(frames_per_chunk(channels)),
        // float64 samples into a float file are rounded here, as libsndfile's double path rounds
        // them (a cast), so that libsndfile writes our chunk as it is: its double path converted
        // 8 KiB at a time, two thirds of writing the vocal example's 60 s stereo output.
        as_float_(!bits_ && (dtype == DType::f32 || subtype_ == SF_FORMAT_FLOAT)) {
    const std::size_t samples = chunk_frames_ * channels_;
    if (bits_) chunk_int_.resize(samples);
    else if (as_float_) chunk32_.resize(samples);
    else chunk64_.resize(samples);
  }

  // The frames gather in the chunk and go to libsndfile a whole chunk at a time, whatever pieces
  // they came in: a lossy encoder's bytes depend on how its input was split (Vorbis' do), and
  // a file must not depend on the blocks of the run that wrote it.
  Expected<std::monostate, std::string> write(const Signal& from, std::size_t start, std::size_t frames) override {
    for (std::size_t at = start; at < start + frames;) {
      const std::size_t n = std::min(chunk_frames_ - held_, start + frames - at);
      if (bits_) interleave(from, chunk_int_.data(), at, n, quantised_);
      else if (!as_float_) interleave(from, chunk64_.data(), at, n, [](double v) { return v; });
      else interleave(from, chunk32_.data(), at, n, [](auto v) { return static_cast<float>(v); });
      held_ += n;
      at += n;
      if (held_ == chunk_frames_)
        if (auto ok = flush(); !ok) return ok;
    }
    if (flush_each_write_) return flush();
    return std::monostate{};
  }

  Expected<std::monostate, std::string> finish() override {
    using E = Unexpected<std::string>;
    if (auto ok = flush(); !ok) return ok;
    const int container = format_.sf_format & SF_FORMAT_TYPEMASK;
    // libsndfile starts a FLAC stream at its first samples: with none, it would close a file of
    // 0 bytes, which no reader (libsndfile included) takes for FLAC. Its header now makes an
    // empty FLAC file (a length of 0, which FLAC reads as unknown: no samples follow).
    if (frames_ == 0 && container == SF_FORMAT_FLAC) sf_command(sf_.get(), SFC_UPDATE_HEADER_NOW, nullptr, 0);
    // Closing writes the final header (and, for Ogg, the last pages): it can fail too.
    if (int err = sf_close(sf_.release())) return E{tidy(sf_error_number(err))};
    if (container == SF_FORMAT_OGG) return fix_ogg_serial(fd_);
    const std::uint64_t data_bytes = static_cast<std::uint64_t>(channels_) * frames_;
    const bool byte_samples = subtype_ == SF_FORMAT_PCM_S8 || subtype_ == SF_FORMAT_PCM_U8 ||
                              subtype_ == SF_FORMAT_ULAW || subtype_ == SF_FORMAT_ALAW;
    if (container == SF_FORMAT_AIFF && byte_samples && data_bytes % 2 == 1 && data_bytes < 0xFFFFFFF0u)
      return repair_aiff_frame_count(fd_, static_cast<std::uint32_t>(frames_), data_bytes);
    return std::monostate{};
  }

 private:
  // The chunk's frames to libsndfile.
  Expected<std::monostate, std::string> flush() {
    if (held_ == 0) return std::monostate{};
    const auto n = static_cast<sf_count_t>(held_);
    const sf_count_t written = bits_       ? sf_writef_int(sf_.get(), chunk_int_.data(), n)
                               : as_float_ ? sf_writef_float(sf_.get(), chunk32_.data(), n)
                                           : sf_writef_double(sf_.get(), chunk64_.data(), n);
    held_ = 0;
    if (written != n)
      return Unexpected{stream_ && !stream_->error.empty() ? stream_->error
                        : sf_error(sf_.get())                ? tidy(sf_strerror(sf_.get()))
                                                             : std::string("the write was incomplete")};
    return std::monostate{};
  }

  // Frames [start, start + frames) of every channel of `from` into the chunk after its held
  // frames, interleaved, each sample through `convert`.
  template <class T, class Convert>
  void interleave(const Signal& from, T* chunk, std::size_t start, std::size_t frames, Convert convert) const {
    T* to = chunk + held_ * channels_;
    for (std::size_t c = 0; c < channels_; ++c) {
      if (from.dtype() == DType::f64) {
        auto in = from.f64(c);
        for (std::size_t i = 0; i < frames; ++i) to[i * channels_ + c] = convert(in[start + i]);
      } else {
        auto in = from.f32(c);
        for (std::size_t i = 0; i < frames; ++i) to[i * channels_ + c] = convert(in[start + i]);
      }
    }
  }

  int fd_;
  std::shared_ptr<FdStream> stream_;  // what a stream's libsndfile writes through, if any: outlives sf_
  SndfilePtr sf_;
  std::size_t channels_, frames_;
  AudioFormat format_;
  bool flush_each_write_;
  int subtype_, bits_;
  Quantiser quantised_;
  std::size_t chunk_frames_;
  std::size_t held_ = 0;  // frames in the chunk, not yet given to libsndfile
  bool as_float_;
  std::vector<std::int32_t> chunk_int_;
  std::vector<double> chunk64_;
  std::vector<float> chunk32_;
};

}  // namespace

namespace {

// Why an audio file cannot store `sample_rate_hz` or `channels` in `format`; nothing when it can.
std::optional<std::string> unwritable(std::size_t channels, double sample_rate_hz, const AudioFormat& format) {
  if (!(sample_rate_hz >= 1 && sample_rate_hz <= INT_MAX) || sample_rate_hz != std::floor(sample_rate_hz))
    return "audio files store the sample rate as a whole number of Hz from 1 to " + std::to_string(INT_MAX) +
           ", not " + format_double(sample_rate_hz) + " (write a .npy file, which stores none)";
  return channels_beyond(format, channels);
}

// libsndfile's headerless format for a WAV's samples in `format`'s encoding: little-endian,
// 8-bit PCM unsigned, as in WAV.
SF_INFO raw_wav_samples(std::size_t channels, double sample_rate_hz, const AudioFormat& format) {
  SF_INFO info{};
  info.samplerate = static_cast<int>(sample_rate_hz);
  info.channels = static_cast<int>(channels);
  info.format = SF_FORMAT_RAW | SF_ENDIAN_LITTLE | (format.sf_format & SF_FORMAT_SUBMASK);
  return info;
}

}  // namespace

Expected<std::unique_ptr<SignalWriter>, std::string> open_audio_writer(int fd, std::size_t channels,
                                                                       std::size_t frames, DType dtype,
                                                                       double sample_rate_hz,
                                                                       const AudioFormat& format) {
  using E = Unexpected<std::string>;
  if (std::optional<std::string> why = unwritable(channels, sample_rate_hz, format)) return E{*why};

  SF_INFO info{};
  info.samplerate = static_cast<int>(sample_rate_hz);
  info.channels = static_cast<int>(channels);
  info.format = format.sf_format;
  // Plain WAV cannot describe more than 4 GiB of data; RF64 is WAV's 64-bit successor.
  const int subtype = format.sf_format & SF_FORMAT_SUBMASK;
  if ((format.sf_format & SF_FORMAT_TYPEMASK) == SF_FORMAT_WAV) {
    const double bytes_per_sample =
        subtype == SF_FORMAT_DOUBLE                                                             ? 8
        : subtype == SF_FORMAT_PCM_24                                                           ? 3
        : subtype == SF_FORMAT_PCM_16                                                           ? 2
        : subtype == SF_FORMAT_PCM_U8 || subtype == SF_FORMAT_ULAW || subtype == SF_FORMAT_ALAW ? 1
                                                                                                : 4;
    const double data_bytes = static_cast<double>(channels) * static_cast<double>(frames) * bytes_per_sample;
    if (data_bytes > 4294967295.0 - (1 << 20)) info.format = SF_FORMAT_RF64 | subtype;
  }

  auto opened = open_sndfile(fd, SFM_WRITE, info);
  if (!opened) return E{opened.error()};
  SndfilePtr sf = std::move(opened).value();
  // The lossy codecs take floats; without this libsndfile would wrap their out-of-range
  // samples around rather than clip them. Integer encodings are quantised here (integer_bits).
  if (integer_bits(subtype) == 0 && subtype != SF_FORMAT_FLOAT && subtype != SF_FORMAT_DOUBLE)
    sf_command(sf.get(), SFC_SET_CLIPPING, nullptr, SF_TRUE);
  // A float WAV's or AIFF's PEAK chunk holds the second it was written: no chunk, so that one
  // signal gives one file's bytes whenever it is written (corpora.md; readers do not need it).
  // Not for an empty AIFF: libsndfile 1.2 then leaves its first, longer header's bytes behind
  // the final one, read back as 4 frames.
  if (frames > 0 || (format.sf_format & SF_FORMAT_TYPEMASK) != SF_FORMAT_AIFF)
    sf_command(sf.get(), SFC_SET_ADD_PEAK_CHUNK, nullptr, SF_FALSE);
  return std::unique_ptr<SignalWriter>(new AudioWriter(fd, std::move(sf), channels, frames, dtype, format));
}

WavEncoding wav_encoding(const AudioFormat& format) {
  switch (format.sf_format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_U8: return {1, 8};
    case SF_FORMAT_PCM_16: return {1, 16};
    case SF_FORMAT_PCM_24: return {1, 24};
    case SF_FORMAT_PCM_32: return {1, 32};
    case SF_FORMAT_FLOAT: return {3, 32};
    case SF_FORMAT_DOUBLE: return {3, 64};
    case SF_FORMAT_ALAW: return {6, 8};
    case SF_FORMAT_ULAW: return {7, 8};
    default: return {};
  }
}

Expected<AudioFormat, std::string> wav_format_of(WavEncoding encoding) {
  for (const char* name : {"pcm8", "pcm16", "pcm24", "pcm32", "float", "double", "alaw", "ulaw"}) {
    auto format = audio_format_for(".wav", std::string(name));
    if (format) {
      const WavEncoding e = wav_encoding(*format);
      if (e.tag == encoding.tag && e.bits == encoding.bits) return format;
    }
  }
  return Unexpected{"its encoding (WAV format tag " + std::to_string(encoding.tag) + ", " +
                    std::to_string(encoding.bits) + " bits) is not one fxc reads from a stream (integer PCM of 8, 16, "
                    "24 or 32 bits, float, double, A-law, μ-law)"};
}

namespace {

class WavSamples final : public WavSampleReader {
 public:
  WavSamples(std::unique_ptr<FdStream> stream, SndfilePtr sf, std::size_t channels)
      : stream_(std::move(stream)), sf_(std::move(sf)), channels_(channels), chunk_frames_(frames_per_chunk(channels)),
        chunk_(chunk_frames_ * channels) {}

  Expected<std::size_t, std::string> read(Signal& into, std::size_t frames) override {
    std::size_t done = 0;
    while (done < frames) {
      const std::size_t want = std::min(chunk_frames_, frames - done);
      const sf_count_t got = sf_readf_double(sf_.get(), chunk_.data(), static_cast<sf_count_t>(want));
      if (got > 0) {
        spread(chunk_.data(), static_cast<std::size_t>(got), into, done);
        done += static_cast<std::size_t>(got);
      }
      // libsndfile waits for the whole request on a pipe: a short read is the end.
      if (got < static_cast<sf_count_t>(want)) {
        if (!stream_->error.empty()) return Unexpected{stream_->error};
        if (sf_error(sf_.get()) != SF_ERR_NO_ERROR) return Unexpected{tidy(sf_strerror(sf_.get()))};
        break;
      }
    }
    return done;
  }

 private:
  std::unique_ptr<FdStream> stream_;  // outlives sf_
  SndfilePtr sf_;
  std::size_t channels_;
  std::size_t chunk_frames_;
  std::vector<double> chunk_;  // interleaved
};

}  // namespace

Expected<std::unique_ptr<WavSampleReader>, std::string> open_wav_sample_reader(int fd, std::size_t channels,
                                                                               double sample_rate_hz,
                                                                               const AudioFormat& format) {
  SF_INFO info = raw_wav_samples(channels, sample_rate_hz, format);
  auto stream = std::make_unique<FdStream>(FdStream{fd});
  auto opened = open_sndfile_stream(*stream, SFM_READ, info);
  if (!opened) return Unexpected{opened.error()};
  return std::unique_ptr<WavSampleReader>(new WavSamples(std::move(stream), std::move(opened).value(), channels));
}

Expected<std::unique_ptr<SignalWriter>, std::string> open_wav_sample_writer(int fd, std::size_t channels, DType dtype,
                                                                            double sample_rate_hz,
                                                                            const AudioFormat& format) {
  using E = Unexpected<std::string>;
  if (std::optional<std::string> why = unwritable(channels, sample_rate_hz, format)) return E{*why};
  SF_INFO info = raw_wav_samples(channels, sample_rate_hz, format);
  auto stream = std::make_shared<FdStream>(FdStream{fd});
  auto opened = open_sndfile_stream(*stream, SFM_WRITE, info);
  if (!opened) return E{opened.error()};
  // Every encoding a WAV stream takes is quantised here or written as floats (integer_bits):
  // no libsndfile clipping, and its bytes do not depend on how the frames came.
  return std::unique_ptr<SignalWriter>(new AudioWriter(fd, std::move(opened).value(), channels, 0, dtype,
                                                       AudioFormat{info.format, format.description}, true,
                                                       std::move(stream)));
}

Expected<std::monostate, std::string> write_audio(int fd, const Signal& signal, double sample_rate_hz,
                                                  const AudioFormat& format) {
  auto writer = open_audio_writer(fd, signal.channels(), signal.samples(), signal.dtype(), sample_rate_hz, format);
  if (!writer) return Unexpected{writer.error()};
  if (auto ok = (*writer)->write(signal, 0, signal.samples()); !ok) return ok;
  return (*writer)->finish();
}

}  // namespace fxc

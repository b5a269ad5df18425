// SPDX-License-Identifier: Apache-2.0
// The .npy format (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
// magic, version, a little-endian header length, a Python dict literal, then raw data.
// Every size read from a file is checked before it is used to allocate or to seek.
#include "formats/npy_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "formats/signal_file.h"

namespace fxc {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
// Our headers are under 128 bytes; NumPy itself refuses more than 10000 by default. A bigger
// one is a damaged or hostile file, not a signal.
constexpr std::size_t kMaxHeaderSize = 65536;
// More channels than this, and fewer samples than channels, is a [samples, channels] array.
constexpr std::uint64_t kMaxPlausibleChannels = 1024;
// Sizes are computed in 64 bits and then used as size_t.
static_assert(sizeof(std::size_t) >= sizeof(std::uint64_t));

struct NpyHeader {
  DType dtype = DType::f64;
  bool big_endian = false;
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
};

// The subset of Python literal syntax that .npy headers use: a dict of string keys whose
// values are strings, True/False, or tuples of integers.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  Expected<NpyHeader, std::string> parse() {
    NpyHeader header;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    skip_space();
    if (!eat('{')) return fail("the header is not a dictionary");
    while (true) {
      skip_space();
      if (eat('}')) break;
      auto key = string();
      if (!key) return fail("expected a quoted key in the header");
      skip_space();
      if (!eat(':')) return fail("expected ':' after '" + *key + "' in the header");
      skip_space();
      if (*key == "descr") {
        auto descr = string();
        if (!descr)
          return Unexpected{std::string(
              "unsupported dtype (a structured type); expected float32 '<f4' or float64 '<f8'")};
        if (auto err = set_dtype(*descr, header)) return Unexpected{*err};
        seen_descr = true;
      } else if (*key == "fortran_order") {
        if (auto b = boolean())
          header.fortran_order = *b;
        else
          return fail("'fortran_order' is not True or False");
        seen_order = true;
      } else if (*key == "shape") {
        auto shape = tuple();
        if (!shape) return fail("'shape' is not a tuple of non-negative integers");
        header.shape = std::move(*shape);
        seen_shape = true;
      } else {
        return fail("unexpected key '" + *key + "' in the header");
      }
      skip_space();
      if (eat('}')) break;
      if (!eat(',')) return fail("expected ',' or '}' in the header");
    }
    skip_space();
    if (pos_ != text_.size()) return fail("unexpected text after the header dictionary");
    if (!seen_descr || !seen_order || !seen_shape)
      return fail("the header lacks 'descr', 'fortran_order' or 'shape'");
    return header;
  }

 private:
  static Unexpected<std::string> fail(const std::string& what) {
    return Unexpected{"malformed .npy header: " + what};
  }

  static std::optional<std::string> set_dtype(const std::string& descr, NpyHeader& header) {
    if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '>') && descr[1] == 'f' &&
        (descr[2] == '4' || descr[2] == '8')) {
      header.big_endian = descr[0] == '>';
      header.dtype = descr[2] == '4' ? DType::f32 : DType::f64;
      return std::nullopt;
    }
    return "unsupported dtype '" + descr + "' (expected float32 '<f4' or float64 '<f8')";
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool eat_word(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  std::optional<std::string> string() {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return std::nullopt;
    char quote = text_[pos_++];
    std::size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return std::nullopt;
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }

  std::optional<bool> boolean() {
    if (eat_word("True")) return true;
    if (eat_word("False")) return false;
    return std::nullopt;
  }

  std::optional<std::uint64_t> integer() {
    std::size_t start = pos_;
    std::uint64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (__builtin_mul_overflow(value, 10u, &value) ||
          __builtin_add_overflow(value, static_cast<unsigned>(text_[pos_] - '0'), &value))
        return std::nullopt;
      ++pos_;
    }
    if (pos_ == start) return std::nullopt;
    eat('L');  // Python 2 long literals, in files written long ago.
    return value;
  }

  std::optional<std::vector<std::uint64_t>> tuple() {
    if (!eat('(')) return std::nullopt;
    std::vector<std::uint64_t> dims;
    while (true) {
      skip_space();
      if (eat(')')) return dims;
      // Bounded so that a hostile header cannot make us collect millions of dimensions.
      if (dims.size() >= 32) return std::nullopt;
      auto dim = integer();
      if (!dim) return std::nullopt;
      dims.push_back(*dim);
      skip_space();
      if (eat(')')) return dims;
      if (!eat(',')) return std::nullopt;
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

// Closes the descriptor on every path out of the reader.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads exactly `size` bytes; nullopt on success, else the reason.
std::optional<std::string> read_exact(int fd, void* data, std::size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::read(fd, p, std::min<std::size_t>(size, std::size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::string(std::strerror(errno));
    }
    if (n == 0) return std::string("unexpected end of file");
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return std::nullopt;
}

std::uint32_t little_endian_u32(const unsigned char* p, std::size_t bytes) {
  std::uint32_t v = 0;
  for (std::size_t i = bytes; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

template <class T>
void byteswap_all(std::span<T> values) {
  for (T& v : values) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(bytes[i], bytes[sizeof(T) - 1 - i]);
    std::memcpy(&v, bytes, sizeof(T));
  }
}

void byteswap_signal(Signal& s) {
  for (std::size_t c = 0; c < s.channels(); ++c) {
    if (s.dtype() == DType::f32)
      byteswap_all(s.f32(c));
    else
      byteswap_all(s.f64(c));
  }
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Fortran order stores [channels, samples] sample-major, i.e. interleaved frames.
std::optional<std::string> read_interleaved(int fd, Signal& s) {
  const std::size_t item = size_of(s.dtype());
  const std::size_t frames_per_chunk = 8192;
  std::vector<unsigned char> chunk(frames_per_chunk * s.channels() * item);
  for (std::size_t start = 0; start < s.samples(); start += frames_per_chunk) {
    std::size_t frames = std::min(frames_per_chunk, s.samples() - start);
    if (auto err = read_exact(fd, chunk.data(), frames * s.channels() * item)) return err;
    for (std::size_t f = 0; f < frames; ++f)
      for (std::size_t c = 0; c < s.channels(); ++c) {
        const unsigned char* src = chunk.data() + (f * s.channels() + c) * item;
        if (s.dtype() == DType::f32)
          std::memcpy(&s.f32(c)[start + f], src, item);
        else
          std::memcpy(&s.f64(c)[start + f], src, item);
      }
  }
  return std::nullopt;
}

std::optional<std::string> read_planar(int fd, Signal& s) {
  for (std::size_t c = 0; c < s.channels(); ++c) {
    void* data = s.dtype() == DType::f32 ? static_cast<void*>(s.f32(c).data())
                                         : static_cast<void*>(s.f64(c).data());
    if (auto err = read_exact(fd, data, s.samples() * size_of(s.dtype()))) return err;
  }
  return std::nullopt;
}

// Where an array's samples lie in a file whose header was read and checked.
struct NpyLayout {
  NpyHeader header;
  std::uint64_t channels = 0, samples = 0;
  std::uint64_t data_offset = 0;
  // With one channel the two orders store the same bytes.
  bool interleaved() const { return header.fortran_order && channels > 1; }
};

// Reads the header from the file's start (leaving the offset at the data) and checks the
// data's size against the file's.
Expected<NpyLayout, std::string> read_npy_layout(int fd, std::uint64_t file_size) {
  using E = Unexpected<std::string>;
  unsigned char prefix[12];
  // The magic is told apart from a header cut short after it (8 or 9 bytes: the magic and
  // its version, not the header's length).
  const std::size_t head = static_cast<std::size_t>(std::min<std::uint64_t>(file_size, 10));
  if (head < kMagicSize || read_exact(fd, prefix, head) || std::memcmp(prefix, kMagic, kMagicSize) != 0)
    return E{"not a .npy file (no \\x93NUMPY magic at the start)"};
  if (head < 10) return E{"truncated .npy header"};
  const unsigned major = prefix[6], minor = prefix[7];
  if (!((major == 1 || major == 2 || major == 3) && minor == 0))
    return E{"unsupported .npy format version " + std::to_string(major) + "." +
             std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)"};
  std::size_t length_bytes = major == 1 ? 2 : 4;
  std::size_t prefix_size = 8 + length_bytes;
  if (major != 1 && (file_size < prefix_size || read_exact(fd, prefix + 10, 2)))
    return E{"truncated .npy header"};
  const std::uint64_t header_size = little_endian_u32(prefix + 8, length_bytes);
  if (header_size > kMaxHeaderSize)
    return E{"the .npy header claims " + std::to_string(header_size) +
             " bytes, too many to be a plain array header"};
  if (header_size > file_size - prefix_size) return E{"truncated .npy header"};
  std::string header_text(header_size, '\0');
  if (read_exact(fd, header_text.data(), header_size)) return E{"truncated .npy header"};

  auto parsed = HeaderParser(header_text).parse();
  if (!parsed) return E{parsed.error()};
  NpyLayout layout;
  layout.header = std::move(parsed).value();
  const NpyHeader& header = layout.header;

  if (header.shape.empty() || header.shape.size() > 2)
    return E{"shape " + shape_text(header.shape) + " has " + std::to_string(header.shape.size()) +
             " dimensions; expected [samples] or [channels, samples]"};
  const std::uint64_t channels = header.shape.size() == 1 ? 1 : header.shape[0];
  const std::uint64_t samples = header.shape.back();
  if (channels == 0) return E{"shape " + shape_text(header.shape) + " has no channels"};
  if (channels > kMaxPlausibleChannels && samples < channels)
    return E{"shape " + shape_text(header.shape) +
             " looks like [samples, channels]; fxc expects [channels, samples] (save x.T)"};

  std::uint64_t count = 0, data_size = 0;
  const std::uint64_t item = size_of(header.dtype);
  const std::uint64_t data_offset = prefix_size + header_size;
  if (__builtin_mul_overflow(channels, samples, &count) ||
      __builtin_mul_overflow(count, item, &data_size))
    return E{"shape " + shape_text(header.shape) + " is too large"};
  const std::uint64_t available = file_size - data_offset;
  if (data_size > available)
    return E{"truncated .npy file: shape " + shape_text(header.shape) + " needs " +
             std::to_string(data_size) + " bytes of data but only " + std::to_string(available) +
             " follow the header"};
  if (data_size < available)
    return E{std::to_string(available - data_size) + " unexpected bytes after the data of shape " +
             shape_text(header.shape)};
  layout.channels = channels;
  layout.samples = samples;
  layout.data_offset = data_offset;
  return layout;
}

Expected<Signal, std::string> read_npy(int fd, std::uint64_t file_size) {
  using E = Unexpected<std::string>;
  auto layout = read_npy_layout(fd, file_size);
  if (!layout) return E{layout.error()};
  Signal signal(static_cast<std::size_t>(layout->channels), static_cast<std::size_t>(layout->samples),
                layout->header.dtype);
  auto err = layout->interleaved() ? read_interleaved(fd, signal) : read_planar(fd, signal);
  if (err) return E{*err == "unexpected end of file" ? "truncated .npy file" : *err};
  if (layout->header.big_endian != (std::endian::native == std::endian::big)) byteswap_signal(signal);
  return signal;
}

// Reads exactly `size` bytes at `offset`; nullopt on success, else the reason.
std::optional<std::string> pread_exact(int fd, void* data, std::size_t size, std::uint64_t offset) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::pread(fd, p, std::min<std::size_t>(size, std::size_t{1} << 30), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::string(std::strerror(errno));
    }
    if (n == 0) return std::string("truncated .npy file");  // it shrank after its size was checked
    p += n;
    offset += static_cast<std::uint64_t>(n);
    size -= static_cast<std::size_t>(n);
  }
  return std::nullopt;
}

// Writes exactly `size` bytes at `offset`; nullopt on success, else the reason.
std::optional<std::string> pwrite_exact(int fd, const void* data, std::size_t size, std::uint64_t offset) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::pwrite(fd, p, std::min<std::size_t>(size, std::size_t{1} << 30), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::string(std::strerror(errno));
    }
    p += n;
    offset += static_cast<std::uint64_t>(n);
    size -= static_cast<std::size_t>(n);
  }
  return std::nullopt;
}

// Item `i` of `bytes` (in the file's dtype and byte order) as a sample of type T, converted as
// a whole read converts (Signal::converted: a cast).
template <class T>
T sample_at(const unsigned char* bytes, std::size_t i, const NpyHeader& header) {
  const bool swap = header.big_endian != (std::endian::native == std::endian::big);
  auto load = [&](auto v) {
    unsigned char b[sizeof v];
    std::memcpy(b, bytes + i * sizeof v, sizeof v);
    if (swap) std::reverse(b, b + sizeof v);
    std::memcpy(&v, b, sizeof v);
    return static_cast<T>(v);
  };
  return header.dtype == DType::f32 ? load(float{}) : load(double{});
}

class NpyReader final : public SignalReader {
 public:
  NpyReader(int fd, std::string name, NpyLayout layout) : fd_(fd), name_(std::move(name)), layout_(std::move(layout)) {
    channels_ = static_cast<std::size_t>(layout_.channels);
    frames_ = static_cast<std::size_t>(layout_.samples);
  }
  ~NpyReader() override { ::close(fd_); }

  Expected<std::monostate, std::string> read(Signal& into, std::size_t frames) override {
    auto fail = [&](const std::string& reason) { return Unexpected{"cannot read '" + name_ + "': " + reason}; };
    if (frames > frames_ - read_) return fail("truncated .npy file");
    const std::size_t item = size_of(layout_.header.dtype);
    // The file's samples of [read_, read_ + frames): one run per channel, or one of frames.
    const std::size_t runs = layout_.interleaved() ? 1 : channels_;
    const std::size_t run_items = layout_.interleaved() ? frames * channels_ : frames;
    const bool as_stored = !layout_.interleaved() && into.dtype() == layout_.header.dtype &&
                           layout_.header.big_endian == (std::endian::native == std::endian::big);
    for (std::size_t r = 0; r < runs; ++r) {
      const std::uint64_t first = layout_.interleaved() ? read_ * channels_ : r * layout_.samples + read_;
      if (as_stored) {  // straight into the channel
        void* to = into.dtype() == DType::f32 ? static_cast<void*>(into.f32(r).data())
                                              : static_cast<void*>(into.f64(r).data());
        if (auto err = pread_exact(fd_, to, frames * item, layout_.data_offset + first * item)) return fail(*err);
        continue;
      }
      bytes_.resize(run_items * item);
      if (auto err = pread_exact(fd_, bytes_.data(), bytes_.size(), layout_.data_offset + first * item))
        return fail(*err);
      for (std::size_t c = layout_.interleaved() ? 0 : r; c < (layout_.interleaved() ? channels_ : r + 1); ++c) {
        const std::size_t stride = layout_.interleaved() ? channels_ : 1, offset = layout_.interleaved() ? c : 0;
        if (into.dtype() == DType::f32) {
          float* out = into.f32(c).data();
          for (std::size_t i = 0; i < frames; ++i) out[i] = sample_at<float>(bytes_.data(), i * stride + offset, layout_.header);
        } else {
          double* out = into.f64(c).data();
          for (std::size_t i = 0; i < frames; ++i) out[i] = sample_at<double>(bytes_.data(), i * stride + offset, layout_.header);
        }
      }
    }
    read_ += frames;
    return std::monostate{};
  }

 private:
  int fd_;
  std::string name_;
  NpyLayout layout_;
  std::size_t read_ = 0;
  std::vector<unsigned char> bytes_;
};

class NpyWriter final : public SignalWriter {
 public:
  NpyWriter(int fd, std::size_t channels, std::size_t frames, DType dtype, std::uint64_t data_offset)
      : fd_(fd), channels_(channels), frames_(frames), dtype_(dtype), data_offset_(data_offset) {}

  Expected<std::monostate, std::string> write(const Signal& from, std::size_t start, std::size_t frames) override {
    using E = Unexpected<std::string>;
    const std::size_t item = size_of(dtype_);
    if (frames > frames_ - written_) return E{std::string("more samples than the header says")};
    // A whole signal at once (or one channel) is written in order, which a pipe takes; blocks
    // of several channels go to their places in the [channels, samples] array.
    const bool in_order = channels_ == 1 || (written_ == 0 && frames == frames_);
    for (std::size_t c = 0; c < channels_; ++c) {
      const void* data = dtype_ == DType::f32 ? static_cast<const void*>(from.f32(c).data() + start)
                                              : static_cast<const void*>(from.f64(c).data() + start);
      std::vector<unsigned char> swapped;
      if constexpr (std::endian::native == std::endian::big) {  // the file says '<'
        swapped.assign(static_cast<const unsigned char*>(data), static_cast<const unsigned char*>(data) + frames * item);
        for (std::size_t i = 0; i < frames; ++i) std::reverse(&swapped[i * item], &swapped[i * item] + item);
        data = swapped.data();
      }
      if (in_order) {
        if (auto w = write_all(fd_, data, frames * item); !w) return w;
      } else if (auto err = pwrite_exact(fd_, data, frames * item,
                                         data_offset_ + (static_cast<std::uint64_t>(c) * frames_ + written_) * item)) {
        return E{*err};
      }
    }
    written_ += frames;
    return std::monostate{};
  }

  Expected<std::monostate, std::string> finish() override {
    if (written_ != frames_)
      return Unexpected{"internal error: " + std::to_string(written_) + " of " + std::to_string(frames_) +
                        " frames were written"};
    return std::monostate{};
  }

 private:
  int fd_;
  std::size_t channels_, frames_;
  DType dtype_;
  std::uint64_t data_offset_;
  std::size_t written_ = 0;
};

}  // namespace

Expected<Signal, std::string> read_npy_file(const std::string& path, DType dtype) {
  // O_NONBLOCK: a FIFO with no writer opens at once, to be refused as no regular file, instead
  // of blocking the run until a writer comes. (A regular file's reads ignore the flag.)
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) return Unexpected{"cannot read '" + path + "': " + std::strerror(errno)};
  return read_npy_fd(file.fd, path, dtype);
}

Expected<Signal, std::string> read_npy_fd(int fd, const std::string& name, DType dtype) {
  auto fail = [&](const std::string& reason) {
    return Unexpected{"cannot read '" + name + "': " + reason};
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return fail("it is a directory");
  // The size checks need a size: a pipe or device has none to check against.
  if (!S_ISREG(st.st_mode)) return fail("not a regular file");

  auto signal = read_npy(fd, static_cast<std::uint64_t>(st.st_size));
  if (!signal) return fail(signal.error());
  if (signal->dtype() == dtype) return signal;
  return signal->converted(dtype);
}

Expected<std::unique_ptr<SignalWriter>, std::string> open_npy_writer(int fd, std::size_t channels,
                                                                     std::size_t frames, DType dtype) {
  std::string dict = "{'descr': '";
  dict += dtype == DType::f32 ? "<f4" : "<f8";
  dict += "', 'fortran_order': False, 'shape': (" + std::to_string(channels) + ", " + std::to_string(frames) +
          "), }";
  // Version 1.0: magic, 2 version bytes, 2 length bytes; the data starts on a 64-byte boundary
  // (NumPy's own rule, which lets readers map the data aligned).
  const std::size_t prefix_size = kMagicSize + 4;
  std::size_t total = prefix_size + dict.size() + 1;
  total = (total + 63) / 64 * 64;
  const std::size_t header_size = total - prefix_size;
  dict.append(header_size - dict.size() - 1, ' ');
  dict += '\n';

  std::string head(kMagic, kMagicSize);
  head += '\x01';
  head += '\x00';
  head += static_cast<char>(header_size & 0xff);
  head += static_cast<char>(header_size >> 8);
  head += dict;
  if (auto w = write_all(fd, head.data(), head.size()); !w) return Unexpected{w.error()};
  return std::unique_ptr<SignalWriter>(new NpyWriter(fd, channels, frames, dtype, head.size()));
}

Expected<std::monostate, std::string> write_npy(int fd, const Signal& signal) {
  auto writer = open_npy_writer(fd, signal.channels(), signal.samples(), signal.dtype());
  if (!writer) return Unexpected{writer.error()};
  if (auto ok = (*writer)->write(signal, 0, signal.samples()); !ok) return ok;
  return (*writer)->finish();
}

Expected<std::unique_ptr<SignalReader>, std::string> open_npy_reader(const std::string& path) {
  auto fail = [&](const std::string& reason) {
    return Unexpected{"cannot read '" + path + "': " + reason};
  };
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) return fail(std::strerror(errno));
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) return fail(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return std::unique_ptr<SignalReader>();  // a whole read says what it is
  auto layout = read_npy_layout(file.fd, static_cast<std::uint64_t>(st.st_size));
  if (!layout) return fail(layout.error());
  auto reader = std::unique_ptr<SignalReader>(new NpyReader(file.fd, path, std::move(layout).value()));
  file.fd = -1;  // the reader's now
  return reader;
}

}  // namespace fxc

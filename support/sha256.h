// SPDX-License-Identifier: Apache-2.0
// SHA-256 (OpenSSL's libcrypto), for kernel-cache keys and graph hashes.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace fxc {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& update(std::string_view bytes);
  /// Finishes the hash; the object must not be updated afterwards.
  std::array<std::uint8_t, 32> digest();
  std::string hex_digest();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

}  // namespace fxc

// SPDX-License-Identifier: Apache-2.0
#include "support/sha256.h"

#include <openssl/evp.h>

#include "support/diagnostics.h"

namespace fxc {

struct Sha256::State {
  EVP_MD_CTX* ctx = nullptr;
  ~State() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  state_->ctx = EVP_MD_CTX_new();
  FXC_INTERNAL_ASSERT(state_->ctx && EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) == 1,
                      "cannot initialise SHA-256");
}

Sha256::~Sha256() = default;

Sha256& Sha256::update(std::string_view bytes) {
  FXC_INTERNAL_ASSERT(EVP_DigestUpdate(state_->ctx, bytes.data(), bytes.size()) == 1,
                      "SHA-256 update failed");
  return *this;
}

std::array<std::uint8_t, 32> Sha256::digest() {
  std::array<std::uint8_t, 32> out{};
  unsigned int size = 0;
  FXC_INTERNAL_ASSERT(EVP_DigestFinal_ex(state_->ctx, out.data(), &size) == 1 && size == 32,
                      "SHA-256 final failed");
  return out;
}

std::string Sha256::hex_digest() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::uint8_t byte : digest()) {
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) { return Sha256().update(bytes).hex_digest(); }

}  // namespace fxc

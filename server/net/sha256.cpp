// SHA-256 on OpenSSL's EVP interface (see sha256.h).
#include "server/net/sha256.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace qf::net {

struct sha256::impl {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~impl() { EVP_MD_CTX_free(ctx); }
};

sha256::sha256() : p_(std::make_unique<impl>()) {
  if (!p_->ctx) throw std::runtime_error("sha256: out of memory");
  reset();
}

sha256::~sha256() = default;

void sha256::reset() {
  if (EVP_DigestInit_ex(p_->ctx, EVP_sha256(), nullptr) != 1) throw std::runtime_error("sha256: init failed");
}

void sha256::update(std::span<const char> bytes) {
  if (!bytes.empty() && EVP_DigestUpdate(p_->ctx, bytes.data(), bytes.size()) != 1)
    throw std::runtime_error("sha256: update failed");
}

std::string sha256::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(p_->ctx, md, &n) != 1) throw std::runtime_error("sha256: final failed");
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; ++i) {
    out += digits[md[i] >> 4];
    out += digits[md[i] & 15];
  }
  reset();
  return out;
}

bool is_sha256_hex(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c); });
}

}  // namespace qf::net

// Incremental SHA-256 (OpenSSL's EVP digest) for checking downloads while they
// are written, and the lower-case hex form servers publish.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace qf::net {

class sha256 {
 public:
  sha256();
  ~sha256();
  sha256(const sha256&) = delete;
  sha256& operator=(const sha256&) = delete;

  void reset();
  void update(std::span<const char> bytes);
  // The digest of everything since construction or reset(), as 64 lower-case hex digits.
  std::string hex_digest();

 private:
  struct impl;
  std::unique_ptr<impl> p_;
};

// True for exactly 64 hex digits (either case).
bool is_sha256_hex(std::string_view s);

}  // namespace qf::net

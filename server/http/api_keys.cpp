// API keys of the HTTP endpoint (see api_keys.h).
#include "server/http/api_keys.h"

#include <fstream>
#include <sstream>

namespace qf::http {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Equal in time that depends on the lengths only.
bool same(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

}  // namespace

std::optional<api_keys> api_keys::load(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (error) *error = "cannot read the API key file " + path;
    return std::nullopt;
  }
  api_keys k;
  std::string line;
  while (std::getline(in, line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '#') continue;
    k.keys_.emplace_back(t);
  }
  if (k.keys_.empty()) {
    if (error) *error = "the API key file " + path + " holds no key (one key a line)";
    return std::nullopt;
  }
  return k;
}

int api_keys::match(std::string_view authorization, std::string_view x_api_key) const {
  std::string_view given = trim(x_api_key);
  const std::string_view auth = trim(authorization);
  if (auth.size() > 7 && (auth.substr(0, 7) == "Bearer " || auth.substr(0, 7) == "bearer ")) given = trim(auth.substr(7));
  if (given.empty()) return -1;
  int found = -1;
  for (std::size_t i = 0; i < keys_.size(); ++i)
    if (same(keys_[i], given) && found < 0) found = static_cast<int>(i);
  return found;
}

}  // namespace qf::http

// Reading the API key and scrubbing it from text (see api_key.h).
#include "server/remote/api_key.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace qf::remote {

namespace {

constexpr std::size_t max_key_bytes = 16 * 1024;
constexpr std::size_t min_key_bytes = 4;

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
  return s.substr(b);
}

// A key must be one header-safe token: no line breaks or control bytes.
bool header_safe(const std::string& k) {
  for (char c : k)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

std::optional<std::string> load_api_key(const api_key_source& src, std::string* error) {
  auto refuse = [&](const std::string& why) -> std::optional<std::string> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (!src.env.empty() && !src.file.empty()) return refuse("give either apiKeyEnv or apiKeyFile, not both");
  std::string key, where;
  if (!src.env.empty()) {
    where = "environment variable " + src.env;
    const char* v = std::getenv(src.env.c_str());
    if (!v) return refuse("the " + where + " (apiKeyEnv) is not set");
    key = trim(v);
  } else if (!src.file.empty()) {
    where = "file " + src.file;
    std::ifstream in(src.file, std::ios::binary);
    if (!in) return refuse("cannot read the API key file " + src.file + " (apiKeyFile)");
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string all = ss.str();
    if (all.size() > max_key_bytes) return refuse("the API key file " + src.file + " is larger than 16 KiB");
    key = trim(std::move(all));
  } else {
    return std::string();
  }
  if (key.empty()) return refuse("the API key in the " + where + " is empty");
  if (key.size() < min_key_bytes) return refuse("the API key in the " + where + " is too short to be a key");
  if (!header_safe(key)) return refuse("the API key in the " + where + " holds line breaks or control characters");
  return key;
}

std::string scrub(std::string_view text, std::string_view key) {
  std::string out(text);
  if (key.size() < min_key_bytes) return out;
  for (std::size_t at = out.find(key); at != std::string::npos; at = out.find(key, at)) {
    out.replace(at, key.size(), "[redacted]");
    at += 10;
  }
  return out;
}

}  // namespace qf::remote

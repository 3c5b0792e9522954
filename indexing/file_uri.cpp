// file:// URIs <-> paths (see file_uri.h).
#include "indexing/file_uri.h"

#include <algorithm>
#include <cctype>

namespace qf::index {

namespace {

bool unreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~' || c == '/';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string path_to_file_uri(std::string_view path) {
  static const char* digits = "0123456789ABCDEF";
  std::string out = "file://";
  if (path.empty() || path.front() != '/') out += '/';
  for (char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    if (unreserved(c)) {
      out += ch;
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

std::string file_uri_to_path(std::string_view uri) {
  constexpr std::string_view scheme = "file://";
  if (uri.size() < scheme.size()) return {};
  for (std::size_t i = 0; i < scheme.size(); ++i)
    if (static_cast<char>(std::tolower(static_cast<unsigned char>(uri[i]))) != scheme[i]) return {};
  uri.remove_prefix(scheme.size());
  if (uri.starts_with("localhost/")) uri.remove_prefix(9);
  if (uri.empty() || uri.front() != '/') return {};  // another host
  uri = uri.substr(0, std::min(uri.find('?'), uri.find('#')));
  std::string out;
  out.reserve(uri.size());
  for (std::size_t i = 0; i < uri.size(); ++i) {
    if (uri[i] == '%' && i + 2 < uri.size()) {
      const int h = hex_value(uri[i + 1]), l = hex_value(uri[i + 2]);
      if (h >= 0 && l >= 0) {
        out += static_cast<char>(h * 16 + l);
        i += 2;
        continue;
      }
    }
    out += uri[i];
  }
  return out;
}

std::string path_relative_to_roots(std::string_view path, const std::vector<std::string>& roots) {
  for (std::string_view r : roots) {
    while (r.size() > 1 && r.back() == '/') r.remove_suffix(1);
    if (r.empty()) continue;
    if (r == "/" && path.size() > 1 && path.front() == '/') return std::string(path.substr(1));
    if (path.size() > r.size() + 1 && path.starts_with(r) && path[r.size()] == '/')
      return std::string(path.substr(r.size() + 1));
  }
  return {};
}

}  // namespace qf::index

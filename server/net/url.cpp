// URL parsing and redirect resolution (see url.h).
#include "server/net/url.h"

#include <boost/asio/ip/address.hpp>
#include <algorithm>
#include <cctype>

namespace qf::net {

namespace {

bool fail(std::string* error, std::string msg) {
  if (error) *error = std::move(msg);
  return false;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool clean_bytes(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return c > 0x20 && c < 0x7f; });
}

// Removes "." and ".." segments of an absolute path (RFC 3986 section 5.2.4).
std::string remove_dot_segments(std::string_view path) {
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i + 1);
    if (j == std::string_view::npos) j = path.size();
    std::string_view seg = path.substr(i, j - i);  // "/name"
    if (seg == "/.") {
      if (j == path.size()) out += '/';
    } else if (seg == "/..") {
      size_t k = out.rfind('/');
      out.erase(k == std::string::npos ? 0 : k);
      if (j == path.size()) out += '/';
    } else {
      out += seg;
    }
    i = j;
  }
  return out.empty() ? "/" : out;
}

void strip_fragment(std::string& s) {
  size_t h = s.find('#');
  if (h != std::string::npos) s.erase(h);
}

}  // namespace

std::string url::authority() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return default_port() ? h : h + ":" + port;
}

std::string url::str() const { return scheme + "://" + authority() + target; }

std::optional<url> parse_url(std::string_view text, std::string* error) {
  if (!clean_bytes(text)) return fail(error, "the URL has spaces or control characters"), std::nullopt;
  size_t colon = text.find("://");
  if (colon == std::string_view::npos) return fail(error, "not an absolute URL (no scheme://)"), std::nullopt;
  url u;
  u.scheme = lower(text.substr(0, colon));
  if (u.scheme != "http" && u.scheme != "https")
    return fail(error, "unsupported URL scheme '" + u.scheme + "' (http and https are)"), std::nullopt;
  std::string_view rest = text.substr(colon + 3);
  size_t end = rest.find_first_of("/?#");
  std::string_view auth = rest.substr(0, end);
  std::string target(end == std::string_view::npos ? std::string_view("/") : rest.substr(end));
  strip_fragment(target);
  if (target.empty() || target[0] != '/') target = "/" + target;
  if (auth.find('@') != std::string_view::npos) return fail(error, "user info in URLs is not supported"), std::nullopt;
  std::string_view port;
  if (!auth.empty() && auth[0] == '[') {
    size_t close = auth.find(']');
    if (close == std::string_view::npos) return fail(error, "unterminated IPv6 address"), std::nullopt;
    u.host = std::string(auth.substr(1, close - 1));
    std::string_view after = auth.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return fail(error, "bad text after the IPv6 address"), std::nullopt;
      port = after.substr(1);
    }
  } else {
    size_t c = auth.rfind(':');
    u.host = lower(auth.substr(0, c));
    if (c != std::string_view::npos) port = auth.substr(c + 1);
  }
  if (u.host.empty()) return fail(error, "the URL has no host"), std::nullopt;
  if (!port.empty()) {
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); }) ||
        std::stoi(std::string(port)) > 65535 || std::stoi(std::string(port)) == 0)
      return fail(error, "bad port '" + std::string(port) + "'"), std::nullopt;
    u.port = std::string(port);
  } else {
    u.port = u.tls() ? "443" : "80";
  }
  u.target = std::move(target);
  return u;
}

std::optional<url> resolve_url(const url& base, std::string_view location, std::string* error) {
  if (!clean_bytes(location)) return fail(error, "the Location has spaces or control characters"), std::nullopt;
  if (location.empty()) return fail(error, "empty Location"), std::nullopt;
  if (location.find("://") != std::string_view::npos && location.find("://") < location.find_first_of("/?#"))
    return parse_url(location, error);
  if (location.substr(0, 2) == "//") return parse_url(base.scheme + ":" + std::string(location), error);
  url u = base;
  std::string loc(location);
  strip_fragment(loc);
  if (loc.empty()) return u;
  if (loc[0] == '?') {
    u.target = u.target.substr(0, u.target.find('?')) + loc;
    return u;
  }
  std::string path, query;
  size_t q = loc.find('?');
  path = loc.substr(0, q);
  if (q != std::string::npos) query = loc.substr(q);
  if (path.empty() || path[0] != '/') {
    std::string base_path = base.target.substr(0, base.target.find('?'));
    path = base_path.substr(0, base_path.rfind('/') + 1) + path;
  }
  u.target = remove_dot_segments(path) + query;
  return u;
}

bool same_origin(const url& a, const url& b) {
  return a.scheme == b.scheme && lower(a.host) == lower(b.host) && a.port == b.port;
}

bool is_loopback_host(std::string_view host) {
  std::string h = lower(host);
  if (!h.empty() && h.back() == '.') h.pop_back();
  if (h == "localhost") return true;
  boost::system::error_code ec;
  const boost::asio::ip::address a = boost::asio::ip::make_address(h, ec);
  if (ec) return false;
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, a.to_v6()).is_loopback();
  return a.is_loopback();
}

}  // namespace qf::net

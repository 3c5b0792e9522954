// URLs as the HTTP client needs them: scheme (http or https), host, port and
// request target, parsed strictly (no user info, no spaces or control bytes),
// and the resolution of a redirect's Location against the URL that sent it
// (absolute, scheme-relative, absolute path, relative path). The fragment is
// dropped: it never goes on the wire.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace qf::net {

struct url {
  std::string scheme;  // "http" or "https"
  std::string host;    // a name, an IPv4 address, or an IPv6 address without brackets
  std::string port;    // always set: the explicit port or 80/443
  std::string target;  // path and query, starting with '/'

  bool tls() const { return scheme == "https"; }
  bool default_port() const { return port == (tls() ? "443" : "80"); }
  // host[:port] for the Host header (brackets around IPv6, port only when not the default).
  std::string authority() const;
  std::string str() const;
};

// Parses an absolute http(s) URL; nullopt with *error set otherwise.
std::optional<url> parse_url(std::string_view text, std::string* error = nullptr);

// The URL a Location header value points to, relative to base.
std::optional<url> resolve_url(const url& base, std::string_view location, std::string* error = nullptr);

}  // namespace qf::net

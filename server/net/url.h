// URLs as the HTTP client needs them: scheme (http or https), host, port and
// request target, parsed strictly (no user info, no spaces or control bytes),
// and the resolution of a redirect's Location against the URL that sent it
// (absolute, scheme-relative, absolute path, relative path). The fragment is
// dropped: it never goes on the wire. Also the two facts the client's
// redirect and credential rules need: whether two URLs share an origin, and
// whether a host is the loopback.
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

// Same scheme, host and port (the origin a browser would compare).
bool same_origin(const url& a, const url& b);

// "localhost", an address in 127.0.0.0/8, ::1 (or ::ffff:127.x.y.z): the
// traffic never leaves the machine. By the text alone, nothing is resolved.
bool is_loopback_host(std::string_view host);

}  // namespace qf::net

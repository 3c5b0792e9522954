// parse_url and resolve_url: the forms a request URL and a Location take.
#include <gtest/gtest.h>

#include "server/net/url.h"

namespace qf::net {
namespace {

TEST(Url, ParsesSchemeHostPortTarget) {
  auto u = parse_url("https://Huggingface.co/a/b/resolve/main/x.gguf?download=true#frag");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->scheme, "https");
  EXPECT_EQ(u->host, "huggingface.co");
  EXPECT_EQ(u->port, "443");
  EXPECT_EQ(u->target, "/a/b/resolve/main/x.gguf?download=true");
  EXPECT_EQ(u->authority(), "huggingface.co");
  auto v = parse_url("http://127.0.0.1:8080");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->port, "8080");
  EXPECT_EQ(v->target, "/");
  EXPECT_EQ(v->str(), "http://127.0.0.1:8080/");
  auto w = parse_url("http://[::1]:99/x");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->host, "::1");
  EXPECT_EQ(w->authority(), "[::1]:99");
}

TEST(Url, RefusesWhatItCannotFetch) {
  std::string err;
  EXPECT_FALSE(parse_url("ftp://x/y", &err));
  EXPECT_NE(err.find("ftp"), std::string::npos);
  EXPECT_FALSE(parse_url("example.com/x", &err));
  EXPECT_FALSE(parse_url("http://user:pw@host/", &err));
  EXPECT_FALSE(parse_url("http://host:0/", &err));
  EXPECT_FALSE(parse_url("http://host:70000/", &err));
  EXPECT_FALSE(parse_url("http://host/a b", &err));
  EXPECT_FALSE(parse_url("http:///x", &err));
}

TEST(Url, ResolvesLocations) {
  auto base = parse_url("https://huggingface.co/o/r/resolve/main/dir/f.gguf?x=1");
  ASSERT_TRUE(base);
  EXPECT_EQ(resolve_url(*base, "https://cdn.example/abc?sig=1")->str(), "https://cdn.example/abc?sig=1");
  EXPECT_EQ(resolve_url(*base, "//cdn.example/abc")->str(), "https://cdn.example/abc");
  EXPECT_EQ(resolve_url(*base, "/api/x")->str(), "https://huggingface.co/api/x");
  EXPECT_EQ(resolve_url(*base, "g.gguf")->str(), "https://huggingface.co/o/r/resolve/main/dir/g.gguf");
  EXPECT_EQ(resolve_url(*base, "../../v2/f.gguf")->str(), "https://huggingface.co/o/r/resolve/v2/f.gguf");
  EXPECT_EQ(resolve_url(*base, "?y=2")->str(), "https://huggingface.co/o/r/resolve/main/dir/f.gguf?y=2");
  EXPECT_EQ(resolve_url(*base, "/a/./b/../c#top")->str(), "https://huggingface.co/a/c");
  EXPECT_FALSE(resolve_url(*base, "gopher://x/"));
  EXPECT_FALSE(resolve_url(*base, ""));
}

TEST(Url, Origins) {
  auto a = parse_url("https://Example.com/x");
  ASSERT_TRUE(a);
  EXPECT_TRUE(same_origin(*a, *parse_url("https://example.com:443/other?q")));
  EXPECT_FALSE(same_origin(*a, *parse_url("http://example.com/x")));        // scheme
  EXPECT_FALSE(same_origin(*a, *parse_url("https://example.com:8443/x")));  // port
  EXPECT_FALSE(same_origin(*a, *parse_url("https://cdn.example.com/x")));   // host
}

TEST(Url, LoopbackHosts) {
  for (const char* h : {"localhost", "LOCALHOST", "localhost.", "127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"})
    EXPECT_TRUE(is_loopback_host(h)) << h;
  for (const char* h : {"10.0.0.1", "0.0.0.0", "::", "192.0.2.1", "localhost.example.com", "mylocalhost", "128.0.0.1",
                        "::ffff:10.0.0.1", "127.0.0.1.nip.io"})
    EXPECT_FALSE(is_loopback_host(h)) << h;
}

}  // namespace
}  // namespace qf::net

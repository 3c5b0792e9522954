// The HTTP client's least-privilege rules against real servers on loopback:
// recording servers (tests/recording_http_server.h) that log every header and
// body they receive, and a real nginx over TLS for the https->http downgrade.
// Redirect chains: https->http (refused), cross-port on the same host and
// back (credentials dropped and never re-added), 307 with a POST body to
// another host (refused, the other origin receives nothing), same-origin 307
// (the body follows), 303 to another host (GET, no body); credentials over
// plain http (loopback only); the answer size cap.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "server/net/http_client.h"
#include "tests/nginx_server.h"
#include "tests/recording_http_server.h"

namespace qf::net {
namespace {

namespace fs = std::filesystem;
using qf::test::canned_response;
using qf::test::nginx_server;
using qf::test::recorded_request;
using qf::test::recording_http_server;

const std::string secret = "Bearer sk-test-secret";
const std::string api_key = "key-test-secret";

request_options with_credentials() {
  request_options o;
  o.headers.push_back({"Authorization", secret});
  o.headers.push_back({"X-Api-Key", api_key});
  o.connect_timeout = std::chrono::milliseconds(5000);
  return o;
}

bool carries_credentials(const recorded_request& r) {
  if (r.header("Authorization") || r.header("X-Api-Key")) return true;
  for (const auto& [k, v] : r.headers)
    if (v.find("secret") != std::string::npos) return true;
  return false;
}

http_error fetch_error(const std::string& url, const request_options& o) {
  std::string got;
  try {
    fetch_to_string(url, o, got);
  } catch (const http_error& e) {
    return e;
  }
  ADD_FAILURE() << "fetching " << url << " succeeded";
  return http_error(error_kind::protocol, "no error");
}

TEST(CredentialHeaders, NamesThatCarrySecrets) {
  for (const char* n : {"Authorization", "authorization", "Proxy-Authorization", "Cookie", "X-Api-Key", "api-key",
                        "X-Auth-Token", "HF-Token", "X-Goog-Api-Key", "X-Secret", "Ocp-Apim-Subscription-Key"})
    EXPECT_TRUE(is_credential_header(n)) << n;
  for (const char* n : {"Accept", "Content-Type", "Range", "If-Range", "User-Agent", "Accept-Encoding", "Keep-Alive"})
    EXPECT_FALSE(is_credential_header(n)) << n;
}

TEST(RedirectPolicy, CrossPortDropsCredentialsAndAHopBackDoesNotReAddThem) {
  recording_http_server a, b;
  ASSERT_TRUE(a.ok()) << a.error();
  ASSERT_TRUE(b.ok()) << b.error();
  a.redirect("/start", 302, b.url("/mid"));  // same host, another port
  b.redirect("/mid", 302, a.url("/final"));  // back to the first origin
  a.answer("/final", {200, {}, "landed"});
  std::string got;
  response r = fetch_to_string(a.url("/start"), with_credentials(), got);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(got, "landed");
  ASSERT_EQ(r.redirects.size(), 2u);
  auto at_a = a.wait_for(2), at_b = b.wait_for(1);
  ASSERT_EQ(at_a.size(), 2u);
  ASSERT_EQ(at_b.size(), 1u);
  EXPECT_EQ(at_a[0].target, "/start");
  ASSERT_NE(at_a[0].header("Authorization"), nullptr);  // the first origin gets them
  EXPECT_EQ(*at_a[0].header("Authorization"), secret);
  ASSERT_NE(at_a[0].header("X-Api-Key"), nullptr);
  EXPECT_FALSE(carries_credentials(at_b[0])) << "the other port received credentials";
  EXPECT_EQ(at_a[1].target, "/final");
  EXPECT_FALSE(carries_credentials(at_a[1])) << "credentials were re-added on the hop back";
}

TEST(RedirectPolicy, SameOriginKeepsCredentials) {
  recording_http_server a;
  ASSERT_TRUE(a.ok()) << a.error();
  a.redirect("/start", 301, "/next");
  std::string got;
  EXPECT_EQ(fetch_to_string(a.url("/start"), with_credentials(), got).status, 200);
  auto seen = a.wait_for(2);
  ASSERT_EQ(seen.size(), 2u);
  ASSERT_NE(seen[1].header("Authorization"), nullptr);
  EXPECT_EQ(*seen[1].header("Authorization"), secret);
}

TEST(RedirectPolicy, PostBodyIsNotResentToAnotherHostOn307) {
  recording_http_server a, other("127.0.0.2");
  ASSERT_TRUE(a.ok()) << a.error();
  if (!other.ok()) GTEST_SKIP() << "cannot listen on 127.0.0.2: " << other.error();
  a.redirect("/v1/completions", 307, other.url("/v1/completions"));
  request_options o = with_credentials();
  o.method = "POST";
  o.body = R"({"prompt":"def secret_code():"})";
  http_error e = fetch_error(a.url("/v1/completions"), o);
  EXPECT_EQ(e.kind(), error_kind::redirect_refused) << e.what();
  EXPECT_NE(std::string(e.what()).find("request body to another origin"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("127.0.0.2"), std::string::npos) << e.what();
  ASSERT_EQ(a.wait_for(1).size(), 1u);
  EXPECT_EQ(a.requests()[0].body, o.body);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(other.requests().empty()) << "the other host received " << other.requests()[0].body;

  // 308 the same way; to the same host under another name too.
  a.redirect("/perm", 308, "http://localhost:" + std::to_string(a.port()) + "/elsewhere");
  http_error e2 = fetch_error(a.url("/perm"), o);
  EXPECT_EQ(e2.kind(), error_kind::redirect_refused) << e2.what();
  EXPECT_TRUE(a.wait_for(2).size() == 2u);
  for (const auto& r : a.requests()) EXPECT_NE(r.target, "/elsewhere");
}

TEST(RedirectPolicy, SameOrigin307ResendsTheBody) {
  recording_http_server a;
  ASSERT_TRUE(a.ok()) << a.error();
  a.redirect("/post", 307, "/landing");
  request_options o = with_credentials();
  o.method = "POST";
  o.body = "payload";
  std::string got;
  EXPECT_EQ(fetch_to_string(a.url("/post"), o, got).status, 200);
  auto seen = a.wait_for(2);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].method, "POST");
  EXPECT_EQ(seen[1].body, "payload");
  EXPECT_NE(seen[1].header("Authorization"), nullptr);
}

TEST(RedirectPolicy, SeeOtherToAnotherHostIsAGetWithoutBodyOrCredentials) {
  recording_http_server a, other("127.0.0.2");
  ASSERT_TRUE(a.ok()) << a.error();
  if (!other.ok()) GTEST_SKIP() << "cannot listen on 127.0.0.2: " << other.error();
  a.redirect("/post", 303, other.url("/result"));
  request_options o = with_credentials();
  o.method = "POST";
  o.body = "payload";
  std::string got;
  EXPECT_EQ(fetch_to_string(a.url("/post"), o, got).status, 200);
  auto seen = other.wait_for(1);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_TRUE(seen[0].body.empty());
  EXPECT_FALSE(carries_credentials(seen[0]));
}

TEST(RedirectPolicy, CredentialsOverPlainHttpGoOnlyToTheLoopback) {
  // A machine elsewhere (TEST-NET-1, never routed): refused before any connection.
  http_error e = fetch_error("http://192.0.2.1:8080/v1/completions", with_credentials());
  EXPECT_EQ(e.kind(), error_kind::insecure) << e.what();
  EXPECT_NE(std::string(e.what()).find("over plain http"), std::string::npos) << e.what();
  EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
  request_options named = with_credentials();
  named.headers.erase(named.headers.begin());  // the API key header alone
  EXPECT_EQ(fetch_error("http://example.invalid/x", named).kind(), error_kind::insecure);

  // The loopback by address and by name.
  recording_http_server a;
  ASSERT_TRUE(a.ok()) << a.error();
  std::string got;
  EXPECT_EQ(fetch_to_string(a.url("/a"), with_credentials(), got).status, 200);
  EXPECT_EQ(fetch_to_string("http://localhost:" + std::to_string(a.port()) + "/b", with_credentials(), got).status,
            200);
  auto seen = a.wait_for(2);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_NE(seen[0].header("Authorization"), nullptr);
  EXPECT_NE(seen[1].header("Authorization"), nullptr);
}

TEST(RedirectPolicy, AnswerSizeIsCapped) {
  recording_http_server a;
  ASSERT_TRUE(a.ok()) << a.error();
  a.answer("/declared", {200, {}, std::string(5000, 'x')});
  a.answer("/streamed", {200, {{"Content-Type", "text/event-stream"}}, std::string(200000, ':'), false});
  request_options o;
  o.max_body = 4096;
  std::string got;
  http_error e = fetch_error(a.url("/declared"), o);
  EXPECT_EQ(e.kind(), error_kind::too_large) << e.what();
  EXPECT_NE(std::string(e.what()).find("over the limit of 4096"), std::string::npos) << e.what();
  e = fetch_error(a.url("/streamed"), o);
  EXPECT_EQ(e.kind(), error_kind::too_large) << e.what();
  EXPECT_NE(std::string(e.what()).find("passed the limit of 4096 bytes"), std::string::npos) << e.what();
  // Under the cap it arrives whole.
  o.max_body = 300000;
  EXPECT_EQ(fetch_to_string(a.url("/streamed"), o, got).status, 200);
  EXPECT_EQ(got.size(), 200000u);
}

// https -> http: a real nginx over TLS (a certificate made for the test) that
// redirects to a recording server on plain http.
class HttpsDowngrade : public ::testing::Test {
 protected:
  void SetUp() override {
    if (nginx_server::binary().empty()) GTEST_SKIP() << "nginx is not installed (scripts/setup-tests.sh installs it)";
    if (std::system("command -v openssl >/dev/null 2>&1") != 0) GTEST_SKIP() << "the openssl tool is not installed";
    ASSERT_TRUE(plain_.ok()) << plain_.error();
    dir_ = (fs::temp_directory_path() / ("qf_net_downgrade_" + std::to_string(::getpid()))).string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    cert_ = dir_ + "/cert.pem";
    const std::string key = dir_ + "/key.pem";
    const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
                            "-addext subjectAltName=IP:127.0.0.1 -keyout " + key + " -out " + cert_ +
                            " >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    tls_ = std::make_unique<nginx_server>(
        dir_,
        "    location = /down { return 302 " + plain_.url("/landing") + "; }\n"
        "    location = /down307 { return 307 " + plain_.url("/v1/completions") + "; }\n"
        "    location = /inside { return 302 /f.txt; }\n",
        0, cert_, key);
    ASSERT_TRUE(tls_->ok()) << tls_->error();
    std::ofstream(tls_->www() + "/f.txt") << "over tls\n";
  }
  void TearDown() override {
    tls_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  recording_http_server plain_;
  std::unique_ptr<nginx_server> tls_;
  std::string dir_, cert_;
};

TEST_F(HttpsDowngrade, IsRefusedWithOrWithoutCredentials) {
  request_options o = with_credentials();
  o.ca_file = cert_;
  http_error e = fetch_error(tls_->url("/down"), o);
  EXPECT_EQ(e.kind(), error_kind::insecure) << e.what();
  EXPECT_NE(std::string(e.what()).find("leaves https for plain http"), std::string::npos) << e.what();
  request_options bare;
  bare.ca_file = cert_;
  EXPECT_EQ(fetch_error(tls_->url("/down"), bare).kind(), error_kind::insecure);
  o.method = "POST";
  o.body = "def secret_code(): pass";
  EXPECT_EQ(fetch_error(tls_->url("/down307"), o).kind(), error_kind::insecure);
  // The TLS server saw the requests (with the key: it is the first origin); the plain one nothing.
  auto logged = tls_->logged("GET /down ", 2);
  ASSERT_EQ(logged.size(), 2u);
  EXPECT_NE(logged[0].find(secret), std::string::npos) << logged[0];
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(plain_.requests().empty()) << "the plain http server received " << plain_.requests()[0].target;
}

TEST_F(HttpsDowngrade, RedirectsWithinHttpsAreFollowed) {
  request_options o = with_credentials();
  o.ca_file = cert_;
  std::string got;
  response r = fetch_to_string(tls_->url("/inside"), o, got);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(got, "over tls\n");
  auto logged = tls_->logged("GET /f.txt ");
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find(secret), std::string::npos) << logged[0];
}

}  // namespace
}  // namespace qf::net

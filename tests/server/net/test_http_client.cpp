// The HTTP(S) client against a real nginx on 127.0.0.1: bodies streamed to a
// sink, status codes returned, ranges, redirects (followed, reported, bounded),
// connect errors, read timeouts, cancellation, and TLS verification against a
// certificate made for the test. Skipped when nginx is not installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "server/net/http_client.h"
#include "tests/nginx_server.h"

namespace qf::net {
namespace {

namespace fs = std::filesystem;
using qf::test::nginx_server;

std::string scratch(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("qf_net_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string payload(size_t n) {
  std::string s(n, '\0');
  uint32_t x = 12345;
  for (auto& c : s) c = static_cast<char>((x = x * 1103515245u + 12345u) >> 24);
  return s;
}

void write(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

class HttpClient : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (nginx_server::binary().empty()) return;
    dir_ = scratch("plain");
    server_ = new nginx_server(dir_,
                               "    location = /moved { add_header X-Linked-Etag '\"abc\"' always; return 302 /hop2; }\n"
                               "    location = /hop2 { return 301 /files/data.bin; }\n"
                               "    location = /loop { return 302 /loop; }\n"
                               "    location = /to-localhost { return 302 http://localhost:$server_port/files/data.bin; }\n"
                               "    location = /same-host { return 302 /files/data.bin; }\n"
                               "    location = /offsite { return 302 http://127.0.0.2:1/never; }\n"
                               "    location /slow/ { alias " + dir_ + "/www/files/; limit_rate_after 16k; limit_rate 100; }\n");
    body_ = payload(300000);
    write(server_->www() + "/files/data.bin", body_);
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SetUp() override {
    if (nginx_server::binary().empty()) GTEST_SKIP() << "nginx is not installed (scripts/setup-tests.sh installs it)";
    ASSERT_TRUE(server_->ok()) << server_->error();
  }
  static inline nginx_server* server_ = nullptr;
  static inline std::string dir_, body_;
};

TEST_F(HttpClient, StreamsABodyToTheSink) {
  std::string got;
  response r = fetch_to_string(server_->url("/files/data.bin"), {}, got);
  EXPECT_EQ(r.status, 200);
  ASSERT_TRUE(r.content_length);
  EXPECT_EQ(*r.content_length, body_.size());
  EXPECT_TRUE(got == body_);
  EXPECT_TRUE(r.redirects.empty());
  ASSERT_NE(find_header(r.headers, "etag"), nullptr);  // case-insensitive lookup
}

TEST_F(HttpClient, ErrorStatusesAreAnswersNotExceptions) {
  std::string got;
  response r = fetch_to_string(server_->url("/files/missing.bin"), {}, got);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.reason, "Not Found");
}

TEST_F(HttpClient, RangeRequestGetsTheTail) {
  request_options o;
  o.headers.push_back({"Range", "bytes=299000-"});
  std::string got;
  response r = fetch_to_string(server_->url("/files/data.bin"), o, got);
  EXPECT_EQ(r.status, 206);
  ASSERT_NE(find_header(r.headers, "Content-Range"), nullptr);
  EXPECT_EQ(*find_header(r.headers, "Content-Range"), "bytes 299000-299999/300000");
  EXPECT_TRUE(got == body_.substr(299000));
}

TEST_F(HttpClient, FollowsRedirectsAndReportsEachHop) {
  std::string got;
  response r = fetch_to_string(server_->url("/moved"), {}, got);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(got == body_);
  ASSERT_EQ(r.redirects.size(), 2u);
  EXPECT_EQ(r.redirects[0].status, 302);
  EXPECT_EQ(r.redirects[0].url, server_->url("/moved"));
  ASSERT_NE(find_header(r.redirects[0].headers, "X-Linked-Etag"), nullptr);
  EXPECT_EQ(*find_header(r.redirects[0].headers, "X-Linked-Etag"), "\"abc\"");
  EXPECT_EQ(r.redirects[1].status, 301);
  EXPECT_EQ(r.url, server_->url("/files/data.bin"));
}

TEST_F(HttpClient, AuthorizationStaysOnTheOriginalHost) {
  request_options o;
  o.headers.push_back({"Authorization", "Bearer secret-token"});
  std::string got;
  EXPECT_EQ(fetch_to_string(server_->url("/same-host"), o, got).status, 200);
  EXPECT_EQ(fetch_to_string(server_->url("/to-localhost"), o, got).status, 200);
  auto same = server_->logged("GET /same-host ");
  auto moved = server_->logged("GET /to-localhost ");
  auto data = server_->logged("GET /files/data.bin ", 2);
  ASSERT_EQ(same.size(), 1u);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_NE(same[0].find("\"Bearer secret-token\""), std::string::npos) << same[0];
  EXPECT_NE(moved[0].find("\"Bearer secret-token\""), std::string::npos) << moved[0];
  // The same host keeps it after the redirect; "localhost" is another host.
  size_t with_token = 0, without = 0;
  for (const auto& l : data) (l.find("secret-token") != std::string::npos ? with_token : without) += 1;
  EXPECT_GE(with_token, 1u);
  EXPECT_GE(without, 1u);
}

TEST_F(HttpClient, RedirectLoopIsBounded) {
  request_options o;
  o.max_redirects = 4;
  std::string got;
  try {
    fetch_to_string(server_->url("/loop"), o, got);
    FAIL() << "a redirect loop was followed forever";
  } catch (const http_error& e) {
    EXPECT_EQ(e.kind(), error_kind::redirect_limit);
    EXPECT_NE(std::string(e.what()).find("more than 4 redirects"), std::string::npos) << e.what();
  }
  // 4 followed redirects plus the one refused: five requests reached the server.
  EXPECT_GE(server_->logged("GET /loop ", 5).size(), 5u);
}

TEST_F(HttpClient, ConnectFailureNamesTheTarget) {
  nginx_server gone(scratch("gone"), "");
  ASSERT_TRUE(gone.ok()) << gone.error();
  const std::string url = gone.url("/x");
  gone.stop();
  std::string got;
  try {
    fetch_to_string(url, {}, got);
    FAIL() << "connected to a stopped server";
  } catch (const http_error& e) {
    EXPECT_EQ(e.kind(), error_kind::connect);
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(gone.port())), std::string::npos) << e.what();
  }
}

TEST_F(HttpClient, ReadTimeoutStopsAStalledBody) {
  request_options o;
  o.read_timeout = std::chrono::milliseconds(300);
  std::string got;
  try {
    fetch_to_string(server_->url("/slow/data.bin"), o, got);
    FAIL() << "a throttled body of 300 kB arrived";
  } catch (const http_error& e) {
    EXPECT_EQ(e.kind(), error_kind::timeout) << e.what();
  }
  EXPECT_GE(got.size(), 8192u);  // what arrived before the stall (16 KiB with the headers) reached the sink
  EXPECT_LT(got.size(), body_.size());
  EXPECT_TRUE(got == body_.substr(0, got.size()));
}

TEST_F(HttpClient, CancelFlagStopsTheTransfer) {
  std::atomic<bool> cancel{false};
  request_options o;
  o.cancel = &cancel;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  std::string got;
  try {
    fetch_to_string(server_->url("/slow/data.bin"), o, got);
    ADD_FAILURE() << "the transfer was not cancelled";
  } catch (const http_error& e) {
    EXPECT_EQ(e.kind(), error_kind::cancelled) << e.what();
  }
  t.join();
}

TEST_F(HttpClient, SinkCanStopTheTransfer) {
  struct stop_after_first final : body_sink {
    bool on_response(const response&) override { return true; }
    bool on_data(std::span<const char>) override { return ++pieces < 1; }
    int pieces = 0;
  } sink;
  try {
    fetch(server_->url("/files/data.bin"), {}, sink);
    FAIL() << "the sink's stop was ignored";
  } catch (const http_error& e) {
    EXPECT_EQ(e.kind(), error_kind::aborted);
  }
  EXPECT_EQ(sink.pieces, 1);
}

TEST_F(HttpClient, BodyOverTheCapIsRefused) {
  std::string got;
  try {
    fetch_to_string(server_->url("/files/data.bin"), {}, got, 1000);
    FAIL() << "a body over the cap was accepted";
  } catch (const http_error& e) {
    EXPECT_EQ(e.kind(), error_kind::too_large);
    EXPECT_NE(std::string(e.what()).find("300000 bytes, over the limit of 1000"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(got.empty());  // refused from its Content-Length, before any byte
}

TEST_F(HttpClient, BadUrlIsRefusedBeforeAnyConnection) {
  std::string got;
  try {
    fetch_to_string("ftp://127.0.0.1/x", {}, got);
    FAIL();
  } catch (const http_error& e) {
    EXPECT_EQ(e.kind(), error_kind::bad_url);
  }
}

// HTTPS: a self-signed certificate for 127.0.0.1 made with the openssl tool.
class HttpsClient : public ::testing::Test {
 protected:
  void SetUp() override {
    if (nginx_server::binary().empty()) GTEST_SKIP() << "nginx is not installed (scripts/setup-tests.sh installs it)";
    if (std::system("command -v openssl >/dev/null 2>&1") != 0) GTEST_SKIP() << "the openssl tool is not installed";
    dir_ = scratch("tls");
    cert_ = dir_ + "/cert.pem";
    const std::string key = dir_ + "/key.pem";
    const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
                            "-addext subjectAltName=IP:127.0.0.1 -keyout " + key + " -out " + cert_ +
                            " >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    server_ = std::make_unique<nginx_server>(dir_, "", 0, cert_, key);
    ASSERT_TRUE(server_->ok()) << server_->error();
    write(server_->www() + "/f.txt", "over tls\n");
  }
  void TearDown() override {
    server_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::unique_ptr<nginx_server> server_;
  std::string dir_, cert_;
};

TEST_F(HttpsClient, UntrustedCertificateIsRefusedByDefault) {
  std::string got;
  try {
    fetch_to_string(server_->url("/f.txt"), {}, got);
    FAIL() << "a self-signed certificate was accepted";
  } catch (const http_error& e) {
    EXPECT_EQ(e.kind(), error_kind::tls);
    EXPECT_NE(std::string(e.what()).find("certificate verification failed"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(got.empty());
}

TEST_F(HttpsClient, TrustedCertificateWorks) {
  request_options o;
  o.ca_file = cert_;
  std::string got;
  response r = fetch_to_string(server_->url("/f.txt"), o, got);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(got, "over tls\n");
}

TEST_F(HttpsClient, CertificateForAnotherHostIsRefused) {
  request_options o;
  o.ca_file = cert_;  // trusted, but issued for 127.0.0.1, not for "localhost"
  std::string got;
  try {
    fetch_to_string("https://localhost:" + std::to_string(server_->port()) + "/f.txt", o, got);
    FAIL() << "a certificate for another host was accepted";
  } catch (const http_error& e) {
    EXPECT_EQ(e.kind(), error_kind::tls) << e.what();
    EXPECT_NE(std::string(e.what()).find("certificate verification failed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace qf::net

// The HTTP endpoint in process, on a server_core whose provider is the test
// double (tests/server/test_provider.h: a document holding "BLOCK" runs until
// its cancel token is set): a client that closes its connection while its
// /infill runs cancels the job (the worker is freed, the stats count one
// cancellation), and the server answers the next request; a request for a
// buffer that a newer one continues is preempted (latest wins); past
// --max-pending completions a request gets 429.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include "server/http/http_server.h"
#include "server/core/server_core.h"
#include "tests/server/test_provider.h"
#include "tests/server_process.h"

using namespace qf::server;
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

class HttpCancel : public ::testing::Test {
 protected:
  void SetUp() override {
    core_options o;
    o.background = false;
    o.cli_model_path = "test-double";
    o.factory = [this](const provider_options&, std::string*) {
      return std::make_unique<qf::server::testing::test_provider>([this](const std::string& m) {
        if (m.rfind("test-provider: running", 0) == 0) ++running_;
      });
    };
    core_ = std::make_unique<server_core>(std::move(o), [this](std::function<void()> f) { asio::post(ioc_, std::move(f)); });
    core_->start();
    qf::http::http_options ho;
    ho.port = 0;
    ho.max_pending = max_pending_;
    server_ = std::make_unique<qf::http::http_server>(*core_, ioc_, ho);
    std::string err;
    ASSERT_TRUE(server_->start(&err)) << err;
    thread_ = std::thread([this] { ioc_.run(); });
    std::promise<bool> loaded;
    asio::post(ioc_, [&] { core_->load_model(nullptr, [&](const model_state& st) { loaded.set_value(st.loaded); }); });
    ASSERT_TRUE(loaded.get_future().get());
  }
  void TearDown() override {
    if (server_ && thread_.joinable()) {
      std::promise<void> stopped;
      asio::post(ioc_, [&] {
        server_->stop();
        stopped.set_value();
      });
      stopped.get_future().wait();
    }
    core_->worker().cancel_all(qf::cancel_reason::shutdown);
    guard_.reset();
    ioc_.stop();
    if (thread_.joinable()) thread_.join();
    core_->stop();
  }
  // A connected socket that has sent POST /infill with `body`.
  int send_infill(const std::string& body) {
    const int s = qf::test::connect_loopback(server_->port());
    EXPECT_GE(s, 0);
    const std::string req = "POST /infill HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: " +
                            std::to_string(body.size()) + "\r\n\r\n" + body;
    EXPECT_EQ(::write(s, req.data(), req.size()), static_cast<ssize_t>(req.size()));
    return s;
  }
  // The whole answer on `s` (the server closes after it: Connection: close).
  static std::string read_all(int s) {
    std::string got;
    char buf[4096];
    for (ssize_t n; (n = ::read(s, buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
    ::close(s);
    return got;
  }
  std::uint64_t cancelled(const char* reason) {
    const json::value st = core_->stats().to_json(0);
    const json::object& c = st.at("cancellations").as_object();
    const auto* n = c.if_contains(reason);
    return n ? n->to_number<std::uint64_t>() : 0;
  }
  template <class F>
  static bool eventually(F f) {
    for (int i = 0; i < 3000; ++i) {  // a generous safety net, never a timing assert
      if (f()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  std::size_t max_pending_ = 16;
  asio::io_context ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_ = asio::make_work_guard(ioc_);
  std::atomic<int> running_{0};
  std::unique_ptr<server_core> core_;
  std::unique_ptr<qf::http::http_server> server_;
  std::thread thread_;
};

}  // namespace

TEST_F(HttpCancel, ClosedConnectionCancelsItsJob) {
  const int s = send_infill(R"({"input_prefix": "x = 1\nBLOCK = ", "input_suffix": "\n", "n_predict": 8})");
  ASSERT_TRUE(eventually([&] { return running_.load() == 1; })) << "the job never started";
  EXPECT_TRUE(core_->worker().busy());
  ::close(s);  // the client goes away (llama.vim stops the previous keystroke's curl)
  ASSERT_TRUE(eventually([&] { return cancelled("cancelled") == 1; })) << json::serialize(core_->stats().to_json(5));
  EXPECT_TRUE(eventually([&] { return !core_->worker().busy(); })) << "the worker is freed";

  // The next request is answered: the double completes the identifier.
  const std::string got = read_all(send_infill(R"({"input_prefix": "value = foo", "input_suffix": "\n"})"));
  ASSERT_EQ(got.substr(0, 12), "HTTP/1.1 200") << got;
  EXPECT_NE(got.find("\"content\":\"_done\""), std::string::npos) << got;
}

TEST_F(HttpCancel, NewerKeystrokeOnTheSameBufferPreemptsTheOlder) {
  const int first = send_infill(R"({"input_prefix": "def f():\n    BLOCK = 1\n    return ", "input_suffix": "\n"})");
  ASSERT_TRUE(eventually([&] { return running_.load() == 1; }));
  // The same text with one more character typed goes to the same buffer.
  const int second = send_infill(R"({"input_prefix": "def f():\n    BLOCK = 1\n    return v", "input_suffix": "\n"})");
  const std::string old_answer = read_all(first);
  EXPECT_EQ(old_answer.substr(0, 12), "HTTP/1.1 503") << old_answer;
  EXPECT_NE(old_answer.find("cancelled"), std::string::npos) << old_answer;
  // The newer one runs (and blocks on BLOCK) until its client leaves.
  ASSERT_TRUE(eventually([&] { return running_.load() == 2; }));
  ::close(second);
  ASSERT_TRUE(eventually([&] { return cancelled("cancelled") == 1 && cancelled("preempted") == 1; }))
      << json::serialize(core_->stats().to_json(5));
}

namespace {
class HttpPendingCap : public HttpCancel {
 protected:
  HttpPendingCap() { max_pending_ = 1; }
};
}  // namespace

TEST_F(HttpPendingCap, MoreCompletionsThanTheCapGet429AndTheServerGoesOn) {
  const int running = send_infill(R"({"input_prefix": "BLOCK = ", "input_suffix": "\n"})");
  ASSERT_TRUE(eventually([&] { return running_.load() == 1; }));
  // Another client's request, with the one allowed completion running.
  const std::string refused = read_all(send_infill(R"({"input_prefix": "other_client = 1\nx = ", "input_suffix": "\n"})"));
  EXPECT_EQ(refused.substr(0, 12), "HTTP/1.1 429") << refused;
  EXPECT_NE(refused.find("too many completions at once (1 queued or running)"), std::string::npos) << refused;
  ::close(running);
  ASSERT_TRUE(eventually([&] { return cancelled("cancelled") == 1; }));
  const std::string got = read_all(send_infill(R"({"input_prefix": "value = foo", "input_suffix": "\n"})"));
  EXPECT_EQ(got.substr(0, 12), "HTTP/1.1 200") << got;
}

// The HTTP endpoint of the real `quickfill serve` (started by the test with
// the bundled tiny model on a loopback port), asked by a real curl: /health,
// /infill as llama.vim sends it (response_fields, the n_predict: 0 warm-up),
// /v1/completions plain and streamed, /v1/models, /props, the stats and the
// dashboard with "http" as a source kind; bad input (malformed JSON, a field
// of the wrong type, an unknown field, an oversized body, a wrong or missing
// key, a Host of another machine, an unknown path, a wrong method) gets a clear HTTP error and the
// server keeps answering; a non-loopback address is refused unless allowed.
#include <filesystem>
#include <fstream>

#include "tests/server/http/http_test_util.h"

using namespace qf::http::testing;
using qf::test::quickfill_serve;
namespace json = boost::json;

namespace {

const std::string prefix = "import os\nimport sys\n\n\ndef read_lines(path):\n    with open(path) as f:\n";
const std::string middle = "        return ";
const std::string suffix = "\n\n\ndef main():\n    pass\n";

class HttpEndpoint : public ::testing::Test {
 protected:
  void start(std::vector<std::string> extra = {}) {
    dir_ = test_dir("endpoint");
    server_ = std::make_unique<quickfill_serve>(QUICKFILL_BINARY, QUICKFILL_TINY_MODEL, extra, dir_ + "/serve.log");
    ASSERT_TRUE(server_->ok()) << server_->error();
  }
  void TearDown() override {
    server_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  reply post(const std::string& path, const std::string& body, const std::vector<std::string>& headers = {}) {
    return curl(dir_, server_->url() + path, true, body, headers);
  }
  reply get(const std::string& path, const std::vector<std::string>& headers = {}) {
    return curl(dir_, server_->url() + path, false, "", headers);
  }
  // An /infill of llama.vim's shape answers 200 with a content string.
  void expect_serving(const std::vector<std::string>& headers = {}) {
    const reply r = post("/infill", json::serialize(llama_vim_fim(prefix, middle, suffix)), headers);
    ASSERT_EQ(r.status, 200) << r.body << "\n" << server_->log();
    EXPECT_TRUE(r.json().as_object().at("content").is_string()) << r.body;
  }
  std::string error_message(const reply& r) {
    const json::value v = r.json();
    if (!v.is_object() || !v.as_object().contains("error")) return "(not an error object: " + r.body + ")";
    return std::string(v.at("error").at("message").as_string());
  }
  std::string dir_;
  std::unique_ptr<quickfill_serve> server_;
};

}  // namespace

TEST_F(HttpEndpoint, HealthModelsProps) {
  start();
  reply h = get("/health");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.json().at("status").as_string(), "ok");
  reply m = get("/v1/models");
  ASSERT_EQ(m.status, 200) << m.body;
  EXPECT_EQ(m.json().at("object").as_string(), "list");
  EXPECT_EQ(m.json().at("data").as_array().at(0).at("id").as_string(), "quickfill-tiny-code.gguf");
  reply p = get("/props");
  ASSERT_EQ(p.status, 200) << p.body;
  EXPECT_GE(p.json().at("total_slots").to_number<int>(), 1);
}

TEST_F(HttpEndpoint, InfillAsLlamaVimSendsIt) {
  start();
  // The ring warm-up: n_predict 0, response_fields [""]: an empty object.
  json::object warm{{"id_slot", 0}, {"input_prefix", ""}, {"input_suffix", ""},
                    {"input_extra", json::array{json::object{{"text", "x = 1\n"}, {"time", json::array{1, 2}}, {"filename", "a.py"}}}},
                    {"prompt", ""}, {"n_predict", 0}, {"temperature", 0.0}, {"samplers", json::array{}},
                    {"stream", false}, {"cache_prompt", true}, {"t_max_prompt_ms", 1}, {"t_max_predict_ms", 1},
                    {"response_fields", json::array{""}}};
  reply w = post("/infill", json::serialize(warm));
  ASSERT_EQ(w.status, 200) << w.body;
  EXPECT_TRUE(w.json().as_object().empty()) << w.body;

  reply r = post("/infill", json::serialize(llama_vim_fim(prefix, middle, suffix)));
  ASSERT_EQ(r.status, 200) << r.body << "\n" << server_->log();
  // llama.vim's quick check before it decodes: `"content":"` with nothing between.
  EXPECT_NE(r.body.find("\"content\":\""), std::string::npos) << r.body;
  const json::value v = r.json();
  ASSERT_TRUE(v.is_object()) << r.body;
  const json::object& o = v.as_object();
  for (const char* k : {"content", "timings/prompt_n", "timings/prompt_ms", "timings/prompt_per_second",
                        "timings/predicted_n", "timings/predicted_ms", "timings/predicted_per_second", "truncated",
                        "tokens_cached"})
    EXPECT_TRUE(o.contains(k)) << k << " missing from " << r.body;
  EXPECT_FALSE(o.contains("timings")) << "response_fields selects the listed paths only";
  EXPECT_GT(o.at("timings/predicted_n").to_number<int>(), 0) << r.body;
  EXPECT_LE(o.at("timings/predicted_n").to_number<int>(), 16) << "n_predict caps the tokens";

  // The same text again, one character typed: the buffer's cache serves the prefix.
  reply again = post("/infill", json::serialize(llama_vim_fim(prefix, middle + "l", suffix)));
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_GT(again.json().at("tokens_cached").to_number<int>(), 0) << again.body;

  // Without response_fields: llama-server's whole answer.
  json::object full = llama_vim_fim(prefix, middle, suffix);
  full.erase("response_fields");
  reply f = post("/infill", json::serialize(full));
  ASSERT_EQ(f.status, 200) << f.body;
  for (const char* k : {"content", "stop", "stop_type", "tokens_predicted", "tokens_evaluated", "tokens_cached", "timings", "truncated"})
    EXPECT_TRUE(f.json().as_object().contains(k)) << k << " missing from " << f.body;
}

TEST_F(HttpEndpoint, InfillStreamAndStops) {
  start();
  json::object q = llama_vim_fim(prefix, middle, suffix);
  q["stream"] = true;
  q.erase("response_fields");
  reply s = post("/infill", json::serialize(q));
  ASSERT_EQ(s.status, 200) << s.body;
  EXPECT_NE(s.headers.find("text/event-stream"), std::string::npos) << s.headers;
  ASSERT_NE(s.body.find("data: {"), std::string::npos) << s.body;
  EXPECT_NE(s.body.find("\"stop\":true"), std::string::npos) << "the last event ends the stream: " << s.body;
}

TEST_F(HttpEndpoint, OpenAICompletions) {
  start();
  json::object q{{"model", "quickfill-tiny-code.gguf"}, {"prompt", prefix + middle}, {"suffix", suffix},
                 {"max_tokens", 12}, {"temperature", 0}, {"stream", false}};
  reply r = post("/v1/completions", json::serialize(q));
  ASSERT_EQ(r.status, 200) << r.body;
  const json::value v = r.json();
  EXPECT_EQ(v.at("object").as_string(), "text_completion");
  EXPECT_TRUE(v.at("choices").as_array().at(0).at("text").is_string());
  EXPECT_GT(v.at("usage").at("completion_tokens").to_number<int>(), 0) << r.body;
  EXPECT_LE(v.at("usage").at("completion_tokens").to_number<int>(), 12) << r.body;

  q["stream"] = true;
  q["stream_options"] = json::object{{"include_usage", true}};
  reply s = post("/v1/completions", json::serialize(q));
  ASSERT_EQ(s.status, 200) << s.body;
  EXPECT_NE(s.body.find("\"finish_reason\":\""), std::string::npos) << s.body;
  EXPECT_NE(s.body.find("\"usage\":"), std::string::npos) << s.body;
  EXPECT_EQ(s.body.substr(s.body.size() - 14), "data: [DONE]\n\n") << s.body;
}

TEST_F(HttpEndpoint, BadInputGetsClearErrorsAndServerKeepsServing) {
  start({"--max-body-bytes", "65536"});
  reply bad = post("/infill", "{\"input_prefix\": \"x\", ");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(error_message(bad).find("not valid JSON"), std::string::npos) << bad.body;
  expect_serving();

  reply arr = post("/infill", "[1, 2]");
  EXPECT_EQ(arr.status, 400);
  EXPECT_NE(error_message(arr).find("JSON object"), std::string::npos) << arr.body;

  reply type = post("/infill", R"({"input_prefix": 7})");
  EXPECT_EQ(type.status, 400);
  EXPECT_NE(error_message(type).find("\"input_prefix\" must be a string"), std::string::npos) << type.body;

  reply unknown = post("/infill", R"({"input_prefix": "x", "n_predicts": 3})");
  EXPECT_EQ(unknown.status, 400);
  EXPECT_NE(error_message(unknown).find("unknown field \"n_predicts\""), std::string::npos) << unknown.body;

  reply chunk = post("/infill", R"({"input_extra": [{"text": "x", "path": "a"}]})");
  EXPECT_EQ(chunk.status, 400);
  EXPECT_NE(error_message(chunk).find("\"input_extra\"[0] has an unknown field \"path\""), std::string::npos) << chunk.body;

  reply range = post("/v1/completions", R"({"prompt": "x", "max_tokens": 100000})");
  EXPECT_EQ(range.status, 400);
  EXPECT_NE(error_message(range).find("\"max_tokens\" must be between"), std::string::npos) << range.body;

  reply n = post("/v1/completions", R"({"prompt": "x", "n": 3})");
  EXPECT_EQ(n.status, 400);
  EXPECT_NE(error_message(n).find("\"n\" must be 1"), std::string::npos) << n.body;

  const std::string big = R"({"input_prefix": ")" + std::string(100000, 'a') + R"("})";
  reply large = post("/infill", big);
  EXPECT_EQ(large.status, 413) << large.body;
  EXPECT_NE(error_message(large).find("larger than 65536 bytes"), std::string::npos) << large.body;

  reply host = get("/v1/models", {"Host: attacker.example:8012"});
  EXPECT_EQ(host.status, 403);
  EXPECT_NE(error_message(host).find("127.0.0.1 or localhost only"), std::string::npos) << host.body;
  EXPECT_EQ(get("/v1/models", {"Host: localhost:8012"}).status, 200);

  reply path = get("/nope");
  EXPECT_EQ(path.status, 404);
  EXPECT_NE(error_message(path).find("/infill"), std::string::npos) << path.body;
  reply method = get("/infill");
  EXPECT_EQ(method.status, 405) << method.body;

  // Raw garbage on a socket: a 400, and the server goes on.
  if (const int s = qf::test::connect_loopback(server_->port()); s >= 0) {
    const std::string junk = "NOT HTTP AT ALL\r\n\r\n";
    EXPECT_EQ(::write(s, junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
    char buf[512];
    const ssize_t got = ::read(s, buf, sizeof buf);
    ::close(s);
    ASSERT_GT(got, 12);
    EXPECT_EQ(std::string(buf, 12), "HTTP/1.1 400");
  }
  expect_serving();
  EXPECT_TRUE(server_->running());
}

TEST_F(HttpEndpoint, ApiKeys) {
  dir_ = test_dir("keys");
  const std::string keys = dir_ + "/keys";
  std::ofstream(keys) << "# team keys\nsecret-one\n\n  secret-two  \n";
  server_ = std::make_unique<quickfill_serve>(QUICKFILL_BINARY, QUICKFILL_TINY_MODEL,
                                              std::vector<std::string>{"--api-key-file", keys}, dir_ + "/serve.log");
  ASSERT_TRUE(server_->ok()) << server_->error();
  EXPECT_EQ(get("/health").status, 200) << "health needs no key";
  reply none = post("/infill", json::serialize(llama_vim_fim(prefix, middle, suffix)));
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(error_message(none), "Invalid API Key");
  reply wrong = post("/infill", json::serialize(llama_vim_fim(prefix, middle, suffix)), {"Authorization: Bearer secret-three"});
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(wrong.body.find("secret"), std::string::npos) << "no key is echoed: " << wrong.body;
  EXPECT_EQ(get("/v1/models").status, 401);
  expect_serving({"Authorization: Bearer secret-one"});
  expect_serving({"X-Api-Key: secret-two"});
  EXPECT_EQ(server_->log().find("secret-"), std::string::npos) << "no key in the log";
}

TEST_F(HttpEndpoint, StatsAndDashboardCountHttpRequests) {
  start();
  expect_serving();
  reply st = get("/quickfill/stats");
  ASSERT_EQ(st.status, 200) << st.body;
  const json::value stats = st.json();
  const json::value& http = stats.at("histograms").at("bySource").at("http").at("automatic");
  EXPECT_GE(http.at("requests").to_number<int>(), 1) << st.body;
  EXPECT_GE(http.at("answered").to_number<int>(), 1) << st.body;
  reply html = get("/quickfill/report");
  ASSERT_EQ(html.status, 200);
  EXPECT_NE(html.headers.find("text/html"), std::string::npos);
  EXPECT_NE(html.body.find("id=\"cell-http-automatic\""), std::string::npos) << "the dashboard shows the http source kind";
}

TEST_F(HttpEndpoint, RefusesNonLoopbackUnlessAllowed) {
  dir_ = test_dir("bind");
  const std::string log = dir_ + "/serve.log";
  const pid_t pid = qf::test::spawn_child({QUICKFILL_BINARY, "serve", "--http", "0.0.0.0:0", "--config", "none",
                                           "--model", QUICKFILL_TINY_MODEL}, log);
  ASSERT_GT(pid, 0);
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) != 0);
  EXPECT_NE(qf::test::file_text(log).find("not a loopback address"), std::string::npos) << qf::test::file_text(log);
}

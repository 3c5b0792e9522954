// The workspace index through the LSP server: initialize with a rootUri of a
// fixture workspace, the dynamic registration of watched files, one progress
// for the first walk, completion requests carrying the index as their
// definitions, and a watched-file deletion removing definitions.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include <boost/json.hpp>

#include "indexing/file_uri.h"
#include "indexing/syntax_language.h"
#include "server/binding/event_loop.h"
#include "server/binding/lsp_server.h"
#include "tests/indexing/temp_tree.h"

using namespace qf;
using namespace qf::server;
namespace json = boost::json;

namespace {

// Records, for each request, what the workspace index says about `helper`.
struct seen_request {
  bool has_definitions = false;
  std::vector<index::definition> helper;
};

class recording_provider final : public completion_provider {
 public:
  recording_provider(std::mutex* mu, std::vector<seen_request>* seen) : mu_(mu), seen_(seen) {}
  completion_result complete(const completion_request& req, const cancel_token&) override {
    seen_request s;
    s.has_definitions = req.definitions != nullptr;
    if (req.definitions) s.helper = req.definitions->lookup("helper", 5);
    std::lock_guard lock(*mu_);
    seen_->push_back(std::move(s));
    return {};
  }
  std::string describe() const override { return "recording"; }

 private:
  std::mutex* mu_;
  std::vector<seen_request>* seen_;
};

struct harness {
  event_loop loop;
  std::mutex mu;
  std::vector<json::value> sent;  // everything the server wrote
  std::vector<seen_request> seen;
  std::unique_ptr<lsp_server> server;
  int next_id = 1;

  harness() {
    core_options o;
    o.background = false;
    o.workspace.cache_dir = "";
    o.workspace.debounce = std::chrono::milliseconds(0);
    o.workspace.idle_priority = false;
    o.factory = [this](const provider_options&, std::string*) {
      return std::make_unique<recording_provider>(&mu, &seen);
    };
    auto out = std::make_shared<lsp::outbox>([this](const std::string& frame) {
      const std::size_t body = frame.find("\r\n\r\n");
      std::lock_guard lock(mu);
      sent.push_back(json::parse(body == std::string::npos ? frame : frame.substr(body + 4)));
    });
    server = std::make_unique<lsp_server>(std::move(o), out, loop);
  }
  ~harness() { server.reset(); }

  void send(const json::value& v) { server->handle_message(json::serialize(v)); }
  void request(const std::string& method, json::value params) {
    send(json::object{{"jsonrpc", "2.0"}, {"id", next_id++}, {"method", method}, {"params", std::move(params)}});
  }
  void notify(const std::string& method, json::value params) {
    send(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }
  // Runs the loop until `pred` holds (or 30 s pass).
  template <class P>
  bool pump_until(P pred) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < give_up) {
      loop.poll();
      {
        std::lock_guard lock(mu);
        if (pred()) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
  }
  // Messages from the server with this method.
  std::vector<json::object> with_method(const std::string& method) {
    std::vector<json::object> out;
    for (const auto& m : sent)
      if (m.is_object() && m.as_object().contains("method") && m.as_object().at("method").as_string() == method)
        out.push_back(m.as_object());
    return out;
  }
  // Answers every server request with this method (null result).
  void answer(const std::string& method) {
    std::vector<json::value> ids;
    {
      std::lock_guard lock(mu);
      for (const auto& m : with_method(method))
        if (m.contains("id")) ids.push_back(m.at("id"));
    }
    for (auto& id : ids) send(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", nullptr}});
  }
  std::size_t completion_answers() {
    std::size_t n = 0;
    for (const auto& m : sent)
      if (m.is_object() && m.as_object().contains("result") && m.as_object().at("result").is_object() &&
          m.as_object().at("result").as_object().contains("items"))
        ++n;
    return n;
  }
};

json::object initialize_params(const std::string& root_uri) {
  return json::object{
      {"processId", nullptr},
      {"rootUri", root_uri},
      {"capabilities",
       json::object{{"window", json::object{{"workDoneProgress", true}}},
                    {"workspace", json::object{{"didChangeWatchedFiles", json::object{{"dynamicRegistration", true}}}}}}}};
}

}  // namespace

TEST(WorkspaceWiring, RootUriIndexReachesCompletionRequestsAndDeletionsRemoveDefinitions) {
  if (!index::syntax_language_named("python")) GTEST_SKIP() << "python grammar not built";
  test::temp_tree t("wiring");
  t.write("pkg/util.py", "def helper(x):\n    \"\"\"Helps.\"\"\"\n    return x\n");
  t.write("pkg/main.py", "from .util import helper\n\nhel\n");
  harness h;
  h.request("initialize", initialize_params(index::path_to_file_uri(t.root())));
  h.notify("initialized", json::object{});
  ASSERT_TRUE(h.pump_until([&] { return !h.with_method("client/registerCapability").empty(); }));
  {
    std::lock_guard lock(h.mu);
    const auto reg = h.with_method("client/registerCapability")[0];
    EXPECT_EQ(reg.at("params").at_pointer("/registrations/0/method").as_string(), "workspace/didChangeWatchedFiles");
  }
  h.answer("client/registerCapability");
  h.answer("window/workDoneProgress/create");
  ASSERT_NE(h.server->core().workspace(), nullptr);
  ASSERT_TRUE(h.server->core().workspace()->wait_idle(std::chrono::minutes(10)));
  // The first walk's progress: begin ... end, exactly one end on its token.
  ASSERT_TRUE(h.pump_until([&] {
    for (const auto& p : h.with_method("$/progress"))
      if (p.at("params").at_pointer("/value/kind").as_string() == "end" &&
          std::string(p.at("params").at("token").as_string()).find("index-workspace") != std::string::npos)
        return true;
    return false;
  }));
  {
    std::lock_guard lock(h.mu);
    int begins = 0, ends = 0;
    std::string end_message;
    for (const auto& p : h.with_method("$/progress")) {
      if (std::string(p.at("params").at("token").as_string()).find("index-workspace") == std::string::npos) continue;
      const auto kind = p.at("params").at_pointer("/value/kind").as_string();
      if (kind == "begin") ++begins;
      if (kind == "end") {
        ++ends;
        end_message = std::string(p.at("params").at_pointer("/value/message").as_string());
      }
    }
    EXPECT_EQ(begins, 1);
    EXPECT_EQ(ends, 1);
    EXPECT_EQ(end_message, "indexed 2/2 files");
  }
  // Wait for the model (the recording provider) before asking.
  ASSERT_TRUE(h.pump_until([&] { return h.server->core().model().loaded; }));

  const std::string main_uri = index::path_to_file_uri(t.path("pkg/main.py"));
  h.notify("textDocument/didOpen",
           json::object{{"textDocument", json::object{{"uri", main_uri}, {"languageId", "python"}, {"version", 1},
                                                      {"text", "from .util import helper\n\nhel\n"}}}});
  h.request("textDocument/completion", json::object{{"textDocument", json::object{{"uri", main_uri}}},
                                                    {"position", json::object{{"line", 2}, {"character", 3}}}});
  ASSERT_TRUE(h.pump_until([&] { return h.seen.size() == 1 && h.completion_answers() == 1; }));
  {
    std::lock_guard lock(h.mu);
    ASSERT_TRUE(h.seen[0].has_definitions);
    ASSERT_EQ(h.seen[0].helper.size(), 1u);
    EXPECT_EQ(h.seen[0].helper[0].uri, index::path_to_file_uri(t.path("pkg/util.py")));
    EXPECT_EQ(h.seen[0].helper[0].doc, "Helps.");
  }

  // The client reports the deletion of util.py: helper is gone from the next request.
  t.remove("pkg/util.py");
  h.notify("workspace/didChangeWatchedFiles",
           json::object{{"changes", json::array{json::object{{"uri", index::path_to_file_uri(t.path("pkg/util.py"))},
                                                             {"type", 3}}}}});
  ASSERT_TRUE(h.server->core().workspace()->wait_idle(std::chrono::minutes(10)));
  h.request("textDocument/completion", json::object{{"textDocument", json::object{{"uri", main_uri}}},
                                                    {"position", json::object{{"line", 2}, {"character", 3}}}});
  ASSERT_TRUE(h.pump_until([&] { return h.seen.size() == 2 && h.completion_answers() == 2; }));
  {
    std::lock_guard lock(h.mu);
    ASSERT_TRUE(h.seen[1].has_definitions);
    EXPECT_TRUE(h.seen[1].helper.empty());
  }

  // Workspace folders change: a new folder's definitions arrive.
  test::temp_tree other("wiring_other");
  other.write("lib.py", "def helper(y):\n    return y\n");
  h.notify("workspace/didChangeWorkspaceFolders",
           json::object{{"event", json::object{{"added", json::array{json::object{
                                                   {"uri", index::path_to_file_uri(other.root())}, {"name", "o"}}}},
                                               {"removed", json::array{}}}}});
  ASSERT_TRUE(h.server->core().workspace()->wait_idle(std::chrono::minutes(10)));
  EXPECT_EQ(h.server->core().workspace()->lookup("helper", 5).size(), 1u);
  h.request("shutdown", nullptr);
  h.pump_until([] { return true; });
}

TEST(WorkspaceWiring, TheSettingTurnsTheIndexOff) {
  test::temp_tree t("wiring_off");
  t.write("a.py", "def helper(): pass\n");
  harness h;
  json::object params = initialize_params(index::path_to_file_uri(t.root()));
  params["initializationOptions"] = json::object{{"quickfill", json::object{{"workspace", json::object{{"index", false}}}}}};
  h.request("initialize", params);
  h.notify("initialized", json::object{});
  h.pump_until([] { return true; });
  EXPECT_EQ(h.server->core().workspace(), nullptr);
  {
    std::lock_guard lock(h.mu);
    EXPECT_TRUE(h.with_method("client/registerCapability").empty());
  }
  // Turned on later by a configuration change: the index starts with the same roots.
  h.notify("workspace/didChangeConfiguration",
           json::object{{"settings", json::object{{"quickfill", json::object{{"workspace", json::object{{"index", true}}}}}}}});
  ASSERT_NE(h.server->core().workspace(), nullptr);
  ASSERT_TRUE(h.server->core().workspace()->wait_idle(std::chrono::minutes(10)));
  if (index::syntax_language_named("python")) {
    EXPECT_EQ(h.server->core().workspace()->lookup("helper", 5).size(), 1u);
  }
}

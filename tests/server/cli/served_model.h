// The real quickfill binary as a language server child process, for tests
// that drive it over LSP: start with a model and generous deadlines, open a
// document and ask for a completion at its end, call a method, shut down.
#pragma once

#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "lsp/client/lsp_client.h"

namespace qf::test {

namespace json = boost::json;
using std::chrono::milliseconds;

class served_model {
 public:
  // `extra`: further "completion" settings.
  bool start(const std::string& model, const std::string& log, std::string* error,
             const json::object& extra = {}) {
    // Generous budgets: the answers compared below must not depend on the
    // machine's load.
    json::object options{{"completion", json::object{{"explicitDeadlineMs", 60000},
                                                             {"autoDeadlineMs", 60000},
                                                             {"maxTokensExplicit", 24},
                                                             {"prefetch", false}}}};
    for (const auto& [k, v] : extra) options["completion"].as_object()[k] = v;
    return start_with({"--model", model}, options, log, error);
  }

  // The server with `args` added to its command line and `options` as its
  // initializationOptions; true once the model (or the sources) finished loading.
  bool start_with(const std::vector<std::string>& args, const json::object& options, const std::string& log,
                  std::string* error, bool require_model = true) {
    std::vector<std::string> argv{QUICKFILL_BIN, "--stdio", "--threads", "1", "--no-background",
                                  "--log-level", "debug", "--log-file", log};
    argv.insert(argv.end(), args.begin(), args.end());
    if (!client_.start(argv, qf::lsp::client_options{}, error)) return false;
    auto init = call("initialize", json::object{{"processId", nullptr},
                                                {"rootUri", nullptr},
                                                {"capabilities", json::object{}},
                                                {"initializationOptions", options}});
    if (!init) return fail(error, "no answer to initialize");
    client_.send(json::object{{"jsonrpc", "2.0"}, {"method", "initialized"}, {"params", json::object{}}});
    return wait_loaded(error, require_model);
  }

  // Waits until no load is in progress (the model loads in the background).
  bool wait_loaded(std::string* error, bool require_model = true) {
    for (int i = 0; i < 600; ++i) {
      auto st = call("quickfill/status", nullptr);
      if (!st) return fail(error, "no answer to quickfill/status");
      if (!st->at("modelLoading").as_bool()) {
        if (st->at("modelLoaded").as_bool() || !require_model) return true;
        return fail(error, "model not loaded: " + json::serialize(*st));
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
    return fail(error, "the model did not load");
  }

  // The completion list for `text` opened as `uri`, the cursor at its end
  // (explicitly invoked); nullopt without an answer.
  std::optional<json::value> complete_list(const std::string& uri, const std::string& text) {
    client_.send(json::object{
        {"jsonrpc", "2.0"},
        {"method", "textDocument/didOpen"},
        {"params", json::object{{"textDocument", json::object{{"uri", uri},
                                                              {"languageId", "python"},
                                                              {"version", 1},
                                                              {"text", text}}}}}});
    int64_t line = 0, col = 0;
    for (char ch : text) ch == '\n' ? (++line, col = 0) : ++col;  // ASCII text: bytes = UTF-16 units
    auto r = call("textDocument/completion",
                  json::object{{"textDocument", json::object{{"uri", uri}}},
                               {"position", json::object{{"line", line}, {"character", col}}},
                               {"context", json::object{{"triggerKind", 1}}}});
    return r;
  }

  // The text of the first completion item ("" when the list is empty).
  std::optional<std::string> complete(const std::string& uri, const std::string& text) {
    auto r = complete_list(uri, text);
    if (!r) return std::nullopt;
    const json::array& items = r->at("items").as_array();
    if (items.empty()) return std::string();
    const json::object& it = items[0].as_object();
    if (const auto* te = it.if_contains("textEdit")) return std::string(te->at("newText").as_string());
    return std::string(it.at("insertText").as_string());
  }

  void notify(const std::string& method, json::value params) {
    client_.send(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }

  // The response's result; nullopt without an answer or with an error.
  std::optional<json::value> call(const std::string& method, json::value params) {
    auto r = response(method, std::move(params));
    if (!r || !r->contains("result")) return std::nullopt;
    return r->at("result");
  }
  // The response's result, or its error as {"error": ...}; nullopt without an answer.
  std::optional<json::value> call_or_error(const std::string& method, json::value params) {
    auto r = response(method, std::move(params));
    if (!r) return std::nullopt;
    if (r->contains("result")) return r->at("result");
    return json::value(json::object{{"error", r->contains("error") ? r->at("error") : json::value()}});
  }

  // Shuts down; returns the exit code (negative: killed by that signal).
  int stop() {
    call("shutdown", nullptr);
    client_.send(json::object{{"jsonrpc", "2.0"}, {"method", "exit"}});
    bool timed_out = false;
    return client_.wait_exit(milliseconds(60000), &timed_out);
  }
  pid_t pid() const { return client_.pid(); }
  std::vector<std::string> messages;  // window/showMessage texts seen by call()

 private:
  // The response to `method`; requests from the server meanwhile are
  // answered with null, its messages (window/showMessage) kept.
  std::optional<json::object> response(const std::string& method, json::value params) {
    const int64_t id = client_.request(method, std::move(params));
    for (;;) {
      auto m = client_.next(milliseconds(120000));
      if (!m) return std::nullopt;
      const json::object& o = m->body.as_object();
      if (o.contains("method")) {  // a notification, or a request to the client
        if (o.contains("id")) client_.send(json::object{{"jsonrpc", "2.0"}, {"id", o.at("id")}, {"result", nullptr}});
        if (o.at("method") == "window/showMessage")
          messages.push_back(std::string(o.at("params").at("message").as_string()));
        continue;
      }
      if (o.contains("id") && o.at("id").is_int64() && o.at("id").as_int64() == id) return o;
    }
  }
  static bool fail(std::string* error, const std::string& what) {
    *error = what;
    return false;
  }
  qf::lsp::lsp_client client_;
};

}  // namespace qf::test

// `quickfill demo`: the child server and the LSP conversation around the
// typing: start-up, initialize, waiting for the model, shutdown (see demo.h).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include <boost/json.hpp>

#include "lsp/protocol_quickfill.h"
#include "server/cli/demo.h"

namespace qf::cli::demo {

namespace json = boost::json;
namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

bool session::start(const options& o) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    std::fprintf(stderr, "quickfill demo: cannot find my own executable\n");
    return false;
  }
  std::vector<std::string> argv = {exe.string(), "--stdio", "--no-daemon", "--log-level", o.log_file.empty() ? "warn" : "debug"};
  if (!o.log_file.empty()) argv.insert(argv.end(), {"--log-file", o.log_file});
  if (!o.model.empty()) argv.insert(argv.end(), {"--model", o.model});

  std::printf("quickfill demo: starting `%s --stdio` as an editor would\n", exe.string().c_str());
  lsp::client_options copts;
  copts.answer_server_requests = true;  // work-done progress creation: accepted
  std::string error;
  if (!client_.start(argv, copts, &error)) {
    std::fprintf(stderr, "quickfill demo: %s\n", error.c_str());
    return false;
  }
  return true;
}

bool session::initialize() {
  const std::int64_t id = request(
      "initialize",
      json::object{{"processId", static_cast<std::int64_t>(::getpid())},
                   {"rootUri", nullptr},
                   {"capabilities",
                    json::object{{"general", json::object{{"positionEncodings", json::array{"utf-8", "utf-16"}}}},
                                 {"window", json::object{{"workDoneProgress", true}}}}}});
  auto init = await(id, milliseconds(30000));
  if (!init || !init->as_object().contains("result")) {
    std::fprintf(stderr, "quickfill demo: the server did not answer initialize\n");
    return false;
  }
  encoding_ = json::value_to<std::string>(init->at("result").at("capabilities").at("positionEncoding"));
  notify("initialized", json::object{});
  return true;
}

bool session::wait_for_model() {
  lsp::status_result status;
  const auto load_started = steady::now();
  for (;;) {
    auto r = await(request("quickfill/status", nullptr), milliseconds(30000));
    const json::value* result = r && r->is_object() ? r->as_object().if_contains("result") : nullptr;
    if (!result) {
      std::fprintf(stderr, "quickfill demo: no answer to quickfill/status\n");
      return false;
    }
    std::string error;
    try {
      status = lsp::decode<lsp::status_result>(*result, "result", &error);
    } catch (const lsp::decode_error&) {
      std::fprintf(stderr, "quickfill demo: unexpected quickfill/status answer: %s\n", error.c_str());
      return false;
    }
    if (!status.modelLoading) break;
    if (steady::now() - load_started > std::chrono::minutes(10)) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  have_model_ = status.modelLoaded;
  std::printf("position encoding: %s\n", encoding_.c_str());
  if (have_model_) {
    std::printf("model: %s (%s)\n", status.model.c_str(), status.modelPath.c_str());
  } else {
    std::printf("\n*** NO MODEL IS LOADED: completions will be empty. ***\n    reason: %s\n"
                "    (give one with: quickfill demo --model PATH.gguf)\n\n",
                status.noModelReason.value_or("unknown").c_str());
  }
  return true;
}

std::optional<json::value> session::next(milliseconds timeout) {
  auto m = client_.next(timeout);
  if (!m) return std::nullopt;
  return std::move(m->body);
}

void session::handle_notification(const json::value& m) {
  const json::object& o = m.as_object();
  const json::value* method = o.if_contains("method");
  if (method && *method == "window/showMessage") {
    std::printf("server says: %s\n", json::value_to<std::string>(o.at("params").at("message")).c_str());
  } else if (method && *method == "$/progress") {
    const json::value& v = o.at("params").at("value");
    if (v.as_object().contains("message"))
      std::printf("  loading: %s\n", json::value_to<std::string>(v.at("message")).c_str());
  }
}

std::optional<json::value> session::await(std::int64_t id, milliseconds timeout) {
  const auto until = steady::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(until - steady::now());
    if (left.count() <= 0) return std::nullopt;
    auto m = next(left);
    if (!m) return std::nullopt;
    const json::object& o = m->as_object();
    if (!o.contains("method") && o.contains("id") && o.at("id").is_int64() && o.at("id").as_int64() == id)
      return m;
    if (!o.contains("method")) {
      responses_.push_back(std::move(*m));
      continue;
    }
    handle_notification(*m);
  }
}

session::ending session::finish() {
  ending e;
  e.stats = await(request("quickfill/stats", json::object{{"recent", 0}}), milliseconds(10000));
  await(request("shutdown", nullptr), milliseconds(10000));
  notify("exit", nullptr);
  client_.close_stdin();
  e.exit_code = client_.wait_exit(milliseconds(10000), &e.timed_out);
  return e;
}

}  // namespace qf::cli::demo

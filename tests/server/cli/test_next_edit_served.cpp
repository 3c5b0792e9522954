// quickfill/nextEdit end to end through the real quickfill binary on
// synthetic models whose output is known (synth_spec::emit_token: greedy
// decoding emits one chosen token after any input). A model that always
// emits <|file_sep|> rewrites the sweep region as nothing, so the answer is
// the edit that deletes the region, with its range in UTF-16; an inline
// completion on the same version then offers that edit; the same model in
// the zeta layout never writes the end marker, so its answer is silence with
// the reason; an edit of the document answers a later version only.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <boost/json.hpp>

#include "inference/convert/synth_model.h"
#include "inference/convert/synth_vocab.h"
#include "lsp/client/lsp_client.h"
#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

class server {
 public:
  bool start(const std::string& model, const std::string& format, std::string* error) {
    if (!client_.start({QUICKFILL_BIN, "--stdio", "--model", model, "--threads", "1", "--no-background"},
                       qf::lsp::client_options{}, error))
      return false;
    const json::object options{{"completion", json::object{{"explicitDeadlineMs", 60000}}},
                               {"nextEdit", json::object{{"format", format}, {"maxTokens", 64}}}};
    if (!call("initialize", json::object{{"processId", nullptr},
                                         {"capabilities", json::object{}},
                                         {"initializationOptions", options}}))
      return false;
    client_.send(json::object{{"jsonrpc", "2.0"}, {"method", "initialized"}, {"params", json::object{}}});
    for (int i = 0; i < 600; ++i) {
      auto st = call("quickfill/status", nullptr);
      if (st && !st->at("modelLoading").as_bool()) return st->at("modelLoaded").as_bool();
      std::this_thread::sleep_for(milliseconds(50));
    }
    return false;
  }
  void notify(const std::string& method, json::value params) {
    client_.send(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }
  // The response's result, or its error as {"error": ...}.
  std::optional<json::value> call(const std::string& method, json::value params) {
    const int64_t id = client_.request(method, std::move(params));
    for (;;) {
      auto m = client_.next(milliseconds(120000));
      if (!m) return std::nullopt;
      const json::object& o = m->body.as_object();
      if (o.contains("method")) {
        if (o.contains("id")) client_.send(json::object{{"jsonrpc", "2.0"}, {"id", o.at("id")}, {"result", nullptr}});
        continue;
      }
      if (o.contains("id") && o.at("id").is_int64() && o.at("id").as_int64() == id)
        return o.contains("result") ? o.at("result") : json::value(json::object{{"error", o.at("error")}});
    }
  }
  int stop() {
    call("shutdown", nullptr);
    notify("exit", json::object{});
    bool timed_out = false;
    return client_.wait_exit(milliseconds(60000), &timed_out);
  }

 private:
  qf::lsp::lsp_client client_;
};

std::string emitting_model(const std::string& dir, int64_t* token) {
  auto spec = infer::convert::synth_preset("tiny", "qwen2");
  spec.n_vocab = 1024;
  spec.n_ctx = 2048;
  spec.tied = false;
  spec.emit_token = infer::convert::make_synth_vocab(spec.n_vocab, spec.seed).file_sep;
  *token = spec.emit_token;
  const std::string path = dir + "/emit-file-sep.gguf";
  infer::convert::write_synth_model(spec, infer::ggml_type::f32, path);
  return path;
}

const std::string k_uri = "file:///w/g\xC3\xA9o.py";
// "é" is one UTF-16 unit and two bytes: ranges must be in UTF-16.
const std::string k_text = "def area(w, h):\n    return w * h\n\nprint(\"\xC3\xA9\", area(2, 3))\n";

json::object position(int64_t line, int64_t ch) { return json::object{{"line", line}, {"character", ch}}; }

void open_and_rename(server& s) {
  s.notify("textDocument/didOpen", json::object{{"textDocument", json::object{{"uri", k_uri},
                                                                             {"languageId", "python"},
                                                                             {"version", 1},
                                                                             {"text", k_text}}}});
  s.notify("textDocument/didChange",
           json::object{{"textDocument", json::object{{"uri", k_uri}, {"version", 2}}},
                        {"contentChanges", json::array{json::object{
                                               {"range", json::object{{"start", position(0, 9)}, {"end", position(0, 10)}}},
                                               {"text", "width"}}}}});
}

json::object next_edit_params(int64_t version) {
  return json::object{{"textDocument", json::object{{"uri", k_uri}, {"version", version}}},
                      {"position", position(0, 14)}};
}

}  // namespace

TEST(NextEditServed, AModelThatEndsAtOnceDeletesTheSweepRegion) {
  const std::string dir = scratch_dir("next_edit_served");
  int64_t sep = -1;
  const std::string model = emitting_model(dir, &sep);
  server s;
  std::string error;
  ASSERT_TRUE(s.start(model, "sweep", &error)) << error;
  open_and_rename(s);
  auto r = s.call("quickfill/nextEdit", next_edit_params(2));
  ASSERT_TRUE(r && r->is_object()) << (r ? json::serialize(*r) : "no answer");
  const json::object& o = r->as_object();
  ASSERT_FALSE(o.contains("error")) << json::serialize(*r);
  EXPECT_EQ(o.at("format").as_string(), "sweep");
  EXPECT_EQ(o.at("version").as_int64(), 2);
  // The region is the whole (5-line) document; the rewrite is empty: one edit deletes it all.
  const json::array& edits = o.at("edits").as_array();
  ASSERT_EQ(edits.size(), 1u) << json::serialize(*r);
  const json::object& e = edits[0].as_object();
  EXPECT_EQ(e.at("newText").as_string(), "");
  EXPECT_EQ(json::serialize(e.at("range")),
            R"({"start":{"line":0,"character":0},"end":{"line":4,"character":0}})");
  EXPECT_TRUE(e.at("atCursor").as_bool());
  // An inline completion on that version offers the edit, its range holding the cursor.
  auto inl = s.call("textDocument/inlineCompletion",
                    json::object{{"textDocument", json::object{{"uri", k_uri}}},
                                 {"position", position(0, 14)},
                                 {"context", json::object{{"triggerKind", 1}}}});
  ASSERT_TRUE(inl && inl->is_object() && inl->as_object().contains("items")) << (inl ? json::serialize(*inl) : "");
  bool offered = false;
  for (const json::value& it : inl->at("items").as_array())
    if (json::serialize(it.at("range")) == R"({"start":{"line":0,"character":0},"end":{"line":4,"character":0}})")
      offered = it.at("insertText").as_string().empty();
  EXPECT_TRUE(offered) << json::serialize(*inl);
  // A version the document is no longer at is stale.
  auto stale = s.call("quickfill/nextEdit", next_edit_params(1));
  ASSERT_TRUE(stale && stale->is_object() && stale->as_object().contains("error"));
  EXPECT_EQ(stale->at("error").at("code").as_int64(), -32801);
  EXPECT_EQ(s.stop(), 0);
}

TEST(NextEditServed, TheZetaLayoutWithoutItsEndMarkerIsSilence) {
  const std::string dir = scratch_dir("next_edit_served_zeta");
  int64_t sep = -1;
  const std::string model = emitting_model(dir, &sep);
  server s;
  std::string error;
  ASSERT_TRUE(s.start(model, "zeta", &error)) << error;
  open_and_rename(s);
  auto r = s.call("quickfill/nextEdit", next_edit_params(2));
  ASSERT_TRUE(r && r->is_object()) << (r ? json::serialize(*r) : "no answer");
  EXPECT_EQ(r->at("format").as_string(), "zeta");
  EXPECT_TRUE(r->at("edits").as_array().empty());
  // <|file_sep|> is a control token: the output ends before any region was written.
  EXPECT_EQ(r->at("reason").as_string(), "the rewrite did not finish within the budget");
  EXPECT_EQ(s.stop(), 0);
}

}  // namespace qf::test

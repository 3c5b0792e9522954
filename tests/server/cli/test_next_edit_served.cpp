// quickfill/nextEdit end to end through the real quickfill binary on
// synthetic models whose output is known (synth_spec::emit_token: greedy
// decoding emits one chosen token after any input). A model that always
// emits <|file_sep|> rewrites the sweep region as nothing, so the answer is
// the edit that deletes the region, with its range in UTF-16; an inline
// completion on the same version then offers that edit; the same model in
// the zeta layout never writes the end marker, so its answer is silence with
// the reason; an edit of the document answers a later version only.
#include <gtest/gtest.h>

#include <string>

#include <boost/json.hpp>

#include "tests/server/cli/file_sep_model.h"
#include "tests/server/cli/served_model.h"
#include "tests/server/cli/tool_runner.h"

namespace qf::test {
namespace {

namespace json = boost::json;

// The server with a model that emits <|file_sep|> (written into the scratch
// folder `name`), the next-edit layout `format` and generous deadlines.
bool start(served_model& s, const std::string& name, const std::string& format, std::string* error) {
  const std::string dir = scratch_dir(name);
  const std::string model = dir + "/emit-file-sep.gguf";
  write_file_sep_model(model);
  const json::object options{{"completion", json::object{{"explicitDeadlineMs", 60000}}},
                             {"nextEdit", json::object{{"format", format}, {"maxTokens", 64}}}};
  return s.start_with({"--model", model}, options, dir + "/server.log", error);
}

const std::string k_uri = "file:///w/g\xC3\xA9o.py";
// "é" is one UTF-16 unit and two bytes: ranges must be in UTF-16.
const std::string k_text = "def area(w, h):\n    return w * h\n\nprint(\"\xC3\xA9\", area(2, 3))\n";

json::object position(int64_t line, int64_t ch) { return json::object{{"line", line}, {"character", ch}}; }

void open_and_rename(served_model& s) {
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
  served_model s;
  std::string error;
  ASSERT_TRUE(start(s, "next_edit_served", "sweep", &error)) << error;
  open_and_rename(s);
  auto r = s.call_or_error("quickfill/nextEdit", next_edit_params(2));
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
  auto stale = s.call_or_error("quickfill/nextEdit", next_edit_params(1));
  ASSERT_TRUE(stale && stale->is_object() && stale->as_object().contains("error"));
  EXPECT_EQ(stale->at("error").at("code").as_int64(), -32801);
  EXPECT_EQ(s.stop(), 0);
}

TEST(NextEditServed, TheZetaLayoutWithoutItsEndMarkerIsSilence) {
  served_model s;
  std::string error;
  ASSERT_TRUE(start(s, "next_edit_served_zeta", "zeta", &error)) << error;
  open_and_rename(s);
  auto r = s.call_or_error("quickfill/nextEdit", next_edit_params(2));
  ASSERT_TRUE(r && r->is_object()) << (r ? json::serialize(*r) : "no answer");
  EXPECT_EQ(r->at("format").as_string(), "zeta");
  EXPECT_TRUE(r->at("edits").as_array().empty());
  // <|file_sep|> is a control token: the output ends before any region was written.
  EXPECT_EQ(r->at("reason").as_string(), "the rewrite did not finish within the budget");
  EXPECT_EQ(s.stop(), 0);
}

}  // namespace qf::test

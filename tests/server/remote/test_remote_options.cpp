// Validation of a remote source's settings object.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "server/completion/api/fim_families.h"
#include "server/remote/remote_source.h"

namespace json = boost::json;
using qf::remote::parse_remote_source;
using qf::remote::remote_protocol;

namespace {
json::object obj(std::string_view text) { return json::parse(text).as_object(); }
std::string error_of(std::string_view text) {
  std::string err;
  auto r = parse_remote_source(obj(text), &err);
  return r ? "" : err;
}
}  // namespace

TEST(RemoteOptions, AFullOpenAiSource) {
  std::string err;
  auto r = parse_remote_source(obj(R"({"name": "gpu-box", "kind": "openai", "quota": {"tokensPerDay": 100000},
    "endpoints": ["https://a.example:8443/", "http://127.0.0.1:8000"], "model": "qwen2.5-coder-7b",
    "apiKeyEnv": "GPU_BOX_KEY", "caFile": "/etc/ssl/box.pem", "connectTimeoutMs": 300, "readTimeoutMs": 2000,
    "maxTokens": 48, "temperature": 0.2, "retries": 2, "stop": ["\n\n"], "fimTemplate": "qwen"})"),
                               &err);
  ASSERT_TRUE(r) << err;
  EXPECT_EQ(r->name, "gpu-box");
  EXPECT_EQ(r->protocol, remote_protocol::openai);
  ASSERT_EQ(r->endpoints.size(), 2u);
  EXPECT_EQ(r->endpoints[0], "https://a.example:8443");  // the trailing '/' is dropped
  EXPECT_EQ(r->model, "qwen2.5-coder-7b");
  EXPECT_EQ(r->key.env, "GPU_BOX_KEY");
  EXPECT_EQ(r->ca_file, "/etc/ssl/box.pem");
  EXPECT_EQ(r->connect_timeout.count(), 300);
  EXPECT_EQ(r->read_timeout.count(), 2000);
  EXPECT_EQ(r->max_tokens, 48);
  EXPECT_DOUBLE_EQ(r->temperature, 0.2);
  EXPECT_EQ(r->retries, 2);
  EXPECT_EQ(r->stop, std::vector<std::string>{"\n\n"});
  EXPECT_EQ(r->fim_template, "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>");
}

TEST(RemoteOptions, ALlamaInfillSourceWithDefaults) {
  std::string err;
  auto r = parse_remote_source(obj(R"({"kind": "llama-infill", "endpoints": ["http://127.0.0.1:8012"], "slots": 4})"),
                               &err);
  ASSERT_TRUE(r) << err;
  EXPECT_EQ(r->protocol, remote_protocol::llama_infill);
  EXPECT_EQ(r->slots, 4);
  EXPECT_EQ(r->retries, 1);
  EXPECT_EQ(r->max_tokens, 0);  // none of its own: the request's limit (completion.maxTokens / maxTokensExplicit)
  EXPECT_TRUE(r->key.env.empty() && r->key.file.empty());
}

TEST(RemoteOptions, StreamUsageIsOnUnlessTurnedOff) {
  std::string err;
  auto on = parse_remote_source(obj(R"({"kind": "openai", "endpoints": ["http://a"]})"), &err);
  ASSERT_TRUE(on) << err;
  EXPECT_TRUE(on->stream_usage);
  auto off = parse_remote_source(obj(R"({"kind": "openai", "endpoints": ["http://a"], "streamUsage": false})"), &err);
  ASSERT_TRUE(off) << err;
  EXPECT_FALSE(off->stream_usage);
}

TEST(RemoteOptions, BadValuesNameTheMember) {
  EXPECT_NE(error_of(R"({"kind": "openai"})").find("endpoints: missing"), std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": []})").find("non-empty"), std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["ftp://x"]})").find("endpoints[0]"), std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["http://a", "http://a/"]})").find("repeats"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "local", "endpoints": ["http://a"]})").find("kind: \"local\" is not accepted (expected one of \"openai\", \"llama-infill\")"), std::string::npos);
  EXPECT_NE(error_of(R"({"endpoints": ["http://a"]})").find("kind: missing"), std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["http://a"], "maxTokens": 0})").find("maxTokens"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["http://a"], "temperature": "hot"})").find("temperature"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["http://a"], "retries": 1.5})").find("retries: 1.5 is not accepted (expected an integer from 0 to 5)"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["http://a"], "connectTimeoutMs": 999999})")
                .find("connectTimeoutMs: 999999 is not accepted (expected an integer from 1 to 60000)"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["http://a"], "colour": 1})").find("colour: unknown member of a remote source"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["http://a"], "fimTemplate": "{prefix} only"})")
                .find("fimTemplate"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "llama-infill", "endpoints": ["http://a"], "fimTemplate": "qwen"})")
                .find("openai"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["http://a"], "slots": 2})").find("llama-infill"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["http://a"], "streamUsage": "no"})").find("true or false"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "llama-infill", "endpoints": ["http://a"], "streamUsage": false})").find("openai"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["http://a"], "apiKeyEnv": "A", "apiKeyFile": "/k"})")
                .find("not both"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "box", "kind": "openai", "endpoints": ["http://a"], "stop": [1]})").find("'box'"),
            std::string::npos);
  // Paths are absolute: relative ones would mean the working directory (the repository, or / in the daemon).
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["http://a"], "apiKeyFile": "key.txt"})").find("absolute"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["https://a"], "caFile": "./ca.pem"})").find("absolute"),
            std::string::npos);
}

TEST(RemoteOptions, AKeyInTheSettingsIsRefusedWithoutEchoingIt) {
  for (const char* member : {"apiKey", "key", "token"}) {
    const std::string text = std::string(R"({"kind": "openai", "endpoints": ["http://a"], ")") + member +
                             R"(": "sk-live-DO-NOT-ECHO-9f8e7d"})";
    const std::string err = error_of(text);
    EXPECT_NE(err.find("apiKeyEnv"), std::string::npos) << err;
    EXPECT_EQ(err.find("DO-NOT-ECHO"), std::string::npos) << err;
  }
  // A key pasted where the variable's name belongs is refused without echoing it either.
  const std::string err = error_of(R"({"kind": "openai", "endpoints": ["http://a"], "apiKeyEnv": "sk-live-DO-NOT-ECHO"})");
  EXPECT_NE(err.find("apiKeyEnv: must be the name"), std::string::npos) << err;
  EXPECT_EQ(err.find("DO-NOT-ECHO"), std::string::npos) << err;
  // Credentials in a URL are refused too.
  EXPECT_NE(error_of(R"({"kind": "openai", "endpoints": ["http://user:pw@a"]})").find("endpoints[0]"),
            std::string::npos);
}

// fimTemplate names a token set of the one FIM table (completion/api/fim_families.h);
// the older names stay accepted and give the same prompts as before.
TEST(RemoteOptions, FimTemplateNamesAndAliasesComeFromTheOneTable) {
  auto template_of = [](const std::string& name) {
    std::string err;
    auto r = parse_remote_source(obj(R"({"kind": "openai", "endpoints": ["http://a"], "fimTemplate": ")" + name + "\"}"),
                                 &err);
    EXPECT_TRUE(r) << name << ": " << err;
    return r ? r->fim_template : std::string();
  };
  for (const auto& f : qf::server::completion::fim_families())
    EXPECT_EQ(template_of(std::string(f.name)), qf::server::completion::fim_text_template(f)) << f.name;
  for (const auto& [alias, family] : qf::server::completion::fim_family_aliases())
    EXPECT_EQ(template_of(std::string(alias)), template_of(std::string(family))) << alias;
  EXPECT_EQ(template_of("starcoder"), "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>");
  EXPECT_EQ(template_of("qwen"), "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>");
  EXPECT_EQ(template_of("codegemma"), "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>");
  EXPECT_EQ(template_of("codellama"), "<PRE> {prefix} <SUF>{suffix} <MID>");
  EXPECT_EQ(template_of("deepseek"), "<\xef\xbd\x9c" "fim\xe2\x96\x81" "begin\xef\xbd\x9c>{prefix}<\xef\xbd\x9c" "fim\xe2\x96\x81"
                                     "hole\xef\xbd\x9c>{suffix}<\xef\xbd\x9c" "fim\xe2\x96\x81" "end\xef\xbd\x9c>");
  EXPECT_EQ(template_of("<s>{prefix}|{suffix}"), "<s>{prefix}|{suffix}");  // a template of the user's own
}

// Called through the router, messages name the member's path in the settings.
TEST(RemoteOptions, MessagesNameThePathTheyAreGiven) {
  std::string err;
  EXPECT_FALSE(parse_remote_source(obj(R"({"kind": "openai", "endpoints": ["http://a"], "maxTokens": 0})"), &err,
                                   "sources[2]"));
  EXPECT_EQ(err, "sources[2].maxTokens: 0 is not accepted (expected an integer from 1 to 4096)");
  EXPECT_FALSE(parse_remote_source(obj(R"({"kind": "openai", "endpoints": ["http://a"], "apiKey": "sk-NO-ECHO"})"),
                                   &err, "sources[2]"));
  EXPECT_EQ(err.rfind("sources[2].apiKey: not accepted", 0), 0u) << err;
  EXPECT_EQ(err.find("sk-NO-ECHO"), std::string::npos) << err;
}

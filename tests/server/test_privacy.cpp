// Privacy (server/core/privacy_filter.h): the filter's decisions, the two settings
// and their layering (the editor adds, never removes), and the core keeping a
// private document out of every context source and away from the provider.
#include <gtest/gtest.h>

#include <atomic>

#include <chrono>
#include <fstream>
#include <future>
#include <iterator>
#include <mutex>

#include <boost/json.hpp>

#include "indexing/file_uri.h"
#include "indexing/syntax_language.h"
#include "server/remote/remote_prompt.h"
#include "server/core/server_core.h"
#include "server/core/settings.h"
#include "tests/indexing/temp_tree.h"

using namespace qf;
using namespace qf::server;
namespace json = boost::json;

namespace {

const std::string secret = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY";

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// ---------------------------------------------------------------- the filter

TEST(PrivacyFilter, DefaultListCoversCommonSecretFiles) {
  privacy_filter f(privacy_settings{}, {"/w/proj"}, "/home/u");
  for (const char* path : {"/w/proj/.env", "/w/proj/app/.env.local", "/w/proj/certs/server.pem", "/w/proj/tls.key",
                           "/home/u/.ssh/id_ed25519", "/home/u/.ssh/config", "/w/proj/backup.kdbx", "/home/u/.npmrc",
                           "/home/u/.netrc", "/home/u/.pgpass", "/home/u/.git-credentials", "/w/proj/secrets/db.py",
                           "/home/u/.aws/credentials", "/home/u/.config/gcloud/application_default_credentials.json",
                           "/home/u/.azure/msal_token_cache.json", "/home/u/.docker/config.json",
                           "/home/u/.kube/config", "/w/proj/keystore.p12", "/w/proj/cert.pfx",
                           "/home/u/.config/gh/hosts.yml", "/w/proj/prod.tfvars", "/home/u/.pypirc"})
    EXPECT_TRUE(f.is_private(index::path_to_file_uri(path), "")) << path;
  for (const char* path : {"/w/proj/src/main.py", "/w/proj/environment.py", "/w/proj/keys.py", "/home/u/.bashrc",
                           "/w/proj/README.md", "/home/u/.aws/config"})
    EXPECT_FALSE(f.is_private(index::path_to_file_uri(path), "")) << path;
}

TEST(PrivacyFilter, MatchesTheAbsolutePathAndThePathInEachWorkspaceFolder) {
  privacy_settings s;
  s.exclude = {"config/prod.py"};  // anchored: from the start of a path
  privacy_filter f(s, {"/w/a", "/w/b/"}, "/home/u");
  EXPECT_TRUE(f.is_private("file:///w/a/config/prod.py", "python"));
  EXPECT_TRUE(f.is_private("file:///w/b/config/prod.py", "python"));
  EXPECT_FALSE(f.is_private("file:///w/c/config/prod.py", "python"));
  EXPECT_FALSE(f.is_private("file:///w/a/src/config/prod.py", "python"));
  EXPECT_TRUE(has(f.why_private("file:///w/a/config/prod.py", "python"), "`config/prod.py`"));
  // Percent-encoded URIs are decoded before matching.
  s.exclude = {"my secrets.txt"};
  EXPECT_TRUE(privacy_filter(s, {}, "").is_private("file:///w/my%20secrets.txt", ""));
}

TEST(PrivacyFilter, AFloodOfPatternsKeepsTheFirstOnes) {
  privacy_settings s;  // the default list first, then what an editor added
  for (int i = 0; i < 5000; ++i) s.exclude.push_back("added-" + std::to_string(i) + ".txt");
  privacy_filter f(s, {}, "");
  EXPECT_TRUE(f.is_private("file:///w/.env", ""));
  EXPECT_TRUE(f.is_private("file:///w/added-1.txt", ""));
  EXPECT_FALSE(f.is_private("file:///w/added-4999.txt", ""));  // past the cap
}

TEST(PrivacyFilter, LanguagesAndOtherSchemes) {
  privacy_settings s;
  s.disabled_languages = {"markdown"};
  privacy_filter f(s, {}, "/home/u");
  EXPECT_TRUE(f.is_private("untitled:Untitled-1", "markdown"));
  EXPECT_TRUE(has(f.why_private("file:///w/notes.md", "markdown"), "privacy.disabledLanguages"));
  EXPECT_FALSE(f.is_private("file:///w/notes.md", "plaintext"));
  // Another scheme's path is matched too (the default list is still there).
  EXPECT_TRUE(f.is_private("vscode-remote://ssh-remote+box/home/u/proj/.env", "dotenv"));
  EXPECT_TRUE(f.is_private("untitled:.env", ""));
  EXPECT_FALSE(f.is_private("untitled:Untitled-1", "python"));
  EXPECT_FALSE(privacy_filter().is_private("file:///w/.env", ""));  // an empty filter keeps nothing out
}

TEST(PrivacyFilter, TheEditorSetupsCarryTheDefaultList) {
  // The editors keep private files from being sent with the same default list (a second line).
  for (const auto& [file, quote] : std::vector<std::pair<std::string, char>>{
           {"/editors/vscode/src/privacy.ts", '\''},
           {"/editors/nvim/lua/quickfill/privacy.lua", '\''},
           {"/editors/emacs/quickfill-privacy.el", '"'}}) {
    std::ifstream in(std::string(QUICKFILL_SOURCE_DIR) + file);
    ASSERT_TRUE(in) << file;
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const std::string& p : default_privacy_exclude())
      EXPECT_NE(text.find(quote + p + quote), std::string::npos) << p << " is missing from " << file;
  }
}

TEST(PrivacyFilter, RemoteSourcesNameFilesInsideTheWorkspace) {
  completion_request req;
  req.uri = "file:///home/alice/work/proj/app.py";
  req.text = std::string("x = 1\n");
  req.workspace_roots = {"/home/alice/work/proj"};
  req.context_docs.push_back({"file:///home/alice/work/proj/lib/util.py", index::shared_text(std::string("a\n"))});
  req.context_docs.push_back({"file:///home/alice/elsewhere/notes.py", index::shared_text(std::string("b\n"))});
  req.context_docs.push_back({"untitled:Untitled-1", index::shared_text(std::string("c\n"))});
  remote::remote_options o;
  const remote::prompt_parts p = remote::build_prompt(req, o);
  EXPECT_EQ(p.filename, "app.py");
  ASSERT_EQ(p.extra.size(), 3u);
  EXPECT_EQ(p.extra[0].filename, "lib/util.py");
  EXPECT_EQ(p.extra[1].filename, "notes.py");  // outside every folder: the name alone
  EXPECT_EQ(p.extra[2].filename, "untitled:Untitled-1");
}

// ---------------------------------------------------------------- the settings

parsed_settings layered(const char* user, const char* editor) {
  std::vector<std::string> refused;
  parsed_settings p = parse_layered_settings(user ? json::parse(user) : json::value(nullptr),
                                             editor ? json::parse(editor) : json::value(nullptr), &refused);
  EXPECT_TRUE(refused.empty());
  return p;
}

TEST(PrivacySettings, SchemaKeysAreAdditiveArraysOfStrings) {
  int found = 0;
  for (const setting_spec& s : settings_schema()) {
    if (s.key != "privacy.exclude" && s.key != "privacy.disabledLanguages") continue;
    ++found;
    EXPECT_EQ(s.trust, setting_trust::additive) << s.key;
    EXPECT_EQ(s.type_name(), "array") << s.key;
    EXPECT_EQ(s.accepted(false), "an array of strings");
  }
  EXPECT_EQ(found, 2);
  EXPECT_TRUE(has(render_settings_markdown(), "| `privacy.exclude` | array | `[\".env\","));
  const parsed_settings p = parse_settings(json::parse(R"({"privacy": {"exclude": ["a", "a", 3, "", "b"]}})"));
  EXPECT_EQ(p.values.privacy.exclude, (std::vector<std::string>{"a", "b"}));
  const parsed_settings bad = parse_settings(json::parse(R"({"privacy.exclude": "*.txt"})"));
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_TRUE(has(bad.problems[0].message, "expected an array of strings")) << bad.problems[0].message;
  EXPECT_EQ(bad.values.privacy.exclude, default_privacy_exclude());
}

TEST(PrivacySettings, TheEditorAddsToTheDefaultNeverRemoves) {
  const parsed_settings p = layered(nullptr, R"({"quickfill": {"privacy": {"exclude": ["*.secret"],
                                                 "disabledLanguages": ["markdown"]}}})");
  EXPECT_TRUE(contains(p.values.privacy.exclude, ".env"));
  EXPECT_TRUE(contains(p.values.privacy.exclude, "*.secret"));
  EXPECT_EQ(p.values.privacy.disabled_languages, (std::vector<std::string>{"markdown"}));
  // An empty list, or one of junk, asks for nothing less.
  EXPECT_EQ(layered(nullptr, R"({"privacy": {"exclude": []}})").values.privacy.exclude, default_privacy_exclude());
  EXPECT_EQ(layered(nullptr, R"({"privacy.exclude": [1, null, {}]})").values.privacy.exclude,
            default_privacy_exclude());
  const parsed_settings not_list = layered(nullptr, R"({"privacy.exclude": "nothing"})");
  EXPECT_EQ(not_list.values.privacy.exclude, default_privacy_exclude());
}

TEST(PrivacySettings, TheUserFileSetsTheBaseAndTheEditorAddsToIt) {
  const char* user = R"({"privacy": {"exclude": ["only-this.txt"], "disabledLanguages": ["plaintext"]}})";
  const parsed_settings p = layered(user, R"({"privacy": {"exclude": ["x.cfg", 7], "disabledLanguages": []}})");
  EXPECT_EQ(p.values.privacy.exclude, (std::vector<std::string>{"only-this.txt", "x.cfg"}));
  EXPECT_EQ(p.values.privacy.disabled_languages, (std::vector<std::string>{"plaintext"}));
  EXPECT_EQ(layered(user, R"({"privacy.exclude": "junk"})").values.privacy.exclude,
            (std::vector<std::string>{"only-this.txt"}));
  EXPECT_EQ(layered(user, nullptr).values.privacy.exclude, (std::vector<std::string>{"only-this.txt"}));
}

// ---------------------------------------------------------------- the core

// Records what the core hands the provider.
class recording_provider final : public completion_provider {
 public:
  struct seen {
    std::string uri;
    std::vector<std::string> context_uris;
    std::vector<std::string> context_texts;  // context documents, recent chunks, edit hunks
    std::vector<std::string> roots;
  };
  recording_provider(std::mutex* mu, std::vector<seen>* requests, std::vector<std::string>* closed)
      : mu_(mu), requests_(requests), closed_(closed) {}
  completion_result complete(const completion_request& req, const cancel_token&) override {
    seen s;
    s.uri = req.uri;
    s.roots = req.workspace_roots;
    for (const auto& d : req.context_docs) {
      s.context_uris.push_back(d.uri);
      s.context_texts.emplace_back(d.text.view());
    }
    if (req.recent)
      for (const auto& c : req.recent->recent()) s.context_texts.push_back(c.uri + ": " + c.text);
    if (req.edits)
      for (const auto& h : req.edits->recent()) {
        std::string t = h.uri + ":";
        for (const auto& l : h.new_lines) t += " " + l;
        s.context_texts.push_back(t);
      }
    std::lock_guard lock(*mu_);
    requests_->push_back(std::move(s));
    completion_result r;
    r.items.push_back(completion_candidate{"_done", {}, {}, "", "", std::nullopt});
    return r;
  }
  std::optional<prompt_explanation> explain(const completion_request& req) override {
    prompt_explanation e;
    e.text = std::string(req.text.view());
    return e;
  }
  next_edit_result next_edit(const next_edit_request& req, const cancel_token&) override {
    std::lock_guard lock(*mu_);
    requests_->push_back(seen{"next-edit " + req.uri, {}, {}, {}});
    return {};
  }
  void document_closed(const std::string& uri) override {
    std::lock_guard lock(*mu_);
    closed_->push_back(uri);
  }
  std::string describe() const override { return "recording"; }

 private:
  std::mutex* mu_;
  std::vector<seen>* requests_;
  std::vector<std::string>* closed_;
};

class PrivacyCore : public ::testing::Test {
 protected:
  void SetUp() override {
    core_options o;
    o.background = false;
    o.cli_model_path = "test-double";
    o.workspace.cache_dir = "";
    o.workspace.debounce = std::chrono::milliseconds(0);
    o.workspace.idle_priority = false;
    o.factory = [this](const provider_options&, std::string*) {
      return std::make_unique<recording_provider>(&mu_, &requests_, &closed_);
    };
    core_ = std::make_unique<server_core>(std::move(o), [](std::function<void()> fn) { fn(); });
    core_->start();
    std::promise<bool> loaded;
    core_->load_model(nullptr, [&](const model_state& st) { loaded.set_value(st.loaded); });
    ASSERT_TRUE(loaded.get_future().get());
  }
  void TearDown() override { core_.reset(); }

  void open(const std::string& uri, const std::string& lang, const std::string& text) {
    std::string err;
    ASSERT_TRUE(core_->open(uri, lang, 1, text, &err)) << err;
  }
  void edit(const std::string& uri, std::int64_t version, const std::string& text) {
    std::string err;
    index::text_change c;
    c.text = text;
    ASSERT_TRUE(core_->change(uri, version, {c}, text::position_encoding::utf8, &err)) << err;
  }
  // A completion at the end of the first line; the number of items.
  std::size_t complete(const std::string& uri) {
    completion_request req;
    req.uri = uri;
    auto doc = core_->documents().get(uri);
    req.language_id = doc->language_id;
    req.text = index::shared_text(doc);
    req.cursor = {0, 0};
    core_->add_context(req);
    // The first of the answer and a cancellation counts: the scheduler may
    // cancel a job (at stop) after its run posted the answer, and the LSP
    // binding's reply-once drops the second; here the callbacks own their
    // state, since the test's frame is gone by then.
    struct answer {
      std::promise<std::size_t> p;
      std::atomic<bool> given{false};
      void give(std::size_t n) {
        if (!given.exchange(true)) p.set_value(n);
      }
    };
    auto a = std::make_shared<answer>();
    auto got = a->p.get_future();
    core_->complete(uri, std::move(req), [a](server_core::completion_outcome o) { a->give(o.result.items.size()); },
                    [a](cancel_reason) { a->give(0); });
    return got.get();
  }
  std::vector<recording_provider::seen> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  static std::string all_context(const recording_provider::seen& s) {
    std::string out;
    for (const auto& t : s.context_texts) out += t + "\n";
    return out;
  }
  void apply(const char* quickfill_json) {
    parsed_settings p = parse_layered_settings(nullptr, json::parse(quickfill_json), nullptr);
    ASSERT_TRUE(p.usable);
    core_->apply_settings(p.values);
  }

  std::mutex mu_;
  std::vector<recording_provider::seen> requests_;
  std::vector<std::string> closed_;
  std::unique_ptr<server_core> core_;
};

TEST_F(PrivacyCore, AnExcludedDocumentIsNeitherCompletedNorContext) {
  open("file:///w/p/.env", "dotenv", secret + "\n");
  open("file:///w/p/main.py", "python", "import os\n");
  edit("file:///w/p/.env", 2, secret + "\nDB_PASSWORD=hunter2-also-secret\n");
  edit("file:///w/p/main.py", 2, "import os\nkey = os.environ[\"KEY\"]\n");
  EXPECT_EQ(complete("file:///w/p/.env"), 0u);  // answered empty, without the provider
  EXPECT_EQ(complete("file:///w/p/main.py"), 1u);
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].uri, "file:///w/p/main.py");
  EXPECT_TRUE(seen[0].context_uris.empty());
  const std::string ctx = all_context(seen[0]);
  EXPECT_FALSE(has(ctx, "wJalrXUtnFEMI")) << ctx;
  EXPECT_FALSE(has(ctx, "hunter2")) << ctx;
  EXPECT_TRUE(has(ctx, "key = os.environ")) << ctx;  // the context sources do work
  for (const auto& h : core_->edit_history().recent()) EXPECT_NE(h.uri, "file:///w/p/.env");
  for (const auto& c : core_->recent_chunks().recent()) EXPECT_NE(c.uri, "file:///w/p/.env");
  EXPECT_TRUE(has(core_->why_private("file:///w/p/.env"), "`.env`"));
  EXPECT_EQ(core_->why_private("file:///w/p/main.py"), "");
}

TEST_F(PrivacyCore, NoNextEditAndNoExplanationForAPrivateDocument) {
  open("file:///w/p/id_rsa", "plaintext", "-----BEGIN OPENSSH PRIVATE KEY-----\n");
  next_edit_request ne;
  ne.uri = "file:///w/p/id_rsa";
  ne.language_id = "plaintext";
  std::promise<std::string> reason;
  core_->next_edit("k1", ne, [&](next_edit_result r, bool) { reason.set_value(r.reason); }, [](cancel_reason) {});
  EXPECT_TRUE(has(reason.get_future().get(), "kept out of completions"));
  completion_request req;
  req.uri = "file:///w/p/id_rsa";
  req.language_id = "plaintext";
  req.text = index::shared_text(core_->documents().get(req.uri));
  std::promise<bool> explained;
  core_->explain("k2", req, [&](std::optional<prompt_explanation> e, bool) { explained.set_value(e.has_value()); },
                 [](cancel_reason) {});
  EXPECT_FALSE(explained.get_future().get());
  EXPECT_TRUE(requests().empty());
}

TEST_F(PrivacyCore, ADisabledLanguageIsPrivate) {
  apply(R"({"privacy": {"disabledLanguages": ["markdown"]}})");
  open("file:///w/p/notes.md", "markdown", "token: ghp_NOTESSECRET\n");
  open("file:///w/p/a.py", "python", "x = 1\n");
  EXPECT_EQ(complete("file:///w/p/notes.md"), 0u);
  EXPECT_EQ(complete("file:///w/p/a.py"), 1u);
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_FALSE(has(all_context(seen[0]), "NOTESSECRET"));
}

TEST_F(PrivacyCore, ASettingsChangeTakesAnOpenDocumentOutOfEveryContextSource) {
  open("file:///w/p/a.py", "python", "a = 1\n");
  open("file:///w/p/vault.py", "python", "PASSWORD = 'x'\n");
  edit("file:///w/p/vault.py", 2, "PASSWORD = 'VAULTSECRET'\n");
  EXPECT_EQ(complete("file:///w/p/a.py"), 1u);
  EXPECT_TRUE(has(all_context(requests().back()), "VAULTSECRET"));  // not private yet
  apply(R"({"privacy": {"exclude": ["vault.py"]}})");
  EXPECT_EQ(complete("file:///w/p/a.py"), 1u);
  EXPECT_FALSE(has(all_context(requests().back()), "VAULTSECRET")) << all_context(requests().back());
  EXPECT_EQ(complete("file:///w/p/vault.py"), 0u);
  // The provider dropped every document's state (cached prompts may have held it).
  {
    std::lock_guard lock(mu_);
    EXPECT_TRUE(contains(closed_, "file:///w/p/a.py"));
    EXPECT_TRUE(contains(closed_, "file:///w/p/vault.py"));
  }
  // Excluded no more: its next edits are context again.
  apply(R"({})");
  edit("file:///w/p/vault.py", 3, "PASSWORD = 'PUBLICNOW'\n");
  EXPECT_EQ(complete("file:///w/p/a.py"), 1u);
  EXPECT_TRUE(has(all_context(requests().back()), "PUBLICNOW"));
}

TEST_F(PrivacyCore, WorkspaceFoldersAnchorPatternsAndTheIndexSkipsPrivateFiles) {
  qf::test::temp_tree t("privacy_ws");
  t.write("src/app.py", "def helper_visible(x):\n    return x\n");
  t.write("secrets/creds.py", "def helper_secret(token='SECRETDEFAULT'):\n    return token\n");
  t.write("config/prod.py", "def helper_prod():\n    pass\n");
  apply(R"({"privacy": {"exclude": ["config/prod.py"]}})");
  core_->set_workspace_roots({t.root()});
  EXPECT_TRUE(core_->why_private(index::path_to_file_uri(t.path("config/prod.py"))) != "");
  EXPECT_EQ(core_->why_private(index::path_to_file_uri(t.path("src/config/prod.py"))), "");
  open(index::path_to_file_uri(t.path("src/app.py")), "python", "def helper_visible(x):\n    return x\n");
  EXPECT_EQ(complete(index::path_to_file_uri(t.path("src/app.py"))), 1u);
  EXPECT_EQ(requests().back().roots, std::vector<std::string>{t.root()});
  if (!index::syntax_language_named("python")) GTEST_SKIP() << "no Python grammar in this build";
  auto ws = core_->workspace();
  ASSERT_TRUE(ws);
  ASSERT_TRUE(ws->wait_idle());
  EXPECT_FALSE(ws->lookup("helper_visible", 5).empty());
  EXPECT_TRUE(ws->lookup("helper_secret", 5).empty());
  EXPECT_TRUE(ws->lookup("helper_prod", 5).empty());
  // An opened private document does not override its file in the index either.
  open(index::path_to_file_uri(t.path("secrets/more.py")), "python", "def helper_opened():\n    pass\n");
  ASSERT_TRUE(ws->wait_idle());
  EXPECT_TRUE(ws->lookup("helper_opened", 5).empty());
  // A change of the rules re-walks: the file now excluded leaves the index.
  apply(R"({"privacy": {"exclude": ["src/**"]}})");
  ASSERT_TRUE(ws->wait_idle());
  EXPECT_TRUE(ws->lookup("helper_visible", 5).empty());
}

}  // namespace

// `quickfill prompt FILE LINE COL`: the exact prompt the server would give the
// model for a completion at (LINE, COL) of FILE, and where each part of it
// comes from.
//
// It builds the same completion_request the server builds (the file as the
// current document, the --open files as the other open documents, most
// recently used first, at most completion.contextDocuments of them), loads the
// model the server would load (--model, else the bundled one) on the CPU, and
// asks the provider's explain(); nothing is evaluated. LINE and COL are
// 0-based like LSP positions, COL in UTF-16 code units (LSP's default
// encoding). Output: the prompt between two marker lines, then a table of its
// parts and the totals per kind; --json prints the explanation as
// quickfill/explainCompletion answers it (server/binding/explain_result.h).
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "indexing/document.h"
#include "indexing/syntax_index.h"
#include "indexing/syntax_language.h"
#include "text/position.h"
#include "indexing/workspace_index.h"
#include "text/utf8.h"
#include "server/binding/explain_result.h"
#include "server/cli/cli_args.h"
#include "server/cli/cli_model.h"
#include "server/cli/commands.h"
#include "server/completion/pipeline/provider_factory.h"
#include "server/core/model_locator.h"
#include "server/core/model_store.h"
#include "server/core/settings.h"

namespace qf::cli {
namespace {

namespace fs = std::filesystem;
constexpr const char* k_cmd = "quickfill prompt";

std::string file_uri(const std::string& path) {
  return "file://" + fs::absolute(fs::path(path)).lexically_normal().string();
}

// Reads a source file; false with a message when it cannot be read or is not text.
bool read_source(const std::string& path, std::string& out) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    std::fprintf(stderr, "%s: no such file: %s\n", k_cmd, path.c_str());
    return false;
  }
  if (fs::is_directory(path, ec)) {
    std::fprintf(stderr, "%s: %s is a directory, not a file\n", k_cmd, path.c_str());
    return false;
  }
  if (!read_text_file(k_cmd, path, out)) return false;
  if (out.find('\0') != std::string::npos) {
    std::fprintf(stderr, "%s: %s is a binary file (it holds NUL bytes)\n", k_cmd, path.c_str());
    return false;
  }
  if (!text::is_valid_utf8(out)) {
    std::fprintf(stderr, "%s: %s is not UTF-8 text (invalid byte at offset %zu)\n", k_cmd, path.c_str(),
                 text::first_invalid_utf8(out));
    return false;
  }
  return true;
}

std::string one_line(const std::string& s, size_t max) {
  std::string o;
  for (char c : s) {
    if (c == '\n') o += "\\n";
    else if (c == '\r') o += "\\r";
    else if (c == '\t') o += "\\t";
    else o += c;
  }
  return o.size() > max ? text::utf8_shorten(o, max) : o;
}

void print_table(const server::prompt_explanation& e) {
  std::printf("----- prompt (%s, %lld tokens) -----\n", e.format.c_str(), static_cast<long long>(e.tokens));
  std::fwrite(e.text.data(), 1, e.text.size(), stdout);
  if (!e.text.empty() && e.text.back() != '\n') std::printf("\n");
  std::printf("----- end of prompt -----\n\n");
  std::printf("%-8s %7s  %-40s %s\n", "part", "tokens", "origin", "starts with");
  std::map<std::string, std::pair<int64_t, int>> by_kind;
  for (const server::prompt_part& p : e.parts) {
    std::printf("%-8s %7lld  %-40s %s\n", p.kind.c_str(), static_cast<long long>(p.tokens),
                p.origin.empty() ? "-" : p.origin.c_str(), one_line(p.text, 40).c_str());
    by_kind[p.kind].first += p.tokens;
    by_kind[p.kind].second += 1;
  }
  std::printf("\ntotals:");
  for (const auto& [kind, n] : by_kind) std::printf(" %s %lld (%d)", kind.c_str(), static_cast<long long>(n.first), n.second);
  std::printf("; prompt %lld tokens in %zu parts\n", static_cast<long long>(e.tokens), e.parts.size());
  for (const server::gate_explanation& g : e.gates)
    std::printf("confidence gate, %s triggers: %.2f (%s)\n", g.trigger.c_str(), g.threshold, g.origin.c_str());
}

}  // namespace

int cmd_prompt(std::span<char*> args) {
  std::vector<std::string> open_files;
  std::string file, line_s, col_s, workspace, model;
  bool json = false;
  arg_parser ap(k_cmd,
                "Print the exact prompt a completion at LINE, COL of FILE would give the model, then its parts\n"
                "(kind, origin, tokens) and totals. LINE and COL are 0-based like LSP positions; COL counts\n"
                "UTF-16 code units (LSP's default position encoding). Nothing is evaluated.");
  ap.add_positional("FILE", &file, "the current document");
  ap.add_positional("LINE", &line_s, "0-based line");
  ap.add_positional("COL", &col_s, "0-based column in UTF-16 code units");
  ap.add_strings({"--open"}, &open_files, "another open document (repeatable; the first given is the most recently used)");
  ap.add_string({"--workspace"}, &workspace, "workspace root the server would index (rootUri)");
  ap.add_string({"-m", "--model"}, &model, "GGUF model (default: the bundled model, as the server)");
  ap.add_flag({"--json"}, &json, "print {format, prompt, tokens, parts} as JSON");
  if (!ap.parse(args)) return ap.exit_code();

  int64_t line = 0, col = 0;
  if (!parse_int(line_s, line) || line < 0 || !parse_int(col_s, col) || col < 0) {
    std::fprintf(stderr, "%s: LINE and COL must be non-negative integers (got '%s' '%s')\n", k_cmd, line_s.c_str(),
                 col_s.c_str());
    return 2;
  }
  std::string text;
  if (!read_source(file, text)) return 1;
  const text::line_table lines(text);
  if (static_cast<size_t>(line) >= lines.line_count()) {
    std::fprintf(stderr, "%s: line %lld is past the end of %s (it has %zu lines, 0-based: 0..%zu)\n", k_cmd,
                 static_cast<long long>(line), file.c_str(), lines.line_count(), lines.line_count() - 1);
    return 1;
  }
  const size_t ls = lines.line_start(static_cast<size_t>(line));
  const std::string_view line_text = std::string_view(text).substr(ls, lines.line_end(static_cast<size_t>(line)) - ls);
  const size_t units = text::count_units(line_text, text::position_encoding::utf16);
  if (static_cast<size_t>(col) > units) {
    std::fprintf(stderr, "%s: column %lld is past the end of line %lld of %s (it has %zu UTF-16 code units)\n", k_cmd,
                 static_cast<long long>(col), static_cast<long long>(line), file.c_str(), units);
    return 1;
  }
  const size_t byte_col = text::bytes_for_units(line_text, static_cast<size_t>(col), text::position_encoding::utf16);

  if (!workspace.empty()) {
    std::error_code ec;
    if (!fs::is_directory(workspace, ec)) {
      std::fprintf(stderr, "%s: --workspace %s is not a directory\n", k_cmd, workspace.c_str());
      return 1;
    }
  }

  const server::server_settings server_defaults;
  const server::quickfill_settings settings_defaults;
  server::completion_request req;
  req.uri = file_uri(file);
  req.version = 1;
  req.text = std::move(text);
  req.cursor = server::text_pos{line, static_cast<int64_t>(byte_col)};
  req.explicit_trigger = true;
  for (const std::string& f : open_files) {
    std::string other;
    if (!read_source(f, other)) return 1;
    const std::string uri = file_uri(f);
    if (uri == req.uri) continue;
    if (static_cast<int>(req.context_docs.size()) >= server_defaults.context_documents) break;
    req.context_docs.push_back({uri, std::move(other)});
  }
  // What the server adds to a request (server_core::add_context): the
  // document's syntax tree and the workspace index of --workspace (the server's
  // disk cache included), both complete here since nothing waits for typing.
  const index::syntax_language* lang = index::find_syntax_language("", req.uri);
  auto doc = std::make_shared<const index::document>(req.uri, lang ? std::string(lang->name) : std::string(), 1,
                                                     std::string(req.text.view()));
  index::syntax_index syntax;
  syntax.opened(doc);
  std::shared_ptr<index::workspace_index> workspace_index;
  if (!workspace.empty()) {
    index::workspace_options wo;
    wo.idle_priority = false;
    workspace_index = std::make_shared<index::workspace_index>(wo);
    const std::string root = fs::absolute(workspace).lexically_normal().string();
    // As in the server: files of the default privacy.exclude list are never indexed.
    auto privacy = std::make_shared<const server::privacy_filter>(server::privacy_settings{},
                                                                  std::vector<std::string>{root},
                                                                  std::getenv("HOME") ? std::getenv("HOME") : "");
    workspace_index->set_exclude([privacy](const std::string& path, std::string_view language) {
      return !privacy->why_private_path(path, language).empty();
    });
    workspace_index->set_roots({root});
    workspace_index->document_updated(doc);
    if (!workspace_index->wait_idle(std::chrono::minutes(5))) {
      std::fprintf(stderr, "%s: indexing %s did not finish within 5 minutes\n", k_cmd, workspace.c_str());
      return 1;
    }
    req.definitions = workspace_index;
  }
  syntax.wait_idle();
  req.syntax = syntax.latest(req.uri);
  if (req.language_id.empty() && lang) req.language_id = std::string(lang->name);

  spdlog::set_level(spdlog::level::warn);
  const server::model_choice choice = server::choose_model(model, "");
  if (choice.path.empty()) {
    std::fprintf(stderr, "%s: no model given and the bundled %s was not found (looked in:", k_cmd,
                 server::default_model_name);
    for (const std::string& s : choice.searched) std::fprintf(stderr, " %s", s.c_str());
    std::fprintf(stderr, ")\n");
    return 1;
  }
  server::provider_options po;
  po.model_path = choice.path;
  po.resolve_model = server::resolve_model_argument;
  po.completion = settings_defaults.completion;
  po.engine.device = "cpu";
  po.engine.threads = 1;
  std::string error;
  std::unique_ptr<server::completion_provider> provider = server::make_completion_provider(po, &error);
  if (!provider) {
    std::fprintf(stderr, "%s: cannot load model %s: %s\n", k_cmd, choice.path.c_str(), error.c_str());
    return 1;
  }
  const std::optional<server::prompt_explanation> e = provider->explain(req);
  if (!e) {
    std::fprintf(stderr, "%s: the completion provider cannot explain its prompt\n", k_cmd);
    return 1;
  }
  if (json) {
    std::printf("%s\n", boost::json::serialize(boost::json::value_from(server::explain_result_of(*e))).c_str());
  } else {
    if (workspace_index) {
      const index::workspace_stats st = workspace_index->stats();
      std::printf("workspace: %s (%zu files, %zu definitions indexed)\n", workspace.c_str(), st.files, st.definitions);
    }
    std::printf("model: %s\n", provider->describe().c_str());
    print_table(*e);
  }
  return 0;
}

}  // namespace qf::cli

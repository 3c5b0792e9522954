// `quickfill eval`: suggestion quality measured the way the benchmarks do,
// through the real completion pipeline (prompt layout, context block,
// post-processing, gate), not a bare model call.
//
//   quickfill eval --benchmark humaneval-single|humaneval-multi|humaneval-span --data DIR [--limit N]
//   quickfill eval --repo DIR [--points N] [--seed S]
//   options: --model M, --settings JSON, --compare A B, --trigger automatic|explicit|both,
//            --json, --html FILE, --oracle, --calibrate, --device, --threads
//
// Each task's document (`prompt + suffix`) is opened in-process as the server
// holds it and a completion is asked at the hole with each trigger kind
// (eval_runner.h); pass@1 runs `prompt + middle + suffix + test` and
// check(entry_point) in the sandbox (eval_sandbox.h); exact match and edit
// similarity compare with the truth (eval_score.h). --compare runs two
// settings objects or two models (an argument starting with `{` is settings,
// anything else a model) over the same tasks and prints them side by side.
// --oracle prints the trim rules' score against the truth (eval_oracle.h)
// without a model. --calibrate writes the model's gate file
// (eval_calibrate.h, completion/gate_file.h).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "indexing/document.h"
#include "indexing/syntax_index.h"
#include "indexing/workspace_index.h"
#include "server/cli/cli_args.h"
#include "server/cli/commands.h"
#include "server/cli/eval_calibrate.h"
#include "server/cli/eval_oracle.h"
#include "server/cli/eval_repo.h"
#include "server/cli/eval_report.h"
#include "server/cli/eval_runner.h"
#include "server/cli/eval_sandbox.h"
#include "server/cli/eval_tasks.h"
#include "server/completion/postprocess/gate_file.h"
#include "server/completion/pipeline/provider_factory.h"
#include "server/core/model_locator.h"
#include "server/core/model_store.h"
#include "server/core/privacy_filter.h"
#include "server/report/eval_html.h"
#include "server/core/settings.h"

namespace qf::cli {
namespace {

namespace fs = std::filesystem;
constexpr const char* k_cmd = "quickfill eval";

struct run_config {
  std::string label, model, settings;
};

struct eval_context {
  std::vector<eval_task> tasks;
  std::shared_ptr<index::workspace_index> workspace;  // --repo: the index the editor builds
  std::vector<bool> triggers;                         // explicit_trigger values to run
  std::string device = "auto";
  int threads = 0;
  sandbox_limits limits;
  bool quiet = false;
};

// Builds the provider for `cfg` and runs every task with every trigger kind.
bool run_one(const run_config& cfg, const eval_context& ctx, eval_run& out) {
  out.label = cfg.label;
  out.settings = cfg.settings;
  boost::json::value payload = boost::json::object{};
  if (!cfg.settings.empty()) {
    boost::system::error_code ec;
    payload = boost::json::parse(cfg.settings, ec);
    if (ec || !payload.is_object()) {
      std::fprintf(stderr, "%s: --settings must be a JSON object (%s)\n", k_cmd, cfg.settings.c_str());
      return false;
    }
  }
  server::parsed_settings ps = server::parse_settings(payload);
  for (const server::settings_problem& p : ps.problems) std::fprintf(stderr, "%s: settings: %s\n", k_cmd, p.message.c_str());
  if (!ps.usable) return false;
  const server::model_choice choice = server::choose_model(cfg.model, "");
  if (choice.path.empty()) {
    std::fprintf(stderr, "%s: %s\n", k_cmd,
                 cfg.model.empty() ? "no model given and the bundled model was not found (--model PATH)"
                                   : ("no such model: " + cfg.model + (choice.error.empty() ? "" : " (" + choice.error + ")")).c_str());
    return false;
  }
  out.model_path = choice.path;
  // The gate the pipeline would apply, then the provider with the gate off:
  // every suggestion comes back with its score (eval_runner.h).
  std::string why;
  const auto calibrated = server::completion::read_gate_file(choice.path, &why);
  if (!why.empty()) std::fprintf(stderr, "%s: calibrated gate not used: %s\n", k_cmd, why.c_str());
  const server::completion::gate_choice gate_auto = server::completion::resolve_gate(ps.values.completion, false, calibrated);
  const server::completion::gate_choice gate_expl = server::completion::resolve_gate(ps.values.completion, true, calibrated);
  server::provider_options po;
  po.model_path = choice.path;
  po.resolve_model = server::resolve_model_argument;
  po.completion = ps.values.completion;
  for (auto* cls : {&po.completion.sampling_auto, &po.completion.sampling_explicit}) {
    cls->min_confidence = -100;
    cls->min_confidence_given = true;
  }
  po.engine.device = ctx.device;
  po.engine.threads = ctx.threads;
  std::string error;
  std::unique_ptr<server::completion_provider> provider = server::make_completion_provider(po, &error);
  if (!provider) {
    std::fprintf(stderr, "%s: cannot load model %s: %s\n", k_cmd, choice.path.c_str(), error.c_str());
    return false;
  }
  out.model = provider->describe();
  eval_request_options ro;
  ro.auto_deadline_ms = ps.values.server.auto_deadline_ms;
  ro.explicit_deadline_ms = ps.values.server.explicit_deadline_ms;
  ro.gate_auto = gate_auto.threshold;
  ro.gate_explicit = gate_expl.threshold;
  index::syntax_index syntax;
  std::shared_ptr<const index::definition_source> defs = ctx.workspace;
  size_t done = 0;
  for (const eval_task& t : ctx.tasks) {
    if (ctx.workspace) {
      // As in the editor: the open document's text replaces the file's in the index.
      ctx.workspace->document_updated(std::make_shared<const index::document>(t.uri, t.language, 1, t.prompt + t.suffix));
      ctx.workspace->wait_idle(std::chrono::minutes(1));
    }
    for (bool expl : ctx.triggers) out.records.push_back(eval_one(*provider, syntax, defs, t, expl, ro, ctx.limits));
    if (ctx.workspace) ctx.workspace->document_closed(t.uri);
    if (!ctx.quiet && (++done % 10 == 0 || done == ctx.tasks.size()))
      std::fprintf(stderr, "%s: %s %zu/%zu tasks\n", k_cmd, cfg.label.c_str(), done, ctx.tasks.size());
  }
  std::vector<std::string> languages;  // more than one: a summary per language too
  for (const eval_task& t : ctx.tasks)
    if (std::find(languages.begin(), languages.end(), t.language) == languages.end()) languages.push_back(t.language);
  std::sort(languages.begin(), languages.end());
  for (bool expl : ctx.triggers) {
    const auto& g = expl ? gate_expl : gate_auto;
    out.summaries.push_back(summarize(out.records, expl, g.threshold, g.origin));
    if (languages.size() > 1)
      for (const std::string& lang : languages)
        out.summaries.push_back(summarize(out.records, expl, g.threshold, g.origin, lang));
  }
  return true;
}

std::string one_line(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '\n' ? std::string("\\n") : std::string(1, c);
  return o;
}

int run_oracle(const std::vector<eval_task>& tasks, const std::string& name, const std::vector<bool>& triggers,
               bool json, int show) {
  const server::completion::completion_settings s;
  boost::json::array rows;
  for (bool expl : triggers) {
    const oracle_totals tot = run_trim_oracle(tasks, expl, s, show);
    const char* trig = expl ? "explicit" : "automatic";
    if (json) {
      rows.push_back(boost::json::object{{"trigger", trig}, {"tasks", tot.tasks}, {"exact", tot.exact},
                                         {"sameLines", tot.same_lines},
                                         {"exactShare", static_cast<double>(tot.exact) / tot.tasks},
                                         {"sameLinesShare", static_cast<double>(tot.exact + tot.same_lines) / tot.tasks}});
      continue;
    }
    for (const auto& [t, kept] : tot.misses)
      std::printf("  miss %s (%s)\n    middle: %s\n    kept:   %s\n", t->id.c_str(), trig, one_line(t->middle).c_str(),
                  one_line(kept).c_str());
    std::printf("trim rules against the truth, %s, %s trigger: %d of %d exact (%.1f %%), %d more the same lines "
                "(%.1f %% in all)\n",
                name.c_str(), trig, tot.exact, tot.tasks, 100.0 * tot.exact / tot.tasks, tot.same_lines,
                100.0 * (tot.exact + tot.same_lines) / tot.tasks);
  }
  if (json) std::printf("%s\n", boost::json::serialize(boost::json::object{{"benchmark", name}, {"oracle", rows}}).c_str());
  return 0;
}

}  // namespace

int cmd_eval(std::span<char*> args) {
  // --compare takes two values; the shared parser keeps one value per option.
  std::vector<std::string> compare;
  std::vector<char*> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (std::strcmp(args[i], "--compare") == 0) {
      if (i + 2 >= args.size()) {
        std::fprintf(stderr, "%s: --compare needs two arguments: A B (each a model, or settings JSON starting with '{')\n", k_cmd);
        return 2;
      }
      compare = {args[i + 1], args[i + 2]};
      i += 2;
    } else {
      rest.push_back(args[i]);
    }
  }
  std::string benchmark, data, repo, model, settings, trigger = "both", html, device = "auto";
  int limit = 0, points = 60, threads = 0, show = 0, timeout_s = 10;
  uint64_t seed = 1;
  bool json = false, oracle = false, calibrate = false, records = false;
  arg_parser ap(k_cmd,
                "Measure suggestion quality through the real completion pipeline: pass@1 by execution, exact match,\n"
                "edit similarity, syntax-valid and shown shares, latency and tokens, on HumanEval-infilling or on\n"
                "FIM points of your own repository. Untrusted programs run in a sandbox (docs/security.md).\n"
                "  --compare A B   two runs side by side: each a model, or a settings JSON object ('{...}')");
  ap.add_string({"--benchmark"}, &benchmark, "humaneval-single | humaneval-multi | humaneval-span");
  ap.add_string({"--data"}, &data, "folder of the HumanEval-infilling .jsonl.gz files");
  ap.add_int({"--limit"}, &limit, "the first N tasks only (0: all)");
  ap.add_string({"--repo"}, &repo, "pick FIM points from this repository instead (line, span, function body)");
  ap.add_int({"--points"}, &points, "--repo: number of points (default 60)");
  ap.add_u64({"--seed"}, &seed, "--repo: seed of the point picking (default 1)");
  ap.add_string({"-m", "--model"}, &model, "GGUF model or a pulled model's name (default: the bundled model)");
  ap.add_string({"--settings"}, &settings, "quickfill settings JSON for the run (as in the editor's configuration)");
  ap.add_string({"--trigger"}, &trigger, "automatic | explicit | both (default both)");
  ap.add_flag({"--json"}, &json, "print the figures as JSON");
  ap.add_flag({"--records"}, &records, "with --json: every task's suggestion and verdict too");
  ap.add_string({"--html"}, &html, "also write the figures as an HTML page to FILE");
  ap.add_flag({"--oracle"}, &oracle, "no model: the trim rules fed the true text, judged against the truth");
  ap.add_int({"--show"}, &show, "--oracle: print the first N misses");
  ap.add_flag({"--calibrate"}, &calibrate,
              "write the model's confidence gate (<model>.gate.json): the threshold keeping >= 90 % of the good "
              "automatic suggestions");
  ap.add_string({"--device"}, &device, "auto | cpu | cuda (default auto)");
  ap.add_int({"-t", "--threads"}, &threads, "CPU threads (default: from the machine)");
  ap.add_int({"--timeout"}, &timeout_s, "CPU seconds per test program (default 10; the wall limit is 1.5 times that)");
  if (!ap.parse(std::span<char*>(rest.data(), rest.size()))) return ap.exit_code();

  if (benchmark.empty() == repo.empty()) {
    std::fprintf(stderr, "%s: give either --benchmark NAME --data DIR or --repo DIR\n", k_cmd);
    return 2;
  }
  std::vector<bool> triggers;
  if (trigger == "automatic" || trigger == "both") triggers.push_back(false);
  if (trigger == "explicit" || trigger == "both") triggers.push_back(true);
  if (triggers.empty()) {
    std::fprintf(stderr, "%s: --trigger must be automatic, explicit or both (got '%s')\n", k_cmd, trigger.c_str());
    return 2;
  }
  if (limit < 0 || points < 1 || timeout_s < 1) {
    std::fprintf(stderr, "%s: --limit must be >= 0, --points and --timeout >= 1\n", k_cmd);
    return 2;
  }
  if (calibrate && !compare.empty()) {
    std::fprintf(stderr, "%s: --calibrate calibrates one model; it does not go with --compare\n", k_cmd);
    return 2;
  }
  spdlog::set_level(spdlog::level::warn);
  eval_context ctx;
  ctx.triggers = triggers;
  ctx.device = device;
  ctx.threads = threads;
  ctx.limits.cpu_seconds = timeout_s;
  ctx.limits.wall_ms = timeout_s * 1500;
  ctx.quiet = json;
  std::string error, name;
  if (!benchmark.empty()) {
    const std::string file = humaneval_file(benchmark);
    if (file.empty()) {
      std::fprintf(stderr, "%s: unknown benchmark '%s' (humaneval-single, humaneval-multi, humaneval-span)\n", k_cmd,
                   benchmark.c_str());
      return 2;
    }
    if (data.empty()) {
      if (const char* d = std::getenv("QUICKFILL_TEST_DATA"); d && *d) data = std::string(d) + "/humaneval-infilling";
    }
    if (data.empty()) {
      std::fprintf(stderr, "%s: --data DIR is required: the folder holding %s (github.com/openai/human-eval-infilling, data/)\n",
                   k_cmd, file.c_str());
      return 2;
    }
    if (!load_humaneval(data + "/" + file, benchmark, limit, ctx.tasks, &error)) {
      std::fprintf(stderr, "%s: %s\n", k_cmd, error.c_str());
      return 1;
    }
    name = benchmark;
  } else {
    if (!pick_repo_points(repo, points, seed, ctx.tasks, &error)) {
      std::fprintf(stderr, "%s: %s\n", k_cmd, error.c_str());
      return 1;
    }
    name = "repo " + repo;
  }
  if (oracle) return run_oracle(ctx.tasks, name, triggers, json, show);

  std::string network = "no test programs run";
  const bool runs_tests = std::any_of(ctx.tasks.begin(), ctx.tasks.end(), [](const eval_task& t) { return !t.test.empty(); });
  if (runs_tests) {
    ctx.limits.python = find_python();
    if (ctx.limits.python.empty()) {
      std::fprintf(stderr, "%s: pass@1 runs each program with python3, and none was found on PATH\n", k_cmd);
      return 1;
    }
    sandbox_network(&network);
    if (!json) std::fprintf(stderr, "%s: %s\n", k_cmd, network.c_str());
  }
  if (!repo.empty()) {
    // The workspace index the editor builds for this folder (with the default privacy.exclude list).
    index::workspace_options wo;
    wo.idle_priority = false;
    wo.debounce = std::chrono::milliseconds(0);
    wo.cache_dir = "";
    ctx.workspace = std::make_shared<index::workspace_index>(wo);
    const std::string root = fs::absolute(repo).lexically_normal().string();
    auto privacy = std::make_shared<const server::privacy_filter>(server::privacy_settings{}, std::vector<std::string>{root},
                                                                  std::getenv("HOME") ? std::getenv("HOME") : "");
    ctx.workspace->set_exclude([privacy](const std::string& path, std::string_view language) {
      return !privacy->why_private_path(path, language).empty();
    });
    ctx.workspace->set_roots({root});
    if (!ctx.workspace->wait_idle(std::chrono::minutes(5))) {
      std::fprintf(stderr, "%s: indexing %s did not finish within 5 minutes\n", k_cmd, repo.c_str());
      return 1;
    }
  }

  std::vector<run_config> configs;
  if (compare.empty()) {
    configs.push_back({model.empty() ? "bundled" : fs::path(model).filename().string(), model, settings});
  } else {
    for (size_t i = 0; i < 2; ++i) {
      const std::string& c = compare[i];
      const std::string label = i == 0 ? "A" : "B";
      if (!c.empty() && c[0] == '{') configs.push_back({label, model, c});
      else configs.push_back({label, c, settings});
    }
  }
  std::vector<eval_run> runs(configs.size());
  for (size_t i = 0; i < configs.size(); ++i)
    if (!run_one(configs[i], ctx, runs[i])) return 1;

  const boost::json::object doc = runs_to_json(name, runs, network, records);
  if (json) {
    std::printf("%s\n", boost::json::serialize(doc).c_str());
  } else {
    std::printf("%s: %zu tasks\n", name.c_str(), ctx.tasks.size());
    for (const eval_run& r : runs)
      std::printf("%s: %s%s%s\n", r.label.c_str(), r.model.c_str(), r.settings.empty() ? "" : ", settings ",
                  r.settings.c_str());
    std::printf("%s", format_table(runs).c_str());
  }
  if (!html.empty()) {
    std::string herr;
    const std::string page = server::report::render_eval_html(doc, &herr);
    std::ofstream o(html, std::ios::binary | std::ios::trunc);
    o << page;
    o.close();
    if (page.empty() || !o) {
      std::fprintf(stderr, "%s: cannot write %s%s\n", k_cmd, html.c_str(), herr.empty() ? "" : (": " + herr).c_str());
      return 1;
    }
    if (!json) std::fprintf(stderr, "%s: wrote %s\n", k_cmd, html.c_str());
  }
  if (calibrate) {
    const eval_run& r = runs.front();
    if (std::find(triggers.begin(), triggers.end(), false) == triggers.end()) {
      std::fprintf(stderr, "%s: --calibrate needs automatic triggers (--trigger automatic or both)\n", k_cmd);
      return 1;
    }
    const gate_calibration c = calibrate_gate(r.records);
    if (!c.ok) {
      std::fprintf(stderr, "%s: not calibrated: %s\n", k_cmd, c.why.c_str());
      return 1;
    }
    std::string werr;
    if (!server::completion::write_gate_file(r.model_path, gate_file_json(c, r.model_path, name,
                                                                          static_cast<int>(ctx.tasks.size())),
                                             &werr)) {
      std::fprintf(stderr, "%s: cannot write the gate file: %s\n", k_cmd, werr.c_str());
      return 1;
    }
    std::fprintf(json ? stderr : stdout,
                 "calibrated gate %.3f written to %s: keeps %d of %d good automatic suggestions (%s), drops %d of "
                 "the %d others\n",
                 c.threshold, server::completion::gate_file_path(r.model_path).c_str(), c.good_kept, c.good,
                 c.basis.c_str(), c.bad_dropped, c.bad);
  }
  return 0;
}

}  // namespace qf::cli

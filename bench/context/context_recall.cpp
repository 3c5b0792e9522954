// Context recall: how often the prompt a completion gets holds the definition
// of the symbol being completed, when that symbol is defined in another file
// of the same project.
//
// Points come from corpus.h (ground truth read from the sources, independent
// of any index). For each point the prompt is built by the pipeline's
// explain() (the completion pipeline with the model's tokenizer; nothing is
// evaluated) with the other files of the point's directory as open documents
// (`--open` of them, drawn at random per point: the files a user has opened
// recently), and the benchmark reports per corpus and configuration: the
// share of points whose prompt holds the definition's signature line outside
// the current file's own text, the share whose definition file was among the
// open documents, the mean prompt tokens, and the time to build the prompt.
//
// Configurations differ in what the request carries besides the open files;
// a configuration with a definition_source (the workspace index) sets
// completion_request::definitions.
//
// The token budgets are the default settings. The bundled model's own context
// is 512 tokens, which would scale them down (fit_to_context); by default the
// model's context is reported as unknown so that the defaults apply as with a
// real code model, and --native-context keeps the model's own.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_stats.h"
#include "bench/context/corpus.h"
#include "indexing/workspace_index.h"
#include "server/completion/decode/engine_backend.h"
#include "server/completion/pipeline/pipeline.h"

namespace {

using namespace qf::server;
using namespace qf::server::completion;
namespace fs = std::filesystem;
using qf::bench::quantile;

// The engine's backend with its training context replaced (0: unknown, so the
// settings' contextTokens decides the budgets). Everything else is forwarded.
class context_override final : public lm_backend {
 public:
  context_override(std::unique_ptr<lm_backend> inner, int64_t n_ctx) : inner_(std::move(inner)), n_ctx_(n_ctx) {}
  const lm_vocab& vocab() const override { return inner_->vocab(); }
  std::unique_ptr<lm_sequence> new_sequence(int64_t n_ctx) override { return inner_->new_sequence(n_ctx); }
  size_t kv_bytes_per_token() const override { return inner_->kv_bytes_per_token(); }
  int64_t n_ctx_train() const override { return n_ctx_; }
  std::string describe() const override { return inner_->describe(); }

 private:
  std::unique_ptr<lm_backend> inner_;
  int64_t n_ctx_;
};

struct configuration {
  std::string name;
  std::shared_ptr<const qf::index::definition_source> definitions;  // null: none
};

struct options {
  std::string model = std::string(QUICKFILL_SOURCE_DIR) + "/models/quickfill-tiny-code.gguf";
  std::vector<std::string> python = {"/usr/lib/python3/dist-packages/pip", "/usr/lib/python3/dist-packages/pygments",
                                     "/usr/lib/python3/dist-packages/setuptools"};
  std::vector<std::string> c = {std::string(QUICKFILL_SOURCE_DIR) +
                                "/indexing/grammars/node_modules/tree-sitter/vendor/tree-sitter/lib/src"};
  int points = 300;
  int open = 3;
  unsigned seed = 1;
  bool native_context = false;
  int show = 0;  // print this many points of each corpus
};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

const char* k_usage =
    "usage: context_recall [--model PATH] [--python DIR,...] [--c DIR,...] [--points N] [--open N] [--seed S]\n"
    "                      [--native-context] [--show N]\n"
    "  --python DIR,...   Python package directories (each one package's top folder); '' for none\n"
    "  --c DIR,...        folders of C sources of one project; '' for none\n"
    "  --points N         points per corpus, drawn at random from all found (default 300)\n"
    "  --open N           other files of the point's directory open as documents (default 3)\n"
    "  --native-context   fit the budgets to the model's own context (512 for the bundled model)\n"
    "  --show N           print the first N points of each corpus (file:line:col, symbol, definition)\n";

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--model" && value(v)) o.model = v;
    else if (a == "--python" && value(v)) o.python = split_commas(v);
    else if (a == "--c" && value(v)) o.c = split_commas(v);
    else if (a == "--points" && value(v)) o.points = std::stoi(v);
    else if (a == "--open" && value(v)) o.open = std::stoi(v);
    else if (a == "--seed" && value(v)) o.seed = static_cast<unsigned>(std::stoul(v));
    else if (a == "--native-context") o.native_context = true;
    else if (a == "--show" && value(v)) o.show = std::stoi(v);
    else return false;
  }
  return o.points > 0 && o.open >= 0;
}

struct result {
  int points = 0, recalled = 0, def_file_open = 0;
  double tokens = 0;
  std::vector<double> ms;
};

result run(pipeline& p, const qf::bench::corpus& c, const std::vector<qf::bench::completion_point>& points,
           const configuration& cfg, const options& o) {
  std::map<std::string, const qf::bench::source_file*> by_path;
  std::map<std::string, std::vector<const qf::bench::source_file*>> by_dir;
  for (const auto& f : c.files) {
    by_path[f.path] = &f;
    by_dir[fs::path(f.path).parent_path().string()].push_back(&f);
  }
  result r;
  for (size_t k = 0; k < points.size(); ++k) {
    const qf::bench::completion_point& pt = points[k];
    const qf::bench::source_file& f = *by_path.at(pt.file);
    completion_request req;
    req.uri = "file://" + f.path;
    req.version = 1;
    req.text = f.text;  // a copy: the pipeline may keep its text
    req.cursor = text_pos{pt.line, pt.byte_col};
    req.explicit_trigger = true;
    req.definitions = cfg.definitions;
    // The open documents: other files of the directory, drawn per point.
    std::vector<const qf::bench::source_file*> others;
    for (const auto* g : by_dir[fs::path(f.path).parent_path().string()])
      if (g != &f) others.push_back(g);
    std::mt19937 rng(o.seed * 7919u + static_cast<unsigned>(k));
    std::shuffle(others.begin(), others.end(), rng);
    bool def_open = false;
    for (int i = 0; i < o.open && i < static_cast<int>(others.size()); ++i) {
      req.context_docs.push_back({"file://" + others[i]->path, others[i]->text});
      def_open = def_open || others[i]->path == pt.def_file;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::optional<prompt_explanation> e = p.explain(req);
    const auto t1 = std::chrono::steady_clock::now();
    if (!e) continue;
    ++r.points;
    r.def_file_open += def_open;
    r.tokens += static_cast<double>(e->tokens);
    r.ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    bool found = false;
    for (const prompt_part& part : e->parts)
      if (part.origin != req.uri && part.text.find(pt.signature) != std::string::npos) found = true;
    r.recalled += found;
    if (static_cast<int>(k) < o.show)
      std::printf("  %s:%lld:%lld %s -> %s: %s [%s%s]\n", pt.file.c_str(), static_cast<long long>(pt.line + 1),
                  static_cast<long long>(pt.byte_col + 1), pt.symbol.c_str(), pt.def_file.c_str(), pt.signature.c_str(),
                  found ? "in prompt" : "not in prompt", def_open ? ", file open" : "");
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(k_usage, stdout);
      return 0;
    }
  if (!parse(argc, argv, o)) {
    std::fputs(k_usage, stderr);
    return 2;
  }
  spdlog::set_level(spdlog::level::warn);
  std::string err;
  engine_options eo;
  eo.device = "cpu";
  eo.threads = 1;
  std::unique_ptr<lm_backend> backend = load_engine_backend(o.model, eo, &err);
  if (!backend) {
    std::fprintf(stderr, "context_recall: cannot load %s: %s\n", o.model.c_str(), err.c_str());
    return 1;
  }
  const int64_t native = backend->n_ctx_train();
  if (!o.native_context) backend = std::make_unique<context_override>(std::move(backend), 0);
  pipeline p(std::move(backend), completion_settings{});
  const completion_settings& s = p.settings();
  std::printf("model: %s (%s), FIM format %s; budgets prefix %d, suffix %d, extra %d tokens (%s)\n", o.model.c_str(),
              p.describe().c_str(), p.format().family.c_str(), s.prefix_tokens, s.suffix_tokens, s.extra_tokens,
              o.native_context ? ("fitted to the model's context of " + std::to_string(native)).c_str()
                               : "the defaults");
  std::printf("open documents per point: %d other files of the point's directory, drawn at random (seed %u)\n\n",
              o.open, o.seed);

  // Configurations, per corpus: the open files alone, then the same with the
  // workspace index of the corpus's roots (req.definitions, as the server
  // sets it), indexed completely before the points run.
  std::vector<qf::bench::corpus> corpora;
  std::vector<std::vector<std::string>> roots;
  if (!o.python.empty()) {
    corpora.push_back(qf::bench::python_corpus("python", o.python));
    roots.push_back(o.python);
  }
  if (!o.c.empty()) {
    corpora.push_back(qf::bench::c_corpus("c", o.c));
    roots.push_back(o.c);
  }

  std::printf("| corpus | configuration | points (found) | files | definition in prompt | definition's file open | "
              "mean prompt tokens | prompt build p50 / p90 ms |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (size_t ci = 0; ci < corpora.size(); ++ci) {
    const qf::bench::corpus& c = corpora[ci];
    qf::index::workspace_options wo;
    wo.cache_dir = "";  // measure, never touch the user's cache
    wo.idle_priority = false;
    auto index = std::make_shared<qf::index::workspace_index>(wo);
    index->set_roots(roots[ci]);
    index->wait_idle(std::chrono::minutes(10));
    const std::vector<configuration> configs = {{"open files", nullptr}, {"open files + workspace index", index}};
    std::vector<qf::bench::completion_point> pts = c.points;
    std::mt19937 rng(o.seed);
    std::shuffle(pts.begin(), pts.end(), rng);
    if (static_cast<int>(pts.size()) > o.points) pts.resize(static_cast<size_t>(o.points));
    for (const configuration& cfg : configs) {
      const result r = run(p, c, pts, cfg, o);
      const double n = r.points > 0 ? r.points : 1;
      std::printf("| %s | %s | %d (%zu) | %zu | %.1f%% | %.1f%% | %.0f | %.2f / %.2f |\n", c.name.c_str(),
                  cfg.name.c_str(), r.points, c.points.size(), c.files.size(), 100.0 * r.recalled / n,
                  100.0 * r.def_file_open / n, r.tokens / n, quantile(r.ms, 0.5), quantile(r.ms, 0.9));
    }
  }
  return 0;
}

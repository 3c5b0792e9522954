// One eval task through the real provider (see the header).
#include "server/cli/eval_runner.h"

#include <chrono>

#include "indexing/document.h"
#include "indexing/syntax_check.h"
#include "indexing/syntax_index.h"
#include "indexing/syntax_language.h"
#include "text/position.h"
#include "server/cli/eval_score.h"

namespace qf::cli {
namespace {

using clock = std::chrono::steady_clock;

size_t offset_of(const text::line_table& lines, const server::text_pos& p) {
  const size_t line = std::min(static_cast<size_t>(std::max<int64_t>(p.line, 0)), lines.line_count() - 1);
  return lines.line_start(line) + static_cast<size_t>(std::max<int64_t>(p.byte_col, 0));
}

}  // namespace

eval_record eval_one(server::completion_provider& provider, index::syntax_index& syntax,
                     const std::shared_ptr<const index::definition_source>& definitions, const eval_task& task,
                     bool explicit_trigger, const eval_request_options& opts, const sandbox_limits& limits) {
  eval_record rec;
  rec.task = &task;
  rec.explicit_trigger = explicit_trigger;
  const std::string doc_text = task.prompt + task.suffix;
  const text::line_table lines(doc_text);
  const hole_position hole = hole_of(task);
  const index::syntax_language* lang = index::find_syntax_language(task.language, task.uri);
  auto doc = std::make_shared<const index::document>(task.uri, task.language, 1, doc_text);
  syntax.opened(doc);
  syntax.wait_idle();

  server::completion_request req;
  req.uri = task.uri;
  req.version = 1;
  req.language_id = task.language;
  req.text = doc_text;
  req.cursor = server::text_pos{hole.line, hole.col};
  req.explicit_trigger = explicit_trigger;
  req.inline_request = true;
  req.definitions = definitions;
  req.syntax = syntax.latest(task.uri);
  const int deadline_ms = explicit_trigger ? opts.explicit_deadline_ms : opts.auto_deadline_ms;
  server::completion_result res;
  for (rec.tries = 1;; ++rec.tries) {
    req.received = clock::now();
    req.deadline = req.received + std::chrono::milliseconds(deadline_ms);
    res = provider.complete(req, cancel_token{});
    if (!res.incomplete || !res.items.empty() || rec.tries >= opts.max_tries) break;
    // What the worker does while the editor waits for the next keystroke.
    while (provider.background_step(cancel_token{})) {
    }
  }
  provider.document_closed(req.cache_key());
  syntax.closed(task.uri);

  rec.latency_ms = res.metrics.total_ms;
  rec.prompt_tokens = res.metrics.tokens_reused + res.metrics.tokens_evaluated;
  rec.generated_tokens = res.metrics.tokens_generated;
  std::string program = doc_text;  // the document after the suggestion is accepted
  if (!res.items.empty()) {
    const server::completion_candidate& c = res.items.front();
    const size_t b = std::min(offset_of(lines, c.replace_begin), doc_text.size());
    const size_t e = std::min(std::max(offset_of(lines, c.replace_end), b), doc_text.size());
    program = doc_text.substr(0, b) + c.insert_text + doc_text.substr(e);
    if (program.size() >= task.prompt.size() + task.suffix.size() && program.starts_with(task.prompt) &&
        program.ends_with(task.suffix))
      rec.middle = program.substr(task.prompt.size(), program.size() - task.prompt.size() - task.suffix.size());
    else
      rec.middle = c.insert_text;
    rec.score = c.score;
    rec.suggested = !rec.middle.empty();
  }
  const double gate = explicit_trigger ? opts.gate_explicit : opts.gate_auto;
  rec.shown = rec.suggested && (!rec.score || *rec.score >= gate);
  rec.exact = exact_match(rec.middle, task.middle);
  rec.similarity = edit_similarity(rec.middle, task.middle);
  if (!task.test.empty()) {
    const sandbox_result r = run_python_check(program, task.test, task.entry_point, limits);
    rec.executed = true;
    rec.passed = r.passed;
    rec.syntax_ok = r.syntax_ok;
    rec.syntax_checked = true;
    rec.error = r.error;
  } else if (lang) {
    // No test: the filled document has no more syntax errors than the original file.
    const std::string truth = task.prompt + task.middle + task.suffix;
    const auto errors_of = [&](const std::string& text) -> std::optional<size_t> {
      const auto c = index::check_syntax(*lang, text, index::byte_span{task.prompt.size(), task.prompt.size()},
                                         task.prompt.size(), text.size(), std::chrono::milliseconds(500));
      return c ? std::optional<size_t>(c->errors()) : std::nullopt;
    };
    const std::optional<size_t> got = errors_of(program), want = errors_of(truth);
    rec.syntax_checked = got && want;
    rec.syntax_ok = rec.syntax_checked && *got <= *want;
  }
  return rec;
}

}  // namespace qf::cli

// One-off parses for checks on generated code (see syntax_check.h).
#include "indexing/syntax_check.h"

#include <ctime>

namespace qf::index {

std::chrono::microseconds thread_cpu_time() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) +
         std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::nanoseconds(ts.tv_nsec));
}

}  // namespace qf::index

#if QF_HAVE_TREE_SITTER
#include <tree_sitter/api.h>

#include "indexing/syntax_cursor.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace qf::index {
namespace {

std::chrono::microseconds thread_cpu() { return thread_cpu_time(); }

// As in syntax_tree.cpp: the wall clock (cheap) at every callback, the
// thread's CPU clock (a system call) only once the budget could be spent.
struct progress_state {
  std::chrono::microseconds budget;
  std::chrono::microseconds cpu_start;
  std::chrono::steady_clock::time_point next_check;
};

bool on_progress(TSParseState* state) {
  auto* p = static_cast<progress_state*>(state->payload);
  const auto now = std::chrono::steady_clock::now();
  if (now < p->next_check) return false;
  const auto used = thread_cpu() - p->cpu_start;
  if (used >= p->budget) return true;
  p->next_check = now + (p->budget - used);
  return false;
}

struct parser_deleter {
  void operator()(TSParser* p) const { ts_parser_delete(p); }
};

// One parser per thread, switched to the grammar asked for.
TSParser* thread_parser(const syntax_language& language) {
  thread_local std::unique_ptr<TSParser, parser_deleter> parser(ts_parser_new());
  thread_local const TSLanguage* current = nullptr;
  if (current != language.grammar) {
    if (!ts_parser_set_language(parser.get(), language.grammar)) return nullptr;
    current = language.grammar;
  }
  return parser.get();
}

void note_error(std::size_t start, std::size_t end, byte_span span, syntax_check& out) {
  if (end < span.begin) {
    ++out.errors_before;
  } else if (start > span.end) {
    ++out.errors_after;
  } else {
    ++(start >= span.begin && end <= span.end ? out.errors_within : out.errors_at);
    if (start >= span.begin && start < out.first_error_start_within_) {
      out.first_error_start_within_ = start;
      out.first_error_end_within = end;
    }
    out.error_bytes_at += std::max<std::size_t>(end - start, 1);
  }
}

void count_errors(TSNode root, byte_span span, syntax_check& out) {
  if (!ts_node_has_error(root)) return;
  TSTreeCursor c = ts_tree_cursor_new(root);
  for (;;) {
    const TSNode n = ts_tree_cursor_current_node(&c);
    bool descend = ts_node_has_error(n);
    if (ts_node_is_error(n) || ts_node_is_missing(n)) {
      note_error(ts_node_start_byte(n), ts_node_end_byte(n), span, out);
      descend = false;
    }
    if (!cursor_next_preorder(&c, descend)) break;
  }
  ts_tree_cursor_delete(&c);
}

// Walks down from the root towards `cursor`; the first named node that
// started before it, ends between it and `limit` and spans lines is the
// outermost one. A node holding the cursor spans lines exactly when it
// starts at or before the line break before the cursor or ends after the
// one after it.
std::size_t block_end_at(TSNode root, std::string_view text, std::size_t cursor, std::size_t limit) {
  const std::size_t nl_before = text.substr(0, cursor).rfind('\n');
  const std::size_t nl_after = text.find('\n', cursor);
  TSTreeCursor c = ts_tree_cursor_new(root);
  std::size_t found = 0;
  while (ts_tree_cursor_goto_first_child_for_byte(&c, static_cast<uint32_t>(cursor)) >= 0) {
    const TSNode n = ts_tree_cursor_current_node(&c);
    const std::size_t start = ts_node_start_byte(n), end = ts_node_end_byte(n);
    if (start >= cursor || end <= cursor) break;  // the child lies after the cursor
    const bool spans_lines =
        (nl_before != std::string_view::npos && start <= nl_before) || (nl_after != std::string_view::npos && end > nl_after);
    if (ts_node_is_named(n) && !ts_node_is_error(n) && end < limit && spans_lines) {
      found = end;
      break;
    }
  }
  ts_tree_cursor_delete(&c);
  return found;
}

}  // namespace

bool syntax_checks_available() { return true; }

namespace {

// Parses `text` (reusing `old`, already edited, when not null) within `budget`.
TSTree* parse_text(TSParser* parser, const TSTree* old, std::string_view text, std::chrono::microseconds budget) {
  if (text.size() > UINT32_MAX) return nullptr;
  progress_state progress{budget, thread_cpu(), std::chrono::steady_clock::now() + budget};
  TSParseOptions options{};
  options.payload = &progress;
  options.progress_callback = on_progress;
  struct input_state {
    std::string_view text;
  } in{text};
  TSInput input{};
  input.payload = &in;
  input.encoding = TSInputEncodingUTF8;
  input.read = [](void* payload, uint32_t byte, TSPoint, uint32_t* bytes_read) -> const char* {
    const auto* s = static_cast<const input_state*>(payload);
    if (byte >= s->text.size()) {
      *bytes_read = 0;
      return "";
    }
    *bytes_read = static_cast<uint32_t>(s->text.size() - byte);
    return s->text.data() + byte;
  };
  TSTree* tree = ts_parser_parse_with_options(parser, old, input, options);
  if (!tree) ts_parser_reset(parser);
  return tree;
}

syntax_check read_tree(const TSTree* tree, std::string_view text, byte_span span, std::size_t cursor,
                       std::size_t limit) {
  syntax_check out;
  const TSNode root = ts_tree_root_node(tree);
  count_errors(root, span, out);
  out.block_end = block_end_at(root, text, cursor, limit);
  return out;
}

// The point after `text`, starting from `p`.
TSPoint advance(TSPoint p, std::string_view text) {
  for (char c : text) {
    if (c == '\n') {
      ++p.row;
      p.column = 0;
    } else {
      ++p.column;
    }
  }
  return p;
}

}  // namespace

std::optional<syntax_check> check_syntax(const syntax_language& language, std::string_view text, byte_span span,
                                         std::size_t cursor, std::size_t limit, std::chrono::microseconds budget) {
  TSParser* parser = thread_parser(language);
  if (!parser) return std::nullopt;
  TSTree* tree = parse_text(parser, nullptr, text, budget);
  if (!tree) return std::nullopt;
  const syntax_check out = read_tree(tree, text, span, cursor, limit);
  ts_tree_delete(tree);
  return out;
}

struct syntax_probe::impl {
  const syntax_language* language;
  std::string before, after, text;
  TSTree* base = nullptr;
  TSPoint cursor_point{};
};

syntax_probe::syntax_probe(const syntax_language& language, std::string_view before, std::string_view after)
    : impl_(new impl{&language, std::string(before), std::string(after), {}, nullptr, {}}) {
  impl_->cursor_point = advance(TSPoint{0, 0}, before);
}

syntax_probe::~syntax_probe() {
  if (impl_->base) ts_tree_delete(impl_->base);
  delete impl_;
}

std::optional<syntax_check> syntax_probe::base(byte_span span, std::chrono::microseconds budget) {
  TSParser* parser = thread_parser(*impl_->language);
  if (!parser) return std::nullopt;
  impl_->text = impl_->before + impl_->after;
  if (impl_->base) ts_tree_delete(impl_->base);
  impl_->base = parse_text(parser, nullptr, impl_->text, budget);
  if (!impl_->base) return std::nullopt;
  const std::size_t cursor = impl_->before.size();
  return read_tree(impl_->base, impl_->text, span, cursor, cursor);
}

std::optional<syntax_check> syntax_probe::check(std::string_view insert, byte_span span, std::size_t limit,
                                                std::chrono::microseconds budget) {
  TSParser* parser = thread_parser(*impl_->language);
  if (!parser || !impl_->base) return std::nullopt;
  const std::size_t cursor = impl_->before.size();
  impl_->text.assign(impl_->before);
  impl_->text.append(insert);
  impl_->text.append(impl_->after);
  TSTree* old = ts_tree_copy(impl_->base);
  const TSInputEdit edit{static_cast<uint32_t>(cursor), static_cast<uint32_t>(cursor),
                         static_cast<uint32_t>(cursor + insert.size()), impl_->cursor_point, impl_->cursor_point,
                         advance(impl_->cursor_point, insert)};
  ts_tree_edit(old, &edit);
  TSTree* tree = parse_text(parser, old, impl_->text, budget);
  ts_tree_delete(old);
  if (!tree) return std::nullopt;
  const syntax_check out = read_tree(tree, impl_->text, span, cursor, limit);
  ts_tree_delete(tree);
  return out;
}

}  // namespace qf::index

#else  // no tree-sitter in this build: nothing can be parsed

namespace qf::index {

bool syntax_checks_available() { return false; }

std::optional<syntax_check> check_syntax(const syntax_language&, std::string_view, byte_span, std::size_t,
                                         std::size_t, std::chrono::microseconds) {
  return std::nullopt;
}

struct syntax_probe::impl {};
syntax_probe::syntax_probe(const syntax_language&, std::string_view, std::string_view) : impl_(nullptr) {}
syntax_probe::~syntax_probe() = default;
std::optional<syntax_check> syntax_probe::base(byte_span, std::chrono::microseconds) { return std::nullopt; }
std::optional<syntax_check> syntax_probe::check(std::string_view, byte_span, std::size_t, std::chrono::microseconds) {
  return std::nullopt;
}

}  // namespace qf::index
#endif

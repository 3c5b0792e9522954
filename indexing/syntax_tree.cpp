// Syntax trees and incremental reparsing (see syntax_tree.h).
#if QF_HAVE_TREE_SITTER
#include "indexing/syntax_tree.h"

#include <tree_sitter/api.h>

#include <ctime>
#include <stdexcept>

namespace qf::index {

namespace {

TSPoint to_ts(text_point p) { return TSPoint{p.row, p.column}; }

struct input_state {
  std::string_view text;
};

const char* read_text(void* payload, uint32_t byte_index, TSPoint, uint32_t* bytes_read) {
  const auto* in = static_cast<const input_state*>(payload);
  if (byte_index >= in->text.size()) {
    *bytes_read = 0;
    return "";
  }
  *bytes_read = static_cast<uint32_t>(in->text.size() - byte_index);
  return in->text.data() + byte_index;
}

// CPU time of the calling thread.
std::chrono::microseconds thread_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::duration_cast<std::chrono::microseconds>(
                                               std::chrono::nanoseconds(ts.tv_nsec));
}

// The budget counts the parsing thread's CPU time, so a busy machine does not
// make a document look too slow to parse. The wall clock (cheap) is checked
// at every callback; the thread's CPU clock (a system call) only once the
// wall clock says the budget could be spent.
struct progress_state {
  std::chrono::microseconds budget;
  std::chrono::microseconds cpu_start;
  std::chrono::steady_clock::time_point next_check;
  const std::atomic<bool>* cancel;
  bool timed_out = false;
  bool cancelled = false;
};

bool on_progress(TSParseState* state) {
  auto* p = static_cast<progress_state*>(state->payload);
  if (p->cancel && p->cancel->load(std::memory_order_relaxed)) return p->cancelled = true;
  const auto now = std::chrono::steady_clock::now();
  if (now < p->next_check) return false;
  const auto used = thread_cpu() - p->cpu_start;
  if (used >= p->budget) return p->timed_out = true;
  p->next_check = now + (p->budget - used);
  return false;
}

}  // namespace

syntax_tree::syntax_tree(TSTree* tree, std::shared_ptr<const document> doc, const syntax_language* language)
    : tree_(tree), doc_(std::move(doc)), language_(language) {}

syntax_tree::~syntax_tree() { ts_tree_delete(tree_); }

bool syntax_tree::has_error() const { return ts_node_has_error(ts_tree_root_node(tree_)); }

const char* parse_status_name(parse_status s) {
  switch (s) {
    case parse_status::parsed: return "parsed";
    case parse_status::timed_out: return "timed out";
    case parse_status::cancelled: return "cancelled";
  }
  return "?";
}

syntax_document::syntax_document(const syntax_language& language) : language_(&language), parser_(ts_parser_new()) {
  if (!ts_parser_set_language(parser_, language.grammar)) {
    ts_parser_delete(parser_);
    throw std::runtime_error("tree-sitter grammar " + std::string(language.name) +
                             " has a language version this runtime does not accept");
  }
}

syntax_document::~syntax_document() {
  if (tree_) ts_tree_delete(tree_);
  ts_parser_delete(parser_);
}

void syntax_document::reset(std::shared_ptr<const document> doc) {
  drop_tree();
  doc_ = std::move(doc);
  newlines_ = newline_index(doc_->text);
}

void syntax_document::drop_tree() {
  if (tree_) ts_tree_delete(tree_);
  tree_ = nullptr;
  dirty_ = true;
}

void syntax_document::edit(const byte_edit& e, std::shared_ptr<const document> after) {
  const text_point start = newlines_.point_at(e.start);
  const text_point old_end = newlines_.point_at(e.old_end);
  newlines_.apply(e, after->text);
  const text_point new_end = newlines_.point_at(e.new_end);
  if (tree_) {
    const TSInputEdit ts_edit{static_cast<uint32_t>(e.start),   static_cast<uint32_t>(e.old_end),
                              static_cast<uint32_t>(e.new_end), to_ts(start),
                              to_ts(old_end),                   to_ts(new_end)};
    ts_tree_edit(tree_, &ts_edit);
  }
  doc_ = std::move(after);
  dirty_ = true;
}

parse_status syntax_document::parse(const parse_limits& limits) {
  if (!dirty_ && tree_) return parse_status::parsed;
  input_state in{doc_->text};
  progress_state progress{limits.budget, thread_cpu(), std::chrono::steady_clock::now() + limits.budget,
                          limits.cancel};
  TSInput input{};
  input.payload = &in;
  input.read = read_text;
  input.encoding = TSInputEncodingUTF8;
  TSParseOptions options{};
  options.payload = &progress;
  options.progress_callback = on_progress;
  TSTree* next = ts_parser_parse_with_options(parser_, tree_, input, options);
  if (!next) {
    // Not resumable with another text: start the next attempt afresh, from
    // the edited old tree (still a correct base).
    ts_parser_reset(parser_);
    return progress.cancelled ? parse_status::cancelled : parse_status::timed_out;
  }
  if (tree_) ts_tree_delete(tree_);
  tree_ = next;
  dirty_ = false;
  return parse_status::parsed;
}

std::shared_ptr<const syntax_tree> syntax_document::snapshot() const {
  if (!up_to_date()) return nullptr;
  return std::make_shared<const syntax_tree>(ts_tree_copy(tree_), doc_, language_);
}

}  // namespace qf::index
#endif  // QF_HAVE_TREE_SITTER

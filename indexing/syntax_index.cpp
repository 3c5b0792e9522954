// Background syntax trees for open documents (see syntax_index.h).
#include "indexing/syntax_index.h"

#include <spdlog/spdlog.h>

#include "indexing/syntax_language.h"
#include "indexing/syntax_tree.h"

namespace qf::index {

const char* syntax_state_name(syntax_state s) {
  switch (s) {
    case syntax_state::none: return "none";
    case syntax_state::pending: return "pending";
    case syntax_state::parsed: return "parsed";
    case syntax_state::gave_up: return "gave up";
  }
  return "?";
}

bool syntax_index::available() { return !syntax_languages().empty(); }

namespace {
template <typename Event>
Event make_event(typename Event::kind_t kind, const std::string& uri, std::uint64_t generation, std::uint64_t seq) {
  Event e{};
  e.kind = kind;
  e.uri = uri;
  e.generation = generation;
  e.seq = seq;
  return e;
}
}  // namespace

#if QF_HAVE_TREE_SITTER
struct syntax_index::doc_state {
  std::uint64_t generation = 0;
  std::uint64_t seq = 0;  // last event applied
  std::unique_ptr<syntax_document> syntax;
  snapshot text;                  // newest text (also while given up)
  std::size_t gave_up_bytes = 0;  // nonzero: given up at this size
  int slow_reparses = 0;          // incremental parses over the budget in a row
  bool needs_parse = false;
};

namespace {
// A first parse over the budget gives up at once; incremental ones after this many in a row.
constexpr int max_slow_reparses = 3;
}  // namespace
#else
struct syntax_index::doc_state {};
#endif

syntax_index::syntax_index(syntax_index_options opts) : opts_(opts) {}

syntax_index::~syntax_index() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cancel_.store(true);
  wake_.notify_all();
  idle_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void syntax_index::push(event e) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_) return;
  // A change queued behind another event of the same open merges into it, so
  // a slow parse never piles up one text snapshot per keystroke: the merged
  // change spans both (diff edit), a merged open simply opens the newer text.
  if (e.kind == event::change) {
    for (auto it = queue_.rbegin(); it != queue_.rend(); ++it) {
      if (it->uri != e.uri) continue;
      if (it->generation == e.generation && it->kind != event::close) {
        it->after = std::move(e.after);
        it->seq = e.seq;
        it->hint.reset();
        return;
      }
      break;
    }
  }
  queue_.push_back(std::move(e));
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  wake_.notify_one();
}

void syntax_index::opened(snapshot doc) {
  const syntax_language* lang = find_syntax_language(doc->language_id, doc->uri);
  std::lock_guard<std::mutex> lock(pub_mu_);
  auto it = published_.find(doc->uri);
  if (!lang) {
    // Re-opened under a language without a grammar: forget the old tree.
    if (it != published_.end()) {
      auto e = make_event<event>(event::close, doc->uri, it->second.generation, 0);
      published_.erase(it);
      push(std::move(e));
    }
    return;
  }
  published& p = published_[doc->uri];
  p = published{++generations_, 1, 0, nullptr, syntax_state::pending};
  auto e = make_event<event>(event::open, doc->uri, p.generation, 1);
  e.after = std::move(doc);
  push(std::move(e));
}

void syntax_index::changed(snapshot before, snapshot after, const std::vector<text_change>& changes,
                           text::position_encoding enc) {
  if (!before || !after) return;
  std::lock_guard<std::mutex> lock(pub_mu_);
  auto it = published_.find(after->uri);
  if (it == published_.end()) return;
  auto e = make_event<event>(event::change, after->uri, it->second.generation, ++it->second.queued_seq);
  e.before = std::move(before);
  e.after = std::move(after);
  e.hint = hint_of(changes);
  e.enc = enc;
  push(std::move(e));
}

void syntax_index::closed(const std::string& uri) {
  std::lock_guard<std::mutex> lock(pub_mu_);
  auto it = published_.find(uri);
  if (it == published_.end()) return;
  auto e = make_event<event>(event::close, uri, it->second.generation, 0);
  published_.erase(it);
  push(std::move(e));
}

std::shared_ptr<const syntax_tree> syntax_index::latest(const std::string& uri) const {
  std::lock_guard<std::mutex> lock(pub_mu_);
  auto it = published_.find(uri);
  return it == published_.end() ? nullptr : it->second.tree;
}

syntax_state syntax_index::state(const std::string& uri) const {
  std::lock_guard<std::mutex> lock(pub_mu_);
  auto it = published_.find(uri);
  if (it == published_.end()) return syntax_state::none;
  if (it->second.published_seq != it->second.queued_seq) return syntax_state::pending;
  return it->second.state;
}

void syntax_index::wait_idle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [&] { return stop_ || (queue_.empty() && !busy_); });
}

void syntax_index::run() {
  for (;;) {
    std::deque<event> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      batch.swap(queue_);
      busy_ = true;
    }
    for (const event& e : batch) apply(e);
    batch.clear();  // release the snapshots before parsing
    parse_pending();
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
    }
    idle_.notify_all();
  }
}

void syntax_index::publish(const std::string& uri, const doc_state& d, std::shared_ptr<const syntax_tree> tree,
                           syntax_state st) {
#if QF_HAVE_TREE_SITTER
  std::lock_guard<std::mutex> lock(pub_mu_);
  auto it = published_.find(uri);
  if (it == published_.end() || it->second.generation != d.generation) return;  // closed or re-opened since
  it->second.tree = std::move(tree);
  it->second.state = st;
  it->second.published_seq = d.seq;
#endif
}

#if QF_HAVE_TREE_SITTER
void syntax_index::apply(const event& e) {
  if (e.kind == event::close) {
    auto it = docs_.find(e.uri);
    if (it != docs_.end() && it->second->generation == e.generation) docs_.erase(it);
    return;
  }
  if (e.kind == event::open) {
    auto d = std::make_unique<doc_state>();
    d->generation = e.generation;
    d->seq = e.seq;
    d->text = e.after;
    const syntax_language* lang = find_syntax_language(e.after->language_id, e.uri);
    try {
      if (lang) d->syntax = std::make_unique<syntax_document>(*lang);
    } catch (const std::exception& ex) {
      spdlog::warn("syntax: {}", ex.what());
    }
    if (d->syntax && e.after->text.size() <= opts_.max_bytes) {
      d->syntax->reset(e.after);
      d->needs_parse = true;
    } else {
      d->gave_up_bytes = std::max<std::size_t>(e.after->text.size(), 1);
      publish(e.uri, *d, nullptr, d->syntax ? syntax_state::gave_up : syntax_state::none);
    }
    docs_[e.uri] = std::move(d);
    return;
  }
  auto it = docs_.find(e.uri);
  if (it == docs_.end() || it->second->generation != e.generation) return;
  doc_state& d = *it->second;
  d.seq = e.seq;
  d.text = e.after;
  if (!d.syntax) {
    publish(e.uri, d, nullptr, syntax_state::none);
    return;
  }
  const std::size_t size = e.after->text.size();
  if (d.gave_up_bytes) {
    // Retry only once the text is much smaller than when it was given up.
    if (size <= d.gave_up_bytes / 2 && size <= opts_.max_bytes) {
      d.gave_up_bytes = 0;
      d.syntax->reset(e.after);
      d.needs_parse = true;
    } else {
      publish(e.uri, d, nullptr, syntax_state::gave_up);
    }
    return;
  }
  if (size > opts_.max_bytes) {
    spdlog::info("syntax: {} is {} bytes, over the {} byte limit; no syntax tree", e.uri, size, opts_.max_bytes);
    d.gave_up_bytes = size;
    d.syntax->drop_tree();
    d.needs_parse = false;
    publish(e.uri, d, nullptr, syntax_state::gave_up);
    return;
  }
  if (d.syntax->current() != e.before) {
    d.syntax->reset(e.after);  // not the text the tree knows: start over
  } else {
    d.syntax->edit(edit_between(*e.before, *e.after, e.hint, e.enc), e.after);
  }
  d.needs_parse = true;
}

void syntax_index::parse_pending() {
  const parse_limits limits{std::chrono::duration_cast<std::chrono::microseconds>(opts_.parse_budget), &cancel_};
  for (auto& [uri, d] : docs_) {
    if (!d->needs_parse) continue;
    const auto started = std::chrono::steady_clock::now();
    const parse_status st = d->syntax->parse(limits);
    if (st == parse_status::cancelled) return;  // shutting down
    d->needs_parse = false;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    if (st == parse_status::parsed) {
      spdlog::debug("syntax: {} v{} parsed in {:.2f} ms", uri, d->text->version, ms);
      publish(uri, *d, d->syntax->snapshot(), syntax_state::parsed);
      d->slow_reparses = 0;
    } else if (d->syntax->has_tree() && ++d->slow_reparses < max_slow_reparses) {
      // A reparse that ran long (typing an unclosed bracket can make the rest
      // of the file reparse): the last published tree stays, and the next
      // edit tries again from the edited tree.
      spdlog::debug("syntax: reparsing {} took over {} ms ({} in a row)", uri, opts_.parse_budget.count(),
                    d->slow_reparses);
    } else {
      spdlog::warn("syntax: parsing {} ({} bytes) took over {} ms; no syntax tree until it is reopened or shrinks",
                   uri, d->text->text.size(), opts_.parse_budget.count());
      d->gave_up_bytes = std::max<std::size_t>(d->text->text.size(), 1);
      d->slow_reparses = 0;
      d->syntax->drop_tree();
      publish(uri, *d, nullptr, syntax_state::gave_up);
    }
  }
}
#else
void syntax_index::apply(const event&) {}
void syntax_index::parse_pending() {}
#endif

}  // namespace qf::index

// Syntax trees of documents (tree-sitter), one incrementally updated tree per
// document.
//
// syntax_tree is an immutable parse result: a tree together with the exact
// document snapshot it was parsed from, so node byte offsets always index
// that snapshot's text. Any number of threads may read one at once; nothing
// edits it (the parser edits its own copy).
//
// syntax_document is the mutable side, used by one thread at a time: it holds
// the current text, a newline index for points and the parser's tree; edit()
// moves the tree along with each byte_edit (ts_tree_edit) and parse() reparses
// reusing it (ts_parser_parse with the old tree). A parse runs within a
// budget of the parsing thread's CPU time and can be cancelled; one that does not finish leaves no new tree,
// and the edited old one stays the base of the next attempt.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "indexing/document.h"
#include "indexing/syntax_edit.h"
#include "indexing/syntax_language.h"

struct TSTree;
struct TSParser;

namespace qf::index {

class syntax_tree {
 public:
  // Takes ownership of `tree`.
  syntax_tree(TSTree* tree, std::shared_ptr<const document> doc, const syntax_language* language);
  ~syntax_tree();
  syntax_tree(const syntax_tree&) = delete;
  syntax_tree& operator=(const syntax_tree&) = delete;

  const TSTree* tree() const { return tree_; }
  const document& doc() const { return *doc_; }
  const std::shared_ptr<const document>& doc_ptr() const { return doc_; }
  const syntax_language& language() const { return *language_; }
  std::int64_t version() const { return doc_->version; }
  bool has_error() const;

 private:
  TSTree* tree_;
  std::shared_ptr<const document> doc_;
  const syntax_language* language_;
};

enum class parse_status { parsed, timed_out, cancelled };
const char* parse_status_name(parse_status s);

struct parse_limits {
  std::chrono::microseconds budget{std::chrono::seconds(1)};  // the thread's CPU time, per parse() call
  const std::atomic<bool>* cancel = nullptr;                   // stops the parse when it becomes true
};

class syntax_document {
 public:
  explicit syntax_document(const syntax_language& language);
  ~syntax_document();
  syntax_document(const syntax_document&) = delete;
  syntax_document& operator=(const syntax_document&) = delete;

  // Starts over on `doc` (no tree until the next parse()).
  void reset(std::shared_ptr<const document> doc);
  // `after` is the current text with `e` applied: edits the tree (when there
  // is one) and the newline index. Several edits may precede one parse().
  void edit(const byte_edit& e, std::shared_ptr<const document> after);
  // Parses the current text (incrementally when there is a tree).
  parse_status parse(const parse_limits& limits);
  // Drops the tree (the next parse() starts from scratch).
  void drop_tree();

  bool has_tree() const { return tree_ != nullptr; }
  bool up_to_date() const { return tree_ != nullptr && !dirty_; }
  const std::shared_ptr<const document>& current() const { return doc_; }
  const syntax_language& language() const { return *language_; }
  // A reader's copy of the tree; null unless up_to_date().
  std::shared_ptr<const syntax_tree> snapshot() const;
  // The parser's own tree (valid until the next edit or parse).
  const TSTree* tree() const { return tree_; }

 private:
  const syntax_language* language_;
  TSParser* parser_;
  TSTree* tree_ = nullptr;
  std::shared_ptr<const document> doc_;
  newline_index newlines_;
  bool dirty_ = true;  // the text changed since tree_ was parsed
};

}  // namespace qf::index

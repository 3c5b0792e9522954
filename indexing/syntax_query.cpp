// Iterative tree walks (see syntax_query.h).
#if QF_HAVE_TREE_SITTER
#include "indexing/syntax_query.h"

#include <tree_sitter/api.h>

#include <deque>

#include "indexing/syntax_tree.h"

namespace qf::index {

namespace {

syntax_node node_of(TSNode n) {
  return syntax_node{ts_node_type(n), ts_node_start_byte(n), ts_node_end_byte(n), ts_node_is_named(n),
                     ts_node_is_error(n), ts_node_is_missing(n)};
}

// Pre-order walk: visit(node, field, depth) on entry, leave(depth) on exit.
template <typename Visit, typename Leave>
void walk(const TSTree* tree, Visit&& visit, Leave&& leave) {
  TSTreeCursor c = ts_tree_cursor_new(ts_tree_root_node(tree));
  std::size_t depth = 0;
  for (;;) {
    if (!visit(ts_tree_cursor_current_node(&c), ts_tree_cursor_current_field_name(&c), depth)) break;
    if (ts_tree_cursor_goto_first_child(&c)) {
      ++depth;
      continue;
    }
    leave(depth);
    bool done = false;
    while (!ts_tree_cursor_goto_next_sibling(&c)) {
      if (!ts_tree_cursor_goto_parent(&c)) {
        done = true;
        break;
      }
      --depth;
      leave(depth);
    }
    if (done) break;
  }
  ts_tree_cursor_delete(&c);
}

}  // namespace

std::string describe_tree(const TSTree* tree, std::size_t max_bytes) {
  std::string out;
  bool truncated = false;
  walk(
      tree,
      [&](TSNode n, const char* field, std::size_t depth) {
        if (out.size() >= max_bytes) {
          truncated = true;
          return false;
        }
        if (depth > 0) out += ' ';
        if (field) {
          out += field;
          out += ": ";
        }
        out += '(';
        if (ts_node_is_missing(n)) out += "MISSING ";
        if (ts_node_is_named(n)) {
          out += ts_node_type(n);
        } else {
          out += '"';
          out += ts_node_type(n);
          out += '"';
        }
        const TSPoint s = ts_node_start_point(n), e = ts_node_end_point(n);
        out += " [" + std::to_string(ts_node_start_byte(n)) + "-" + std::to_string(ts_node_end_byte(n)) + " " +
               std::to_string(s.row) + ":" + std::to_string(s.column) + "-" + std::to_string(e.row) + ":" +
               std::to_string(e.column) + "]";
        return true;
      },
      [&](std::size_t) { out += ')'; });
  if (truncated) out += "...";
  return out;
}

tree_shape measure_tree(const TSTree* tree) {
  tree_shape shape;
  walk(
      tree,
      [&](TSNode n, const char*, std::size_t depth) {
        ++shape.nodes;
        if (depth > shape.max_depth) shape.max_depth = depth;
        if (ts_node_is_error(n) || ts_node_is_missing(n)) ++shape.errors;
        return true;
      },
      [](std::size_t) {});
  return shape;
}

std::vector<syntax_node> enclosing_nodes(const syntax_tree& tree, std::size_t offset, std::size_t max_nodes) {
  std::deque<syntax_node> inner;  // the innermost `max_nodes` seen so far, outermost first
  if (max_nodes == 0) return {};
  TSTreeCursor c = ts_tree_cursor_new(ts_tree_root_node(tree.tree()));
  const uint32_t target = static_cast<uint32_t>(offset);
  for (;;) {
    TSNode n = ts_tree_cursor_current_node(&c);
    if (ts_node_is_named(n)) {
      inner.push_back(node_of(n));
      if (inner.size() > max_nodes) inner.pop_front();
    }
    // The first child that ends after `target`; it holds it when it starts at or before it.
    if (ts_tree_cursor_goto_first_child_for_byte(&c, target) < 0) break;
    TSNode child = ts_tree_cursor_current_node(&c);
    if (ts_node_start_byte(child) > target) break;
  }
  ts_tree_cursor_delete(&c);
  return std::vector<syntax_node>(inner.rbegin(), inner.rend());
}

}  // namespace qf::index
#else
// Built without tree-sitter: no syntax tree is ever made, so no node encloses anything.
#include "indexing/syntax_query.h"

namespace qf::index {
std::vector<syntax_node> enclosing_nodes(const syntax_tree&, std::size_t, std::size_t) { return {}; }
}  // namespace qf::index
#endif  // QF_HAVE_TREE_SITTER

// Structural checks of trees for the syntax tests, by cursor walks (no
// per-node parent lookups, which tree-sitter answers by descending from the
// root).
//
// check_tree: every node's points agree with its byte offsets (rows counted at
// "\n", columns in bytes, as tree-sitter counts them), children lie inside
// their parent in order, and the root spans the text. Returns the first
// problem, or "".
// same_tree: two trees have the same nodes (type, field, named/missing, byte
// and point ranges) in the same shape.
#pragma once

#include <tree_sitter/api.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "indexing/syntax_edit.h"

namespace qf::test {

inline std::string check_tree(const TSTree* tree, std::string_view text) {
  const index::newline_index lines(text);
  auto point_ok = [&](uint32_t byte, TSPoint p) {
    const index::text_point want = lines.point_at(byte);
    return want.row == p.row && want.column == p.column;
  };
  TSNode root = ts_tree_root_node(tree);
  if (ts_node_end_byte(root) != text.size())
    return "root ends at " + std::to_string(ts_node_end_byte(root)) + ", text has " + std::to_string(text.size());
  struct frame {
    uint32_t start, end, prev_end;
  };
  std::vector<frame> stack;  // enclosing nodes
  TSTreeCursor c = ts_tree_cursor_new(root);
  std::string problem;
  for (;;) {
    TSNode n = ts_tree_cursor_current_node(&c);
    const uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
    if (s > e || e > text.size() || !point_ok(s, ts_node_start_point(n)) || !point_ok(e, ts_node_end_point(n))) {
      problem = std::string("node ") + ts_node_type(n) + " [" + std::to_string(s) + "-" + std::to_string(e) + " " +
                std::to_string(ts_node_start_point(n).row) + ":" + std::to_string(ts_node_start_point(n).column) +
                "-" + std::to_string(ts_node_end_point(n).row) + ":" + std::to_string(ts_node_end_point(n).column) +
                "] disagrees with the text";
      break;
    }
    if (!stack.empty()) {
      frame& parent = stack.back();
      if (s < parent.start || e > parent.end) {
        problem = std::string("node ") + ts_node_type(n) + " lies outside its parent";
        break;
      }
      if (s < parent.prev_end) {
        problem = std::string("node ") + ts_node_type(n) + " overlaps its previous sibling";
        break;
      }
      parent.prev_end = e;
    }
    if (ts_tree_cursor_goto_first_child(&c)) {
      stack.push_back({s, e, s});
      continue;
    }
    bool done = false;
    while (!ts_tree_cursor_goto_next_sibling(&c)) {
      if (!ts_tree_cursor_goto_parent(&c)) {
        done = true;
        break;
      }
      stack.pop_back();
    }
    if (done) break;
  }
  ts_tree_cursor_delete(&c);
  return problem;
}

inline bool same_tree(const TSTree* a, const TSTree* b) {
  TSTreeCursor ca = ts_tree_cursor_new(ts_tree_root_node(a));
  TSTreeCursor cb = ts_tree_cursor_new(ts_tree_root_node(b));
  bool same = true;
  for (;;) {
    TSNode na = ts_tree_cursor_current_node(&ca), nb = ts_tree_cursor_current_node(&cb);
    const char* fa = ts_tree_cursor_current_field_name(&ca);
    const char* fb = ts_tree_cursor_current_field_name(&cb);
    const TSPoint sa = ts_node_start_point(na), sb = ts_node_start_point(nb);
    const TSPoint ea = ts_node_end_point(na), eb = ts_node_end_point(nb);
    if (ts_node_symbol(na) != ts_node_symbol(nb) || ts_node_is_missing(na) != ts_node_is_missing(nb) ||
        ts_node_start_byte(na) != ts_node_start_byte(nb) || ts_node_end_byte(na) != ts_node_end_byte(nb) ||
        sa.row != sb.row || sa.column != sb.column || ea.row != eb.row || ea.column != eb.column ||
        (fa == nullptr) != (fb == nullptr) || (fa && std::strcmp(fa, fb) != 0)) {
      same = false;
      break;
    }
    const bool da = ts_tree_cursor_goto_first_child(&ca), db = ts_tree_cursor_goto_first_child(&cb);
    if (da != db) {
      same = false;
      break;
    }
    if (da) continue;
    bool done = false;
    for (;;) {
      const bool sa2 = ts_tree_cursor_goto_next_sibling(&ca), sb2 = ts_tree_cursor_goto_next_sibling(&cb);
      if (sa2 != sb2) {
        same = false;
        done = true;
        break;
      }
      if (sa2) break;
      const bool pa = ts_tree_cursor_goto_parent(&ca), pb = ts_tree_cursor_goto_parent(&cb);
      if (!pa || !pb) {
        done = true;
        break;
      }
    }
    if (done) break;
  }
  ts_tree_cursor_delete(&ca);
  ts_tree_cursor_delete(&cb);
  return same;
}

}  // namespace qf::test

// One step of a pre-order walk with a tree-sitter cursor, for the .cpp files
// of indexing/ that read trees through the tree-sitter API (the walks keep
// their own cursor instead of recursing, see syntax_query.h).
#pragma once

#include <tree_sitter/api.h>

namespace qf::index {

// Moves `c` to the next node in pre-order: into the current node's first
// child when `descend`, else to the next sibling of it or of the nearest
// ancestor that has one. False when the walk is over (back at the cursor's
// root).
inline bool cursor_next_preorder(TSTreeCursor* c, bool descend) {
  if (descend && ts_tree_cursor_goto_first_child(c)) return true;
  while (!ts_tree_cursor_goto_next_sibling(c))
    if (!ts_tree_cursor_goto_parent(c)) return false;
  return true;
}

}  // namespace qf::index

// Reading syntax trees without recursion: every walk here keeps its own
// explicit cursor, so 100,000 nested brackets cost memory proportional to
// the depth, never native stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "indexing/syntax_edit.h"

struct TSTree;

namespace qf::index {

class syntax_tree;

struct syntax_node {
  std::string_view type;  // grammar node type ("function_definition", "ERROR", ...); static storage
  std::size_t start_byte = 0;
  std::size_t end_byte = 0;
  bool named = false;
  bool error = false;    // an ERROR node
  bool missing = false;  // inserted by error recovery
};

// Every node in pre-order as "(type [start-end] r:c-r:c field: (child ...))",
// anonymous nodes quoted; two trees print the same exactly when they have the
// same shape, types, fields and ranges. Stops after `max_bytes` of output
// (the string then ends in "...").
std::string describe_tree(const TSTree* tree, std::size_t max_bytes = SIZE_MAX);

// The named nodes whose range holds `offset` (start <= offset < end, or the
// root), innermost first, at most `max_nodes` of them.
std::vector<syntax_node> enclosing_nodes(const syntax_tree& tree, std::size_t offset, std::size_t max_nodes);

struct tree_shape {
  std::size_t nodes = 0;
  std::size_t max_depth = 0;
  std::size_t errors = 0;  // ERROR and missing nodes
};
tree_shape measure_tree(const TSTree* tree);

}  // namespace qf::index

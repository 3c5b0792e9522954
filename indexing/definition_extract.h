// Definitions and imports of one source file, read from its syntax tree.
//
// One walk over the tree with a tree cursor (no recursion, so 100,000 nested
// brackets cost heap, not stack) that does not enter function bodies: what a
// file defines for other files is its top-level functions, types, constants
// and the members of its classes / impls / namespaces. Per language:
//
//   python      def, class (methods, class-level fields), module-level
//               assignments (UPPER_CASE: constant); import, from-import
//   javascript, function / class / method / field, interface, type alias,
//   typescript, enum, namespace, top-level const/let/var (function values are
//   tsx         functions); import, export-from, top-level require()
//   c, cpp      function definitions and prototypes, struct / union / class /
//               enum (+ enumerators), typedef, using-alias, namespace, macros;
//               #include
//   go          func, method (container: the receiver type), type, const, var;
//               import
//   rust        fn, struct, enum, union, trait, impl (container), type, const,
//               static, mod, macro_rules; use, `mod x;`
//   java        class, interface, enum, record, annotation type, method,
//               constructor, field (static final: constant); import
//
// A signature is the text from the definition's start to its body (bounded,
// cut at a UTF-8 boundary, invalid bytes repaired); doc is the first line of
// a Python docstring or of the comment block right above (//, ///, /** */, #).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "indexing/definitions.h"

struct TSTree;

namespace qf::index {

struct syntax_language;

// Bump when what extraction produces changes: the on-disk cache keys on it.
inline constexpr std::uint32_t extractor_version = 1;

struct extract_limits {
  std::size_t max_definitions = 2000;  // per file
  std::size_t max_imports = 500;
  std::size_t max_signature_bytes = 300;
  std::size_t max_doc_bytes = 200;
};

struct file_definitions {
  std::vector<definition> definitions;  // in file order; uri left empty
  std::vector<import_ref> imports;
};

// From a parsed tree of `text` in `language`.
file_definitions extract_definitions(const TSTree* tree, const syntax_language& language, std::string_view text,
                                     const extract_limits& limits = {});

}  // namespace qf::index

// Definitions: what the workspace index extracts from source files and what
// the prompt's context layer looks up by name.
//
// A definition is one named thing a file defines (function, method, class,
// type, constant, ...) with its header ("signature": the text from the start
// of the definition to the start of its body, bounded) and the first line of
// its doc comment. The index also records each file's imports so that the
// context layer can prefer definitions from files the current file imports.
//
// definition_source is the read side: thread-safe, never blocks on indexing
// (a lookup sees whatever the index holds at that moment).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qf::index {

enum class definition_kind { function, method, class_type, type, constant, variable, field, module };
const char* definition_kind_name(definition_kind k);

struct definition {
  std::string name;       // the identifier as written
  definition_kind kind = definition_kind::function;
  std::string uri;        // file:// URI of the defining file
  std::uint32_t line = 0; // 0-based line where the definition starts
  std::string signature;  // its header, e.g. "def add(a: int, b: int) -> int:" (bounded, may span lines)
  std::string doc;        // first line of its doc comment; may be empty
  std::string container;  // enclosing class / namespace / impl name; may be empty
};

struct import_ref {
  std::string module;              // as written: "os.path", "./util", "fmt", "foo/bar.h"
  std::vector<std::string> names;  // imported names where the language lists them
  std::uint32_t line = 0;
};

class definition_source {
 public:
  virtual ~definition_source() = default;
  // Definitions named exactly `name`, at most `max`, best first (a stable order).
  virtual std::vector<definition> lookup(std::string_view name, std::size_t max) const = 0;
  // The import statements of the file `uri` (empty when unknown).
  virtual std::vector<import_ref> imports_of(std::string_view uri) const = 0;
  // The file a module name of `from_uri`'s imports resolves to, or "" (best effort).
  virtual std::string resolve_import(std::string_view from_uri, const import_ref& imp) const = 0;
};

}  // namespace qf::index

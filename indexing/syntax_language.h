// Which tree-sitter grammar parses a document.
//
// A document's LSP languageId picks its grammar ("python", "typescriptreact",
// ...); when the client names no language (an empty id or "plaintext"), the
// file extension of the URI or path decides. The table
// holds only grammars compiled into this build (indexing/grammars/grammars.cmake):
// without them every lookup returns null and documents stay plain text.
#pragma once

#include <string_view>
#include <vector>

struct TSLanguage;

namespace qf::index {

struct syntax_language {
  std::string_view name;     // grammar name: "python", "tsx", "cpp", ...
  const TSLanguage* grammar;  // never null
};

// The grammar for a document, or null (no grammar: plain text).
const syntax_language* find_syntax_language(std::string_view language_id, std::string_view uri);
// By grammar name ("python", "cpp", ...), or null when not built.
const syntax_language* syntax_language_named(std::string_view name);
// Every grammar of this build.
std::vector<const syntax_language*> syntax_languages();

}  // namespace qf::index

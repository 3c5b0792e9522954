// The grammar table (see syntax_language.h). QF_GRAMMAR_<name> is defined for
// each grammar that CMake compiled.
#include "indexing/syntax_language.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

extern "C" {
#ifdef QF_GRAMMAR_python
const TSLanguage* tree_sitter_python(void);
#endif
#ifdef QF_GRAMMAR_javascript
const TSLanguage* tree_sitter_javascript(void);
#endif
#ifdef QF_GRAMMAR_typescript
const TSLanguage* tree_sitter_typescript(void);
#endif
#ifdef QF_GRAMMAR_tsx
const TSLanguage* tree_sitter_tsx(void);
#endif
#ifdef QF_GRAMMAR_c
const TSLanguage* tree_sitter_c(void);
#endif
#ifdef QF_GRAMMAR_cpp
const TSLanguage* tree_sitter_cpp(void);
#endif
#ifdef QF_GRAMMAR_go
const TSLanguage* tree_sitter_go(void);
#endif
#ifdef QF_GRAMMAR_rust
const TSLanguage* tree_sitter_rust(void);
#endif
#ifdef QF_GRAMMAR_java
const TSLanguage* tree_sitter_java(void);
#endif
}

namespace qf::index {
namespace {

const std::vector<syntax_language>& table() {
  static const std::vector<syntax_language> languages = [] {
    std::vector<syntax_language> v;
#ifdef QF_GRAMMAR_python
    v.push_back({"python", tree_sitter_python()});
#endif
#ifdef QF_GRAMMAR_javascript
    v.push_back({"javascript", tree_sitter_javascript()});
#endif
#ifdef QF_GRAMMAR_typescript
    v.push_back({"typescript", tree_sitter_typescript()});
#endif
#ifdef QF_GRAMMAR_tsx
    v.push_back({"tsx", tree_sitter_tsx()});
#endif
#ifdef QF_GRAMMAR_c
    v.push_back({"c", tree_sitter_c()});
#endif
#ifdef QF_GRAMMAR_cpp
    v.push_back({"cpp", tree_sitter_cpp()});
#endif
#ifdef QF_GRAMMAR_go
    v.push_back({"go", tree_sitter_go()});
#endif
#ifdef QF_GRAMMAR_rust
    v.push_back({"rust", tree_sitter_rust()});
#endif
#ifdef QF_GRAMMAR_java
    v.push_back({"java", tree_sitter_java()});
#endif
    return v;
  }();
  return languages;
}

struct alias {
  std::string_view key;
  std::string_view grammar;
};

// LSP language identifiers (the specification's list plus common editor ids).
constexpr std::array language_ids{
    alias{"python", "python"},         alias{"javascript", "javascript"}, alias{"javascriptreact", "javascript"},
    alias{"typescript", "typescript"}, alias{"typescriptreact", "tsx"},   alias{"c", "c"},
    alias{"cpp", "cpp"},               alias{"cuda-cpp", "cpp"},          alias{"cuda", "cpp"},
    alias{"objective-cpp", "cpp"},     alias{"go", "go"},                 alias{"rust", "rust"},
    alias{"java", "java"},             alias{"c++", "cpp"},               alias{"js", "javascript"},
    alias{"ts", "typescript"},         alias{"golang", "go"},
};

// File extensions (lower case, without the dot). ".h" goes to C++, whose
// grammar also reads most C headers.
constexpr std::array extensions{
    alias{"py", "python"},     alias{"pyi", "python"},    alias{"pyw", "python"},    alias{"js", "javascript"},
    alias{"mjs", "javascript"}, alias{"cjs", "javascript"}, alias{"jsx", "javascript"}, alias{"ts", "typescript"},
    alias{"mts", "typescript"}, alias{"cts", "typescript"}, alias{"tsx", "tsx"},       alias{"c", "c"},
    alias{"h", "cpp"},         alias{"cc", "cpp"},        alias{"cpp", "cpp"},       alias{"cxx", "cpp"},
    alias{"c++", "cpp"},       alias{"hh", "cpp"},        alias{"hpp", "cpp"},       alias{"hxx", "cpp"},
    alias{"h++", "cpp"},       alias{"ipp", "cpp"},       alias{"inl", "cpp"},       alias{"tpp", "cpp"},
    alias{"cu", "cpp"},        alias{"cuh", "cpp"},       alias{"go", "go"},         alias{"rs", "rust"},
    alias{"java", "java"},
};

template <std::size_t N>
std::string_view lookup(const std::array<alias, N>& list, std::string_view key) {
  for (const auto& a : list)
    if (a.key == key) return a.grammar;
  return {};
}

// "file:///a/b.test.tsx?x#y" -> "tsx"
std::string extension_of(std::string_view uri) {
  uri = uri.substr(0, std::min(uri.find('?'), uri.find('#')));
  const std::size_t slash = uri.find_last_of("/\\");
  if (slash != std::string_view::npos) uri.remove_prefix(slash + 1);
  const std::size_t dot = uri.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return {};
  std::string ext(uri.substr(dot + 1));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

}  // namespace

const syntax_language* syntax_language_named(std::string_view name) {
  for (const auto& l : table())
    if (l.name == name) return &l;
  return nullptr;
}

const syntax_language* find_syntax_language(std::string_view language_id, std::string_view uri) {
  std::string id(language_id);
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view grammar = lookup(language_ids, id);
  // The extension decides only when the client named no language: an id such
  // as "markdown" on a "notes.py" URI stays plain text.
  if (grammar.empty() && (id.empty() || id == "plaintext")) grammar = lookup(extensions, extension_of(uri));
  return grammar.empty() ? nullptr : syntax_language_named(grammar);
}

std::vector<const syntax_language*> syntax_languages() {
  std::vector<const syntax_language*> out;
  for (const auto& l : table()) out.push_back(&l);
  return out;
}

}  // namespace qf::index

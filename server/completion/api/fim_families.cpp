// The FIM token sets of the known families (see fim_families.h).
#include "server/completion/api/fim_families.h"

#include <array>

namespace qf::server::completion {

namespace {

// Token texts as the models' vocabularies spell them. DeepSeek-Coder uses
// fullwidth bars and U+2581. CodeGemma spells its FIM tokens as Qwen does but
// has no repo marker and separates files with <|file_separator|>, which also
// ends a completion; it is tried first, and only matches with that token.
// Qwen3's vocabulary carries Qwen2.5-Coder's FIM, repo and file tokens with
// the same texts, so it is that family.
constexpr std::array<fim_family, 5> k_families{{
    {"codegemma", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "", "", "<|file_separator|>",
     "<|file_separator|>", false, fim_order::psm, true},
    {"qwen2.5-coder", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|fim_pad|>", "<|repo_name|>",
     "<|file_sep|>", "<|endoftext|>", false, fim_order::psm, false},
    {"starcoder2", "<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<fim_pad>", "<repo_name>", "<file_sep>",
     "<|endoftext|>", false, fim_order::psm, false},
    {"deepseek-coder", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
     "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "hole\xEF\xBD\x9C>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>", "", "",
     "", "<|EOT|>", false, fim_order::psm, false},
    {"codellama", "<PRE>", "<SUF>", "<MID>", "", "", "", "<EOT>", true, fim_order::spm, false},
}};

constexpr std::array<std::pair<std::string_view, std::string_view>, 3> k_aliases{{
    {"qwen", "qwen2.5-coder"},
    {"starcoder", "starcoder2"},
    {"deepseek", "deepseek-coder"},
}};

}  // namespace

std::span<const fim_family> fim_families() { return k_families; }

std::span<const std::pair<std::string_view, std::string_view>> fim_family_aliases() { return k_aliases; }

const fim_family* find_fim_family(std::string_view name) {
  for (const auto& [alias, family] : k_aliases)
    if (alias == name) name = family;
  for (const fim_family& f : k_families)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> fim_token_spellings(const fim_family& f, std::string_view token) {
  if (token.empty()) return {};
  if (!f.sentencepiece) return {std::string(token)};
  // Built by appending: GCC 12 warns, falsely, about "literal" + std::string (-Wrestrict).
  std::string marked = "\xE2\x96\x81", spaced = " ";
  marked += token;
  spaced += token;
  return {marked, spaced};
}

std::string fim_text_template(const fim_family& f) {
  const std::string gap = f.sentencepiece ? " " : "";
  return std::string(f.pre) + gap + "{prefix}" + gap + std::string(f.suf) + "{suffix}" + gap + std::string(f.mid);
}

}  // namespace qf::server::completion

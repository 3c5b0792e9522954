// The fill-in-the-middle token sets of the known code-model families: one
// table, read by the prompt builder (completion/prompt/fim_format.cpp, which
// looks the texts up in a model's vocabulary) and by the remote sources
// (remote/remote_options.cpp, whose `fimTemplate` formats a text prompt for a
// server that does not know the model's FIM tokens).
//
// Each token set has one name, the family's (shown by `quickfill doctor`, the
// log and quickfill/explainCompletion). Older shorter names that users could
// have written in settings (`fimTemplate`: "qwen", "starcoder", "deepseek")
// stay accepted as aliases (fim_family_aliases).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qf::server::completion {

// Whether the suffix comes before the prefix (SPM, as CodeLlama was also
// trained) or after it (PSM, the common default).
enum class fim_order { psm, spm };

struct fim_family {
  std::string_view name;           // "qwen2.5-coder", "starcoder2", "codegemma", "deepseek-coder", "codellama"
  std::string_view pre, suf, mid;  // the FIM tokens' texts
  std::string_view pad, repo, sep, eot;  // "" : the family has none
  // SentencePiece pieces: the vocabulary spells each token with a leading
  // U+2581 ("\u2581<PRE>"), which also appears decoded as a space; a text
  // prompt puts a space between the tokens and the text.
  bool sentencepiece = false;
  fim_order order = fim_order::psm;  // the order the prompt builder uses
  // The family is told apart from another with the same FIM texts by `sep`
  // (CodeGemma from Qwen): it matches a vocabulary only when that token exists.
  bool sep_required = false;
};

// In detection order (CodeGemma before Qwen, see sep_required).
std::span<const fim_family> fim_families();

// {alias, family name}: the older names accepted in settings.
std::span<const std::pair<std::string_view, std::string_view>> fim_family_aliases();

// The family of a name or an alias; nullptr when neither.
const fim_family* find_fim_family(std::string_view name);

// A token's spellings in a vocabulary: the text itself, or for SentencePiece
// families "\u2581" + text and " " + text.
std::vector<std::string> fim_token_spellings(const fim_family& f, std::string_view token);

// The family's PSM prompt as text, with {prefix} and {suffix}
// ("<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>").
std::string fim_text_template(const fim_family& f);

}  // namespace qf::server::completion

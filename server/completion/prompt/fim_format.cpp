// FIM format detection: GGUF ids first, then per-family token texts.
#include "server/completion/prompt/fim_format.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace qf::server::completion {
namespace {

struct family_tokens {
  const char* name;
  const char* pre;
  const char* suf;
  const char* mid;
  const char* pad;   // may be nullptr
  const char* repo;  // may be nullptr
  const char* sep;   // may be nullptr
  const char* eot;   // may be nullptr
  fim_order order;
  bool sep_required = false;  // the family is told apart from another with the same FIM texts by `sep`
};

// Token texts as the models' vocabularies spell them. DeepSeek-Coder uses
// fullwidth bars and U+2581; CodeLlama's SentencePiece pieces carry a leading
// U+2581 ("▁<PRE>"), which also appears decoded as a space. CodeGemma spells
// its FIM tokens as Qwen does but has no repo marker and separates files with
// <|file_separator|>, which also ends a completion; it is tried first, and
// only matches with that token. Qwen3's vocabulary carries Qwen2.5-Coder's
// FIM, repo and file tokens with the same texts, so it is detected as that
// family.
constexpr std::array<family_tokens, 6> k_families{{
    {"codegemma", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", nullptr, nullptr, "<|file_separator|>",
     "<|file_separator|>", fim_order::psm, true},
    {"qwen2.5-coder", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|fim_pad|>", "<|repo_name|>",
     "<|file_sep|>", "<|endoftext|>", fim_order::psm},
    {"starcoder2", "<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<fim_pad>", "<repo_name>", "<file_sep>",
     "<|endoftext|>", fim_order::psm},
    {"deepseek-coder", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
     "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "hole\xEF\xBD\x9C>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
     nullptr, nullptr, nullptr, "<|EOT|>", fim_order::psm},
    {"codellama", "\xE2\x96\x81<PRE>", "\xE2\x96\x81<SUF>", "\xE2\x96\x81<MID>", nullptr, nullptr, nullptr,
     "\xE2\x96\x81<EOT>", fim_order::spm},
    {"codellama", " <PRE>", " <SUF>", " <MID>", nullptr, nullptr, nullptr, " <EOT>", fim_order::spm},
}};

int32_t find(const lm_vocab& v, const char* text) { return text ? v.find_token(text) : -1; }

void add_stop(std::vector<int32_t>& stops, int32_t id) {
  if (id >= 0 && std::find(stops.begin(), stops.end(), id) == stops.end()) stops.push_back(id);
}

}  // namespace

fim_format detect_fim_format(const lm_vocab& vocab, bool prefer_spm) {
  const lm_specials& sp = vocab.specials();
  fim_format f;
  f.bos = vocab.add_bos() ? sp.bos : -1;
  f.pre = sp.fim_pre;
  f.suf = sp.fim_suf;
  f.mid = sp.fim_mid;
  f.pad = sp.fim_pad;
  f.repo = sp.fim_rep;
  f.file_sep = sp.fim_sep;
  int32_t eot = sp.eot;
  f.family = "gguf";
  const family_tokens* matched = nullptr;
  for (const family_tokens& fam : k_families) {
    int32_t pre = find(vocab, fam.pre), suf = find(vocab, fam.suf), mid = find(vocab, fam.mid);
    if (pre < 0 || suf < 0 || mid < 0) continue;
    if (fam.sep_required && find(vocab, fam.sep) < 0) continue;
    matched = &fam;
    // The metadata wins where it has ids; the family fills the gaps.
    if (f.pre < 0 || f.suf < 0 || f.mid < 0) {
      f.pre = pre;
      f.suf = suf;
      f.mid = mid;
      f.family = fam.name;
    } else if (f.pre == pre && f.suf == suf && f.mid == mid) {
      f.family = fam.name;
    }
    if (f.pad < 0) f.pad = find(vocab, fam.pad);
    if (f.repo < 0) f.repo = find(vocab, fam.repo);
    if (f.file_sep < 0) f.file_sep = find(vocab, fam.sep);
    if (eot < 0) eot = find(vocab, fam.eot);
    break;
  }
  f.has_fim = f.pre >= 0 && f.suf >= 0 && f.mid >= 0;
  if (!f.has_fim) f.family = "none";
  if (f.has_fim) {
    f.order = matched ? matched->order : fim_order::psm;
    if (prefer_spm) f.order = fim_order::spm;
  }
  if (!f.repo_level()) f.repo = f.file_sep = -1;
  for (int32_t id : {sp.eos, eot, sp.eot, sp.pad, f.pad, f.pre, f.suf, f.mid, f.repo, f.file_sep}) add_stop(f.stop_ids, id);
  return f;
}

}  // namespace qf::server::completion

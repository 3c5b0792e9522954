// FIM format detection: GGUF ids first, then the families' token texts (fim_families.h).
#include "server/completion/prompt/fim_format.h"

#include <algorithm>
#include <string_view>

namespace qf::server::completion {
namespace {

// The id of `token` of family `f` in the vocabulary (any of its spellings), or -1.
int32_t find(const lm_vocab& v, const fim_family& f, std::string_view token) {
  for (const std::string& text : fim_token_spellings(f, token))
    if (int32_t id = v.find_token(text); id >= 0) return id;
  return -1;
}

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
  const fim_family* matched = nullptr;
  for (const fim_family& fam : fim_families()) {
    int32_t pre = find(vocab, fam, fam.pre), suf = find(vocab, fam, fam.suf), mid = find(vocab, fam, fam.mid);
    if (pre < 0 || suf < 0 || mid < 0) continue;
    if (fam.sep_required && find(vocab, fam, fam.sep) < 0) continue;
    matched = &fam;
    // The metadata wins where it has ids; the family fills the gaps.
    if (f.pre < 0 || f.suf < 0 || f.mid < 0) {
      f.pre = pre;
      f.suf = suf;
      f.mid = mid;
      f.family = std::string(fam.name);
    } else if (f.pre == pre && f.suf == suf && f.mid == mid) {
      f.family = std::string(fam.name);
    }
    if (f.pad < 0) f.pad = find(vocab, fam, fam.pad);
    if (f.repo < 0) f.repo = find(vocab, fam, fam.repo);
    if (f.file_sep < 0) f.file_sep = find(vocab, fam, fam.sep);
    if (eot < 0) eot = find(vocab, fam, fam.eot);
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

// Tokenizer construction (tables derived from the vocabulary, special-token discovery
// by metadata and by per-family spellings) and encode(): special-token split, then the
// BPE or SentencePiece path on each plain fragment.
#include "inference/tokenizer/tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>

#include <spdlog/spdlog.h>

#include "inference/tokenizer/tokenizer_impl.h"
#include "inference/tokenizer/unicode.h"
#include "text/utf8.h"

namespace qf::infer {

namespace {

const std::string k_empty;
constexpr std::string_view k_spm_space = "\xE2\x96\x81";  // U+2581 ▁

std::string spm_unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, 3) == k_spm_space) {
      out.push_back(' ');
      i += 3;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// "<0xNN>" -> NN, or -1.
int parse_byte_token(std::string_view s) {
  if (s.size() != 6 || s.substr(0, 3) != "<0x" || s[5] != '>') return -1;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  int hi = hex(s[3]), lo = hex(s[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

// Per-family spellings, tried in order when metadata does not name the token.
const std::initializer_list<std::string_view> k_fim_pre = {"<|fim_prefix|>", "<fim_prefix>", "<fim-prefix>",
                                                           "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
                                                           "\xE2\x96\x81<PRE>", "<PRE>"};
const std::initializer_list<std::string_view> k_fim_suf = {"<|fim_suffix|>", "<fim_suffix>", "<fim-suffix>",
                                                           "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "hole\xEF\xBD\x9C>",
                                                           "\xE2\x96\x81<SUF>", "<SUF>"};
const std::initializer_list<std::string_view> k_fim_mid = {"<|fim_middle|>", "<fim_middle>", "<fim-middle>",
                                                           "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
                                                           "\xE2\x96\x81<MID>", "<MID>"};
const std::initializer_list<std::string_view> k_fim_pad = {"<|fim_pad|>", "<fim_pad>", "<fim-pad>"};
const std::initializer_list<std::string_view> k_fim_rep = {"<|repo_name|>", "<|fim_repo|>", "<repo_name>",
                                                           "<reponame>", "<fim-repo>"};
const std::initializer_list<std::string_view> k_fim_sep = {"<|file_sep|>", "<file_sep>", "<fim-sep>"};
const std::initializer_list<std::string_view> k_eot = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
                                                       "<|EOT|>", "\xE2\x96\x81<EOT>", "<EOT>", "<|endoftext|>",
                                                       "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81"
                                                       "sentence\xEF\xBD\x9C>"};
// Spellings that end generation wherever they appear.
const std::initializer_list<std::string_view> k_eog = {"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end|>",
                                                       "<end_of_turn>", "<|endoftext|>", "<|EOT|>",
                                                       "\xE2\x96\x81<EOT>", "<EOT>"};

}  // namespace

void string_index::build(const std::vector<std::string>& keys) {
  size_t cap = 16;
  while (cap < keys.size() * 2) cap <<= 1;
  slots_.assign(cap, slot{});
  mask_ = cap - 1;
  for (size_t id = 0; id < keys.size(); ++id) {
    uint64_t h = hash(keys[id]);
    auto tag = static_cast<uint32_t>(h >> 32);
    size_t i = static_cast<size_t>(h) & mask_;
    // A repeated spelling maps to its last id, as llama.cpp's loader does.
    while (slots_[i].id >= 0) {
      if (slots_[i].tag == tag && keys[static_cast<size_t>(slots_[i].id)] == keys[id]) break;
      i = (i + 1) & mask_;
    }
    slots_[i] = slot{tag, static_cast<int32_t>(id)};
  }
}

void tokenizer::impl::build() {
  const size_t n = tokens.size();
  if (!types.empty() && types.size() != n) types.resize(n, token_type::normal);
  if (types.empty()) types.assign(n, token_type::normal);
  if (!scores.empty() && scores.size() != n) scores.resize(n, 0.0f);

  token_index.build(tokens);

  // Pieces: the bytes each token stands for.
  pieces.assign(n, std::string());
  for (size_t i = 0; i < n; ++i) {
    const std::string& t = tokens[i];
    switch (types[i]) {
      case token_type::control:
      case token_type::unknown:
      case token_type::unused:
        pieces[i] = t;
        break;
      case token_type::byte:
        if (int b = parse_byte_token(t); b >= 0) {
          pieces[i] = std::string(1, static_cast<char>(b));
          break;
        }
        [[fallthrough]];
      default:
        if (spm) {
          pieces[i] = spm_unescape(t);
        } else if (types[i] == token_type::user_defined) {
          pieces[i] = t;
        } else {
          std::string out;
          size_t pos = 0;
          while (pos < t.size()) {
            size_t before = pos;
            uint32_t cp = text::decode_utf8(t, pos);
            int b = unicode::utf8_cpt_to_byte(cp);
            if (b >= 0) out.push_back(static_cast<char>(b));
            else out.append(t, before, pos - before);
          }
          pieces[i] = std::move(out);
        }
    }
  }

  // Special-token spellings matched in raw text.
  specials.clear();
  special_lengths.clear();
  special_first.fill(false);
  for (size_t i = 0; i < n; ++i) {
    auto ty = types[i];
    if ((ty == token_type::control || ty == token_type::user_defined || ty == token_type::unknown) &&
        !tokens[i].empty()) {
      specials.emplace(tokens[i], static_cast<int32_t>(i));
      special_lengths.push_back(tokens[i].size());
      special_first[static_cast<uint8_t>(tokens[i][0])] = true;
    }
  }
  std::sort(special_lengths.begin(), special_lengths.end(), std::greater<>());
  special_lengths.erase(std::unique(special_lengths.begin(), special_lengths.end()), special_lengths.end());

  // Byte tables.
  byte_token.fill(-1);
  spm_byte_token.fill(-1);
  for (int b = 0; b < 256; ++b) {
    byte_token[b] = lookup(unicode::byte_to_utf8(static_cast<uint8_t>(b)));
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    spm_byte_token[b] = lookup(buf);
    if (spm_byte_token[b] < 0) spm_byte_token[b] = lookup(std::string(1, static_cast<char>(b)));
  }
}

tokenizer::tokenizer(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
tokenizer::~tokenizer() = default;

std::unique_ptr<tokenizer> tokenizer::from_vocab(vocab_data v) {
  auto p = std::make_unique<impl>();
  if (v.model == "llama") {
    p->spm = true;
  } else if (v.model == "gpt2") {
    p->spm = false;
  } else {
    throw gguf::gguf_error("tokenizer.ggml.model '" + v.model + "' is not supported (supported: llama, gpt2)");
  }
  if (v.tokens.empty()) throw gguf::gguf_error("tokenizer.ggml.tokens is empty");
  const auto n = static_cast<int64_t>(v.tokens.size());
  if (n > INT32_MAX) throw gguf::gguf_error("tokenizer.ggml.tokens has too many entries");
  if (!v.scores.empty() && static_cast<int64_t>(v.scores.size()) != n)
    throw gguf::gguf_error("tokenizer.ggml.scores has " + std::to_string(v.scores.size()) + " entries, expected " +
                           std::to_string(n));
  if (!v.types.empty() && static_cast<int64_t>(v.types.size()) != n)
    throw gguf::gguf_error("tokenizer.ggml.token_type has " + std::to_string(v.types.size()) +
                           " entries, expected " + std::to_string(n));

  p->model = v.model;
  p->pre = v.pre;
  p->tokens = std::move(v.tokens);
  p->scores = std::move(v.scores);
  p->types.reserve(p->tokens.size());
  for (int32_t t : v.types) p->types.push_back(t >= 0 && t <= 6 ? static_cast<token_type>(t) : token_type::normal);
  if (v.types.empty() && p->spm) {
    // No token types stored: recognise SentencePiece's conventional spellings.
    for (const auto& t : p->tokens) {
      if (parse_byte_token(t) >= 0) p->types.push_back(token_type::byte);
      else if (t == "<unk>") p->types.push_back(token_type::unknown);
      else if (t == "<s>" || t == "</s>") p->types.push_back(token_type::control);
      else p->types.push_back(token_type::normal);
    }
  }
  p->build();

  if (!p->spm) {
    bool known = true;
    p->pre_t = pre_type_from_name(v.pre, &known);
    if (!known) spdlog::warn("tokenizer: unknown pre-tokenizer '{}', using the default split rules", v.pre);
    p->ignore_merges = p->pre_t == pre_type::llama3;
    if (v.merges.empty()) throw gguf::gguf_error("tokenizer.ggml.merges is missing or empty (needed by gpt2 model)");
    p->merges.reserve(v.merges.size());
    std::string joined;
    for (size_t r = 0; r < v.merges.size(); ++r) {
      const std::string& m = v.merges[r];
      size_t sp = m.find(' ', 1);
      if (sp == std::string::npos) continue;
      std::string_view l(m.data(), sp), rt(m.data() + sp + 1, m.size() - sp - 1);
      int32_t li = p->lookup(l), ri = p->lookup(rt);
      if (li < 0 || ri < 0) continue;
      joined.assign(l).append(rt);
      int32_t res = p->lookup(joined);
      if (res < 0) continue;
      p->merges.insert(li, ri, static_cast<int32_t>(r), res);
    }
  }

  // Special ids: metadata first, then family spellings.
  special_tokens s = v.special;
  auto valid = [&](int32_t id) { return id >= 0 && id < n ? id : -1; };
  s.bos = valid(s.bos);
  s.eos = valid(s.eos);
  s.eot = valid(s.eot);
  s.pad = valid(s.pad);
  s.fim_pre = valid(s.fim_pre);
  s.fim_suf = valid(s.fim_suf);
  s.fim_mid = valid(s.fim_mid);
  s.fim_pad = valid(s.fim_pad);
  s.fim_rep = valid(s.fim_rep);
  s.fim_sep = valid(s.fim_sep);
  auto first_of = [&](std::initializer_list<std::string_view> names) {
    for (auto nm : names)
      if (int32_t id = p->lookup(nm); id >= 0) return id;
    return int32_t{-1};
  };
  p->unk = valid(v.unk);
  if (p->spm) {
    if (s.bos < 0) s.bos = p->lookup("<s>");
    if (s.eos < 0) s.eos = p->lookup("</s>");
    if (p->unk < 0) p->unk = p->lookup("<unk>");
  }
  for (size_t i = 0; i < p->types.size() && p->unk < 0; ++i)
    if (p->types[i] == token_type::unknown) p->unk = static_cast<int32_t>(i);
  if (s.eot < 0) s.eot = first_of(k_eot);
  if (s.fim_pre < 0) s.fim_pre = first_of(k_fim_pre);
  if (s.fim_suf < 0) s.fim_suf = first_of(k_fim_suf);
  if (s.fim_mid < 0) s.fim_mid = first_of(k_fim_mid);
  if (s.fim_pad < 0) s.fim_pad = first_of(k_fim_pad);
  if (s.fim_rep < 0) s.fim_rep = first_of(k_fim_rep);
  if (s.fim_sep < 0) s.fim_sep = first_of(k_fim_sep);
  p->sp = s;

  p->eog.assign(p->tokens.size(), 0);
  for (int32_t id : {s.eos, s.eot, s.fim_pad, s.fim_rep, s.fim_sep})
    if (id >= 0) p->eog[id] = 1;
  for (auto nm : k_eog)
    if (int32_t id = p->lookup(nm); id >= 0) p->eog[id] = 1;

  // Llama 3 vocabularies add BOS by default; SentencePiece ones too.
  bool bos_default = p->spm || p->pre_t == pre_type::llama3;
  p->add_bos = v.add_bos.value_or(bos_default);
  p->add_eos = v.add_eos.value_or(false);
  p->add_space_prefix = v.add_space_prefix.value_or(p->spm);
  return std::unique_ptr<tokenizer>(new tokenizer(std::move(p)));
}

std::vector<int32_t> tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  return encode_impl(text, add_bos, parse_special, true);
}

std::vector<int32_t> tokenizer::encode_continuation(std::string_view text, bool parse_special) const {
  return encode_impl(text, false, parse_special, false);
}

std::vector<int32_t> tokenizer::encode_impl(std::string_view text, bool add_bos, bool parse_special,
                                            bool dummy_prefix) const {
  const impl& m = *impl_;
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  if (add_bos && m.sp.bos >= 0) out.push_back(m.sp.bos);

  bool prev_special = dummy_prefix;  // SentencePiece: a dummy space before the first fragment
  std::string spm_buf;
  auto raw = [&](std::string_view frag) {
    if (frag.empty()) return;
    if (m.spm) {
      spm_buf.clear();
      if (m.add_space_prefix && prev_special) spm_buf.append(k_spm_space);
      for (char ch : frag) {
        if (ch == ' ') spm_buf.append(k_spm_space);
        else spm_buf.push_back(ch);
      }
      m.spm_fragment(spm_buf, out);
    } else {
      m.bpe_fragment(frag, out);
    }
    prev_special = false;
  };

  size_t start = 0;
  if (!m.specials.empty()) {
    for (size_t i = 0; i < text.size();) {
      if (!m.special_first[static_cast<uint8_t>(text[i])]) {
        ++i;
        continue;
      }
      int32_t hit = -1;
      size_t hit_len = 0;
      for (size_t len : m.special_lengths) {
        if (len > text.size() - i) continue;
        auto it = m.specials.find(text.substr(i, len));
        if (it == m.specials.end()) continue;
        token_type ty = m.types[it->second];
        if (!parse_special && ty != token_type::user_defined) continue;
        hit = it->second;
        hit_len = len;
        break;
      }
      if (hit < 0) {
        ++i;
        continue;
      }
      raw(text.substr(start, i - start));
      out.push_back(hit);
      prev_special = true;
      i += hit_len;
      start = i;
    }
  }
  raw(text.substr(start));
  return out;
}

const std::string& tokenizer::piece(int32_t id) const {
  if (id < 0 || id >= n_vocab()) return k_empty;
  return impl_->pieces[id];
}

std::string tokenizer::decode(std::span<const int32_t> ids, bool strip_leading_space) const {
  std::string out;
  for (int32_t id : ids) {
    if (id < 0 || id >= n_vocab() || is_control(id)) continue;
    out += impl_->pieces[id];
  }
  if (strip_leading_space && !out.empty() && out[0] == ' ') out.erase(0, 1);
  return out;
}

bool tokenizer::is_control(int32_t id) const {
  if (id < 0 || id >= n_vocab()) return true;
  token_type t = impl_->types[id];
  return t == token_type::control || t == token_type::unknown || t == token_type::unused;
}

bool tokenizer::is_eog(int32_t id) const { return id >= 0 && id < n_vocab() && impl_->eog[id] != 0; }

token_type tokenizer::type(int32_t id) const {
  return id >= 0 && id < n_vocab() ? impl_->types[id] : token_type::undefined;
}

const std::string& tokenizer::text(int32_t id) const {
  return id >= 0 && id < n_vocab() ? impl_->tokens[id] : k_empty;
}

int32_t tokenizer::find(std::string_view spelling) const { return impl_->lookup(spelling); }
int32_t tokenizer::n_vocab() const { return static_cast<int32_t>(impl_->tokens.size()); }
const special_tokens& tokenizer::special() const { return impl_->sp; }
bool tokenizer::add_bos_default() const { return impl_->add_bos; }
bool tokenizer::add_space_prefix() const { return impl_->add_space_prefix; }
std::string_view tokenizer::model_kind() const { return impl_->model; }
std::string_view tokenizer::pre_kind() const { return impl_->pre; }

}  // namespace qf::infer

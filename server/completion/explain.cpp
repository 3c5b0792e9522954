// pipeline::explain(): the prompt complete() would give the model for a
// request, split into parts (see prompt_explanation in completion_provider.h).
//
// The prompt is built by the same prompt_builder, with the same layout rules,
// on a scratch copy of the document's current layout (the pending re-based
// layout when complete() would adopt it), so a layout that complete() would
// keep is explained as kept -- including an extra-context block made for an
// earlier request. Nothing is evaluated and neither the layouts nor the KV
// slots change; the chunk tokenizer's cache sees the same rows complete()
// would tokenize.
//
// Splitting: special tokens (BOS, FIM markers, repo/file separators) are
// parts of their own and never come out of plain-text tokenization, so they
// delimit the prefix and suffix. The extra-context block is cut per file by
// rebuilding it for the first k context documents (k = 0..n): it grows by one
// file block each time. When the head holds another block than the request's
// documents give (a kept layout), repo-level formats are still cut at their
// file separators and other formats report the block as one part.
#include <algorithm>
#include <string_view>

#include "server/completion/pipeline.h"
#include "server/completion/postprocess.h"
#include "server/completion/text_rows.h"

namespace qf::server::completion {
namespace {

std::string_view basename_of(std::string_view uri) {
  const size_t slash = uri.find_last_of('/');
  return slash == std::string_view::npos ? uri : uri.substr(slash + 1);
}

std::string_view dirname_of(std::string_view uri) {
  const size_t slash = uri.find_last_of('/');
  return slash == std::string_view::npos ? std::string_view() : uri.substr(0, slash);
}

class part_writer {
 public:
  part_writer(const lm_vocab& v, const std::vector<int32_t>& toks, prompt_explanation& out)
      : v_(v), toks_(toks), out_(out) {}
  // Appends tokens [begin, end) as one part (nothing when empty).
  void add(const char* kind, std::string_view origin, size_t begin, size_t end) {
    if (end <= begin) return;
    prompt_part p;
    p.kind = kind;
    p.origin = std::string(origin);
    for (size_t i = begin; i < end; ++i) p.text += v_.piece(toks_[i]);
    p.tokens = static_cast<int64_t>(end - begin);
    out_.text += p.text;
    out_.tokens += p.tokens;
    out_.parts.push_back(std::move(p));
  }

 private:
  const lm_vocab& v_;
  const std::vector<int32_t>& toks_;
  prompt_explanation& out_;
};

}  // namespace

std::optional<prompt_explanation> pipeline::explain(const completion_request& req) {
  // The layout input exactly as run() makes it.
  const cursor_context cx = make_cursor_context(req.text, req.cursor.line, req.cursor.byte_col);
  std::vector<extra_doc> extra;
  for (const auto& d : req.context_docs) extra.push_back(extra_doc{d.uri, d.text});
  layout_input in;
  in.text = req.text;
  in.cursor_line = cx.line;
  in.cursor_col = cx.col;
  in.uri = req.uri;
  in.extra = extra;

  layout scratch;
  if (auto it = docs_.find(req.uri); it != docs_.end()) {
    const doc_state& ds = it->second;
    scratch = ds.pending_ready && builder_.still_valid(in, ds.pending) ? ds.pending : ds.lay;
  }
  const prompt p = builder_.build(in, scratch);
  const std::vector<int32_t>& toks = p.tokens;
  const size_t head_len = static_cast<size_t>(p.head_len);

  prompt_explanation out;
  out.format = fmt_.family;
  part_writer w(backend_->vocab(), toks, out);
  auto is_special = [&](int32_t t) {
    return t == fmt_.bos || t == fmt_.pre || t == fmt_.suf || t == fmt_.mid || t == fmt_.repo || t == fmt_.file_sep;
  };
  auto find_in_head = [&](int32_t id, size_t from) {
    for (size_t i = from; i < head_len; ++i)
      if (toks[i] == id) return i;
    return head_len;
  };

  size_t pos = 0;
  if (fmt_.bos >= 0 && !toks.empty() && toks[0] == fmt_.bos) {
    w.add("special", "", 0, 1);
    pos = 1;
  }

  // Where the extra-context block ends.
  size_t extra_end = pos;
  if (fmt_.has_fim) {
    extra_end = find_in_head(fmt_.order == fim_order::psm ? fmt_.pre : fmt_.suf, pos);
  } else {
    const int64_t before = std::max<int64_t>(0, p.cursor_row - scratch.window_first_line);
    const row_window rows = rows_around(in.text, in.cursor_line, in.cursor_col, before, 0);
    size_t prefix = 0;
    for (int64_t r = scratch.window_first_line; r < scratch.anchor_line; ++r)
      if (rows.contains(r)) prefix += tok_.tokens(rows.row(r)).size();
    extra_end = head_len - std::min(prefix, head_len - pos);
  }

  // The extra-context block, file by file.
  if (extra_end > pos) {
    const std::vector<int32_t> fresh = builder_.extra_block(in);
    const bool same = fresh.size() == extra_end - pos && std::equal(fresh.begin(), fresh.end(), toks.begin() + pos);
    const bool repo = fmt_.has_fim && fmt_.repo_level();
    if (same) {
      // Block sizes by document: each prefix of the document list adds one block.
      std::vector<std::pair<std::string, size_t>> blocks;  // (uri, tokens), in document order
      layout_input part = in;
      size_t prev = 0;
      for (size_t k = 0; k <= extra.size(); ++k) {
        part.extra.assign(extra.begin(), extra.begin() + static_cast<std::ptrdiff_t>(k));
        const size_t n = builder_.extra_block(part).size();
        if (k > 0 && n > prev) blocks.emplace_back(extra[k - 1].uri, n - prev);
        prev = n;
      }
      size_t at = pos;
      if (repo) {  // [repo] directory name
        const size_t sep = std::min(find_in_head(fmt_.file_sep, at + 1), extra_end);
        w.add("special", "", at, at + 1);
        w.add("file", dirname_of(req.uri), at + 1, sep);
        at = sep;
      }
      // Most recently used last.
      for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
        const size_t end = std::min(at + it->second, extra_end);
        if (repo && at < end && toks[at] == fmt_.file_sep) {
          w.add("special", "", at, at + 1);
          ++at;
        }
        w.add("file", it->first, at, end);
        at = end;
      }
      if (repo && at < extra_end && toks[at] == fmt_.file_sep) {
        w.add("special", "", at, at + 1);
        ++at;
      }
      w.add("file", req.uri, at, extra_end);  // the current file's name (repo-level formats)
    } else if (repo) {
      // A kept layout's block: cut at the separators, origins by file name.
      size_t at = pos;
      while (at < extra_end) {
        if (is_special(toks[at])) {
          const bool sep = toks[at] == fmt_.file_sep;
          w.add("special", "", at, at + 1);
          ++at;
          size_t end = at;
          while (end < extra_end && !is_special(toks[end])) ++end;
          std::string name;
          for (size_t i = at; i < end && name.find('\n') == std::string::npos; ++i) name += backend_->vocab().piece(toks[i]);
          name = name.substr(0, name.find('\n'));
          std::string origin = sep ? name : std::string(dirname_of(req.uri));
          if (sep) {
            if (basename_of(req.uri) == name && end == extra_end) origin = req.uri;
            for (const extra_doc& d : extra)
              if (basename_of(d.uri) == name) origin = d.uri;
          }
          w.add("file", origin, at, end);
          at = end;
        } else {
          size_t end = at;
          while (end < extra_end && !is_special(toks[end])) ++end;
          w.add("file", "", at, end);
          at = end;
        }
      }
    } else {
      w.add("file", "", pos, extra_end);
    }
  }

  // Prefix and suffix, in the format's order, then the middle.
  if (!fmt_.has_fim) {
    w.add("prefix", req.uri, extra_end, head_len);
  } else {
    const bool psm = fmt_.order == fim_order::psm;
    const size_t first = extra_end;  // [pre] in PSM, [suf] in SPM
    const size_t second = find_in_head(psm ? fmt_.suf : fmt_.pre, first + 1);
    const size_t mid = head_len > 0 ? head_len - 1 : 0;
    w.add("special", "", first, std::min(first + 1, head_len));
    w.add(psm ? "prefix" : "suffix", req.uri, first + 1, second);
    w.add("special", "", second, std::min(second + 1, head_len));
    w.add(psm ? "suffix" : "prefix", req.uri, second + 1, mid);
    w.add("special", "", std::max(mid, second + 1), head_len);
  }
  w.add("middle", req.uri, head_len, toks.size());
  return out;
}

}  // namespace qf::server::completion

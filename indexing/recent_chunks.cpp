// Recently edited and viewed chunks (see the header).
#include "indexing/recent_chunks.h"

#include <algorithm>
#include <unordered_map>

#include "text/lines.h"
#include "text/utf8.h"

namespace qf::index {
namespace {

std::vector<std::string_view> content_lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::string_view l : text::split_lines(text)) {
    l = text::strip_line_break(l);
    size_t b = l.find_first_not_of(" \t");
    if (b != std::string_view::npos) out.push_back(l.substr(b));
  }
  return out;
}

}  // namespace

double line_similarity(std::string_view a, std::string_view b) {
  const std::vector<std::string_view> la = content_lines(a), lb = content_lines(b);
  if (la.empty() && lb.empty()) return 1.0;
  if (la.empty() || lb.empty()) return 0.0;
  std::unordered_map<std::string_view, int> count;
  for (std::string_view l : la) ++count[l];
  std::size_t common = 0;
  for (std::string_view l : lb)
    if (auto it = count.find(l); it != count.end() && it->second > 0) {
      --it->second;
      ++common;
    }
  return static_cast<double>(common) / static_cast<double>(std::max(la.size(), lb.size()));
}

recent_chunks::recent_chunks(recent_chunks_limits limits) : limits_(limits) {}

void recent_chunks::touch(std::string_view uri, std::string_view text, std::int64_t line) {
  if (limits_.max_chunks == 0 || limits_.chunk_lines == 0) return;
  const std::int64_t half = static_cast<std::int64_t>(limits_.chunk_lines / 2);
  const std::int64_t first = std::max<std::int64_t>(0, line - half);
  const size_t begin = text::line_start_offset(text, first);
  text_chunk c;
  c.uri = std::string(uri);
  c.first_line = static_cast<std::uint32_t>(first);
  size_t pos = begin;
  for (size_t n = 0; n < limits_.chunk_lines && pos < text.size(); ++n) {
    const text::line_break br = text::find_line_break(text, pos);
    const size_t content_end = br.len ? br.pos : text.size();
    const size_t next = br.len ? br.pos + br.len : text.size();
    std::string_view content = text.substr(pos, content_end - pos);
    if (content.size() > limits_.max_line_bytes) content = text::utf8_prefix(content, limits_.max_line_bytes);
    c.text.append(content).append("\n");
    pos = next;
  }
  if (content_lines(c.text).empty()) return;

  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = chunks_.begin(); it != chunks_.end(); ++it) {
    if (it->uri == c.uri && it->text == c.text) {  // the same place, unchanged: fresher only
      text_chunk same = std::move(*it);
      chunks_.erase(it);
      same.seq = ++seq_;
      chunks_.push_back(std::move(same));
      return;
    }
  }
  std::erase_if(chunks_, [&](const text_chunk& o) { return line_similarity(o.text, c.text) >= limits_.similarity; });
  c.seq = ++seq_;
  chunks_.push_back(std::move(c));
  while (chunks_.size() > limits_.max_chunks) chunks_.erase(chunks_.begin());
}

void recent_chunks::forget(std::string_view uri) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(chunks_, [&](const text_chunk& c) { return c.uri == uri; });
}

std::vector<text_chunk> recent_chunks::recent(std::size_t max) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<text_chunk> out;
  for (auto it = chunks_.rbegin(); it != chunks_.rend() && out.size() < max; ++it) out.push_back(*it);
  return out;
}

std::size_t recent_chunks::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return chunks_.size();
}

}  // namespace qf::index

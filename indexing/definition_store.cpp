// Compact definition records and the name index (see definition_store.h).
#include "indexing/definition_store.h"

#include <algorithm>
#include <mutex>
#include <tuple>

namespace qf::index {

std::uint64_t hash_bytes(std::string_view s, std::uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

namespace {

int kind_rank(definition_kind k) {
  switch (k) {
    case definition_kind::function:
    case definition_kind::class_type:
    case definition_kind::type: return 0;
    case definition_kind::method:
    case definition_kind::constant: return 1;
    case definition_kind::module: return 2;
    case definition_kind::variable:
    case definition_kind::field: return 3;
  }
  return 4;
}

}  // namespace

std::string_view definition_store::packed_file::str(std::uint32_t off, std::uint16_t len) const {
  return std::string_view(strings).substr(off, len);
}

definition definition_store::packed_file::unpack(const packed_def& p) const {
  definition d;
  d.name = str(p.name_off, p.name_len);
  d.kind = static_cast<definition_kind>(p.kind);
  d.uri = uri;
  d.line = p.line;
  d.signature = str(p.sig_off, p.sig_len);
  d.doc = str(p.doc_off, p.doc_len);
  d.container = str(p.container_off, p.container_len);
  return d;
}

std::unique_ptr<definition_store::packed_file> definition_store::pack(std::string uri, const file_definitions& defs,
                                                                      std::uint64_t content_hash, bool from_document) {
  auto f = std::make_unique<packed_file>();
  f->uri = std::move(uri);
  f->content_hash = content_hash;
  f->from_document = from_document;
  f->imports = defs.imports;
  std::size_t bytes = 0;
  for (const auto& d : defs.definitions) bytes += d.name.size() + d.signature.size() + d.doc.size() + d.container.size();
  f->strings.reserve(bytes);
  f->defs.reserve(defs.definitions.size());
  auto add = [&](const std::string& s, std::uint32_t* off, std::uint16_t* len) {
    const std::size_t n = std::min<std::size_t>(s.size(), 0xffff);
    *off = static_cast<std::uint32_t>(f->strings.size());
    *len = static_cast<std::uint16_t>(n);
    f->strings.append(s, 0, n);
  };
  const std::string* last_container = nullptr;
  packed_def last{};
  for (const auto& d : defs.definitions) {
    if (f->strings.size() > 0xfffff000u) break;  // offsets are 32-bit; a file's strings never get near
    packed_def p{};
    add(d.name, &p.name_off, &p.name_len);
    add(d.signature, &p.sig_off, &p.sig_len);
    add(d.doc, &p.doc_off, &p.doc_len);
    if (last_container && *last_container == d.container) {
      p.container_off = last.container_off;
      p.container_len = last.container_len;
    } else {
      add(d.container, &p.container_off, &p.container_len);
    }
    p.line = d.line;
    p.kind = static_cast<std::uint8_t>(d.kind);
    last_container = &d.container;
    last = p;
    f->defs.push_back(p);
  }
  f->strings.shrink_to_fit();
  return f;
}

definition_store::definition_store() = default;
definition_store::~definition_store() = default;

void definition_store::unlink(std::uint32_t id) {
  packed_file& f = *files_[id];
  for (std::uint32_t i = 0; i < f.defs.size(); ++i) {
    const std::uint64_t h = hash_bytes(f.str(f.defs[i].name_off, f.defs[i].name_len));
    auto it = by_name_.find(h);
    if (it == by_name_.end()) continue;
    auto& v = it->second;
    v.erase(std::remove_if(v.begin(), v.end(), [&](const ref& r) { return r.file == id && r.index == i; }), v.end());
    if (v.empty()) by_name_.erase(it);
  }
  definitions_ -= f.defs.size();
  by_uri_.erase(f.uri);
  files_[id].reset();
  free_ids_.push_back(id);
}

void definition_store::put(std::unique_ptr<packed_file> f) {
  std::vector<std::uint64_t> hashes;
  hashes.reserve(f->defs.size());
  for (const auto& d : f->defs) hashes.push_back(hash_bytes(f->str(d.name_off, d.name_len)));
  std::unique_lock lock(mu_);
  if (auto it = by_uri_.find(f->uri); it != by_uri_.end()) unlink(it->second);
  std::uint32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(files_.size());
    files_.emplace_back();
  }
  for (std::uint32_t i = 0; i < hashes.size(); ++i) by_name_[hashes[i]].push_back(ref{id, i});
  definitions_ += f->defs.size();
  by_uri_[f->uri] = id;
  files_[id] = std::move(f);
}

bool definition_store::remove(const std::string& uri) {
  std::unique_lock lock(mu_);
  auto it = by_uri_.find(uri);
  if (it == by_uri_.end()) return false;
  unlink(it->second);
  return true;
}

std::vector<definition> definition_store::lookup(std::string_view name, std::size_t max) const {
  std::vector<definition> out;
  if (max == 0 || name.empty()) return out;
  const std::uint64_t h = hash_bytes(name);
  std::shared_lock lock(mu_);
  auto it = by_name_.find(h);
  if (it == by_name_.end()) return out;
  std::vector<ref> hits;
  for (const ref& r : it->second) {
    const packed_file& f = *files_[r.file];
    if (f.str(f.defs[r.index].name_off, f.defs[r.index].name_len) == name) hits.push_back(r);
  }
  // Best first: functions and types before members, then by file and line (a stable order).
  auto key = [&](const ref& r) {
    const packed_file& f = *files_[r.file];
    return std::tuple(kind_rank(static_cast<definition_kind>(f.defs[r.index].kind)), std::string_view(f.uri),
                      f.defs[r.index].line);
  };
  const std::size_t n = std::min(max, hits.size());
  std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(n), hits.end(),
                    [&](const ref& a, const ref& b) { return key(a) < key(b); });
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(files_[hits[i].file]->unpack(files_[hits[i].file]->defs[hits[i].index]));
  return out;
}

std::vector<import_ref> definition_store::imports_of(std::string_view uri) const {
  std::shared_lock lock(mu_);
  auto it = by_uri_.find(std::string(uri));
  return it == by_uri_.end() ? std::vector<import_ref>{} : files_[it->second]->imports;
}

bool definition_store::contains(std::string_view uri) const {
  std::shared_lock lock(mu_);
  return by_uri_.count(std::string(uri)) > 0;
}

std::optional<definition_store::file_info> definition_store::info(std::string_view uri) const {
  std::shared_lock lock(mu_);
  auto it = by_uri_.find(std::string(uri));
  if (it == by_uri_.end()) return std::nullopt;
  return file_info{files_[it->second]->content_hash, files_[it->second]->from_document};
}

std::optional<file_definitions> definition_store::get(std::string_view uri) const {
  std::shared_lock lock(mu_);
  auto it = by_uri_.find(std::string(uri));
  if (it == by_uri_.end()) return std::nullopt;
  const packed_file& f = *files_[it->second];
  file_definitions out;
  out.imports = f.imports;
  for (const auto& p : f.defs) {
    out.definitions.push_back(f.unpack(p));
    out.definitions.back().uri.clear();
  }
  return out;
}

std::vector<std::string> definition_store::uris() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  out.reserve(by_uri_.size());
  for (const auto& [u, id] : by_uri_) out.push_back(u);
  return out;
}

std::vector<std::string> definition_store::uris_ending_with(std::string_view suffix, std::size_t max) const {
  std::vector<std::string> out;
  std::shared_lock lock(mu_);
  for (const auto& [u, id] : by_uri_) {
    if (u.size() > suffix.size() && u.ends_with(suffix) && u[u.size() - suffix.size() - 1] == '/') {
      out.push_back(u);
    }
  }
  std::sort(out.begin(), out.end());
  if (out.size() > max) out.resize(max);
  return out;
}

std::size_t definition_store::file_count() const {
  std::shared_lock lock(mu_);
  return by_uri_.size();
}

std::size_t definition_store::definition_count() const {
  std::shared_lock lock(mu_);
  return definitions_;
}

}  // namespace qf::index

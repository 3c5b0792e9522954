// The on-disk definition cache (see definition_cache.h).
#include "indexing/definition_cache.h"


#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "indexing/definition_store.h"
#include "indexing/install_salt.h"
#include "indexing/private_file.h"
#include "indexing/workspace_walk.h"

namespace qf::index {

namespace {

constexpr char magic[4] = {'Q', 'F', 'D', 'C'};
constexpr std::uint32_t format_version = 1;
constexpr std::uint64_t max_cache_bytes = std::uint64_t(1) << 30;

struct writer {
  std::string b;
  template <class T>
  void put(T v) {
    char raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    b.append(raw, sizeof(T));
  }
  void str(std::string_view s) {
    put<std::uint32_t>(static_cast<std::uint32_t>(s.size()));
    b.append(s);
  }
};

struct reader {
  std::string_view b;
  std::size_t pos = 0;
  bool ok = true;
  template <class T>
  T get() {
    T v{};
    if (b.size() - pos < sizeof(T)) {
      ok = false;
      return v;
    }
    std::memcpy(&v, b.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  std::string str() {
    const auto n = get<std::uint32_t>();
    if (!ok || b.size() - pos < n) {
      ok = false;
      return {};
    }
    std::string s(b.substr(pos, n));
    pos += n;
    return s;
  }
  // A count that cannot exceed what is left (each item takes >= `min_item` bytes).
  std::uint32_t count(std::size_t min_item) {
    const auto n = get<std::uint32_t>();
    if (ok && static_cast<std::uint64_t>(n) * min_item > b.size() - pos) ok = false;
    return ok ? n : 0;
  }
};

}  // namespace

std::string default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/quickfill";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/quickfill";
  return {};
}

std::string cache_file_for(const std::string& dir, const std::vector<std::string>& roots) {
  std::vector<std::string> sorted = roots;
  std::sort(sorted.begin(), sorted.end());
  // Salted (install_salt.h): the name does not tell which folders were indexed.
  std::string salt_error;
  std::string salt = install_salt(dir, &salt_error);
  if (salt.empty()) salt = default_install_salt();
  std::uint64_t h = hash_bytes("roots\n" + salt + "\n");
  for (const auto& r : sorted) h = hash_bytes(r + '\n', h);
  char name[64];
  std::snprintf(name, sizeof name, "workspace-%016llx.qfidx", static_cast<unsigned long long>(h));
  return dir + "/" + name;
}

std::uint64_t content_key(std::string_view content, std::string_view language_name) {
  std::uint64_t h = hash_bytes(std::string_view(reinterpret_cast<const char*>(&extractor_version), sizeof extractor_version));
  h = hash_bytes(language_name, h);
  h = hash_bytes("\n", h);
  return hash_bytes(content, h);
}

cache_entries load_definition_cache(const std::string& path, std::string* error) {
  cache_entries out;
  std::string data;
  std::string why;
  const private_read st = read_private_file(path, max_cache_bytes, &data, &why);
  if (st == private_read::missing) return out;  // absent: the first run
  if (st != private_read::ok) {  // a link, a FIFO, another user's file, too large
    *error = why;
    return out;
  }
  if (data.size() < 4 + 4 + 4 + 8 + 8 || std::memcmp(data.data(), magic, 4) != 0) {
    *error = "not a quickfill definition cache (bad header)";
    return out;
  }
  const std::string_view body(data.data(), data.size() - 8);
  std::uint64_t stored_sum = 0;
  std::memcpy(&stored_sum, data.data() + data.size() - 8, 8);
  if (hash_bytes(body) != stored_sum) {
    *error = "checksum mismatch (truncated or corrupted)";
    return out;
  }
  reader r{body, 4};
  if (r.get<std::uint32_t>() != format_version) {
    *error = "another cache format version";
    return out;
  }
  if (r.get<std::uint32_t>() != extractor_version) {
    *error = "written by another extractor version";
    return out;
  }
  const auto entries = r.get<std::uint64_t>();
  if (entries > body.size()) {
    *error = "entry count out of range";
    return out;
  }
  for (std::uint64_t e = 0; e < entries && r.ok; ++e) {
    const auto key = r.get<std::uint64_t>();
    file_definitions fd;
    const std::uint32_t nd = r.count(4 + 1 + 4 + 4 + 4 + 4);
    fd.definitions.reserve(nd);
    for (std::uint32_t i = 0; i < nd && r.ok; ++i) {
      definition d;
      d.name = r.str();
      const auto kind = r.get<std::uint8_t>();
      if (kind > static_cast<std::uint8_t>(definition_kind::module)) r.ok = false;
      d.kind = static_cast<definition_kind>(kind);
      d.line = r.get<std::uint32_t>();
      d.signature = r.str();
      d.doc = r.str();
      d.container = r.str();
      fd.definitions.push_back(std::move(d));
    }
    const std::uint32_t ni = r.count(4 + 4 + 4);
    for (std::uint32_t i = 0; i < ni && r.ok; ++i) {
      import_ref imp;
      imp.module = r.str();
      imp.line = r.get<std::uint32_t>();
      const std::uint32_t nn = r.count(4);
      for (std::uint32_t k = 0; k < nn && r.ok; ++k) imp.names.push_back(r.str());
      fd.imports.push_back(std::move(imp));
    }
    if (r.ok) out.emplace(key, std::move(fd));
  }
  if (!r.ok || r.pos != body.size()) {
    *error = "malformed entries";
    out.clear();
  }
  return out;
}

bool save_definition_cache(const std::string& path, const cache_entries& entries, std::string* error) {
  writer w;
  w.b.append(magic, 4);
  w.put<std::uint32_t>(format_version);
  w.put<std::uint32_t>(extractor_version);
  w.put<std::uint64_t>(entries.size());
  for (const auto& [key, fd] : entries) {
    w.put<std::uint64_t>(key);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(fd.definitions.size()));
    for (const auto& d : fd.definitions) {
      w.str(d.name);
      w.put<std::uint8_t>(static_cast<std::uint8_t>(d.kind));
      w.put<std::uint32_t>(d.line);
      w.str(d.signature);
      w.str(d.doc);
      w.str(d.container);
    }
    w.put<std::uint32_t>(static_cast<std::uint32_t>(fd.imports.size()));
    for (const auto& imp : fd.imports) {
      w.str(imp.module);
      w.put<std::uint32_t>(imp.line);
      w.put<std::uint32_t>(static_cast<std::uint32_t>(imp.names.size()));
      for (const auto& n : imp.names) w.str(n);
    }
  }
  w.put<std::uint64_t>(hash_bytes(w.b));
  // A unique 0600 temporary file renamed over the cache (private_file.h).
  return write_private_file(path, w.b, error);
}

}  // namespace qf::index

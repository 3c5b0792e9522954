// The in-memory definitions of a workspace: compact per-file records and a
// name index, safe for any number of readers while one writer updates it.
//
// Each file's strings (names, signatures, docs, containers) live in one
// buffer with 32-byte records of offsets into it; a container repeated by
// consecutive definitions is stored once. The name index maps a 64-bit hash
// of the name to (file, record) pairs. A writer packs a file's record outside
// the lock (pack()) and holds the exclusive lock only to swap it in, so a
// lookup waits at most for a few map operations, never for parsing or I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "indexing/definition_extract.h"
#include "indexing/definitions.h"

namespace qf::index {

std::uint64_t hash_bytes(std::string_view s, std::uint64_t seed = 14695981039346656037ull);  // FNV-1a 64

class definition_store {
 public:
  struct packed_def {
    std::uint32_t name_off, sig_off, doc_off, container_off;
    std::uint16_t name_len, sig_len, doc_len, container_len;
    std::uint32_t line;
    std::uint8_t kind;
  };
  // One file: its strings in one buffer, records of offsets into it.
  struct packed_file {
    std::string uri;
    std::uint64_t content_hash = 0;
    bool from_document = false;
    std::string strings;
    std::vector<packed_def> defs;
    std::vector<import_ref> imports;
    std::string_view str(std::uint32_t off, std::uint16_t len) const;
    definition unpack(const packed_def& p) const;
  };
  // Builds a file's record (no lock taken).
  static std::unique_ptr<packed_file> pack(std::string uri, const file_definitions& defs, std::uint64_t content_hash,
                                           bool from_document);

  definition_store();
  ~definition_store();

  void put(std::unique_ptr<packed_file> f);  // replaces the file's previous record
  bool remove(const std::string& uri);

  std::vector<definition> lookup(std::string_view name, std::size_t max) const;
  std::vector<import_ref> imports_of(std::string_view uri) const;
  bool contains(std::string_view uri) const;
  // The content hash the file was indexed from, and whether an open document
  // (rather than the disk) provided it.
  struct file_info {
    std::uint64_t content_hash = 0;
    bool from_document = false;
  };
  std::optional<file_info> info(std::string_view uri) const;
  // The file's definitions as extracted (uri left empty), for the disk cache.
  std::optional<file_definitions> get(std::string_view uri) const;
  std::vector<std::string> uris() const;
  // Uris whose path (after file://) ends with `suffix` (best-effort import resolution).
  std::vector<std::string> uris_ending_with(std::string_view suffix, std::size_t max) const;

  std::size_t file_count() const;
  std::size_t definition_count() const;

 private:
  struct ref {
    std::uint32_t file;
    std::uint32_t index;
  };
  mutable std::shared_mutex mu_;
  std::vector<std::unique_ptr<packed_file>> files_;  // by id; null = free
  std::vector<std::uint32_t> free_ids_;
  std::unordered_map<std::string, std::uint32_t> by_uri_;
  std::unordered_map<std::uint64_t, std::vector<ref>> by_name_;
  std::size_t definitions_ = 0;

  void unlink(std::uint32_t id);  // with mu_ held exclusively
};

}  // namespace qf::index

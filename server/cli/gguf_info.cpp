// `quickfill gguf info FILE`: the header, every metadata key (long arrays
// summarized) and a tensor summary (per-type counts and bytes, then each
// tensor's type and shape with --tensors). Everything taken from the file
// (keys, strings, tensor names, error messages quoting them) goes through
// printable(): control characters, terminal-reordering code points and
// invalid UTF-8 are shown as escapes, never sent to the terminal.
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <map>

#include "inference/gguf/gguf.h"
#include "server/cli/cli_args.h"
#include "server/cli/gguf_commands.h"

namespace qf::cli {
namespace {

using infer::gguf::value;
using infer::gguf::value_type;

const char* type_name(value_type t) {
  switch (t) {
    case value_type::u8: return "u8";
    case value_type::i8: return "i8";
    case value_type::u16: return "u16";
    case value_type::i16: return "i16";
    case value_type::u32: return "u32";
    case value_type::i32: return "i32";
    case value_type::f32: return "f32";
    case value_type::boolean: return "bool";
    case value_type::string: return "string";
    case value_type::array: return "array";
    case value_type::u64: return "u64";
    case value_type::i64: return "i64";
    case value_type::f64: return "f64";
  }
  return "?";
}

std::string quoted(std::string_view s, size_t max = 60) {
  std::string o(1, '"');
  o += printable(s, max, true);
  o += '"';
  return o;
}

std::string scalar(const value& v) {
  if (auto s = v.as_string()) return quoted(*s);
  if (v.type == value_type::boolean) return v.as_bool().value_or(false) ? "true" : "false";
  if (v.type == value_type::f32 || v.type == value_type::f64) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v.as_float().value_or(0));
    return b;
  }
  if (auto i = v.as_int()) return std::to_string(*i);
  if (auto* u = std::get_if<uint64_t>(&v.v)) return std::to_string(*u);
  return "?";
}

std::string render(const value& v) {
  const auto* a = v.as_array();
  if (!a) return scalar(v);
  std::string o(1, '[');
  o += type_name(a->elem_type());
  o += " x " + std::to_string(a->size()) + "] ";
  for (size_t i = 0; i < a->size() && i < 5; ++i) o += (i ? ", " : "") + render(a->at(i));
  if (a->size() > 5) o += ", ...";
  return o;
}

void append_hex(std::string& o, const char* fmt, uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, fmt, v);
  o += b;
}

// Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF) and its code point; 0 when invalid.
size_t utf8_sequence(const unsigned char* p, size_t left, uint32_t* cp) {
  const unsigned char b0 = p[0];
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) len = 2;
  else if (b0 >= 0xE0 && b0 <= 0xEF) len = 3, lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
  else if (b0 >= 0xF0 && b0 <= 0xF4) len = 4, lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (left < len || p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < len; ++i)
    if ((p[i] & 0xC0) != 0x80) return 0;
  uint32_t c = b0 & (0xFF >> (len + 1));
  for (size_t i = 1; i < len; ++i) c = (c << 6) | (p[i] & 0x3F);
  *cp = c;
  return len;
}

// Code points a terminal acts on or that reorder or break the displayed line:
// C0/C1 controls, DEL, the bidirectional marks, embeddings and isolates, and
// the line and paragraph separators.
bool needs_escape(uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string printable(std::string_view s, size_t max_chars, bool escape_quote) {
  std::string o;
  o.reserve(s.size() < max_chars ? s.size() : max_chars);
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t i = 0, chars = 0;
  for (; i < s.size() && chars < max_chars; ++chars) {
    uint32_t cp = 0;
    const size_t len = utf8_sequence(p + i, s.size() - i, &cp);
    if (len == 0) {  // not UTF-8: the byte, escaped
      append_hex(o, "\\x%02x", p[i]);
      ++i;
      continue;
    }
    if (cp == '\\') o += "\\\\";
    else if (cp == '"' && escape_quote) o += "\\\"";
    else if (cp == '\n') o += "\\n";
    else if (cp == '\t') o += "\\t";
    else if (cp == '\r') o += "\\r";
    else if (cp < 0x80 && needs_escape(cp)) append_hex(o, "\\x%02x", cp);
    else if (needs_escape(cp)) append_hex(o, "\\u{%04x}", cp);
    else o.append(s.data() + i, len);
    i += len;
  }
  if (i < s.size()) o += "...";
  return o;
}

namespace {
std::string esc(std::string_view s) { return printable(s); }
}  // namespace

int gguf_info(std::span<char*> args) {
  std::string path;
  bool tensors = false;
  arg_parser p("quickfill gguf info", "Prints a GGUF file's metadata and a tensor summary.");
  p.add_positional("FILE", &path, "GGUF file");
  p.add_flag({"--tensors"}, &tensors, "list every tensor");
  if (!p.parse(args)) return p.exit_code();
  try {
    auto f = infer::gguf::file::open(path, infer::gguf::data_storage::mapped);  // metadata only: no copy
    std::printf("file: %s\nversion: %u, alignment: %zu, data offset: %" PRIu64 "\n", esc(path).c_str(), f->version(),
                f->alignment(), f->data_offset());
    std::printf("metadata (%zu keys):\n", f->metadata().size());
    for (const auto& [k, v] : f->metadata()) std::printf("  %-44s %s\n", esc(k).c_str(), render(v).c_str());
    struct agg { size_t n = 0, bytes = 0; int64_t elems = 0; };
    std::map<std::string, agg> by_type;
    size_t total = 0;
    int64_t total_elems = 0;
    for (const auto& t : f->tensors()) {
      auto& a = by_type[std::string(infer::traits(t.type).name)];
      a.n++, a.bytes += t.n_bytes, a.elems += t.n_elements();
      total += t.n_bytes, total_elems += t.n_elements();
    }
    std::printf("tensors: %zu, %" PRId64 " parameters, %.2f MiB", f->tensors().size(), total_elems,
                static_cast<double>(total) / (1024.0 * 1024.0));
    if (total_elems > 0) std::printf(" (%.2f bits per weight)", 8.0 * static_cast<double>(total) / total_elems);
    std::printf("\n");
    for (const auto& [name, a] : by_type)
      std::printf("  %-6s %5zu tensors %14" PRId64 " elements %10.2f MiB\n", name.c_str(), a.n, a.elems,
                  static_cast<double>(a.bytes) / (1024.0 * 1024.0));
    if (tensors) {
      for (const auto& t : f->tensors()) {
        std::string shape;
        for (auto d : t.ne) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
        std::printf("  %-32s %-5s [%s] %zu bytes\n", esc(t.name).c_str(),
                    std::string(infer::traits(t.type).name).c_str(),
                    shape.c_str(), t.n_bytes);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickfill gguf info: %s\n", esc(e.what()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace qf::cli

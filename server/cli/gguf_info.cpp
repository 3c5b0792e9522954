// `quickfill gguf info FILE`: the header, every metadata key (long arrays
// summarized) and a tensor summary (per-type counts and bytes, then each
// tensor's type and shape with --tensors).
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

std::string quoted(const std::string& s, size_t max = 60) {
  std::string o = "\"";
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n') o += "\\n";
    else if (c == '"') o += "\\\"";
    else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      o += b;
    } else {
      o += static_cast<char>(c);
    }
  }
  if (s.size() > max) o += "...";
  return o + "\"";
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
  std::string o = "[" + std::string(type_name(a->elem_type)) + " x " + std::to_string(a->items.size()) + "] ";
  for (size_t i = 0; i < a->items.size() && i < 5; ++i) o += (i ? ", " : "") + render(a->items[i]);
  if (a->items.size() > 5) o += ", ...";
  return o;
}

}  // namespace

int gguf_info(std::span<char*> args) {
  std::string path;
  bool tensors = false;
  arg_parser p("quickfill gguf info", "Prints a GGUF file's metadata and a tensor summary.");
  p.add_positional("FILE", &path, "GGUF file");
  p.add_flag({"--tensors"}, &tensors, "list every tensor");
  if (!p.parse(args)) return p.exit_code();
  try {
    auto f = infer::gguf::file::open(path);
    std::printf("file: %s\nversion: %u, alignment: %zu, data offset: %" PRIu64 "\n", path.c_str(), f->version(),
                f->alignment(), f->data_offset());
    std::printf("metadata (%zu keys):\n", f->metadata().size());
    for (const auto& [k, v] : f->metadata()) std::printf("  %-44s %s\n", k.c_str(), render(v).c_str());
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
        std::printf("  %-32s %-5s [%s] %zu bytes\n", t.name.c_str(), std::string(infer::traits(t.type).name).c_str(),
                    shape.c_str(), t.n_bytes);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "quickfill gguf info: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace qf::cli

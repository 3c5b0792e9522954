// What the benchmarks that run the completion pipeline in-process share
// (confidence_bench, postprocess_bench, chunk_reuse_effect): the engine on
// the CPU, the source files, the place in a source file where a completion is asked for (a cut
// through a random line, the rest of the line being the truth), and the text
// a suggestion adds at the cursor.
#pragma once

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "server/completion/api/completion_provider.h"
#include "server/completion/decode/engine_backend.h"
#include "text/lines.h"

namespace qf::bench {

// The model on the CPU with `threads` threads; nullptr, and "<prog>: why" on
// stderr, when it cannot be loaded.
inline std::unique_ptr<server::completion::lm_backend> load_cpu_backend(const char* prog, const std::string& model,
                                                                        int threads) {
  std::string err;
  server::completion::engine_options engine;
  engine.device = "cpu";
  engine.threads = threads;
  auto backend = server::completion::load_engine_backend(model, engine, &err);
  if (!backend) std::fprintf(stderr, "%s: %s\n", prog, err.c_str());
  return backend;
}

// The bytes of a source file ("" when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A place to complete: the rest of line `line` from byte column `col` on is
// taken out of the text; a perfect completion puts it back.
struct cut_point {
  std::size_t line = 0;
  std::size_t col = 0;     // byte column in the line
  std::size_t offset = 0;  // byte offset of the cursor in doc
  std::string truth;       // the rest of the line (without its line break)
  std::string doc;         // the text without it
};

// A line with at least 8 non-blank characters (of up to 100 drawn at random
// from `lines`, text's lines), cut between 30 % and 70 % of its length, on a
// UTF-8 character boundary; nullopt when none of the 100 has 8.
inline std::optional<cut_point> random_cut(const std::string& text, const std::vector<std::string_view>& lines,
                                           std::mt19937& rng) {
  std::size_t line = 0, body = 0;
  for (int tries = 0; tries < 100; ++tries) {
    line = std::uniform_int_distribution<std::size_t>(0, lines.size() - 1)(rng);
    const std::string_view l = text::strip_line_break(lines[line]);
    body = static_cast<std::size_t>(std::count_if(l.begin(), l.end(), [](char c) { return c != ' ' && c != '\t'; }));
    if (body >= 8) break;
  }
  if (body < 8) return std::nullopt;
  const std::string_view l = text::strip_line_break(lines[line]);
  std::size_t col = l.size() * std::uniform_int_distribution<std::size_t>(30, 70)(rng) / 100;
  while (col > 0 && (static_cast<unsigned char>(l[col]) & 0xC0) == 0x80) --col;
  std::size_t line_off = 0;
  for (std::size_t i = 0; i < line; ++i) line_off += lines[i].size();
  cut_point c;
  c.line = line;
  c.col = col;
  c.offset = line_off + col;
  c.truth = std::string(l.substr(col));
  c.doc = text.substr(0, c.offset) + text.substr(line_off + l.size());
  return c;
}

// The text after the replaced word: what the suggestion adds at the cursor.
inline std::string added_text(const server::completion_candidate& c) {
  const std::size_t word = static_cast<std::size_t>(c.replace_end.byte_col - c.replace_begin.byte_col);
  return c.insert_text.substr(std::min(word, c.insert_text.size()));
}

}  // namespace qf::bench

// What a remote source sends about a request: the text around the cursor and
// chunks of other files, cut to the source's character budgets.
//
// The prefix is the document before the cursor, at most max_prefix_chars,
// cut at a line start so no line (and no UTF-8 sequence) is split; the
// suffix is the text after it, at most max_suffix_chars, cut after a line
// end. The extra chunks are the server's context for other files (llama-
// server's input_extra, placed before the FIM prefix, or a repo-level prompt
// on models with file-separator tokens): the recently edited or viewed chunks
// of other documents first (newest first), then the starts of the other open
// documents (most recently used first), never the document itself, until
// max_extra_chars is spent. Filenames are the URIs' paths relative to the
// workspace folder that holds them (the file name alone outside every
// folder), so a request never shows where on the user's disk the code lives.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/completion/api/completion_provider.h"
#include "server/remote/remote_options.h"

namespace qf::remote {

struct context_chunk {
  std::string filename;
  std::string text;
};

struct prompt_parts {
  std::string filename;  // the document's path
  std::string prefix;
  std::string suffix;
  std::vector<context_chunk> extra;
};

prompt_parts build_prompt(const server::completion_request& req, const remote_options& o);

// "file:///w/p/b.py" with the folder "/w/p" -> "b.py"; outside every folder
// "b.py"; URIs of other schemes as they are.
std::string uri_filename(std::string_view uri, const std::vector<std::string>& roots);

}  // namespace qf::remote

// file:// URIs and local paths, both ways (percent-encoding per RFC 3986).
//
// path_to_file_uri("/a b/c.py") == "file:///a%20b/c.py"; file_uri_to_path
// undoes it and returns "" for anything that is not a file URI of this host.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qf::index {

std::string path_to_file_uri(std::string_view absolute_path);
std::string file_uri_to_path(std::string_view uri);

// `path` relative to the first of `roots` (absolute folders) that holds it
// ("/w/p/a.py" under "/w/p" -> "a.py"), or "" when none does.
std::string path_relative_to_roots(std::string_view path, const std::vector<std::string>& roots);

}  // namespace qf::index

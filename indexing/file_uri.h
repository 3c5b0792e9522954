// file:// URIs and local paths, both ways (percent-encoding per RFC 3986).
//
// path_to_file_uri("/a b/c.py") == "file:///a%20b/c.py"; file_uri_to_path
// undoes it and returns "" for anything that is not a file URI of this host.
#pragma once

#include <string>
#include <string_view>

namespace qf::index {

std::string path_to_file_uri(std::string_view absolute_path);
std::string file_uri_to_path(std::string_view uri);

}  // namespace qf::index

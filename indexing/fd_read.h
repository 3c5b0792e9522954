// Reading a whole open file: both readers of files from disk (the workspace
// walk's source files, quickfill's private files) check the size with fstat,
// then read that many bytes here.
#pragma once

#include <cstddef>
#include <string>

namespace qf::index {

// Reads from `fd` into *out until `size` bytes or end of file (a file that
// shrank while being read yields what it still had); EINTR is retried. False
// on a read error (errno says which; *out is then cleared).
bool read_fd(int fd, std::size_t size, std::string* out);

}  // namespace qf::index

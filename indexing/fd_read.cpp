// Reading a whole open file (see fd_read.h).
#include "indexing/fd_read.h"

#include <unistd.h>

#include <cerrno>

namespace qf::index {

bool read_fd(int fd, std::size_t size, std::string* out) {
  out->resize(size);
  std::size_t got = 0;
  while (got < out->size()) {
    const ssize_t n = ::read(fd, out->data() + got, out->size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out->clear();
      return false;
    }
    if (n == 0) break;  // shrank while reading
    got += static_cast<std::size_t>(n);
  }
  out->resize(got);
  return true;
}

}  // namespace qf::index

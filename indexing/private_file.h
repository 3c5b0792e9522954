// Files quickfill keeps for itself: the audit log, the workspace index
// cache, a download's .part and .part.meta, the install salt.
//
// Their paths may lie in folders other programs (or a repository's setup
// script) can reach, so each is opened with O_NOFOLLOW (a symbolic link
// planted at the path is refused, never followed), checked after opening
// with fstat (a regular file, owned by this user, with one link: no device,
// FIFO, or hard link to another file), created 0600 and narrowed to 0600 when
// found wider. Replacing a whole file goes through a temporary file with a
// unique name (O_EXCL; the process id and random bytes), renamed over the
// target, so two processes never write the same temporary file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace qf::index {

// open(2) of a private file: `flags` (O_RDONLY, O_RDWR | O_CREAT | O_APPEND,
// ...) plus O_NOFOLLOW | O_CLOEXEC, mode 0600 when created. Returns the
// descriptor, or -1 with *error naming the path and the reason ("missing"
// when it does not exist and O_CREAT was not given: *error then starts with
// "missing: ").
int open_private_file(const std::string& path, int flags, std::string* error);

enum class private_read { ok, missing, refused, too_large };
// The whole content of a private file (at most max_bytes).
private_read read_private_file(const std::string& path, std::uint64_t max_bytes, std::string* out,
                               std::string* error);

// Replaces `path` with `bytes`: a unique 0600 temporary file beside it,
// fsynced, renamed over it. Creates the folder (0700) when absent. False
// with *error on failure (the temporary file is removed).
bool write_private_file(const std::string& path, std::string_view bytes, std::string* error);

// `n` random bytes from the kernel, as 2n hex digits.
std::string random_hex(std::size_t n);

}  // namespace qf::index

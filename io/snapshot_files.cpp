// SPDX-License-Identifier: MIT
#include "io/snapshot_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace sim {
namespace {

[[noreturn]] void fail_errno(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

// "no space left on device writing out/box/sim.xdmf": named by the final
// path, which is what the user knows about (the temporary never survives).
[[noreturn]] void fail_writing(const std::string& final_path, int err) {
  throw std::runtime_error(os_error_text(err) + " writing " + final_path);
}

void write_all(int fd, const std::string& text, const std::string& final_path) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      fail_writing(final_path, err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

std::string snapshot_file_name(int64_t step) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "snap_%06lld.h5", static_cast<long long>(step));
  return buf;
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string os_error_text(int err) {
  std::string s = std::strerror(err);
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z' && !(s.size() > 1 && s[1] >= 'A' && s[1] <= 'Z')) s[0] = char(s[0] - 'A' + 'a');
  return s;
}

// The pid keeps two processes that write the same name (two runs sharing a
// directory despite the lock, e.g. on a file system without flock) from
// writing into, or renaming, each other's temporary.
std::string temporary_path(const std::string& final_path) {
  return final_path + "." + std::to_string(::getpid()) + ".tmp";
}

void prepare_output_dir(const std::string& dir) {
  const std::string what = "output directory '" + dir + "'";
  if (dir.empty()) throw std::runtime_error("output directory is empty (set run.output)");
  // A link to nowhere: create_directories would say only "File exists".
  struct stat link {};
  if (::lstat(dir.c_str(), &link) == 0 && S_ISLNK(link.st_mode) && ::access(dir.c_str(), F_OK) != 0) {
    std::error_code rec;
    const std::string target = std::filesystem::read_symlink(dir, rec).string();
    throw std::runtime_error(what + ": a symbolic link to '" + target + "', which does not exist");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail_errno(what, ec.value());
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) fail_errno(what, errno);
  if (!S_ISDIR(st.st_mode)) fail_errno(what, ENOTDIR);
  // access(W_OK) misses read-only mounts and ACLs; creating a file does not.
  const std::string probe = join_path(dir, ".sim-write-probe-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail_errno(what, errno);
  ::close(fd);
  ::unlink(probe.c_str());
}

uint64_t free_bytes(const std::string& dir) {
  struct statvfs st {};
  if (::statvfs(dir.empty() ? "." : dir.c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

void commit_file(const std::string& temporary, const std::string& final_path) {
  // Without the fsync a power cut after the rename can leave an empty file
  // under the final name on some file systems.
  const int fd = ::open(temporary.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_writing(final_path, errno);
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail_writing(final_path, err);
  }
  ::close(fd);
  if (std::rename(temporary.c_str(), final_path.c_str()) != 0) fail_writing(final_path, errno);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = temporary_path(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_writing(path, errno);
  try {
    write_all(fd, text, path);
    if (::close(fd) != 0) fail_writing(path, errno);
    commit_file(tmp, path);
  } catch (...) {
    // A half-written temporary would only hold disk space the run needs.
    ::unlink(tmp.c_str());
    throw;
  }
}

}  // namespace sim

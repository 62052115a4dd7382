#include "io/snapshot_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
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

void write_all(int fd, const std::string& text, const std::string& path) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      fail_errno("cannot write '" + path + "'", err);
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

std::string temporary_path(const std::string& final_path) { return final_path + ".tmp"; }

void prepare_output_dir(const std::string& dir) {
  const std::string what = "output directory '" + dir + "'";
  if (dir.empty()) throw std::runtime_error("output directory is empty (set run.output)");
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

void commit_file(const std::string& temporary, const std::string& final_path) {
  // Without the fsync a power cut after the rename can leave an empty file
  // under the final name on some file systems.
  const int fd = ::open(temporary.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_errno("cannot reopen '" + temporary + "'", errno);
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail_errno("cannot sync '" + temporary + "'", err);
  }
  ::close(fd);
  if (std::rename(temporary.c_str(), final_path.c_str()) != 0)
    fail_errno("cannot rename '" + temporary + "' to '" + final_path + "'", errno);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = temporary_path(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_errno("cannot create '" + tmp + "'", errno);
  write_all(fd, text, tmp);
  if (::close(fd) != 0) fail_errno("cannot write '" + tmp + "'", errno);
  commit_file(tmp, path);
}

}  // namespace sim

#include "io/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "io/snapshot_files.hpp"

namespace sim {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string read_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  const bool digits = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  return digits ? s : std::string("unknown");
}

}  // namespace

OutputLock::OutputLock(const std::string& dir) {
  const std::string path = join_path(dir, kLockName);
  // Never through a link (a link in its place would have the run truncate
  // and write whatever it points to), never anything but a regular file (a
  // FIFO or a device would block or be written to).
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd_ < 0 && errno == ELOOP)
    throw std::runtime_error("output directory '" + dir + "': " + kLockName +
                             " is a symbolic link; sim writes its lock only into a regular file (remove the link)");
  if (fd_ < 0)
    throw std::runtime_error("output directory '" + dir + "': cannot create " + kLockName + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("output directory '" + dir + "': " + kLockName +
                             " is not a regular file; sim writes its lock only into one (remove it)");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    // The holder writes its pid right after locking; a reader that comes in
    // between sees an empty file and says "unknown".
    const std::string pid = read_pid(fd_);
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw std::runtime_error("output directory '" + dir + "' is in use by another run (pid " + pid + ")");
    throw std::runtime_error("output directory '" + dir + "': cannot lock " + kLockName + ": " + std::strerror(err));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  // Only informative (the lock is the flock): a failed write costs the pid in the message.
  if (::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
  }
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<std::string> series_files(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    const bool snap = n.rfind("snap_", 0) == 0 && (ends_with(n, ".h5") || ends_with(n, ".tmp"));
    const bool index = n == "sim.xdmf" || (n.rfind("sim.xdmf.", 0) == 0 && ends_with(n, ".tmp"));
    if (snap || index) names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void remove_series_files(const std::string& dir) {
  for (const std::string& n : series_files(dir)) {
    const std::string path = join_path(dir, n);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      throw std::runtime_error("cannot remove '" + path + "': " + std::strerror(errno));
  }
}

}  // namespace sim

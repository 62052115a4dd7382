// SPDX-License-Identifier: MIT
#include "io/output_lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "io/hdf5_file.hpp"
#include "io/snapshot_files.hpp"
#include "io/diagnostics_csv.hpp"
#include "io/xdmf.hpp"

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

namespace {

bool all_digits(const std::string& s, size_t from, size_t to) {
  if (to <= from) return false;
  for (size_t i = from; i < to; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

// "snap_000500.h5": snap_, six or more digits, .h5.
bool snapshot_name(const std::string& n) {
  return n.rfind("snap_", 0) == 0 && ends_with(n, ".h5") && n.size() >= 5 + 6 + 3 && all_digits(n, 5, n.size() - 3);
}

// `name` is `base`.<pid>.tmp (temporary_path's form): the pid, else -1.
long temporary_pid(const std::string& n, bool (*base_ok)(const std::string&)) {
  if (!ends_with(n, ".tmp")) return -1;
  const size_t end = n.size() - 4;
  const size_t dot = n.rfind('.', end - 1);
  if (dot == std::string::npos || !all_digits(n, dot + 1, end) || end - dot - 1 > 9) return -1;
  if (!base_ok(n.substr(0, dot))) return -1;
  return std::stol(n.substr(dot + 1, end - dot - 1));
}

bool index_name(const std::string& n) { return n == "sim.xdmf"; }

bool process_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

// The first `n` bytes of a regular file (never through a link, never a FIFO
// or a device) into `head`; false for anything else or an unreadable file.
bool read_head(const std::string& path, size_t n, std::string& head, off_t* size = nullptr) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
  head.assign(n, '\0');
  const ssize_t got = ::pread(fd, head.data(), n, 0);
  ::close(fd);
  if (got < 0) return false;
  head.resize(static_cast<size_t>(got));
  if (size) *size = st.st_size;
  return true;
}

constexpr char kHdf5Signature[] = "\x89HDF\r\n\x1a\n";

// An HDF5 file with the root attributes every sim snapshot carries.
bool sim_snapshot(const std::string& path) {
  std::string head;
  if (!read_head(path, 8, head) || head != std::string(kHdf5Signature, 8)) return false;
  try {
    const h5::File f = h5::File::open_read(path);
    for (const char* a : {"format_version", "units", "config", "step"})
      if (H5Aexists(f.id(), a) <= 0) return false;
    return true;
  } catch (...) {
    return false;
  }
}

bool sim_index(const std::string& path) {
  const std::string prologue = kXdmfPrologue;
  std::string head;
  return read_head(path, prologue.size(), head) && head == prologue;
}

// diagnostics.csv as sim begins it (a header of its columns).
bool sim_diagnostics(const std::string& path) {
  const std::string start = kDiagnosticsHeadStart;
  std::string head;
  return read_head(path, start.size(), head) && head == start;
}

// A killed writer's temporary: empty, or beginning as sim writes it.
bool sim_temporary(const std::string& path, bool index) {
  std::string head;
  off_t size = 0;
  const std::string want = index ? std::string(kXdmfPrologue) : std::string(kHdf5Signature, 8);
  if (!read_head(path, want.size(), head, &size)) return false;
  return size == 0 || (head.size() == want.size() && head == want);
}

constexpr const char* kAsidePrefix = ".sim-replaced.";

}  // namespace

namespace {

// The files under a name of the series, sim's (`own`) or not.
std::vector<std::string> named_as_series(const std::string& dir, bool own) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    const std::string path = join_path(dir, n);
    const bool snapshot = snapshot_name(n), index = index_name(n), diagnostics = n == kDiagnosticsName;
    if (!snapshot && !index && !diagnostics) continue;
    const bool sims = snapshot ? sim_snapshot(path) : index ? sim_index(path) : sim_diagnostics(path);
    if (sims == own) names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::vector<std::string> series_files(const std::string& dir) { return named_as_series(dir, true); }
std::vector<std::string> foreign_series_files(const std::string& dir) { return named_as_series(dir, false); }

std::vector<std::string> remove_stale_temporaries(const std::string& dir) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    const long snap_pid = temporary_pid(n, snapshot_name), index_pid = temporary_pid(n, index_name);
    const long pid = snap_pid >= 0 ? snap_pid : index_pid;
    if (pid < 0 || pid == static_cast<long>(::getpid()) || process_alive(pid)) continue;
    const std::string path = join_path(dir, n);
    if (sim_temporary(path, index_pid >= 0) && ::unlink(path.c_str()) == 0) removed.push_back(n);
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

SetAsideSeries::SetAsideSeries(const std::string& dir, const std::vector<std::string>& names)
    : dir_(dir), aside_(join_path(dir, kAsidePrefix + std::to_string(::getpid()))) {
  if (::mkdir(aside_.c_str(), 0700) != 0)
    throw std::runtime_error("--overwrite: cannot create '" + aside_ + "' to set the old series aside: " +
                             std::strerror(errno));
  for (const std::string& n : names) {
    const std::string from = join_path(dir_, n);
    if (std::rename(from.c_str(), join_path(aside_, n).c_str()) != 0) {
      const int err = errno;
      restore();
      committed_ = true;  // nothing left to resolve
      throw std::runtime_error("--overwrite: cannot move '" + from + "' aside: " + std::strerror(err));
    }
    names_.push_back(n);
  }
}

SetAsideSeries::~SetAsideSeries() {
  if (!committed_) restore();
}

void SetAsideSeries::commit() {
  if (committed_) return;
  committed_ = true;
  for (const std::string& n : names_) ::unlink(join_path(aside_, n).c_str());
  ::rmdir(aside_.c_str());
}

// All back, or, when this run wrote a file under one of their names (a
// snapshot of step 0 before a signal stopped it), none: the old series stays
// whole in its directory, beside the new run's files, and a line says where.
void SetAsideSeries::restore() noexcept {
  bool clash = false;
  for (const std::string& n : names_) {
    struct stat st {};
    clash = clash || ::lstat(join_path(dir_, n).c_str(), &st) == 0;
  }
  size_t kept = 0;
  for (const std::string& n : names_)
    if (clash || std::rename(join_path(aside_, n).c_str(), join_path(dir_, n).c_str()) != 0) ++kept;
  names_.clear();
  if (kept == 0) {
    ::rmdir(aside_.c_str());
    return;
  }
  const std::string line = "sim: note: the series --overwrite was to replace is kept whole in '" + aside_ +
                           "' (this run wrote files of the same names)\n";
  if (::write(STDERR_FILENO, line.data(), line.size()) < 0) {
  }
}

std::vector<std::string> stale_aside_dirs(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    const std::string prefix = kAsidePrefix;
    if (n.rfind(prefix, 0) != 0 || !all_digits(n, prefix.size(), n.size()) || n.size() - prefix.size() > 9) continue;
    std::error_code ec2;
    if (!e.is_directory(ec2) || e.is_symlink(ec2)) continue;
    if (!process_alive(std::stol(n.substr(prefix.size())))) out.push_back(join_path(dir, n));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace sim

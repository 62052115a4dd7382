// SPDX-License-Identifier: MIT
#include "io/diagnostics_csv.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "io/snapshot_files.hpp"

namespace sim {
namespace {

void append_number(std::string& s, double x, const char* format = "%.17g") {
  char b[40];
  std::snprintf(b, sizeof b, format, x + 0.0);  // -0 as 0
  s += ',';
  s += b;
}

}  // namespace

std::string diagnostics_header(int obstacles) {
  std::string h = std::string(kDiagnosticsHeadStart) +
                  "max_divergence,pressure_iterations,pressure_residual,particles_alive,momentum_x,momentum_y";
  for (int i = 0; i < obstacles; ++i) h += ",drag_" + std::to_string(i) + ",lift_" + std::to_string(i);
  return h;
}

std::string diagnostics_row(const DiagnosticsRow& r, int obstacles) {
  std::string s = std::to_string(r.step);
  const Diagnostics& d = r.d;
  for (double x : {r.time, r.dt, d.kinetic_energy, d.max_div}) append_number(s, x);
  append_number(s, r.pressure_iterations, "%.10g");
  append_number(s, r.pressure_residual);
  s += ',' + std::to_string(d.alive);
  for (int q = 0; q < 2; ++q) append_number(s, d.fluid_momentum[q] + d.particle_momentum[q]);
  for (int i = 0; i < obstacles; ++i)
    for (int q = 0; q < 2; ++q) append_number(s, d.obstacle_force[i][q]);
  return s;
}

DiagnosticsCsv::DiagnosticsCsv(const std::string& dir, int obstacles, int64_t after_step)
    : path_(join_path(dir, kDiagnosticsName)), obstacles_(obstacles) {
  if (after_step >= 0) {
    continue_after(after_step);
    if (fd_ >= 0) return;
  }
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw std::runtime_error(os_error_text(errno) + " creating " + path_);
  put(diagnostics_header(obstacles_) + "\n");
}

DiagnosticsCsv::~DiagnosticsCsv() {
  if (fd_ >= 0) ::close(fd_);
}

// The rows up to `step` kept: the file is cut at the first line that is not
// a complete row of a step up to it. A missing file leaves fd_ closed.
void DiagnosticsCsv::continue_after(int64_t step) {
  const int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return;
    throw std::runtime_error(os_error_text(errno) + " opening " + path_);
  }
  fd_ = fd;  // closed by the destructor from here on
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(os_error_text(errno) + " reading " + path_);
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  const std::string header = diagnostics_header(obstacles_) + "\n";
  if (text.compare(0, header.size(), header) != 0)
    throw std::runtime_error(path_ + " does not begin with this run's header (" + std::to_string(obstacles_) +
                             " obstacles): another run's; move it or restart into another directory");
  size_t cut = header.size();
  while (cut < text.size()) {
    const size_t end = text.find('\n', cut);
    if (end == std::string::npos) break;  // unfinished: a killed run's last row
    char* stop = nullptr;
    const long long s = std::strtoll(text.c_str() + cut, &stop, 10);
    if (stop == text.c_str() + cut || *stop != ',' || s > step) break;
    cut = end + 1;
  }
  if (::ftruncate(fd_, static_cast<off_t>(cut)) != 0 || ::lseek(fd_, 0, SEEK_END) < 0)
    throw std::runtime_error(os_error_text(errno) + " writing " + path_);
}

void DiagnosticsCsv::write(const DiagnosticsRow& r) { put(diagnostics_row(r, obstacles_) + "\n"); }

void DiagnosticsCsv::put(const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(os_error_text(errno) + " writing " + path_);
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace sim

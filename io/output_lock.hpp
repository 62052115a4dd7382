// SPDX-License-Identifier: MIT
// One run per output directory: a lock held for the run's life, and the
// check that a directory does not already hold another run's snapshots.
#pragma once
#include <string>
#include <vector>

namespace sim {

// flock(2) on DIR/.sim.lock, which holds the owner's pid. The kernel drops
// the lock when the process ends, however it ends, so a crashed run never
// leaves the directory locked; the file itself stays (removing it would let
// a third run lock a new file while a second still holds the old one).
class OutputLock {
 public:
  // Throws std::runtime_error "output directory 'DIR' is in use by another
  // run (pid N)" when another process holds the lock.
  explicit OutputLock(const std::string& dir);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  int fd_ = -1;
};

inline constexpr const char* kLockName = ".sim.lock";

// The series files of a sim run in `dir`, recognised by their content, not
// by name alone: sim.xdmf when it begins as sim writes its index
// (kXdmfPrologue), snap_<digits>.h5 when it is an HDF5 file carrying sim's
// snapshot attributes, diagnostics.csv when it begins as sim's header
// (kDiagnosticsHeadStart). Sorted. A file of another origin under such a name
// is not sim's: never counted as another run's, moved or removed.
std::vector<std::string> series_files(const std::string& dir);

// Files under a name of sim's series (sim.xdmf, snap_<digits>.h5, diagnostics.csv) that sim
// did not write, by the same test: a run would replace them. Sorted.
std::vector<std::string> foreign_series_files(const std::string& dir);

// Removes the temporaries a killed run left in `dir` (SIGKILL, a power cut):
// snap_<digits>.h5.<pid>.tmp and sim.xdmf.<pid>.tmp whose pid is no running
// process, empty or beginning as sim writes them (the HDF5 signature, the
// index's prologue). Call with the directory's lock held. Returns their
// names; leaves every other file alone.
std::vector<std::string> remove_stale_temporaries(const std::string& dir);

// --overwrite: another run's series is moved aside into DIR/.sim-replaced.<pid>
// (a rename, same file system) instead of being deleted before the new run
// has produced anything. commit() removes it once the new run has written a
// snapshot after its first step, or ended with status 0; a run that fails
// before (a bad restart file, a blow-up at step 1, a full disk at the first
// write) puts every file back where it was (the destructor). A file the new
// run wrote under one of their names is never overwritten: then the old
// series stays whole where it was set aside, and a line on stderr says where.
class SetAsideSeries {
 public:
  // Moves `names` (series_files(dir)) aside. Throws std::runtime_error
  // naming the file when a move fails, after putting back those moved.
  SetAsideSeries(const std::string& dir, const std::vector<std::string>& names);
  ~SetAsideSeries();
  SetAsideSeries(const SetAsideSeries&) = delete;
  SetAsideSeries& operator=(const SetAsideSeries&) = delete;

  // The new run has results: the old series goes. Idempotent.
  void commit();
  bool committed() const { return committed_; }

 private:
  void restore() noexcept;
  std::string dir_, aside_;
  std::vector<std::string> names_;
  bool committed_ = false;
};

// Directories an earlier --overwrite set aside and never resolved (that run
// was killed before it could): DIR/.sim-replaced.<pid> of no running process.
std::vector<std::string> stale_aside_dirs(const std::string& dir);

}  // namespace sim

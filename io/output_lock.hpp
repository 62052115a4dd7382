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

// The series files of a run in `dir`: snap_*.h5, sim.xdmf and leftover
// temporaries (*.tmp of a killed run), by file name, sorted.
std::vector<std::string> series_files(const std::string& dir);

// Removes series_files(dir). Throws std::runtime_error on failure.
void remove_series_files(const std::string& dir);

}  // namespace sim

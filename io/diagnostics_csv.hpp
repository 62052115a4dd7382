// SPDX-License-Identifier: MIT
// OUTPUT/diagnostics.csv: one row of the run's figures every
// run.diagnostics_every steps (docs/OUTPUT.md lists the columns). Each row
// goes to the file in one write(2) as it is made, so a killed run keeps
// every row written before; a restart in the same directory cuts the rows
// after its step and appends.
#pragma once
#include <cstdint>
#include <string>

#include "sim/model/backend.hpp"

namespace sim {

inline constexpr const char* kDiagnosticsName = "diagnostics.csv";
// How every header sim writes begins: what tells sim's file from another's.
inline constexpr const char* kDiagnosticsHeadStart = "step,time,dt,kinetic_energy,";

// The header line (without its newline) of a run with `obstacles` obstacles.
std::string diagnostics_header(int obstacles);

// One row's figures: the step's, the solver's and the backend's sums.
struct DiagnosticsRow {
  int64_t step = 0;
  double time = 0, dt = 0;
  double pressure_iterations = 0;  // per solve of the step
  double pressure_residual = 0;    // the worst relative residual of the step's solves
  Diagnostics d;
};

// The row as written (without its newline): doubles to 17 significant digits.
std::string diagnostics_row(const DiagnosticsRow& r, int obstacles);

class DiagnosticsCsv {
 public:
  // A fresh run (`after_step` < 0): DIR/diagnostics.csv created (or
  // replaced) with its header. A restart from step `after_step` in the
  // directory of its series: the file's rows up to that step kept, the rest
  // (and a row a killed run left unfinished) cut off, then appended to; a
  // missing file is begun anew. Throws one line naming the file when it
  // cannot be opened, or when its header is not this run's (another run's
  // columns: left as it was).
  DiagnosticsCsv(const std::string& dir, int obstacles, int64_t after_step);
  ~DiagnosticsCsv();
  DiagnosticsCsv(const DiagnosticsCsv&) = delete;
  DiagnosticsCsv& operator=(const DiagnosticsCsv&) = delete;

  // Appends the row; throws "<reason> writing DIR/diagnostics.csv".
  void write(const DiagnosticsRow& r);
  const std::string& path() const { return path_; }

 private:
  void continue_after(int64_t step);
  void put(const std::string& text);
  std::string path_;
  int obstacles_ = 0;
  int fd_ = -1;
};

}  // namespace sim

// SPDX-License-Identifier: MIT
// sim [OPTIONS] CONFIG: run a case; sim bench [OPTIONS] CONFIG: benchmark it.
// See README.md, docs/CONFIG.md and docs/PERFORMANCE.md.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>

#include "io/config_loader.hpp"
#include "sim/app/bench/bench.hpp"
#include "sim/app/cli.hpp"
#include "sim/app/run.hpp"
#include "sim/ranks/comm.hpp"

namespace {

// OpenMP reads OMP_WAIT_POLICY once, as the program loads. Unset, libgomp's
// idle threads spin at every barrier: on a machine whose cores other
// processes are using, the many short parallel regions of a step then wait
// for spinning threads to be scheduled (config/box.toml beside two busy
// processes on 2 cores: 300 steps in 60 s, 5.2 s with the passive policy).
// So, unless the user chose a policy (or a spin count), sim starts itself
// again with OMP_WAIT_POLICY=passive; if that fails it runs on as it is.
void prefer_passive_openmp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT") || std::getenv("SIM_OPENMP_POLICY_SET")) return;
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0 || setenv("SIM_OPENMP_POLICY_SET", "1", 1) != 0) return;
  execv("/proc/self/exe", argv);  // returns only on failure
}

// Started by mpirun (Open MPI, or a PMI launcher): the rank's variables
// are set. Only then does sim start MPI; a plain run never touches it.
const char* launcher_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* r = std::getenv(v)) return r;
  return nullptr;
}

// Standard input, output and error must be open before sim opens any file:
// a closed one's number would go to the first file opened (the output
// lock, a snapshot), and the report would be written into it. A closed one
// is opened on /dev/null; true if standard output was closed.
bool open_standard_streams() {
  bool out_closed = false;
  for (int fd : {0, 1, 2}) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int n = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (n >= 0 && n != fd) {
      ::dup2(n, fd);
      ::close(n);
    }
    if (fd == 1) out_closed = true;
  }
  return out_closed;
}

// The report on standard output must have been written: a write that
// failed (a full disk, /dev/full, a closed stream) turns a good run's
// status 0 into 1, with one line on standard error. A reader that left
// (`sim ... | head`) is no failure of the run: sim ignores SIGPIPE, so that
// write fails with EPIPE instead of killing a finished run with 141.
int check_report_written(int rc, bool out_closed, bool wrote, std::ostream& errors) {
  errno = 0;
  std::cout.flush();  // through stdio's buffer: its fflush sets errno where it fails
  int e = errno;
  const bool flushed = std::fflush(stdout) == 0;
  if (e == 0) e = errno;
  const bool failed = !flushed || std::ferror(stdout) != 0 || std::cout.fail();
  std::string why;
  if (out_closed && wrote) why = "standard output is closed";
  else if (failed && e != EPIPE) why = e != 0 ? std::strerror(e) : "write failed";
  if (why.empty()) return rc;
  errors << "sim: error: cannot write the run's report to standard output: " << why << "\n";
  return rc == 0 ? 1 : rc;
}

}  // namespace

int main(int argc, char** argv) {
  prefer_passive_openmp(argv);
  const bool out_closed = open_standard_streams();
  std::signal(SIGPIPE, SIG_IGN);
  const char* rank = launcher_rank();
  // Every rank parses the same command line and config: ranks other than 0
  // keep their copies of the same one-line error to themselves.
  std::ostream null_stream(nullptr);
  std::ostream& errors = rank && std::string(rank) != "0" ? null_stream : std::cerr;
  sim::CliOptions cli;
  const int rc = sim::parse_cli(argc, argv, cli, errors);
  if (rc >= 0) return rc;
  if (cli.command != sim::Command::bench) sim::install_stop_signals();  // before any work
  std::optional<sim::MpiSession> mpi;
  if (rank && sim::MpiSession::built_with_mpi()) mpi.emplace(&argc, &argv);
  bool wrote = true;  // whether the run writes a report to standard output
  const int status = [&] {
    try {
      sim::RunOptions opts;
      const sim::Config cfg = sim::load_config(cli.config_path, sim::cli_overrides(cli), &opts.case_choices);
      if (mpi) opts.comm = sim::Comm::world();
      if (cli.command == sim::Command::bench) {
        if (opts.comm.size() > 1) return sim::run_bench_ranks(cfg, cli.bench, opts.comm, std::cout, std::cerr);
        return sim::run_bench(cfg, cli.bench, std::cout, std::cerr);
      }
      opts.quiet = cli.quiet;
      wrote = !cli.quiet;
      if (cli.restart) opts.restart = *cli.restart;
      opts.overwrite = cli.overwrite;
      if (cli.summary_json) opts.summary_json = *cli.summary_json;
      if (cli.progress_every) opts.progress_every = *cli.progress_every;
      return sim::run_simulation(cfg, opts, std::cout, std::cerr);
    } catch (const sim::ConfigError& e) {
      errors << "sim: error: " << sim::error_line(e.what()) << "\n";
      wrote = false;
      return 2;
    } catch (const std::exception& e) {
      errors << "sim: error: " << sim::error_line(e.what()) << "\n";
      wrote = false;
      return 1;
    }
  }();
  // ranks other than 0 write no report
  return &errors == &std::cerr ? check_report_written(status, out_closed, wrote, errors) : status;
}

// SPDX-License-Identifier: MIT
// The command line: parsed in process as main() parses it, and the sim
// executable run as a child process.
#pragma once
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/cli.hpp"

namespace sim::test {

struct Parsed {
  int code;  // -1: go on and run; otherwise the exit status
  CliOptions options;
  std::string out, err;
};

// parse_cli on `sim ARGS`.
inline Parsed parse_args(std::vector<std::string> args) {
  args.insert(args.begin(), "sim");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  Parsed p{};
  std::ostringstream out, err;
  p.code = parse_cli(static_cast<int>(args.size()), argv.data(), p.options, out, err);
  p.out = out.str();
  p.err = err.str();
  return p;
}

#ifdef SIM_EXECUTABLE
struct SimResult {
  int status = -1;  // exit status, -1 when killed by a signal
  std::string out;  // stdout and stderr together
};

// `sim ARGS` through the shell (ARGS quoted by the caller where needed).
// `env`: a prefix such as "env -u OMP_NUM_THREADS" (empty: the suite's environment).
// A shell command line: its exit status and what it printed.
inline SimResult run_command(const std::string& cmd) {
  SimResult r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p)) r.out += buf.data();
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline SimResult run_sim(const std::string& args, const std::string& env = "") {
  return run_command((env.empty() ? "" : env + " ") + std::string(SIM_EXECUTABLE) + " " + args + " 2>&1");
}

// `bash -c SCRIPT` (SCRIPT single-quote free): its exit status and what its
// standard error (and any standard output not redirected) printed.
inline SimResult run_shell(const std::string& script) { return run_command("bash -c '" + script + "' 2>&1"); }

// `sim ARGS` started as a child process with stdout to /dev/null; its pid
// (for kill and waitpid), or -1.
inline pid_t start_sim(const std::vector<std::string>& args) {
  std::string exe = SIM_EXECUTABLE;
  std::vector<std::string> copy = args;
  std::vector<char*> argv{exe.data()};
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!std::freopen("/dev/null", "w", stdout)) ::_exit(126);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}
#endif

}  // namespace sim::test

// SPDX-License-Identifier: MIT
// Ctrl-C (SIGINT) ends a run cleanly: the step in flight finishes, the final
// snapshot is written, the exit status is 130, and the run restarts from it.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>

#include "support/cli.hpp"
#include "support/io.hpp"

namespace fs = std::filesystem;

TEST_CASE("run: SIGINT stops after a step, writes the final snapshot, and the run restarts from it") {
  const fs::path dir = sim::test::scratch_dir("sigint");
  const std::string cfg = sim::test::source_path("config/cavity.toml");
  const pid_t child =
      sim::test::start_sim({"--backend", "cpu", "--steps", "100000000", "--output=" + dir.string(), cfg});
  REQUIRE(child > 0);
  // the initial snapshot on disk means the steps have begun (a loaded
  // machine, or a sanitizer build, can take longer than a fixed wait)
  for (int i = 0; i < 600 && !fs::exists(dir / "snap_000000.h5"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  kill(child, SIGINT);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  fs::path snap;
  // The series holds the initial snapshot (step 0) too, and a directory
  // lists in no particular order: the final snapshot is the latest step.
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".h5" && (snap.empty() || e.path().filename() > snap.filename())) snap = e.path();
  REQUIRE(!snap.empty());
  CHECK(fs::exists(dir / "sim.xdmf"));
  const int64_t step = std::stoll(snap.stem().string().substr(5));
  CHECK(step > 0);
  const std::string restart = std::string(SIM_EXECUTABLE) + " --quiet --backend cpu --steps " +
                              std::to_string(step + 5) + " --output " + dir.string() + " --restart " + snap.string() +
                              " " + cfg;
  CHECK(sim::test::shell(restart) == 0);
  char name[32];
  std::snprintf(name, sizeof name, "snap_%06lld.h5", static_cast<long long>(step + 5));
  CHECK(fs::exists(dir / name));
}

// SIGTERM, SIGHUP (the terminal closed) and SIGUSR1/2 end a run as Ctrl-C
// does: after a step, the final snapshot written, no .tmp left, status 128
// + the signal's number, one line naming the signal. SIGHUP and SIGUSR1
// used to kill the run without its snapshot, leaving snap_*.h5.<pid>.tmp.
TEST_CASE("run: SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 stop after a step with the snapshot, status 128 + signal") {
  const std::string cfg = sim::test::source_path("config/cavity.toml");
  const std::pair<int, const char*> signals[] = {{SIGTERM, "SIGTERM"}, {SIGHUP, "SIGHUP"}, {SIGUSR1, "SIGUSR1"},
                                                 {SIGUSR2, "SIGUSR2"}};
  for (const auto& [sig, name] : signals) {
    INFO(name);
    const fs::path dir = sim::test::scratch_dir(std::string("signal_") + name);
    const pid_t child =
        sim::test::start_sim({"--backend", "cpu", "--steps", "100000000", "--output=" + dir.string(), cfg});
    REQUIRE(child > 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    kill(child, sig);
    int status = 0;
    waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 128 + sig);
    int snaps = 0, tmps = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      snaps += e.path().extension() == ".h5";
      tmps += e.path().string().find(".tmp") != std::string::npos;
    }
    CHECK(snaps >= 1);  // the periodic ones and the final one
    CHECK(tmps == 0);
    CHECK(fs::exists(dir / "sim.xdmf"));
  }
}

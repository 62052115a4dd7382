// Ctrl-C (SIGINT) ends a run cleanly: the step in flight finishes, the final
// snapshot is written, the exit status is 130, and the run restarts from it.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

namespace fs = std::filesystem;

TEST_CASE("run: SIGINT stops after a step, writes the final snapshot, and the run restarts from it") {
  const fs::path dir = fs::temp_directory_path() / ("sim_sigint_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string cfg = std::string(SIM_SOURCE_DIR) + "/config/cavity.toml";
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const std::string out = "--output=" + dir.string();
    freopen("/dev/null", "w", stdout);
    execl(SIM_EXECUTABLE, SIM_EXECUTABLE, "--backend", "cpu", "--steps", "100000000", out.c_str(), cfg.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(child, SIGINT);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  fs::path snap;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".h5") snap = e.path();
  REQUIRE(!snap.empty());
  CHECK(fs::exists(dir / "sim.xdmf"));
  const int64_t step = std::stoll(snap.stem().string().substr(5));
  CHECK(step > 0);
  const std::string restart = std::string(SIM_EXECUTABLE) + " --quiet --backend cpu --steps " +
                              std::to_string(step + 5) + " --output " + dir.string() + " --restart " + snap.string() +
                              " " + cfg;
  CHECK(std::system(restart.c_str()) == 0);
  char name[32];
  std::snprintf(name, sizeof name, "snap_%06lld.h5", static_cast<long long>(step + 5));
  CHECK(fs::exists(dir / name));
  fs::remove_all(dir);
}

// The sim binary end to end: exit statuses and one-line messages a user sees.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace {

struct Result {
  int status = -1;
  std::string out;  // stdout and stderr together
};

Result sim_run(const std::string& args) {
  const std::string cmd = std::string(SIM_EXECUTABLE) + " " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p)) r.out += buf.data();
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

const std::string box = std::string(SIM_SOURCE_DIR) + "/config/box.toml";
const std::string small = " --set domain.nx=16 --set domain.ny=16 --set particles.regions[0].count=50 ";

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("cli: a config error is one line naming file, line and column, with status 2") {
  const std::string dir = std::filesystem::temp_directory_path() / ("sim_cli_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string bad = dir + "/bad.toml";
  FILE* f = fopen(bad.c_str(), "w");
  REQUIRE(f != nullptr);
  fputs("[fluid]\nviscosity = -1.0\n", f);
  fclose(f);
  const Result r = sim_run(bad);
  CHECK(r.status == 2);
  CHECK(lines(r.out) == 1);
  CHECK(r.out == "sim: error: " + bad + ":2:13: fluid.viscosity: expected a number >= 0, got -1.0\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: --backend auto runs, and says in one line when it runs on the CPU") {
  const std::string out = std::filesystem::temp_directory_path() / ("sim_auto_" + std::to_string(getpid()));
  const Result r = sim_run("--backend auto --steps 3 --output " + out + small + box);
  CHECK(r.status == 0);
  const bool on_gpu = r.out.find("backend: cuda") != std::string::npos;
  if (!on_gpu) CHECK(r.out.find("running on the CPU backend") != std::string::npos);
  CHECK(r.out.find("3 steps") != std::string::npos);
  std::filesystem::remove_all(out);
}

TEST_CASE("cli: an unwritable output directory stops the run before its first step") {
  const Result r = sim_run("--backend cpu --steps 3 --output /proc/sim_cannot_write" + small + box);
  CHECK(r.status == 1);
  CHECK(lines(r.out) == 1);
  CHECK(r.out.find("/proc/sim_cannot_write") != std::string::npos);
}

TEST_CASE("cli: --backend cuda without CUDA support or without a device is a one-line error") {
  const Result r = sim_run("--backend cuda --steps 1 --output /tmp/sim_cli_cuda" + small + box);
  if (r.out.find("backend: cuda") != std::string::npos) return;  // a GPU is present
  CHECK(r.status == 1);
  CHECK(lines(r.out) == 1);
  CHECK((r.out.find("no CUDA device available") != std::string::npos ||
         r.out.find("built without CUDA") != std::string::npos));
}

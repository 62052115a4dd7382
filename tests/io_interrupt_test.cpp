// SPDX-License-Identifier: MIT
// A run killed with SIGKILL at an arbitrary moment leaves only complete
// snapshot files under their final names and an index listing only them.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include "io/config_writer.hpp"
#include "io/snapshot_files.hpp"
#include "io/snapshot_reader.hpp"
#include "support/cli.hpp"
#include "support/io.hpp"

using namespace sim;

namespace {

// Snapshot files the index names, in order.
std::vector<std::string> indexed_files(const std::string& xdmf) {
  std::vector<std::string> files;
  const std::regex item(R"((snap_\d+\.h5):/grid/pressure)");
  for (std::sregex_iterator it(xdmf.begin(), xdmf.end(), item), end; it != end; ++it) files.push_back((*it)[1]);
  return files;
}

}  // namespace

TEST_CASE("io: SIGKILL mid-run leaves readable snapshots and a valid index") {
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    const std::string dir = test::scratch_dir("killed_" + std::to_string(round));
    const pid_t pid = test::start_sim({"--quiet", "--steps", "1000000", "--end-time", "1e9", "--snapshot-every", "1", "--backend", "cpu",
                                 "--set", "domain.nx=64", "--set", "domain.ny=64", "--set",
                                 "run.output=" + toml_string_literal(dir), test::source_path("config/box.toml")});
    REQUIRE(pid > 0);
    // Kill at a different point of the write cycle each round.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    const size_t want = 3 + round;
    while (std::chrono::steady_clock::now() < deadline) {
      if (indexed_files(test::read_text(join_path(dir, "sim.xdmf"))).size() >= want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(7 * round));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFSIGNALED(status));

    std::set<std::string> on_disk;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (!std::regex_match(name, std::regex(R"(snap_\d+\.h5)"))) continue;
      on_disk.insert(name);
      CAPTURE(name);
      CHECK_NOTHROW(read_snapshot(e.path().string()));
    }
    const std::string xdmf = test::read_text(join_path(dir, "sim.xdmf"));
    const std::vector<std::string> listed = indexed_files(xdmf);
    CHECK(listed.size() >= want);
    for (const std::string& f : listed) CHECK(on_disk.count(f) == 1);
    CHECK(xdmf.size() > 7);
    CHECK(xdmf.compare(xdmf.size() - 8, 8, "</Xdmf>\n") == 0);
    const std::string python = test::python_with("xml.etree.ElementTree");
    if (!python.empty())
      CHECK(test::shell(python + " -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' " +
                          test::quoted(join_path(dir, "sim.xdmf"))) == 0);
  }
}

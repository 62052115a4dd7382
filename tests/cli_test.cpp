// SPDX-License-Identifier: MIT
// The command line: options parsed in process as main() parses them, and the
// sim binary end to end (exit statuses and the one-line messages a user sees).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "io/config_loader.hpp"
#include "io/output_lock.hpp"
#include "io/snapshot_files.hpp"
#include "io/snapshot_reader.hpp"
#include "sim/app/backend_factory.hpp"
#include "sim/app/memory_check.hpp"
#include "support/cases.hpp"
#include "support/cli.hpp"
#include "support/io.hpp"

using namespace sim;
using test::Parsed;
using test::parse_args;

namespace {

const std::string box = test::source_path("config/box.toml");
const std::string small = " --set domain.nx=16 --set domain.ny=16 --set particles.regions[0].count=50 ";

}  // namespace

TEST_CASE("cli: options become --set overrides after the explicit ones") {
  const Parsed r = parse_args({"--steps", "5", "--layout=aos", "--set", "fluid.viscosity=0.002", "--set",
                               "run.steps=9", "--pressure-solver", "jacobi", "--block-x", "32", "--seed", "7",
                               "--output", "my \"dir\"", "--quiet", "box.toml"});
  REQUIRE(r.code == -1);
  CHECK(r.err.empty());
  CHECK(r.options.config_path == "box.toml");
  CHECK(r.options.steps == 5);
  CHECK(r.options.strategies.at("layout") == "aos");
  CHECK(r.options.quiet);
  CHECK(r.options.strategies.count("backend") == 0);
  CHECK(r.options.sets == std::vector<std::string>{"fluid.viscosity=0.002", "run.steps=9"});
  CHECK(cli_overrides(r.options) ==
        std::vector<std::string>{"fluid.viscosity=0.002", "run.steps=9", "run.steps=5", "run.seed=7",
                                 "run.output=\"my \\\"dir\\\"\"", "run.layout=\"aos\"", "pressure.solver=\"jacobi\"",
                                 "gpu.block_x=32"});
  const Config c = load_config_string("", "t.toml", cli_overrides(r.options));
  CHECK(c.steps == 5);
  CHECK(c.viscosity == 0.002);
  CHECK(c.output == "my \"dir\"");
  CHECK(c.layout == Layout::aos);
  CHECK(c.solver == PressureSolverKind::jacobi);
  CHECK(c.block_x == 32);
  CHECK(c.seed == 7u);
}

TEST_CASE("cli: a single --set does not swallow the config path") {
  const Parsed r = parse_args({"--set", "run.steps=3", "case.toml", "--restart", "snap.h5"});
  REQUIRE(r.code == -1);
  CHECK(r.options.config_path == "case.toml");
  CHECK(r.options.sets == std::vector<std::string>{"run.steps=3"});
  CHECK(r.options.restart == "snap.h5");
  CHECK(parse_args({"--layout", "soa", "--layout=aos", "case.toml"}).options.strategies.at("layout") == "aos");
  // Typed values are checked by the config loader, like the file.
  const Parsed neg = parse_args({"--steps", "-5", "case.toml"});
  REQUIRE(neg.code == -1);
  CHECK(test::config_error("", cli_overrides(neg.options)) == "--set run.steps=-5: run.steps: expected an integer >= 0, got -5");
}

// "auto" leaves a strategy to the case from the command line too, as in
// a config file; gpu.sort_every, an integer, takes it, gpu.block_x not.
TEST_CASE("cli: the GPU strategies take auto") {
  const auto r = parse_args({"--sort-every", "auto", "--deposit", "auto", "--stencil=auto", "box.toml"});
  REQUIRE(r.code == -1);
  CHECK(cli_overrides(r.options) ==
        std::vector<std::string>{"gpu.stencil=\"auto\"", "gpu.deposit=\"auto\"", "gpu.sort_every=\"auto\""});
  const Config c = load_config_string("[[particles.regions]]\nx1 = 1.0\ny1 = 1.0\ncount = 10\n", "t.toml",
                                      cli_overrides(r.options));
  CHECK(c.sort_every == 0);
  CHECK(c.deposit == Deposit::fixed);
  CHECK(c.stencil == Stencil::ldg);
  CHECK(parse_args({"--sort-every", "never", "box.toml"}).err ==
        "sim: error: --sort-every: expected an integer or \"auto\", got never\n");
  CHECK(parse_args({"--block-x", "auto", "box.toml"}).err ==
        "sim: error: --block-x: expected an integer, got auto\n");
}

TEST_CASE("cli: usage errors exit 2 with one line") {
  CHECK(parse_args({"--layout", "xyz", "box.toml"}).err == "sim: error: --layout: expected one of aos|soa, got \"xyz\"\n");
  CHECK(parse_args({"--layout", "xyz", "box.toml"}).code == 2);
  CHECK(parse_args({"--deposit=none", "box.toml"}).err == "sim: error: --deposit: expected one of auto|atomic|sorted|gather|fixed, got \"none\"\n");
  CHECK(parse_args({}).err == "sim: error: CONFIG is required\n");
  CHECK(parse_args({"--steps", "abc", "box.toml"}).code == 2);
  CHECK(parse_args({"--seed", "18446744073709551615", "box.toml"}).err ==
        "sim: error: --seed: expected an integer in [0, 9223372036854775807], got 18446744073709551615\n");
  CHECK(parse_args({"--bogus", "box.toml"}).code == 2);
  CHECK(parse_args({"a.toml", "b.toml"}).code == 2);
  for (const char* bad : {"--steps", "--bogus", "--seed"}) {
    const std::string err = parse_args({bad, "abc", "box.toml"}).err;
    INFO(err);
    CHECK(err.rfind("sim: error: ", 0) == 0);
    CHECK(err.find('\n') == err.size() - 1);
  }
}

TEST_CASE("cli: --version and --help print to stdout and exit 0") {
  const Parsed v = parse_args({"--version"});
  CHECK(v.code == 0);
  // the version of project(VERSION) in CMakeLists.txt, its one place, and the commit
  const std::string cmake = test::read_text(std::string(SIM_SOURCE_DIR) + "/CMakeLists.txt");
  const size_t at = cmake.find("project(sim VERSION ");
  REQUIRE(at != std::string::npos);
  const size_t from = at + std::string("project(sim VERSION ").size();
  const std::string version = cmake.substr(from, cmake.find(' ', from) - from);
  CHECK(version == SIM_VERSION);
  const std::string head = "sim " + version + " (commit ";
  INFO(v.out);
  CHECK(v.out.rfind(head, 0) == 0);
  CHECK(v.out.size() > head.size() + 3);
  CHECK(v.out.substr(v.out.size() - 2) == ")\n");
  CHECK(v.err.empty());
  const Parsed h = parse_args({"--help"});
  CHECK(h.code == 0);
  for (const char* opt : {"--steps", "--layout", "--set", "--pressure-solver", "--block-y", "CONFIG", "aos|soa"})
    CHECK(h.out.find(opt) != std::string::npos);
}

TEST_CASE("cli: a config error is one line naming file, line and column, with status 2") {
  const std::string bad = test::scratch_dir("cli_config_error") + "/bad.toml";
  test::write_text(bad, "[fluid]\nviscosity = -1.0\n");
  const test::SimResult r = test::run_sim(bad);
  CHECK(r.status == 2);
  CHECK(test::count_lines(r.out) == 1);
  CHECK(r.out == "sim: error: " + bad + ":2:13: fluid.viscosity: expected a number >= 0, got -1.0\n");
}

TEST_CASE("cli: --backend auto runs, and says in one line when it runs on the CPU") {
  const std::string out = test::scratch_dir("cli_auto");
  const test::SimResult r = test::run_sim("--backend auto --steps 3 --output " + out + small + box);
  CHECK(r.status == 0);
  const bool on_gpu = r.out.find("backend: cuda") != std::string::npos;
  if (!on_gpu) CHECK(r.out.find("running on the CPU backend") != std::string::npos);
  CHECK(r.out.find("3 steps") != std::string::npos);
}

// --summary-json: the summary's figures as JSON, read back by a second
// reader (Python's json) where there is one; a file that cannot be
// written fails the run in one line and leaves what was there.
TEST_CASE("cli: --summary-json writes the summary as JSON, whole or not at all") {
  const std::string dir = test::scratch_dir("cli_summary_json");
  const std::string json = dir + "/summary.json";
  const test::SimResult r =
      test::run_sim("--backend cpu --steps 3 --output " + dir + "/run --summary-json " + json + small + box);
  REQUIRE(r.status == 0);
  const std::string text = test::read_text(json);
  INFO(text);
  for (const char* key : {"\"version\": \"sim ", "\"steps\": 3,", "\"pressure\": {\"iterations_per_step\": ",
                          "\"phase_ms\": {\"momentum\": ", "\"answer_check\": \"passed\"", "\"particles\": {\"alive\": "})
    CHECK(text.find(key) != std::string::npos);
  if (test::shell("python3 -c 'import json' 2>/dev/null") == 0)
    CHECK(test::shell("python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d[\"steps\"] == 3' '" +
                      json + "'") == 0);
  // a directory in the file's place: the run fails with one line, the directory stays
  const std::string blocked = dir + "/blocked.json";
  std::filesystem::create_directories(blocked + "/inside");
  const test::SimResult b = test::run_sim("--backend cpu --steps 3 --output " + dir + "/run2 --summary-json " +
                                          blocked + small + box);
  CHECK(b.status == 1);
  CHECK(b.out.find("--summary-json " + blocked) != std::string::npos);
  CHECK(std::filesystem::is_directory(blocked + "/inside"));
}

// A batch run (output not a terminal, as here) prints its progress on
// stderr every --progress-every seconds, none with 0.
TEST_CASE("cli: a batch run shows its progress every --progress-every seconds") {
  const std::string dir = test::scratch_dir("cli_progress");
  const test::SimResult r =
      test::run_sim("--backend cpu --steps 20 --progress-every 1e-9 --output " + dir + "/run" + small + box);
  REQUIRE(r.status == 0);
  INFO(r.out);
  CHECK(r.out.find("sim: progress: step 1/20  t = ") != std::string::npos);
  CHECK(r.out.find("sim: progress: step 20/20") != std::string::npos);
  const test::SimResult q = test::run_sim("--backend cpu --steps 20 --progress-every 0 --output " + dir +
                                          "/quiet" + small + box);
  REQUIRE(q.status == 0);
  CHECK(q.out.find("sim: progress:") == std::string::npos);
  const test::SimResult bad = test::run_sim("--backend cpu --progress-every -1 --output " + dir + "/bad" + small + box);
  CHECK(bad.status == 2);
}

TEST_CASE("cli: an unwritable output directory stops the run before its first step") {
  const test::SimResult r = test::run_sim("--backend cpu --steps 3 --output /proc/sim_cannot_write" + small + box);
  CHECK(r.status == 1);
  CHECK(test::count_lines(r.out) == 1);
  CHECK(r.out.find("/proc/sim_cannot_write") != std::string::npos);
}

TEST_CASE("cli: --backend cuda without CUDA support or without a device is a one-line error") {
  const std::string out = test::scratch_dir("cli_cuda");
  const test::SimResult r = test::run_sim("--backend cuda --steps 1 --output " + out + small + box);
  if (r.out.find("backend: cuda") != std::string::npos) return;  // a GPU is present
  CHECK(r.status == 1);
  CHECK(test::count_lines(r.out) == 1);
  CHECK((r.out.find("no CUDA device available") != std::string::npos ||
         r.out.find("built without CUDA") != std::string::npos));
}

// ---- output directory: faults, one run at a time, another run's snapshots ----

namespace {

// Every snapshot sim.xdmf names exists and reads back; returns how many.
int check_index(const std::string& dir) {
  const std::string index = test::read_text(dir + "/sim.xdmf");
  std::set<std::string> names;
  for (size_t at = index.find(">snap_"); at != std::string::npos; at = index.find(">snap_", at + 1))
    names.insert(index.substr(at + 1, index.find(':', at) - at - 1));
  for (const std::string& name : names) {
    INFO(name);
    CHECK(read_snapshot_header(dir + "/" + name).step >= 0);
  }
  return static_cast<int>(names.size());
}

bool has_tmp(const std::string& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".tmp") return true;
  return false;
}

// A tmpfs of `size` mounted on `dir` for the test's life; not mounted (the
// test says it skips) where this process may not mount.
struct SmallDisk {
  std::string dir;
  bool mounted = false;
  SmallDisk(std::string d, const std::string& size) : dir(std::move(d)) {
    mounted = test::shell("mount -t tmpfs -o size=" + size + " sim_test " + test::quoted(dir) + " 2>/dev/null") == 0;
    if (!mounted) MESSAGE("skipped: cannot mount a small tmpfs here (needs root and mount rights)");
  }
  ~SmallDisk() {
    if (mounted) test::shell("umount " + test::quoted(dir));
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
};

}  // namespace

TEST_CASE("cli: a full disk stops the run with one line, earlier snapshots intact") {
  const std::string dir = test::scratch_dir("cli_full_disk");
  // 300 KiB: room for the first snapshot of this case (about 180 KiB), not the second.
  const SmallDisk disk(dir, "300k");
  if (!disk.mounted) return;
  const test::SimResult r =
      test::run_sim("--backend cpu --steps 20 --snapshot-every 5 --output " + dir + "/box --set domain.nx=64"
                    " --set domain.ny=64 --set particles.regions[0].count=500 --set run.snapshot_initial=false " + box);
  INFO(r.out);
  CHECK(r.status == 1);  // an exit status, not a signal (-1)
  CHECK(r.out.find("sim: error: no space left on device writing " + dir + "/box/snap_0000") != std::string::npos);
  CHECK(r.out.find("HDF5") == std::string::npos);
  CHECK(r.out.substr(r.out.find("sim: error:")).find('\n') == r.out.size() - r.out.find("sim: error:") - 1);
  CHECK(read_snapshot_header(dir + "/box/snap_000005.h5").step == 5);
  CHECK(check_index(dir + "/box") >= 1);
  CHECK_FALSE(has_tmp(dir + "/box"));
}

// The index is written before the first snapshot: a disk that fills up
// at any point of the first write never leaves a snapshot without a valid
// index beside it (one the index does not list yet, at most). The free space is set around what the first snapshot needs, a page
// at a time, so one of the runs fills the disk between the snapshot and
// the index. Catches: the index written only after the snapshot (a
// snapshot with no index, where the docs promise the index stays valid).
TEST_CASE("cli: a disk full at the first write leaves no snapshot without a valid index") {
  const std::string probe = test::scratch_dir("cli_first_write_probe");
  const std::string args = " --backend cpu --steps 1 --snapshot-every 0 --set run.snapshot_initial=false" + small + box;
  REQUIRE(test::run_sim("--output " + probe + args).status == 0);
  const auto snapshot_bytes = std::filesystem::file_size(probe + "/snap_000001.h5");
  const std::string dir = test::scratch_dir("cli_first_write");
  const SmallDisk disk(dir, "1m");
  if (!disk.mounted) return;
  const uint64_t page = 4096, pages = (snapshot_bytes + page - 1) / page;
  int failed = 0;
  for (uint64_t room = pages - 1; room <= pages + 2; ++room) {
    INFO("room for " << room << " pages; the snapshot takes " << snapshot_bytes << " bytes");
    REQUIRE(test::shell("rm -rf " + test::quoted(dir) + "/* " + test::quoted(dir) + "/.sim.lock") == 0);
    // the lock file takes a page; the filler the rest beyond `room`
    const uint64_t fill = free_bytes(dir) - (room + 1) * page;
    REQUIRE(test::shell("head -c " + std::to_string(fill) + " /dev/zero > " + test::quoted(dir + "/filler")) == 0);
    const test::SimResult r = test::run_sim("--output " + dir + args);
    failed += r.status != 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("snap_", 0) != 0) continue;
      INFO(n << "; " << r.out);
      REQUIRE(std::filesystem::exists(dir + "/sim.xdmf"));
      check_index(dir);  // every snapshot it names reads back
    }
    CHECK_FALSE(has_tmp(dir));
  }
  CHECK(failed >= 1);  // the disk really filled up
}

TEST_CASE("cli: a write error mid-run (file size limit) stops the run with one line, no signal") {
  const std::string dir = test::scratch_dir("cli_write_error");
  // no initial snapshot: the index of three would pass the limit below itself
  const std::string args =
      "--backend cpu --snapshot-every 2 --set run.snapshot_initial=false --output " + dir + small + box;
  REQUIRE(test::run_sim("--steps 4 " + args).status == 0);
  // Continue the series under a 16 KiB file-size limit: the next snapshot
  // (about 30 KiB) cannot be written, the ones on disk must stay as they are.
  const std::string log = dir + "/log.txt";
  const int status = test::shell("ulimit -f 16; " + std::string(SIM_EXECUTABLE) + " --restart " + dir +
                                 "/snap_000004.h5 --steps 8 " + args + " > " + log + " 2>&1");
  const std::string out = test::read_text(log);
  INFO(out);
  CHECK(status == 1);  // SIGXFSZ would read 153 here
  CHECK(out.find("sim: error: file too large writing " + dir + "/snap_000006.h5\n") != std::string::npos);
  CHECK(check_index(dir) == 2);
  CHECK_FALSE(has_tmp(dir));
}

TEST_CASE("cli: a second run into the same output directory refuses at once, naming the first") {
  const std::string dir = test::scratch_dir("cli_lock");
  // box.toml ends at 1.356 s: --end-time keeps the first run going
  const pid_t first = test::start_sim({"--backend", "cpu", "--steps", "100000000", "--end-time", "1e9", "--snapshot-every", "0", "--output",
                                       dir, "--set", "domain.nx=16", "--set", "domain.ny=16", "--set",
                                       "particles.regions[0].count=50", box});
  REQUIRE(first > 0);
  struct Reap {  // the first run ends with the test, whatever fails
    pid_t pid;
    int status = 0;
    ~Reap() {
      if (pid > 0) ::kill(pid, SIGKILL), ::waitpid(pid, &status, 0);
    }
  } reap{first};
  // The first run holds the lock once its pid is in the lock file.
  const std::string pid = std::to_string(first);
  for (int i = 0; i < 200 && test::read_text(dir + "/.sim.lock") != pid + "\n"; ++i) ::usleep(50000);
  REQUIRE(test::read_text(dir + "/.sim.lock") == pid + "\n");
  const test::SimResult second = test::run_sim("--backend cpu --steps 3 --output " + dir + small + box);
  CHECK(second.status == 1);
  CHECK(second.out == "sim: error: output directory '" + dir + "' is in use by another run (pid " + pid + ")\n");
  // SIGTERM: the first ends cleanly, writing its last snapshot; once it has
  // ended, the directory is free for a restart from that snapshot.
  ::kill(first, SIGTERM);
  int st = 0;
  REQUIRE(::waitpid(first, &st, 0) == first);
  reap.pid = -1;
  CHECK(WIFEXITED(st));
  CHECK(series_files(dir).size() == 4);  // its initial and last snapshots, sim.xdmf and diagnostics.csv
  CHECK(test::run_sim("--backend cpu --steps 2 --overwrite --output " + dir + small + box).status == 0);
}

TEST_CASE("cli: another run's snapshots are refused without --overwrite, removed with it") {
  const std::string dir = test::scratch_dir("cli_stale");
  const std::string args = " --backend cpu --snapshot-every 2 --output " + dir + small + box;
  REQUIRE(test::run_sim("--steps 6" + args).status == 0);
  const test::SimResult refused = test::run_sim("--steps 2" + args);
  CHECK(refused.status == 1);
  CHECK(refused.out == "sim: error: output directory '" + dir + "' holds snapshots of another run (sim.xdmf and 5 "
                       "more); pass --overwrite to replace them or --restart one of them\n");
  CHECK(read_snapshot_header(dir + "/snap_000006.h5").step == 6);
  CHECK(check_index(dir) == 4);  // 0 (the initial state), 2, 4, 6

  // A restart from one of them continues that series.
  CHECK(test::run_sim("--steps 8 --restart " + dir + "/snap_000004.h5" + args).status == 0);
  CHECK(check_index(dir) == 5);

  const test::SimResult replaced = test::run_sim("--steps 2 --overwrite" + args);
  CHECK(replaced.status == 0);
  CHECK(check_index(dir) == 2);
  for (int step : {4, 6, 8}) CHECK_FALSE(std::filesystem::exists(dir + "/" + snapshot_file_name(step)));
}

// --overwrite sets the old series aside and removes it only once the new
// run has results; a run that fails first puts it back. Only files sim
// recognises as its own are touched. Catches: the old snapshots deleted
// before a restart file was checked or step 1 ran (a corrupt restart, a
// restart with nothing to do, a blow-up at step 1 left the directory
// empty), and any snap_*.h5 / *.tmp removed by name, whoever wrote it.
TEST_CASE("cli: --overwrite keeps the old series until the new run has results, and touches only sim's files") {
  const std::string dir = test::scratch_dir("cli_overwrite");
  const std::string elsewhere = test::scratch_dir("cli_overwrite_restart");
  const std::string args = " --backend cpu --snapshot-every 2 --output " + dir + small + box;
  REQUIRE(test::run_sim("--steps 4" + args).status == 0);
  REQUIRE(test::run_sim("--steps 4 --backend cpu --output " + elsewhere + small + box).status == 0);
  // a process that has ended: its pid names the killed writer's temporaries
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  REQUIRE(dead > 0);
  ::waitpid(dead, nullptr, 0);
  const std::string pid = std::to_string(dead);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name, std::ios::binary) << text;
  };
  const std::string hdf5_signature("\x89HDF\r\n\x1a\n", 8);
  write("snap_notes.h5", "the user's notes\n");        // not sim's name
  write("sim.xdmf." + pid + ".tmp.bak", "kept\n");     // not a temporary's name
  write("snap_000002.h5." + pid + ".tmp", "not HDF5");  // a temporary's name, not sim's content
  write("snap_000008.h5." + pid + ".tmp", hdf5_signature + "partial");  // a killed writer's
  write("sim.xdmf." + pid + ".tmp", "");                                // a killed writer's, empty
  const std::vector<std::string> old = {"diagnostics.csv", "sim.xdmf", "snap_000000.h5", "snap_000002.h5",
                                        "snap_000004.h5"};
  CHECK(series_files(dir) == old);
  const std::string old_summary = test::read_text(dir + "/summary.json");
  CHECK(old_summary.find("\"steps\": 4,") != std::string::npos);
  auto old_series_intact = [&] {
    CHECK(series_files(dir) == old);
    CHECK(check_index(dir) == 3);
    CHECK(read_snapshot_header(dir + "/snap_000004.h5").step == 4);
    CHECK(test::read_text(dir + "/summary.json") == old_summary);  // a failed run leaves the summary too
  };
  // runs that fail before any result: the old series is back, whole
  const test::SimResult corrupt = test::run_sim("--steps 4 --overwrite --restart " + dir + "/snap_notes.h5" + args);
  CHECK(corrupt.status == 1);
  old_series_intact();
  const test::SimResult nothing =
      test::run_sim("--steps 4 --overwrite --restart " + elsewhere + "/snap_000004.h5" + args);
  CHECK(nothing.status == 1);
  CHECK(nothing.out.find("nothing to do") != std::string::npos);
  old_series_intact();
  const test::SimResult blew_up = test::run_sim("--steps 4 --overwrite --set gravity.y=-1e38" + args);
  CHECK(blew_up.status == 1);
  CHECK(blew_up.out.find("non-finite value at step 1") != std::string::npos);
  old_series_intact();
  // the proven temporaries of the killed writer went with the first of these runs
  CHECK_FALSE(std::filesystem::exists(dir + "/snap_000008.h5." + pid + ".tmp"));
  CHECK_FALSE(std::filesystem::exists(dir + "/sim.xdmf." + pid + ".tmp"));

  // a run with results replaces the series, and only it
  const test::SimResult replaced = test::run_sim("--steps 3 --overwrite" + args);
  CHECK(replaced.status == 0);
  CHECK(series_files(dir) == std::vector<std::string>{"diagnostics.csv", "sim.xdmf", "snap_000000.h5",
                                                      "snap_000002.h5", "snap_000003.h5"});
  CHECK(check_index(dir) == 3);
  CHECK(test::read_text(dir + "/summary.json").find("\"steps\": 3,") != std::string::npos);
  for (const std::string& kept :
       {std::string("snap_notes.h5"), "sim.xdmf." + pid + ".tmp.bak", "snap_000002.h5." + pid + ".tmp"})
    CHECK_MESSAGE(std::filesystem::exists(dir + "/" + kept), kept);
  for (const auto& e : std::filesystem::directory_iterator(dir))
    CHECK_MESSAGE(e.path().filename().string().rfind(".sim-replaced", 0) != 0, e.path());

  // a file sim did not write under a name of its series is never replaced,
  // with or without --overwrite: the run is refused
  for (const std::string name : {"sim.xdmf", "snap_000009.h5", "diagnostics.csv"}) {
    const std::string foreign = test::scratch_dir("cli_overwrite_foreign");
    std::ofstream(foreign + "/" + name) << "the user's data\n";
    for (const std::string flag : {"", " --overwrite"}) {
      const test::SimResult r = test::run_sim("--steps 1 --backend cpu --output " + foreign + flag + small + box);
      CHECK(r.status == 1);
      CHECK(r.out == "sim: error: output directory '" + foreign + "' holds '" + name +
                         "' under a name of its series, not a file sim wrote and can read (another program's, or "
                         "damaged); move it or write elsewhere\n");
      CHECK(test::read_text(foreign + "/" + name) == "the user's data\n");
    }
  }
}

// Catches: an output path that is a link to nowhere refused as "File exists".
TEST_CASE("cli: an output directory that is a dangling symbolic link is named as such") {
  const std::string dir = test::scratch_dir("cli_dangling");
  const std::string link = dir + "/out";
  REQUIRE(::symlink((dir + "/missing").c_str(), link.c_str()) == 0);
  const test::SimResult r = test::run_sim("--backend cpu --steps 1 --output " + link + small + box);
  CHECK(r.status == 1);
  CHECK(r.out == "sim: error: output directory '" + link + "': a symbolic link to '" + dir +
                     "/missing', which does not exist\n");
  CHECK_FALSE(std::filesystem::exists(dir + "/missing"));
}

// ---- command-line edges ----

TEST_CASE("cli: out-of-range and empty values are usage errors") {
  CHECK(parse_args({"--steps", "99999999999999999999", "box.toml"}).err ==
        "sim: error: --steps: out of range of a 64-bit integer: 99999999999999999999\n");
  CHECK(parse_args({"--steps", "99999999999999999999", "box.toml"}).code == 2);
  CHECK(parse_args({"--steps", "", "box.toml"}).err == "sim: error: --steps: expected an integer, got an empty value\n");
  CHECK(parse_args({"--snapshot-every", "1x", "box.toml"}).code == 2);
  CHECK(parse_args({"--restart", "", "box.toml"}).err == "sim: error: --restart: expected a path, got an empty value\n");
  CHECK(parse_args({"--output", "", "box.toml"}).code == 2);
  CHECK(parse_args({""}).code == 2);
  CHECK(parse_args({"--steps", "+7", "box.toml"}).options.steps == 7);
}

TEST_CASE("cli: a huge argument is not echoed back") {
  const std::string huge(10 << 20, 'x');
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--layout", huge, "box.toml"}, {"--steps", huge, "box.toml"},
        {"--" + huge, "box.toml"}, {"box.toml", huge}, {"--seed", huge, "box.toml"}}) {
    const Parsed p = parse_args(args);
    CHECK(p.code == 2);
    CHECK(p.err.size() < 1100);  // error_line keeps at most 1024 characters and " [...] "
    CHECK(test::count_lines(p.err) == 1);
  }
  // End to end through a --set the config loader rejects (128 KiB: the most one argument may be).
  const test::SimResult r = test::run_sim("--set fluid.viscosity=" + std::string(100000, 'y') + " " + box);
  CHECK(r.status == 2);
  CHECK(r.out.size() < 1100);
  CHECK(test::count_lines(r.out) == 1);
}

TEST_CASE("cli: a control character or NUL in a path is refused before anything is created") {
  const std::string dir = test::scratch_dir("cli_control");
  const test::SimResult r = test::run_sim("--steps 1 --output \"$(printf '" + dir + "/a\\001b')\"" + small + box);
  CHECK(r.status == 2);
  CHECK(r.out.rfind("sim: error: --output: the path holds a control character (byte 1): ", 0) == 0);
  CHECK(test::count_lines(r.out) == 1);
  // A NUL can only come from TOML (a \u0000 escape); at the system call it would cut the path to DIR/a.
  const test::SimResult nul = test::run_sim("--steps 1 --set 'run.output=\"" + dir + "/a\\u0000b\"'" + small + box);
  CHECK(nul.status == 1);
  CHECK(nul.out.find("output directory: the path holds a control character (NUL)") != std::string::npos);
  CHECK(test::count_lines(nul.out) == 1);
  CHECK(std::filesystem::is_empty(dir));
}

TEST_CASE("cli: a restart with no steps left says so and fails") {
  const std::string dir = test::scratch_dir("cli_nothing");
  const std::string args = " --backend cpu --snapshot-every 0 --output " + dir + small + box;
  REQUIRE(test::run_sim("--steps 4" + args).status == 0);
  for (const char* steps : {"4", "3"}) {
    const test::SimResult r = test::run_sim(std::string("--steps ") + steps + " --restart " + dir + "/snap_000004.h5" + args);
    CHECK(r.status == 1);
    CHECK(r.out == "sim: error: nothing to do: the snapshot is at step 4 and --steps is " + std::string(steps) + "\n");
  }
}

// ---- sizes and counts: one line, before anything is allocated or created ----

TEST_CASE("cli: region counts that add up past 2^64 are a config error, not a division by zero") {
  const std::string dir = test::scratch_dir("cli_counts");
  const std::string file = dir + "/counts.toml";
  std::string text = "[run]\noutput = \"" + dir + "/out\"\n";
  for (int i = 0; i < 4; ++i)  // 4 x 2^62 = 2^64: wrapped to 0 slots, then id % 0 (SIGFPE)
    text += "[[particles.regions]]\nx0 = 0.1\ny0 = 0.1\nx1 = 0.9\ny1 = 0.9\ncount = 4611686018427387904\n";
  test::write_text(file, text);
  const test::SimResult r = test::run_sim("--backend cpu --steps 1 " + file);
  CHECK(r.status == 2);
  CHECK(r.out == "sim: error: " + file + ":14:9: particles.regions[1].count: the counts of particles.regions[0..1] add "
                 "up past 2^63 - 1 = 9223372036854775807 particles\n");
  CHECK_FALSE(std::filesystem::exists(dir + "/out"));
}

TEST_CASE("cli: a grid past the 32-bit index is a config error naming the key and the limit") {
  const std::string dir = test::scratch_dir("cli_grid_index");
  const test::SimResult r =
      test::run_sim("--backend cpu --steps 1 --output " + dir + "/out --set domain.nx=2147483647 " + box);
  CHECK(r.status == 2);
  CHECK(r.out == "sim: error: --set domain.nx=2147483647: domain.nx: 2147483647 x 96 cells need 2147483680 x 99 = "
                 "212600884320 storage points (pitch x rows); the 32-bit grid index allows fewer than 2^31 (e.g. 46333 "
                 "x 46333 cells)\n");
  CHECK_FALSE(std::filesystem::exists(dir + "/out"));
}

TEST_CASE("cli: particle counts that no machine holds are refused with the memory needed and available") {
  const std::string dir = test::scratch_dir("cli_particle_memory");
  const std::string args = "--backend cpu --steps 1 --output " + dir + "/out ";
  // particles.capacity = 2^63 - 1: 32 bytes a slot overflow 64 bits
  const test::SimResult cap = test::run_sim(args + "--set particles.capacity=9223372036854775807 " + box);
  CHECK(cap.status == 1);
  CHECK(test::count_lines(cap.out) == 1);
  CHECK(cap.out.rfind("sim: error: --set particles.capacity=9223372036854775807: particles.capacity = "
                      "9223372036854775807 needs more than 16.0 EiB of host memory (grid ", 0) == 0);
  CHECK(cap.out.find(" available\n") != std::string::npos);
  // 2^50 seeded particles: 296 PiB (296 bytes a slot, 44 of them a snapshot's), more than 1 PiB
  const test::SimResult seeded = test::run_sim(args + "--set particles.regions[0].count=1125899906842624 " + box);
  CHECK(seeded.status == 1);
  CHECK(test::count_lines(seeded.out) == 1);
  CHECK(seeded.out.rfind("sim: error: --set particles.regions[0].count=1125899906842624: particles.regions "
                         "(1125899906842624 particles) needs 296 PiB of host memory (grid ", 0) == 0);
  CHECK(seeded.out.find(" available\n") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/out"));
}

TEST_CASE("cli: a grid that fits the index but not this machine's memory is refused with needed and available") {
  const std::string dir = test::scratch_dir("cli_grid_memory");
  const std::vector<std::string> sets{"domain.nx=46333", "domain.ny=46333", "run.backend=\"cpu\""};
  const Bytes need = host_memory_need(load_config(box, sets), false).total();
  if (!(need > Bytes(host_memory_available() + (uint64_t(1) << 30)))) {
    MESSAGE("skipped: this machine has " << format_size(host_memory_available()) << " available, the case needs "
                                         << format_size(need));
    return;
  }
  const test::SimResult r = test::run_sim("--backend cpu --steps 1 --output " + dir +
                                          "/out --set domain.nx=46333 --set domain.ny=46333 " + box);
  CHECK(r.status == 1);
  CHECK(test::count_lines(r.out) == 1);
  CHECK(r.out.rfind("sim: error: --set domain.nx=46333: domain.nx x domain.ny = 46333 x 46333 needs " +
                        format_size(need) + " of host memory (grid ", 0) == 0);
  CHECK(r.out.find(" available\n") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/out"));
}

// Catches a small case run on every core (slower than one thread: each
// parallel region's fork and barrier cost more than its work) and a large
// one left on one thread.
TEST_CASE("cli: the CPU backend's threads fit the work, unless OMP_NUM_THREADS says otherwise") {
  const Config b = load_config(box);  // 96^2 cells, 20,000 particles
  const SimState s = make_initial_state(b);
  CHECK(cpu_threads_for(b, s, 16) == 1);
  Config big = b;
  big.nx = big.ny = 1024;
  big.regions.clear();
  const SimState empty;
  CHECK(cpu_threads_for(big, empty, 16) == 16);
  CHECK(cpu_threads_for(big, empty, 2) == 2);
  big.nx = big.ny = 256;  // 65,536 cells: two threads' worth
  CHECK(cpu_threads_for(big, empty, 16) == 2);

  const std::string dir = test::scratch_dir("cli_threads");
  const std::string run = "--backend cpu --steps 2 --output " + dir + "/out --overwrite " + box;
  const test::SimResult fitted = test::run_sim(run, "env -u OMP_NUM_THREADS -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT");
  INFO(fitted.out);
  CHECK(fitted.status == 0);
  CHECK(fitted.out.find("backend: cpu (1 OpenMP threads)") != std::string::npos);
  const test::SimResult forced = test::run_sim(run, "env OMP_NUM_THREADS=3");
  INFO(forced.out);
  CHECK(forced.status == 0);
  CHECK(forced.out.find("backend: cpu (3 OpenMP threads)") != std::string::npos);
}

// A link in the lock's place is refused, not followed: the run neither
// truncates nor writes what the link points to, and writes nothing else
// (the run used to write its pid into the target and exit 0). A FIFO in the
// lock's place is refused too (opening it for writing would block or feed a
// reader).
TEST_CASE("cli: a symbolic link or a FIFO in place of the output lock is refused and left alone") {
  const std::string dir = test::scratch_dir("cli_lock_link");
  std::filesystem::create_directories(dir + "/out");
  const std::string target = dir + "/important.txt";
  { std::ofstream(target) << "keep me\n"; }
  std::filesystem::create_symlink(target, dir + "/out/.sim.lock");
  const test::SimResult linked = test::run_sim("--backend cpu --steps 2 --output " + dir + "/out" + small + box);
  CHECK(linked.status == 1);
  CHECK(linked.out == "sim: error: output directory '" + dir + "/out': .sim.lock is a symbolic link; sim writes its "
                      "lock only into a regular file (remove the link)\n");
  CHECK(test::read_text(target) == "keep me\n");
  CHECK_FALSE(std::filesystem::exists(dir + "/out/snap_000000.h5"));
  CHECK_FALSE(std::filesystem::exists(dir + "/out/sim.xdmf"));

  const std::string fifo_dir = dir + "/fifo";
  std::filesystem::create_directories(fifo_dir);
  REQUIRE(::mkfifo((fifo_dir + "/.sim.lock").c_str(), 0644) == 0);
  const test::SimResult fifo = test::run_sim("--backend cpu --steps 2 --output " + fifo_dir + small + box);
  CHECK(fifo.status == 1);
  CHECK(fifo.out == "sim: error: output directory '" + fifo_dir + "': .sim.lock is not a regular file; sim writes "
                    "its lock only into one (remove it)\n");
  CHECK_FALSE(std::filesystem::exists(fifo_dir + "/sim.xdmf"));
}

// The report on standard output must land: a full device (/dev/full) or a
// closed standard output makes a good run exit 1 with one line (both exited
// 0 with the report lost; with standard output closed the report could go
// into the first file sim opened), while a reader that leaves early (`|
// head -c 0`, which killed a finished run with SIGPIPE, status 141) is no
// failure of the run. --quiet writes no report: nothing to lose.
TEST_CASE("cli: a report that cannot be written fails the run; a reader that leaves does not") {
  const std::string dir = test::scratch_dir("cli_report");
  auto shell = [&](const std::string& tail, const std::string& out) {
    const std::string script = std::string(SIM_EXECUTABLE) + " --backend cpu --steps 2 --output " + dir + "/" + out +
                               small + box + " " + tail;
    return test::run_shell(script);
  };
  const test::SimResult full = shell("> /dev/full", "full");
  CHECK(full.status == 1);
  CHECK(full.out == "sim: error: cannot write the run's report to standard output: No space left on device\n");
  const test::SimResult closed = shell(">&-", "closed");
  CHECK(closed.status == 1);
  CHECK(closed.out == "sim: error: cannot write the run's report to standard output: standard output is closed\n");
  const std::string lock = test::read_text(dir + "/closed/.sim.lock");
  CHECK(lock.find("steps") == std::string::npos);  // the report did not go into the lock
  const test::SimResult piped = shell("| head -c 0; exit ${PIPESTATUS[0]}", "piped");
  CHECK(piped.status == 0);
  CHECK(piped.out.empty());
  const test::SimResult quiet = shell("--quiet >&-", "quiet");
  CHECK(quiet.status == 0);
  CHECK(quiet.out.empty());
}

// The run checks its answer: a projection that leaves the velocity far
// from divergence-free (here a multigrid solve cut to 1 iteration a step,
// its failures allowed) ends the run with status 1 after the report and the
// last snapshot, in one line; Jacobi's fixed sweeps, kept for comparison,
// only warn. The channel's run used to exit 0 at 1.3e-2.
TEST_CASE("cli: a run whose projection leaves the velocity divergent fails after its report") {
  const std::string dir = test::scratch_dir("cli_divergence");
  const std::string channel = test::source_path("config/channel.toml");
  const std::string cut = " --set pressure.max_iterations=1 --set pressure.max_failures=1000 ";
  const test::SimResult r =
      test::run_sim("--backend cpu --steps 5 --pressure-solver multigrid --output " + dir + "/mg" + cut + channel);
  CHECK(r.status == 1);
  CHECK(r.out.find("\nsim: error: the answer fails its check: max |div u| h / max |u| = ") != std::string::npos);
  CHECK(r.out.find("above 1e-05 (10 x pressure.tolerance, at least 16 float32 roundings): not divergence-free\n") !=
        std::string::npos);
  CHECK(std::filesystem::exists(dir + "/mg/snap_000005.h5"));
  const test::SimResult j =
      test::run_sim("--backend cpu --steps 5 --pressure-solver jacobi --output " + dir + "/jacobi" + cut + channel);
  CHECK(j.status == 0);
  CHECK(j.out.find("sim: warning: the answer fails its check: ") != std::string::npos);
  // a converged run passes the check
  CHECK(test::run_sim("--backend cpu --steps 5 --output " + dir + "/ok " + channel).status == 0);
}

// A long path must not hide the reason after it: error lines used to be cut
// at 240 characters, so "Permission denied" after a 300-character output
// path never showed. Now only the middle of a line past 1024 characters
// goes, and a megabyte argument still comes back short.
TEST_CASE("cli: error lines keep their reason after a long path, and stay short") {
  // /proc takes no new directory, whoever runs the test (root included)
  std::string deep = "/proc/sim_test_no_such_dir/";
  for (int i = 0; i < 6; ++i) deep += std::string(48, char('a' + i)) + "/";
  const test::SimResult r = test::run_sim("--backend cpu --steps 1 --output " + deep + "out" + small + box);
  CHECK(r.status == 1);
  CHECK(test::count_lines(r.out) == 1);
  CHECK(r.out.find(deep) != std::string::npos);
  CHECK(r.out.find("': No such file or directory\n") != std::string::npos);
  CHECK(sim::error_line(std::string(5000000, 'k') + ": unknown key").size() == 1024 + 7);
  CHECK(sim::error_line(std::string(5000000, 'k') + ": unknown key").find(": unknown key") != std::string::npos);
}

// SPDX-License-Identifier: MIT
// Restart on the GPU: with the deterministic deposit, a run continued from a
// snapshot ends bit for bit where the uninterrupted run ends, whether or not
// particles are sorted by cell in device memory.
#include <doctest/doctest.h>

#include "io/config_writer.hpp"
#include "io/snapshot_files.hpp"
#include "io/snapshot_reader.hpp"
#include "support/cases.hpp"
#include "support/compare.hpp"
#include "support/io.hpp"

namespace {

sim::Config gpu_box(const std::string& output, int steps, int sort_every) {
  return sim::test::shipped_config(
      "box.toml", {"domain.nx=48", "domain.ny=48", "particles.regions[0].count=3000", "run.backend=\"cuda\"",
                   "gpu.deposit=\"sorted\"", "gpu.sort_every=" + std::to_string(sort_every), "run.snapshot_every=50",
                   "run.steps=" + std::to_string(steps), "run.output=" + sim::toml_string_literal(output)});
}

}  // namespace

TEST_CASE("gpu: restart with deposit=sorted continues bit for bit") {
  for (int sort_every : {0, 7}) {
    INFO("sort_every=" << sort_every);
    const std::string straight = sim::test::scratch_dir("gpu_restart_straight_" + std::to_string(sort_every));
    const std::string resumed = sim::test::scratch_dir("gpu_restart_resumed_" + std::to_string(sort_every));
    REQUIRE(sim::test::run_case(gpu_box(straight, 100, sort_every)) == 0);
    REQUIRE(sim::test::run_case(gpu_box(resumed, 50, sort_every)) == 0);
    const std::string from = sim::join_path(resumed, sim::snapshot_file_name(50));
    REQUIRE(sim::test::run_case(gpu_box(resumed, 100, sort_every), from) == 0);
    sim::test::check_same_snapshot(sim::read_snapshot(sim::join_path(straight, sim::snapshot_file_name(100))),
                                   sim::read_snapshot(sim::join_path(resumed, sim::snapshot_file_name(100))));
  }
}

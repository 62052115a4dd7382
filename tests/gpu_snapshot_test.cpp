// SPDX-License-Identifier: MIT
// Asynchronous snapshots on the GPU: Backend::begin_download returns before
// the copy lands, the stepping goes on, and what the writer thread takes
// later is still the state at the call, bit for bit the synchronous
// download's, for both layouts and with particles sorted by cell (the
// canonical-order scatter) or not. More snapshots than staging slots are
// in flight at once, so slots are reused.
#include <doctest/doctest.h>

#include <algorithm>

#include "support/compare.hpp"
#include "support/gpu.hpp"

TEST_CASE("gpu: an asynchronous snapshot is the state at its start while stepping goes on") {
  for (sim::Layout layout : {sim::Layout::soa, sim::Layout::aos})
    for (int sort_every : {0, 3}) {
      INFO("layout=" << sim::to_string(layout) << " sort_every=" << sort_every);
      sim::Config cfg = sim::test::gpu_case("channel.toml", 40);
      cfg.backend = sim::BackendKind::cuda;
      cfg.layout = layout;
      cfg.sort_every = sort_every;
      const sim::SimState s0 = sim::make_initial_state(cfg);
      sim::Simulation simulation(cfg, sim::make_cuda_backend(cfg, s0.grid), s0);
      for (int k = 0; k < sim::test::gpu_steps(10); ++k) simulation.step();

      std::vector<std::unique_ptr<sim::PendingState>> pending;
      std::vector<sim::SimState> expected;
      for (int snap = 0; snap < 2; ++snap) {
        pending.push_back(simulation.begin_download());
        expected.push_back(simulation.download());
        for (int k = 0; k < 3; ++k) simulation.step();  // overwrites what the copy read from
      }
      for (size_t q = 0; q < pending.size(); ++q) {
        const sim::SimState got = pending[q]->take();
        CHECK(got.step == expected[q].step);
        CHECK(got.next_id == expected[q].next_id);
        CHECK(sim::test::same_bits(got.open, expected[q].open));
        CHECK(sim::test::same_bits(got.particles.d, expected[q].particles.d));
        CHECK(got.counters.removed == expected[q].counters.removed);
        CHECK(got.counters.recycled == expected[q].counters.recycled);
        sim::test::check_identical(got, expected[q]);
      }
      CHECK(std::count(expected[1].particles.alive.begin(), expected[1].particles.alive.end(), 1u) > 0);
      pending.clear();
      // A third and fourth snapshot reuse the two slots; one is dropped untaken.
      std::unique_ptr<sim::PendingState> dropped = simulation.begin_download();
      dropped.reset();
      std::unique_ptr<sim::PendingState> again = simulation.begin_download();
      const sim::SimState now = simulation.download();
      simulation.step();
      sim::test::check_identical(again->take(), now);
    }
}

// SPDX-License-Identifier: MIT
// Particles across ranks against the global picture. Every rank builds the
// same global particle set from a fixed seed and keeps its share; after a
// migration each rank must hold exactly the particles its box owns, in the
// documented order, and the union over ranks must be the live global set,
// every field bit for bit; after a fold each owned face must hold what
// sim's serial deposit of all particles on the global grid gives it. As in
// the halo tests, the run's ranks are split into groups of every size, so
// one mpirun covers each group size with slabs and every process grid.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/ranks/particle_exchange.hpp"
#include "sim/model/random.hpp"

namespace {

using sim::Box;
using sim::BoundaryKind;
using sim::Comm;
using sim::Decomposition;
using sim::Domain;
using sim::Grid;
using sim::HostParticles;
using sim::Particle;
using sim::real;
using sim::Stagger;

// Every decomposition of `dom` among `ranks`: slabs and each px x py.
std::vector<Decomposition> layouts(const Domain& dom, int ranks) {
  std::vector<Decomposition> out;
  if (ranks <= dom.ny) out.push_back(Decomposition::slabs(dom, ranks));
  for (int px = 1; px <= ranks; ++px)
    if (ranks % px == 0 && px <= dom.nx && ranks / px <= dom.ny) out.push_back(Decomposition::blocks(dom, px, ranks / px));
  return out;
}

// Sides: left/right, bottom/top. The last set has every closed kind's face rule
// (inflow and free slip prescribe their normal face, outflow makes it an unknown).
struct Sides {
  BoundaryKind l, r, b, t;
};
const Sides kSides[] = {
    {BoundaryKind::wall, BoundaryKind::wall, BoundaryKind::wall, BoundaryKind::wall},
    {BoundaryKind::periodic, BoundaryKind::periodic, BoundaryKind::wall, BoundaryKind::wall},
    {BoundaryKind::wall, BoundaryKind::wall, BoundaryKind::periodic, BoundaryKind::periodic},
    {BoundaryKind::periodic, BoundaryKind::periodic, BoundaryKind::periodic, BoundaryKind::periodic},
    {BoundaryKind::inflow, BoundaryKind::outflow, BoundaryKind::free_slip, BoundaryKind::outflow},
};

sim::Config make_config(int nx, int ny, double lx, double ly, const Sides& s) {
  sim::Config cfg;
  cfg.nx = nx;
  cfg.ny = ny;
  cfg.lx = lx;
  cfg.ly = ly;
  cfg.left.kind = s.l;
  cfg.right.kind = s.r;
  cfg.bottom.kind = s.b;
  cfg.top.kind = s.t;
  return cfg;
}

Domain domain_of(const sim::Config& cfg) {
  return Domain{cfg.nx, cfg.ny, cfg.lx, cfg.ly, cfg.left.kind == BoundaryKind::periodic,
                cfg.bottom.kind == BoundaryKind::periodic};
}

std::string sides_text(const Domain& d) {
  return std::string(d.periodic_x ? "periodic" : "closed") + " x, " + (d.periodic_y ? "periodic" : "closed") + " y";
}

// n particles uniform in the domain, every field random; ids spread out.
std::vector<Particle> random_particles(const Domain& d, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> ux(0, d.lx), uy(0, d.ly), vel(-2, 2), dia(1e-4, 1e-3);
  std::vector<Particle> out(n);
  for (size_t k = 0; k < n; ++k) {
    Particle& p = out[k];
    p.x = std::min(static_cast<real>(ux(rng)), std::nextafter(static_cast<real>(d.lx), real(0)));
    p.y = std::min(static_cast<real>(uy(rng)), std::nextafter(static_cast<real>(d.ly), real(0)));
    p.vx = static_cast<real>(vel(rng));
    p.vy = static_cast<real>(vel(rng));
    p.d = static_cast<real>(dia(rng));
    p.id = static_cast<uint32_t>(7 * k + 3);
    p.alive = 1u;
  }
  return out;
}

HostParticles to_host(const std::vector<Particle>& a) {
  HostParticles h;
  sim::from_aos(a, h);
  return h;
}

bool same(const Particle& a, const Particle& b) { return std::memcmp(&a, &b, sizeof(Particle)) == 0; }

std::string text(const Particle& p) {
  return "id " + std::to_string(p.id) + " (" + std::to_string(p.x) + ", " + std::to_string(p.y) + ") alive " +
         std::to_string(p.alive);
}

// The rank at process-grid offset (ox, oy) from `rank`, wrapped across a
// periodic side; an offset past a closed side is dropped.
int rank_near(const Decomposition& dec, int rank, int ox, int oy) {
  const Domain& d = dec.domain();
  int x = dec.cx(rank) + ox, y = dec.cy(rank) + oy;
  if (x < 0 || x >= dec.px()) x = d.periodic_x ? (x + dec.px()) % dec.px() : dec.cx(rank);
  if (y < 0 || y >= dec.py()) y = d.periodic_y ? (y + dec.py()) % dec.py() : dec.cy(rank);
  return dec.rank_at(x, y);
}

int owner(const Decomposition& dec, const Particle& p) { return dec.owner_of_point(p.x, p.y); }

// "" when every local particle is alive and owned here and the union over
// the group, by id, is `live` field for field (compared on rank 0).
std::string check_global_set(const Comm& c, const Decomposition& dec, const HostParticles& local,
                             std::vector<Particle> live) {
  std::string bad;
  for (size_t k = 0; k < local.size() && bad.empty(); ++k) {
    const Particle p = local.load(k);
    if (!p.alive || owner(dec, p) != c.rank())
      bad = "rank " + std::to_string(c.rank()) + " holds " + text(p) + ", owned by rank " + std::to_string(owner(dec, p));
  }
  std::vector<Particle> all = c.gatherv(sim::to_aos(local));
  if (c.rank() != 0 || !bad.empty()) return bad;
  auto by_id = [](const Particle& a, const Particle& b) { return a.id < b.id; };
  std::sort(all.begin(), all.end(), by_id);
  std::sort(live.begin(), live.end(), by_id);
  if (all.size() != live.size())
    return std::to_string(all.size()) + " particles over the ranks, " + std::to_string(live.size()) + " expected";
  for (size_t k = 0; k < all.size(); ++k)
    if (!same(all[k], live[k])) return "got " + text(all[k]) + ", expected " + text(live[k]);
  return "";
}

}  // namespace

TEST_CASE("particles: migration from neighbouring boxes gives each rank its own, in order, nothing lost") {
  const Comm world = Comm::world();
  int cases = 0;
  for (int groups = 1; groups <= world.size(); ++groups) {
    const Comm c = world.split(world.rank() < groups ? 0 : 1, world.rank());
    for (auto [nx, ny] : {std::pair{1, 1}, {3, 2}, {2, 5}, {5, 7}, {8, 3}, {4, 4}})
      for (int per = 0; per < 4; ++per) {
        const Domain dom{nx, ny, 1.0, 2.0, (per & 1) != 0, (per & 2) != 0};
        for (const Decomposition& dec : layouts(dom, c.size())) {
          INFO("group of ", c.size(), ", rank ", c.rank(), ": ", nx, " x ", ny, ", ", sides_text(dom), " on ",
               dec.px(), " x ", dec.py());
          const uint32_t seed = static_cast<uint32_t>(1000 * nx + 100 * ny + 10 * per + dec.px());
          const std::vector<Particle> global = random_particles(dom, 300, seed);
          // Each particle starts in its owner's box or one around it (sides,
          // corners, across seams); every fifth slot is dead.
          std::mt19937 rng(seed + 1);
          std::uniform_int_distribution<int> off(-1, 1);
          std::vector<int> start(global.size());
          std::vector<Particle> mine, live;
          for (size_t k = 0; k < global.size(); ++k) {
            start[k] = rank_near(dec, owner(dec, global[k]), off(rng), off(rng));
            Particle p = global[k];
            if (k % 5 == 4) p.alive = 0;
            else live.push_back(p);
            if (start[k] == c.rank()) mine.push_back(p);
          }
          // Kept ones in order, then arrivals by source rank, each in order.
          std::vector<Particle> want;
          int64_t sent = 0, received = 0;
          for (int src = -1; src < c.size(); ++src)
            for (size_t k = 0; k < global.size(); ++k) {
              if (k % 5 == 4) continue;
              const bool here = owner(dec, global[k]) == c.rank();
              if (src < 0 ? start[k] == c.rank() && here : src != c.rank() && start[k] == src && here)
                want.push_back(global[k]);
              if (src < 0) {
                sent += start[k] == c.rank() && !here;
                received += start[k] != c.rank() && here;
              }
            }
          HostParticles p = to_host(mine);
          const sim::MigrationCounts n = sim::migrate_particles(c, dec, p);
          CHECK(n.sent == sent);
          CHECK(n.received == received);
          const std::vector<Particle> got = sim::to_aos(p);
          CHECK(got.size() == want.size());  // CHECK only: a rank that left the case would hang the others
          for (size_t k = 0; k < std::min(got.size(), want.size()); ++k)
            CHECK_MESSAGE(same(got[k], want[k]), "slot ", k, ": ", text(got[k]));
          const std::string bad = check_global_set(c, dec, p, live);
          CHECK_MESSAGE(bad.empty(), bad);
          ++cases;
        }
      }
  }
  MESSAGE(cases, " migrations on rank ", world.rank());
}

TEST_CASE("particles: moving step after step across sides, corners and seams keeps the global set") {
  const Comm world = Comm::world();
  int64_t corners = 0, seams = 0;
  for (int groups = 1; groups <= world.size(); ++groups) {
    const Comm c = world.split(world.rank() < groups ? 0 : 1, world.rank());
    for (auto [nx, ny] : {std::pair{3, 2}, {4, 4}, {2, 6}})
      for (const Sides& sides : kSides) {
        const sim::Config cfg = make_config(nx, ny, 1.0, 2.0, sides);
        const Domain dom = domain_of(cfg);
        // Walls bounce, periodic sides wrap: sim's own particle boundary rule.
        const sim::Constants k = sim::make_constants(cfg, Grid::make(nx, ny, cfg.lx, cfg.ly));
        for (const Decomposition& dec : layouts(dom, c.size())) {
          INFO("group of ", c.size(), ", rank ", c.rank(), ": ", nx, " x ", ny, ", sides ", int(sides.l), int(sides.r),
               int(sides.b), int(sides.t), " on ", dec.px(), " x ", dec.py());
          std::vector<Particle> live = random_particles(dom, 200, static_cast<uint32_t>(nx * 10 + ny));
          std::vector<Particle> mine;
          for (const Particle& q : live)
            if (owner(dec, q) == c.rank()) mine.push_back(q);
          HostParticles p = to_host(mine);
          // Up to 0.9 cells a step each way: a neighbouring box at most.
          auto move = [&](Particle& q, int step) {
            const double ax = sim::uniform01(7, q.id, 2 * step), ay = sim::uniform01(7, q.id, 2 * step + 1);
            sim::ParticleMotion s{q.x + static_cast<real>((2 * ax - 1) * 0.9 * cfg.dx()),
                                  q.y + static_cast<real>((2 * ay - 1) * 0.9 * cfg.dy()), q.vx, q.vy};
            if (!sim::apply_domain_boundaries(s, real(0.5) * q.d, k)) q.alive = 0;  // left through an outflow
            if ((q.id + step) % 29 == 0) q.alive = 0;                              // and a few removed
            q.x = s.x;
            q.y = s.y;
            q.vx = s.vx;
            q.vy = s.vy;
          };
          for (int step = 0; step < 12; ++step) {
            for (size_t r = 0; r < p.size(); ++r) {
              Particle q = p.load(r);
              move(q, step);
              p.store(r, q);
            }
            std::vector<Particle> next;
            for (Particle q : live) {
              const int before = owner(dec, q);
              const real x = q.x, y = q.y;
              move(q, step);
              if (!q.alive) continue;
              const int after = owner(dec, q);
              corners += dec.cx(before) != dec.cx(after) && dec.cy(before) != dec.cy(after);
              seams += std::fabs(q.x - x) > 0.5 * cfg.lx || std::fabs(q.y - y) > 0.5 * cfg.ly;
              next.push_back(q);
            }
            live = next;
            sim::migrate_particles(c, dec, p);
            const std::string bad = check_global_set(c, dec, p, live);
            CHECK_MESSAGE(bad.empty(), "step ", step, ": ", bad);
          }
        }
      }
  }
  MESSAGE(corners, " corner crossings and ", seams, " seam crossings seen by rank ", world.rank());
  CHECK(seams > 0);
  if (world.size() >= 4) CHECK(corners > 0);  // a 2 x 2 grid
}

TEST_CASE("particles: a particle past the neighbouring boxes is refused on every rank, the store untouched") {
  const Comm world = Comm::world();
  if (world.size() < 3) return;
  const Comm c = world.split(world.rank() < 3 ? 0 : 1, world.rank());
  if (world.rank() >= 3) return;
  // Three slabs of one row each: rank 2's box is two away from rank 0's,
  // unless y wraps, when it is rank 0's neighbour below.
  for (bool wraps : {false, true}) {
    const Decomposition dec = Decomposition::slabs(Domain{4, 3, 1.0, 3.0, false, wraps}, 3);
    std::vector<Particle> mine = random_particles(dec.domain(), 20, 5 + c.rank());
    for (Particle& q : mine) q.y = static_cast<real>(c.rank() + 0.5);
    if (c.rank() == 0) mine[3].y = real(2.5);
    HostParticles p = to_host(mine);
    if (!wraps) {
      std::string what;
      try {
        sim::migrate_particles(c, dec, p);
      } catch (const std::runtime_error& e) {
        what = e.what();
      }
      const std::string common = "particle migration: 1 particle(s) moved past the neighbouring boxes";
      CHECK(what.rfind(common, 0) == 0);
      if (c.rank() == 0) CHECK(what.find("particle id 24 at (") != std::string::npos);
      if (c.rank() == 0) CHECK(what.find("on rank 0 belongs to rank 2") != std::string::npos);
      const std::vector<Particle> after = sim::to_aos(p);  // untouched
      CHECK(after.size() == mine.size());
      for (size_t k = 0; k < std::min(after.size(), mine.size()); ++k) CHECK(same(after[k], mine[k]));
    } else {
      const sim::MigrationCounts n = sim::migrate_particles(c, dec, p);
      CHECK(n.sent == (c.rank() == 0 ? 1 : 0));
      CHECK(n.received == (c.rank() == 2 ? 1 : 0));
    }
  }
}

TEST_CASE("particles: a particle with a non-finite position stays on its rank") {
  const Comm world = Comm::world();
  const int ranks = std::min(world.size(), 4);
  const Comm c = world.split(world.rank() < ranks ? 0 : 1, world.rank());
  if (world.rank() >= ranks) return;
  const Decomposition dec = Decomposition::slabs(Domain{4, 4, 1.0, 1.0, false, false}, ranks);
  std::vector<Particle> mine = random_particles(dec.domain(), 10, 11);
  for (Particle& q : mine) q.y = static_cast<real>((dec.box(c.rank()).j0 + 0.5) * 0.25);
  mine[0].x = std::nanf("");
  mine[1].y = INFINITY;
  HostParticles p = to_host(mine);
  const sim::MigrationCounts n = sim::migrate_particles(c, dec, p);
  CHECK(n.sent == 0);
  REQUIRE(p.size() == mine.size());
  CHECK(std::isnan(p.x[0]));
  CHECK(p.id[0] == mine[0].id);
  CHECK(std::isinf(p.y[1]));
  CHECK(p.id[1] == mine[1].id);
}

namespace {

// What w of a unit deposit of q adds to a field: the product, or in fixed
// point (2^-8, where every exact-case weight and product is a whole number).
template <class T>
T contribution(real w, real q) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(std::llround(double(w) * q * 256));
  else return static_cast<T>(w * q);
}

// The cell deposit: q times 1..9 onto the 3 x 3 cells around the
// particle's cell, wrapped across periodic sides, none past closed ones.
template <class F>
void for_each_cell(const Domain& d, const Decomposition& dec, const Particle& p, F&& f) {
  const std::array<int, 2> c = dec.cell_of_point(p.x, p.y);
  for (int dj = -1; dj <= 1; ++dj)
    for (int di = -1; di <= 1; ++di) {
      const int gi = c[0] + di, gj = c[1] + dj;
      if ((!d.periodic_x && (gi < 0 || gi >= d.nx)) || (!d.periodic_y && (gj < 0 || gj >= d.ny))) continue;
      f(gi, gj, static_cast<real>(2 + di + 3 * dj + 3));
    }
}

const Stagger kStaggers[] = {Stagger::u_face, Stagger::v_face, Stagger::cell};

Box owned(const Decomposition& dec, int rank, Stagger s) {
  return s == Stagger::u_face ? dec.owned_u(rank) : s == Stagger::v_face ? dec.owned_v(rank) : dec.box(rank);
}

// Each particle deposits q onto u, v (for_each_deposit_face) and cells,
// serially on the global grid and by its owner through the deposit frame;
// after the fold the owned points gathered on rank 0 must equal the serial
// deposit: exactly, or within the rounding of the shifted coordinates and
// the reordered sums (1e-5 of the sum of magnitudes). Every point a rank
// does not own must be zero after the fold. "" or the first difference.
template <class T>
std::string check_fold(const Comm& c, const Decomposition& dec, const sim::Config& cfg,
                       const std::vector<Particle>& all, const std::vector<real>& q, bool exact) {
  const Domain& d = dec.domain();
  const int me = c.rank();
  const Box b = dec.box(me);
  const Grid g = dec.local_grid(me);
  const sim::DepositFrame frame = sim::make_deposit_frame(sim::make_constants(cfg, g), dec, me);
  std::vector<T> local[3];
  for (auto& f : local) f.assign(g.size(), T(0));
  std::string bad;
  auto add = [&](std::vector<T>& f, int idx, real w, real qk) {
    if (idx >= 0 && idx < static_cast<int>(f.size())) f[size_t(idx)] += contribution<T>(w, qk);
    else if (bad.empty()) bad = "rank " + std::to_string(me) + ": the frame emits storage index " + std::to_string(idx);
  };
  for (size_t k = 0; k < all.size(); ++k) {
    if (owner(dec, all[k]) != me) continue;
    sim::for_each_frame_deposit_face(frame, all[k].x, all[k].y, [&](int, int fu, real wu, int fv, real wv) {
      if (fu >= 0) add(local[0], fu, wu, q[k]);
      if (fv >= 0) add(local[1], fv, wv, q[k]);
    });
    for_each_cell(d, dec, all[k], [&](int gi, int gj, real w) { add(local[2], g.idx(gi - b.i0, gj - b.j0), w, q[k]); });
  }
  for (int f = 0; f < 3; ++f) sim::fold_halo(c, dec, local[f].data(), g, kStaggers[f]);

  // Owned points as (stagger, i, j, value); the rest must be zero.
  std::vector<double> rec;
  for (int f = 0; f < 3; ++f) {
    const Box o = owned(dec, me, kStaggers[f]);
    for (int j = -1; j < g.rows - 1; ++j)
      for (int i = -1; i < g.pitch - 1; ++i) {
        const T v = local[f][size_t(g.idx(i, j))];
        if (o.contains(b.i0 + i, b.j0 + j)) {
          rec.insert(rec.end(), {double(f), double(b.i0 + i), double(b.j0 + j), double(v)});
        } else if (v != T(0) && bad.empty()) {
          bad = "rank " + std::to_string(me) + " stagger " + std::to_string(f) + ": local (" + std::to_string(i) +
                ", " + std::to_string(j) + ") holds " + std::to_string(double(v)) + " after the fold, not owned";
        }
      }
  }
  const std::vector<double> got = c.gatherv(rec);
  if (me != 0 || !bad.empty()) return bad;

  // The serial deposit on the global grid, and the magnitudes summed.
  const Grid gg = Grid::make(d.nx, d.ny, d.lx, d.ly);
  const sim::Constants k = sim::make_constants(cfg, gg);
  std::vector<T> serial[3];
  std::vector<double> mag[3];
  for (int f = 0; f < 3; ++f) {
    serial[f].assign(gg.size(), T(0));
    mag[f].assign(gg.size(), 0.0);
  }
  for (size_t n = 0; n < all.size(); ++n) {
    sim::for_each_deposit_face(all[n].x, all[n].y, k, [&](int, int fu, real wu, int fv, real wv) {
      if (fu >= 0) serial[0][size_t(fu)] += contribution<T>(wu, q[n]), mag[0][size_t(fu)] += std::fabs(wu * q[n]);
      if (fv >= 0) serial[1][size_t(fv)] += contribution<T>(wv, q[n]), mag[1][size_t(fv)] += std::fabs(wv * q[n]);
    });
    for_each_cell(d, dec, all[n], [&](int gi, int gj, real w) {
      const size_t idx = size_t(gg.idx((gi + d.nx) % d.nx, (gj + d.ny) % d.ny));
      serial[2][idx] += contribution<T>(w, q[n]);
      mag[2][idx] += std::fabs(w * q[n]);
    });
  }
  // Every point of each field owned exactly once, and equal to the serial deposit.
  std::vector<int> seen[3];
  for (auto& s : seen) s.assign(gg.size(), 0);
  for (size_t r = 0; r < got.size(); r += 4) {
    const int f = int(got[r]), i = int(got[r + 1]), j = int(got[r + 2]);
    const size_t idx = size_t(gg.idx(i, j));
    ++seen[f][idx];
    const double want = double(serial[f][idx]);
    const bool ok = exact ? got[r + 3] == want : std::fabs(got[r + 3] - want) <= 1e-5 * mag[f][idx];
    if (!ok)
      return "stagger " + std::to_string(f) + " (" + std::to_string(i) + ", " + std::to_string(j) + "): " +
             std::to_string(got[r + 3]) + " after the fold, " + std::to_string(want) + " serially";
  }
  for (int f = 0; f < 3; ++f) {
    const int ni = d.nx + (kStaggers[f] == Stagger::u_face && !d.periodic_x ? 1 : 0);
    const int nj = d.ny + (kStaggers[f] == Stagger::v_face && !d.periodic_y ? 1 : 0);
    for (int j = 0; j < nj; ++j)
      for (int i = 0; i < ni; ++i)
        if (seen[f][size_t(gg.idx(i, j))] != 1)
          return "stagger " + std::to_string(f) + " (" + std::to_string(i) + ", " + std::to_string(j) + ") owned " +
                 std::to_string(seen[f][size_t(gg.idx(i, j))]) + " times";
  }
  return "";
}

}  // namespace

TEST_CASE("particles: folded deposits equal the serial deposit (u, v, cells; corners and seams)") {
  const Comm world = Comm::world();
  int folds = 0;
  for (int groups = 1; groups <= world.size(); ++groups) {
    const Comm c = world.split(world.rank() < groups ? 0 : 1, world.rank());
    for (auto [nx, ny] : {std::pair{1, 1}, {3, 2}, {2, 5}, {5, 7}, {8, 3}, {4, 4}})
      for (const Sides& sides : kSides) {
        // Random positions and amounts on 1 x 2; on cells of 1/4 (dyadic),
        // positions on a 1/16-cell lattice and whole amounts, where every
        // weight, product and sum is exact in float and fixed point alike.
        const sim::Config rnd = make_config(nx, ny, 1.0, 2.0, sides);
        const sim::Config lat = make_config(nx, ny, 0.25 * nx, 0.25 * ny, sides);
        const uint32_t seed = static_cast<uint32_t>(100 * nx + 10 * ny + int(sides.l) + 5 * int(sides.b));
        std::vector<Particle> pr = random_particles(domain_of(rnd), 300, seed), pl = pr;
        std::vector<real> qr(pr.size()), ql(pr.size());
        std::mt19937 rng(seed);
        std::uniform_int_distribution<int> cell_x(0, nx - 1), cell_y(0, ny - 1), frac(0, 15), whole(1, 100);
        std::uniform_real_distribution<double> amount(0.1, 10);
        for (size_t n = 0; n < pr.size(); ++n) {
          qr[n] = static_cast<real>(amount(rng));
          pl[n].x = static_cast<real>(0.25 * (cell_x(rng) + frac(rng) / 16.0));
          pl[n].y = static_cast<real>(0.25 * (cell_y(rng) + frac(rng) / 16.0));
          ql[n] = static_cast<real>(whole(rng));
        }
        for (const Decomposition& dr : layouts(domain_of(rnd), c.size())) {
          const Decomposition dl = Decomposition::blocks(domain_of(lat), dr.px(), dr.py());
          INFO("group of ", c.size(), ", rank ", c.rank(), ": ", nx, " x ", ny, ", sides ", int(sides.l), int(sides.r),
               int(sides.b), int(sides.t), " on ", dr.px(), " x ", dr.py());
          std::string bad = check_fold<float>(c, dr, rnd, pr, qr, false);
          CHECK_MESSAGE(bad.empty(), "random, float: ", bad);
          bad = check_fold<double>(c, dr, rnd, pr, qr, false);
          CHECK_MESSAGE(bad.empty(), "random, double: ", bad);
          bad = check_fold<float>(c, dl, lat, pl, ql, true);
          CHECK_MESSAGE(bad.empty(), "lattice, float: ", bad);
          bad = check_fold<int64_t>(c, dl, lat, pl, ql, true);
          CHECK_MESSAGE(bad.empty(), "lattice, fixed point: ", bad);
          folds += 4;
        }
      }
  }
  MESSAGE(folds, " folds of u, v and cells on rank ", world.rank());
}

namespace {

// The fold's routing alone, by the documented rule: every point of a
// rank's halo lines past an open side (-1 and n across the axis; -1, n and
// n + 1 along a staggered one) holds a code of the point it stands for
// (global, wrapped), and each owned point must end with its code times the
// number of halo points, over all ranks, that stand for it. Line n + 1
// past a neighbour one cell wide stands for a point two boxes away, which
// a particle of the box reaches only through rounding (a weight of the
// order of the rounding), too rarely for the deposit tests to see.
std::string check_routing(const Comm& c, const Decomposition& dec, Stagger s) {
  const Domain& d = dec.domain();
  const int me = c.rank();
  const int si = s == Stagger::u_face ? 1 : 0, sj = s == Stagger::v_face ? 1 : 0;
  auto code = [&](int gi, int gj) { return int64_t(1) + gi + 100 * gj; };
  // f(rank's local i, j, wrapped global i, j) over the rank's halo lines.
  auto halo = [&](int r, auto&& f) {
    const std::array<int, 4> nb = dec.neighbours(r);
    const Box b = dec.box(r), o = owned(dec, r, s);
    for (int j = -(nb[sim::kBottom] >= 0); j <= b.ny() - 1 + sj + (nb[sim::kTop] >= 0); ++j)
      for (int i = -(nb[sim::kLeft] >= 0); i <= b.nx() - 1 + si + (nb[sim::kRight] >= 0); ++i) {
        const int gi = b.i0 + i, gj = b.j0 + j;
        if (!o.contains(gi, gj))
          f(i, j, d.periodic_x ? (gi + d.nx) % d.nx : gi, d.periodic_y ? (gj + d.ny) % d.ny : gj);
      }
  };
  const Grid g = dec.local_grid(me);
  const Box b = dec.box(me), o = owned(dec, me, s);
  std::vector<int64_t> field(g.size(), 0), want(g.size(), 0);
  halo(me, [&](int i, int j, int wi, int wj) { field[size_t(g.idx(i, j))] = code(wi, wj); });
  for (int r = 0; r < dec.ranks(); ++r)
    halo(r, [&](int, int, int wi, int wj) {
      if (o.contains(wi, wj)) want[size_t(g.idx(wi - b.i0, wj - b.j0))] += code(wi, wj);
    });
  sim::fold_halo(c, dec, field.data(), g, s);
  for (int j = -1; j < g.rows - 1; ++j)
    for (int i = -1; i < g.pitch - 1; ++i)
      if (field[size_t(g.idx(i, j))] != want[size_t(g.idx(i, j))])
        return "local (" + std::to_string(i) + ", " + std::to_string(j) + "): " +
               std::to_string(field[size_t(g.idx(i, j))]) + ", expected " + std::to_string(want[size_t(g.idx(i, j))]);
  return "";
}

}  // namespace

TEST_CASE("particles: the fold adds every halo point to the point it stands for (boxes one cell wide)") {
  const Comm world = Comm::world();
  int folds = 0;
  for (int groups = 1; groups <= world.size(); ++groups) {
    const Comm c = world.split(world.rank() < groups ? 0 : 1, world.rank());
    for (auto [nx, ny] : {std::pair{1, 1}, {3, 2}, {2, 3}, {4, 4}, {5, 3}})
      for (int per = 0; per < 4; ++per) {
        const Domain dom{nx, ny, 1.0, 2.0, (per & 1) != 0, (per & 2) != 0};
        for (const Decomposition& dec : layouts(dom, c.size()))
          for (Stagger s : kStaggers) {
            INFO("group of ", c.size(), ", rank ", c.rank(), ": ", nx, " x ", ny, ", ", sides_text(dom), " on ",
                 dec.px(), " x ", dec.py(), ", stagger ", int(s));
            const std::string bad = check_routing(c, dec, s);
            CHECK_MESSAGE(bad.empty(), bad);
            ++folds;
          }
      }
  }
  MESSAGE(folds, " routed folds on rank ", world.rank());
}

TEST_CASE("particles: constants, a grid or a communicator that does not match the decomposition are refused") {
  const Comm s = Comm::serial();
  const sim::Config cfg = make_config(4, 4, 1.0, 1.0, kSides[0]);
  const Decomposition one = Decomposition::slabs(domain_of(cfg), 1), two = Decomposition::slabs(domain_of(cfg), 2);
  const Grid small = Grid::make(4, 3, 1.0, 1.0);
  CHECK_THROWS_WITH_AS(sim::make_deposit_frame(sim::make_constants(cfg, small), one, 0),
                       "deposit frame: constants of a 4 x 3 grid for rank 0's box of 4 x 4", std::invalid_argument);
  std::vector<float> f(small.size());
  CHECK_THROWS_WITH_AS(sim::fold_halo(s, one, f.data(), small, Stagger::u_face),
                       "halo fold: a local grid of 4 x 3 cells for rank 0's box of 4 x 4", std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim::fold_halo(s, two, f.data(), two.local_grid(0), Stagger::u_face),
                       "halo fold: a decomposition into 2 ranks over a communicator of 1", std::invalid_argument);
  HostParticles p;
  CHECK_THROWS_WITH_AS(sim::migrate_particles(s, two, p),
                       "particle migration: a decomposition into 2 ranks over a communicator of 1",
                       std::invalid_argument);
}

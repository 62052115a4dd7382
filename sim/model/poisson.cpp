// SPDX-License-Identifier: MIT
#include "sim/model/poisson.hpp"

#include <algorithm>

namespace sim {
namespace {

GhostRule ghost_rule(int kind) {
  switch (static_cast<BoundaryKind>(kind)) {
    case BoundaryKind::periodic: return GhostRule::wrap;
    case BoundaryKind::outflow: return GhostRule::negate;
    default: return GhostRule::copy;  // wall, free_slip, inflow: no normal flux correction
  }
}

PoissonLevel make_level(int nx, int ny, int pitch, int rows) {
  PoissonLevel l;
  l.nx = nx;
  l.ny = ny;
  l.pitch = pitch;
  l.rows = rows;
  l.cx.assign(l.size(), real(0));
  l.cy.assign(l.size(), real(0));
  return l;
}

// Half the sum of the fine faces a coarse face covers (P^T A P / 2).
PoissonLevel coarsen(const PoissonLevel& f) {
  const int nx = (f.nx + 1) / 2, ny = (f.ny + 1) / 2;
  PoissonLevel c = make_level(nx, ny, (nx + 2 + 31) / 32 * 32, ny + 2);
  for (int J = 0; J < ny; ++J)
    for (int I = 0; I <= nx; ++I) {
      const int i = std::min(2 * I, f.nx);
      real s = f.cx[f.index(i, 2 * J)];
      if (2 * J + 1 < f.ny) s += f.cx[f.index(i, 2 * J + 1)];
      c.cx[c.index(I, J)] = real(0.5) * s;
    }
  for (int J = 0; J <= ny; ++J)
    for (int I = 0; I < nx; ++I) {
      const int j = std::min(2 * J, f.ny);
      real s = f.cy[f.index(2 * I, j)];
      if (2 * I + 1 < f.nx) s += f.cy[f.index(2 * I + 1, j)];
      c.cy[c.index(I, J)] = real(0.5) * s;
    }
  return c;
}

}  // namespace

PoissonHierarchy build_poisson_hierarchy(const Grid& grid, const std::vector<real>& open, const Constants& k) {
  PoissonHierarchy h;
  for (int s = 0; s < 4; ++s) h.ghost[s] = ghost_rule(k.bc_kind[s]);
  h.singular = true;
  for (GhostRule r : h.ghost)
    if (r == GhostRule::negate) h.singular = false;

  PoissonLevel l0 = make_level(grid.nx, grid.ny, grid.pitch, grid.rows);
  // Across a periodic side the neighbour is the cell at the far end; across
  // any other side the halo's open value (1), so that the halo rule acts.
  const bool wrap_x = h.ghost[kLeft] == GhostRule::wrap, wrap_y = h.ghost[kBottom] == GhostRule::wrap;
  auto open_at = [&](int i, int j) {
    if (wrap_x) i = (i + grid.nx) % grid.nx;
    if (wrap_y) j = (j + grid.ny) % grid.ny;
    return open[grid.idx(i, j)];
  };
  for (int j = 0; j < grid.ny; ++j)
    for (int i = 0; i <= grid.nx; ++i) l0.cx[l0.index(i, j)] = k.inv_dx2 * open_at(i - 1, j) * open_at(i, j);
  for (int j = 0; j <= grid.ny; ++j)
    for (int i = 0; i < grid.nx; ++i) l0.cy[l0.index(i, j)] = k.inv_dy2 * open_at(i, j - 1) * open_at(i, j);
  for (int j = 0; j < grid.ny; ++j)
    for (int i = 0; i < grid.nx; ++i) h.fluid_cells += open_at(i, j) != 0;
  h.levels.push_back(std::move(l0));

  while (true) {
    const PoissonLevel& f = h.levels.back();
    if (std::min(f.nx, f.ny) <= kCoarsestSide || f.nx < 2 || f.ny < 2) break;
    h.levels.push_back(coarsen(f));
  }
  const PoissonLevel& c = h.levels.back();
  h.coarse_sweeps = 2 * (c.nx + c.ny);
  return h;
}

std::string fft_unsupported_reason(const GhostRule ghost[4], bool has_solids) {
  if (has_solids) return "the domain has obstacles";
  const char* axis[2] = {"x (left/right)", "y (bottom/top)"};
  for (int a = 0; a < 2; ++a)
    if (ghost[2 * a] != ghost[2 * a + 1])
      return std::string("the sides of ") + axis[a] +
             " differ (one an outflow, the other not): no single cosine or sine transform diagonalises it";
  return {};
}

std::string fft_unsupported_reason(const PoissonHierarchy& h, bool has_solids) {
  return fft_unsupported_reason(h.ghost, has_solids);
}

std::string fft_unsupported_reason(const Config& cfg) {
  const BoundaryKind kinds[4] = {cfg.left.kind, cfg.right.kind, cfg.bottom.kind, cfg.top.kind};
  GhostRule ghost[4];
  for (int s = 0; s < 4; ++s) ghost[s] = ghost_rule(static_cast<int>(kinds[s]));
  return fft_unsupported_reason(ghost, !cfg.obstacles.empty());
}

std::string why_no_transform(const Config& cfg, const std::string& backend_refusal) {
  return !backend_refusal.empty() ? backend_refusal : fft_unsupported_reason(cfg);
}

PressureSolverKind resolve_solver(PressureSolverKind asked, const std::string& no_transform) {
  if (asked != PressureSolverKind::auto_) return asked;
  return no_transform.empty() ? PressureSolverKind::fft : PressureSolverKind::multigrid;
}

PressureSolverKind resolve_solver(const Config& cfg, const std::string& backend_refusal) {
  return resolve_solver(cfg.solver, why_no_transform(cfg, backend_refusal));
}

}  // namespace sim

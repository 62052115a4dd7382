// The pressure Poisson operator in face-coefficient form, and its multigrid
// hierarchy, shared by every backend.
//
// On every level the equation of a cell c is
//   (A phi)_c = cw (phi_w - phi_c) + ce (phi_e - phi_c) + cs (phi_s - phi_c) + cn (phi_n - phi_c) = f_c
// with one coefficient per face: cx(i, j) on the face between cells (i-1, j)
// and (i, j), cy(i, j) between (i, j-1) and (i, j). A face next to a solid
// cell has coefficient 0 (homogeneous Neumann), a solid cell has all four 0
// and keeps phi = 0. Domain sides act through the halo exactly as on the
// fine grid (sim/halo.hpp): a wall or inflow copies the interior value
// (Neumann), an outflow negates it (phi = 0 on the boundary face, Dirichlet),
// a periodic side wraps. On level 0 this is the operator of
// fluid_physics.hpp (jacobi_point / residual_point) with the open mask.
//
// Coarse levels aggregate 2 x 2 cells (ceil(n / 2) per side, so any size
// works); the coarse face coefficient is half the sum of the fine faces it
// covers, which is the Galerkin operator P^T A P of piecewise-constant
// prolongation P scaled by 1/2 (exact for the 5-point Laplacian of a
// uniform region: 4 L_2h when the restriction sums the four children).
// Restriction sums the children's residuals; prolongation adds the coarse
// correction to every open child. With the smoother applied red-black before
// and black-red after, the V-cycle is a symmetric operator, so it can
// precondition conjugate gradients (MGPCG).
//
// Layout of a level: like Grid, a one-cell halo and rows padded to a multiple
// of 32 values; index (i + 1) + (j + 1) * pitch. Level 0 uses the Grid's
// pitch, so the backends' rhs and phi fields are level-0 arrays as they are.
// A later domain decomposition replaces the halo fills of internal sides by
// exchanges and gathers the coarsest levels onto one rank.
#pragma once
#include <string>
#include <vector>

#include "sim/constants.hpp"
#include "sim/types.hpp"

namespace sim {

// How a level's halo cell across a side is filled from the interior.
enum class GhostRule : int { copy = 0, negate = 1, wrap = 2 };

struct PoissonLevel {
  int nx = 0, ny = 0;
  int pitch = 0, rows = 0;  // rows = ny + 2 (cells only: no extra face row)
  std::vector<real> cx;      // size pitch * rows; cx at index(i, j), i in [0, nx]
  std::vector<real> cy;      // size pitch * rows; cy at index(i, j), j in [0, ny]
  size_t size() const { return static_cast<size_t>(pitch) * rows; }
  int index(int i, int j) const { return (i + 1) + (j + 1) * pitch; }
};

struct PoissonHierarchy {
  std::vector<PoissonLevel> levels;  // levels[0] is the grid
  GhostRule ghost[4] = {GhostRule::copy, GhostRule::copy, GhostRule::copy, GhostRule::copy};  // per Side
  bool singular = true;    // no Dirichlet side: phi is defined up to a constant
  int64_t fluid_cells = 0;  // open cells of level 0
  int coarse_sweeps = 0;    // red-black sweep pairs that solve the coarsest level
};

// Coarsening stops when a level has at most this many cells on its shorter
// side, or when a side would drop to one cell.
constexpr int kCoarsestSide = 4;

// Builds the hierarchy once at start from the grid, the open mask (grid
// layout, 1 fluid / 0 solid, halo included) and the boundary kinds in `k`.
PoissonHierarchy build_poisson_hierarchy(const Grid& grid, const std::vector<real>& open, const Constants& k);

// Whether a direct transform solve applies: no solid cell, and each axis is
// periodic on both sides, Neumann on both or Dirichlet on both. Empty when it
// applies, else a one-line reason.
std::string fft_unsupported_reason(const GhostRule ghost[4], bool has_solids);
std::string fft_unsupported_reason(const PoissonHierarchy& h, bool has_solids);
std::string fft_unsupported_reason(const Config& cfg);  // before any grid exists

// Whether a run of `cfg` solves the pressure by transform, as
// make_pressure_solver will choose before any grid exists: asked for
// (fft), or auto where the transform applies and the backend runs it
// (`backend_refuses`: Backend::transform_refusal is not empty, as over GPU
// ranks). What the memory checks budget.
bool solves_by_transform(const Config& cfg, bool backend_refuses = false);

// ---- per-point functions of values, shared by the CPU loops and CUDA kernels ----

// The operator applied to one cell.
template <class T>
SIM_HD T poisson_apply_point(T c, T w, T e, T s, T n, real cw, real ce, real cs, real cn) {
  return T(cw) * (w - c) + T(ce) * (e - c) + T(cs) * (s - c) + T(cn) * (n - c);
}

// Gauss-Seidel update of one cell for A phi = f (0 where the cell is solid).
template <class T>
SIM_HD T poisson_relax_point(T w, T e, T s, T n, T f, real cw, real ce, real cs, real cn) {
  const T diag = T(cw) + T(ce) + T(cs) + T(cn);
  return diag > T(0) ? (T(cw) * w + T(ce) * e + T(cs) * s + T(cn) * n - f) / diag : T(0);
}

// Halo of one level for row j in [0, ny) (x sides) or column i in [-1, nx]
// (y sides); x sides first, then y sides, as for the fine grid.
template <class T>
SIM_HD T ghost_value(GhostRule r, T interior, T wrapped) {
  return r == GhostRule::wrap ? wrapped : r == GhostRule::negate ? -interior : interior;
}
template <class T>
SIM_HD void poisson_halo_x(T* p, int j, int nx, int pitch, const GhostRule* ghost) {
  const int row = (j + 1) * pitch;
  const T first = p[row + 1], last = p[row + nx];
  p[row] = ghost_value(ghost[kLeft], first, last);
  p[row + nx + 1] = ghost_value(ghost[kRight], last, first);
}
template <class T>
SIM_HD void poisson_halo_y(T* p, int i, int ny, int pitch, const GhostRule* ghost) {
  const T first = p[(i + 1) + pitch], last = p[(i + 1) + ny * pitch];
  p[i + 1] = ghost_value(ghost[kBottom], first, last);
  p[(i + 1) + (ny + 1) * pitch] = ghost_value(ghost[kTop], last, first);
}

}  // namespace sim

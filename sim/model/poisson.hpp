// SPDX-License-Identifier: MIT
// The pressure Poisson operator in face-coefficient form, and its multigrid
// hierarchy, shared by every backend.
//
// On every level the equation of a cell c is
//   (A phi)_c = cw (phi_w - phi_c) + ce (phi_e - phi_c) + cs (phi_s - phi_c) + cn (phi_n - phi_c) = f_c
// with one coefficient per face: cx(i, j) on the face between cells (i-1, j)
// and (i, j), cy(i, j) between (i, j-1) and (i, j). A face next to a solid
// cell has coefficient 0 (homogeneous Neumann), a solid cell has all four 0
// and keeps phi = 0. Domain sides act through the halo exactly as on the
// fine grid (sim/model/halo.hpp): a wall or inflow copies the interior value
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

#include "sim/model/constants.hpp"
#include "sim/model/types.hpp"

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

// Why a run of `cfg` cannot solve the pressure by transform: the backend's
// refusal (`backend_refusal`, Backend::transform_refusal), else
// fft_unsupported_reason(cfg); empty when it can.
std::string why_no_transform(const Config& cfg, const std::string& backend_refusal = {});

// The pressure solver a run uses: the one decision that Simulation (through
// make_pressure_solver, sim/model/pressure.hpp), the host memory estimate
// (sim/app/memory_check.cpp) and the GPU memory plan (cuda/memory_plan.cpp)
// take, so what is budgeted is what runs. auto: fft where the transform
// solve can run (`no_transform` empty, why_no_transform), multigrid
// otherwise; any other kind as asked (fft where it cannot run is refused
// when the solver is made). Never returns auto.
PressureSolverKind resolve_solver(PressureSolverKind asked, const std::string& no_transform);
// resolve_solver(cfg.solver, why_no_transform(cfg, backend_refusal)):
// before any grid exists, for a backend whose transform_refusal() is
// `backend_refusal`.
PressureSolverKind resolve_solver(const Config& cfg, const std::string& backend_refusal = {});

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

// Multigrid-preconditioned conjugate gradients on a PoissonHierarchy, what
// MultigridSolver (sim/model/pressure.cpp) drives: the hierarchy's level arrays
// and four float64 vectors on the grid, x (the pressure), r (residual),
// p (direction), q (A p), bound to a backend's rhs, open mask and phi
// (phi holds x rounded, for output). Every solve starts from x = 0, so a
// restart continues bit for bit. CpuPoisson and CudaPoisson implement it.
class MultigridOps {
 public:
  virtual ~MultigridOps() = default;
  virtual double pcg_start() = 0;     // x = 0, r = rhs (minus its mean over fluid cells if singular); returns ||r||_2
  virtual void mg_load_residual() = 0;  // f_0 = r (rounded), e_0 = 0
  virtual void mg_smooth(int level, int color) = 0;  // Gauss-Seidel on A e_l = f_l, cells (i + j) % 2 == color; halo filled after
  virtual void mg_restrict(int level) = 0;  // f_{l+1} = sum over children of (f_l - A_l e_l); e_{l+1} = 0
  virtual void mg_prolong(int level) = 0;   // e_l += e_{l+1} of the parent, on open cells; halo filled after
  virtual double pcg_dot_rz() = 0;          // <r, e_0>
  virtual void pcg_direction(double beta) = 0;  // p = e_0 + beta p; halo filled after
  virtual double pcg_apply() = 0;           // q = A p; returns <p, q>
  virtual double pcg_update(double alpha) = 0;  // x += alpha p, r -= alpha q; returns ||r||_2
  virtual double poisson_residual_norm() = 0;   // ||b - A x||_2 recomputed in float64 (b mean-free if singular)
  virtual void pcg_finish() = 0;            // phi = x rounded; halo of x and phi filled
};

// The direct transform solve (FftSolver), bound like MultigridOps.
class TransformOps {
 public:
  virtual ~TransformOps() = default;
  virtual void fft_solve() = 0;  // x = A^-1 rhs (rhs mean-free if singular, x mean-free); phi = x rounded; halos filled
  virtual double poisson_residual_norm() = 0;  // ||b - A x||_2 in float64
};

}  // namespace sim

// SPDX-License-Identifier: MIT
// Launchers of the multigrid / conjugate-gradient kernels of the Poisson
// solve (cuda/multigrid_kernels.cu, cuda/pcg_kernels.cu), in plain C++ (no CUDA syntax). Every
// launcher enqueues on `s` and returns without synchronising; none reads
// anything back. The arithmetic per point is that of the SIM_HD functions of
// sim/model/poisson.hpp, as on the CPU.
//
// Layout: every array is a level array of sim/model/poisson.hpp (one-cell halo,
// index (i + 1) + (j + 1) * pitch); level 0 has the Grid's pitch, so the
// float64 Krylov vectors, rhs and phi share one index.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "sim/model/constants.hpp"
#include "sim/model/poisson.hpp"

namespace sim::cuda {

// Face coefficients of one cell as 4 bits at the cell's index: bit 0 west
// (cx(i, j) != 0), 1 east (cx(i + 1, j)), 2 south (cy(i, j)), 3 north
// (cy(i, j + 1)). A cell with no bit set is solid (prolongation keeps it 0).
enum : uint8_t { kFaceW = 1, kFaceE = 2, kFaceS = 4, kFaceN = 8 };

// One level on the device. A level is `uniform` when every nonzero cx has one
// value cx_value and every nonzero cy one value cy_value (level 0 always;
// every level of a power-of-two box): its kernels read the 1-byte face bits
// instead of the two float coefficient arrays (13 instead of 20 bytes per
// cell and half-sweep), and produce the same bits since each coefficient is
// either exactly that value or 0. Otherwise cx, cy are read.
// The conjugate-gradient loop's scalars when the loop runs on the device.
struct PcgState {
  double rz, rz_old, pq, alpha, beta, r2, b, relative;
  int it, cont, valid;
};

struct DeviceLevel {
  int nx = 0, ny = 0, pitch = 0, rows = 0;
  bool uniform = false;
  float cx_value = 0, cy_value = 0;
  const float* cx = nullptr;  // non-uniform levels only
  const float* cy = nullptr;
  const uint8_t* faces = nullptr;  // face bits, every level
  float* e = nullptr;  // correction
  float* f = nullptr;  // right-hand side of A e = f
  // The rows this rank updates (sim/ranks/level_rows.hpp): all of them
  // on one rank. Sweeps, prolongation, the Krylov updates and their
  // reductions cover these rows only.
  int j_lo = 0, j_hi = 0;
};

// Ghost rules per side (sim::Side order), a kernel parameter.
struct Ghosts {
  GhostRule rule[4];
};

// The block-resident tail of the V-cycle: the operations on the levels
// small enough for one block (the coarsest always, level 0 too on a small
// grid), queued in order and run by one launch of one block with a barrier
// after each: a few microseconds of barriers instead of a launch per
// half-sweep. Each operation does per point exactly what its own kernel
// does (mg_load, mg_smooth + mg_halo, mg_restrict, mg_prolong), so the
// result is the same bit for bit.
constexpr int kTailMaxLevels = 16;
constexpr int kTailOps = 2048;
enum TailKind : uint8_t { kTailSmooth = 0, kTailRestrict = 1, kTailProlong = 2, kTailLoad = 3 };
// op byte: tail level (0 = the first tail level) in bits 0-3, kind in 4-5, colour in 6
constexpr uint8_t tail_op(int level, TailKind kind, int color = 0) {
  return static_cast<uint8_t>(level | (kind << 4) | (color << 6));
}
struct TailProgram {
  uint8_t op[kTailOps];
  int count = 0;
};
struct TailLevels {
  DeviceLevel l[kTailMaxLevels];  // l[0] is the first tail level
  int n = 0;
};

// Launch geometry of the float64 reductions on the nx x ny cells: the number
// of per-block partial sums each writes (fixed by the grid size only).
int pcg_partial_count(int nx, int ny);
// The partial sums of a reduction over a level's own rows [j_lo, j_hi).
int pcg_partial_count(const DeviceLevel& l);

// --- V-cycle (float32) -----------------------------------------------------
// Whether a fused halo write of one half-sweep could race: a wrap side with
// an odd cell count puts both ends of a row in the same colour.
bool smooth_halo_races(const DeviceLevel& l, const Ghosts& g);
// f = (float) r, e = 0 on the whole level-0 array.
void mg_load(cudaStream_t s, const DeviceLevel& l0, const double* r);
// mg_load followed by the first half-sweep, in one pass: f = (float) r; e of
// the `color` cells = poisson_relax_point of zero neighbours, e of the other
// cells 0; halo filled.
void mg_load_smooth(cudaStream_t s, const DeviceLevel& l0, const Ghosts& g, const double* r, int color);
// One red-black half-sweep; with fuse_halo the updated cells write the halo
// cells derived from them (else call mg_halo after).
void mg_smooth(cudaStream_t s, const DeviceLevel& l, const Ghosts& g, int color, bool fuse_halo);
// Two half-sweeps, first_color then the other, in one pass: reads l.e, writes
// the result with its halo to `out` (another array of the level's shape).
// Only for levels without a wrap side (smooth_pair_applies).
void mg_smooth_pair(cudaStream_t s, const DeviceLevel& l, const Ghosts& g, float* out, int first_color);
inline bool smooth_pair_applies(const Ghosts& g) {
  for (GhostRule r : g.rule)
    if (r == GhostRule::wrap) return false;
  return true;
}
// Halo of e by the ghost rules: x sides, then y sides (corners as the CPU).
void mg_halo(cudaStream_t s, const DeviceLevel& l, const Ghosts& g);
// c.f(I, J) = sum over children of (f - A e) of the fine level; c.e = 0
// (halo included).
void mg_restrict(cudaStream_t s, const DeviceLevel& fine, const DeviceLevel& coarse);
// Over ranks (the level's own rows): res = f - A e of the fine level; then
// the coarse e = 0 (halo included) and its own rows' f = the sum of the
// children's res (mg_restrict's sums, from res).
void mg_residual_rows(cudaStream_t s, const DeviceLevel& fine, float* res);
void mg_restrict_rows(cudaStream_t s, const DeviceLevel& fine, const DeviceLevel& coarse, const float* res);
// fine.e += coarse.e of the parent on open cells; halo filled.
void mg_prolong(cudaStream_t s, const DeviceLevel& fine, const DeviceLevel& coarse, const Ghosts& g);
// The queued tail operations by one block; r is read by a load (level 0 in
// the tail only).
void mg_tail(cudaStream_t s, const TailLevels& levels, const Ghosts& g, const TailProgram& prog, const double* r);

// --- conjugate gradients (float64 on level 0) ------------------------------
// partials[b] = sum of rhs over the cells of block b (solid cells hold 0).
void pcg_sum_rhs(cudaStream_t s, const DeviceLevel& l0, const float* rhs, double* partials);
// out[0] = sum of partials[0..n) in a fixed order (one block); with
// divide_by > 0 also out[1] = out[0] / divide_by.
void pcg_final_sum(cudaStream_t s, const double* partials, int n, double* out, double divide_by);
// x = 0 (x zeroed by the caller), r = rhs - (*mean) on open cells (mean may be
// null: not singular), 0 elsewhere; partials of r^2.
void pcg_start(cudaStream_t s, const DeviceLevel& l0, const float* rhs, const float* open, const double* mean,
               double* r, double* partials);
// partials of <r, (double) e>.
void pcg_dot(cudaStream_t s, const DeviceLevel& l0, const double* r, const float* e, double* partials);
// p = e + beta p (p = e when beta == 0); halo of p filled.
// beta_dev: beta read on the device instead of `beta` (solve on the device)
void pcg_direction(cudaStream_t s, const DeviceLevel& l0, const Ghosts& g, const float* e, double beta, double* p,
                   const double* beta_dev = nullptr);
// q = A p (halo of p filled); partials of <p, q>.
void pcg_apply(cudaStream_t s, const DeviceLevel& l0, const double* p, double* q, double* partials);
// x += alpha p, r -= alpha q; partials of r^2.
// dev: alpha (and whether it is valid) read on the device instead of `alpha`
void pcg_update(cudaStream_t s, const DeviceLevel& l0, double alpha, const double* p, const double* q, double* x,
                double* r, double* partials, const PcgState* dev = nullptr);
// Halo of a float64 level-0 vector (x sides, then y sides).
void pcg_halo(cudaStream_t s, const DeviceLevel& l0, const Ghosts& g, double* v);
// partials of (b - A x)^2, b = rhs - (*mean) on open cells (mean may be null);
// x's halo filled.
void pcg_residual(cudaStream_t s, const DeviceLevel& l0, const float* rhs, const float* open, const double* mean,
                  const double* x, double* partials);
// phi = (float) x on the whole array (x's halo filled first, so phi's halo
// is phi's own halo: the ghost rules commute with rounding).
void pcg_round(cudaStream_t s, const DeviceLevel& l0, const double* x, float* phi);

// --- the loop's scalars on the device (solve without host round trips) ---
// The host loop of MultigridSolver::solve, as one-thread kernels over
// PcgState; each writes the record's iteration count and relative residual.
void pcg_init_on_device(cudaStream_t s, PcgState* st, const double* rhs2, double tolerance, int max_iterations,
                        int64_t* rec_iterations, double* rec_relative);
void pcg_beta_on_device(cudaStream_t s, PcgState* st);   // beta = it ? rz / rz_old : 0; rz_old = rz
void pcg_alpha_on_device(cudaStream_t s, PcgState* st);  // alpha = rz / pq, valid if > 0 and finite
void pcg_check_on_device(cudaStream_t s, PcgState* st, double tolerance, int max_iterations, int64_t* rec_iterations,
                         double* rec_relative);
// The while node's condition = st->cont.
void pcg_load_condition(cudaStream_t s, cudaGraphConditionalHandle h, const PcgState* st);

// --- projection from the float64 pressure ----------------------------------
// u = u** - dt * g on active faces, g = (float) ((x_a - x_b) * inv_h) computed
// in double (0 on faces touching a solid when k.has_solids).
// The constants (dt included) are read from the device copy k_dev.
// Face rows [j0, j_end): all of them (0, ny + 1) on one rank.
// The same from the float32 phi (Backend::project_stored).
void project_from_float(cudaStream_t s, const Constants* k_dev, int nx, int j0, int j_end, const float* phi,
                        const float* open, float* u, float* v);
void project_from_double(cudaStream_t s, const Constants* k_dev, int nx, int j0, int j_end, const double* x,
                         const float* open, float* u, float* v);

}  // namespace sim::cuda

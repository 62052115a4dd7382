// SPDX-License-Identifier: MIT
// The steady lid-driven cavity of Ghia, Ghia & Shin (J. Comput. Phys. 48,
// 1982): u along the vertical centreline (Table I) and v along the
// horizontal centreline (Table II), and the worst difference of a state from
// them.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <string>

#include "sim/model/config.hpp"
#include "sim/model/state.hpp"
#include "support/cases.hpp"

namespace sim::test {

struct GhiaPoint {
  double at, value;
};

// Re = 100 and 1000; `at` is y for u, x for v (the walls left out).
inline const GhiaPoint kGhiaU100[] = {{0.9766, 0.84123}, {0.9688, 0.78871}, {0.9609, 0.73722}, {0.9531, 0.68717},
                                      {0.8516, 0.23151}, {0.7344, 0.00332}, {0.6172, -0.13641}, {0.5000, -0.20581},
                                      {0.4531, -0.21090}, {0.2813, -0.15662}, {0.1719, -0.10150}, {0.1016, -0.06434},
                                      {0.0703, -0.04775}, {0.0625, -0.04192}, {0.0547, -0.03717}};
inline const GhiaPoint kGhiaV100[] = {{0.9688, -0.05906}, {0.9609, -0.07391}, {0.9531, -0.08864}, {0.9453, -0.10313},
                                      {0.9063, -0.16914}, {0.8594, -0.22445}, {0.8047, -0.24533}, {0.5000, 0.05454},
                                      {0.2344, 0.17527},  {0.2266, 0.17507},  {0.1563, 0.16077},  {0.0938, 0.12317},
                                      {0.0781, 0.10890},  {0.0703, 0.10091},  {0.0625, 0.09233}};
inline const GhiaPoint kGhiaU1000[] = {{0.9766, 0.65928}, {0.9688, 0.57492}, {0.9609, 0.51117}, {0.9531, 0.46604},
                                       {0.8516, 0.33304}, {0.7344, 0.18719}, {0.6172, 0.05702}, {0.5000, -0.06080},
                                       {0.4531, -0.10648}, {0.2813, -0.27805}, {0.1719, -0.38289}, {0.1016, -0.29730},
                                       {0.0703, -0.22220}, {0.0625, -0.20196}, {0.0547, -0.18109}};
inline const GhiaPoint kGhiaV1000[] = {{0.9688, -0.21388}, {0.9609, -0.27669}, {0.9531, -0.33714}, {0.9453, -0.39188},
                                       {0.9063, -0.51550}, {0.8594, -0.42665}, {0.8047, -0.31966}, {0.5000, 0.02526},
                                       {0.2344, 0.32235},  {0.2266, 0.33075},  {0.1563, 0.37095},  {0.0938, 0.32627},
                                       {0.0781, 0.30353},  {0.0703, 0.29012},  {0.0625, 0.27485}};

// Worst |u - u_Ghia| on x = 1/2 and |v - v_Ghia| on y = 1/2 of a unit cavity
// with an even cell count (the centrelines are face lines), linear between
// faces along the line.
template <size_t NU, size_t NV>
double ghia_worst(const SimState& st, const GhiaPoint (&u_ref)[NU], const GhiaPoint (&v_ref)[NV]) {
  const Grid& g = st.grid;
  auto along = [&](const std::vector<real>& f, double s, int n, bool u_line) {
    const double fs = s * n - 0.5;
    const int m = std::max(0, std::min(n - 2, static_cast<int>(std::floor(fs))));
    const double w = std::min(1.0, std::max(0.0, fs - m));
    auto val = [&](int k) { return u_line ? double(f[g.idx(g.nx / 2, k)]) : double(f[g.idx(k, g.ny / 2)]); };
    return (1 - w) * val(m) + w * val(m + 1);
  };
  double worst = 0;
  for (const GhiaPoint& p : u_ref) worst = std::max(worst, std::abs(along(st.u, p.at, g.ny, true) - p.value));
  for (const GhiaPoint& p : v_ref) worst = std::max(worst, std::abs(along(st.v, p.at, g.nx, false) - p.value));
  return worst;
}

// The extrema on the centrelines at Re = 1000 of Botella & Peyret (Comput.
// Fluids 27, 1998, Table 9; spectral, converged to ~1e-7): min u on x = 1/2,
// max and min v on y = 1/2. Ghia's 129^2 values differ from them by up to
// 0.012 (v_min -0.5155 against -0.5271), which bounds how close to Ghia a
// converged solution can come.
struct CentrelineExtrema {
  double u_min, v_max, v_min;
};
inline constexpr CentrelineExtrema kBotella1000{-0.3885698, 0.3769447, -0.5270771};

// The extrema of the face values on the centrelines of an even grid.
inline CentrelineExtrema centreline_extrema(const SimState& st) {
  const Grid& g = st.grid;
  CentrelineExtrema e{1e30, -1e30, 1e30};
  for (int j = 0; j < g.ny; ++j) e.u_min = std::min(e.u_min, double(st.u[g.idx(g.nx / 2, j)]));
  for (int i = 0; i < g.nx; ++i) {
    e.v_max = std::max(e.v_max, double(st.v[g.idx(i, g.ny / 2)]));
    e.v_min = std::min(e.v_min, double(st.v[g.idx(i, g.ny / 2)]));
  }
  return e;
}

// A unit cavity at rest with a lid of speed 1 at Re = 1 / nu, on `backend`.
inline Config ghia_cavity(int n, double re, BackendKind backend) {
  Config c;
  c.source = "test";
  c.nx = c.ny = n;
  c.lx = c.ly = 1.0;
  c.density = 1.0;
  c.viscosity = 1.0 / re;
  c.gx = c.gy = 0;
  c.top.speed = 1.0;
  c.tolerance = 1e-6;  // the default solver (auto): float64 pressure
  c.cfl = 0.5;
  c.dt_max = 1.0;
  c.backend = backend;
  return c;
}

// The cavity of ghia_cavity run to t_end: its worst difference to Ghia (Re
// 100 or 1000 tables), its centreline extrema and a line saying so.
struct CavityRun {
  double ghia_worst;
  CentrelineExtrema extrema;
  std::string summary;
};

inline CavityRun run_ghia_cavity(int n, double re, double t_end, BackendKind backend) {
  const Config c = ghia_cavity(n, re, backend);
  auto s = make_sim(c);
  const auto t0 = std::chrono::steady_clock::now();
  while (s->time() < t_end) s->step();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const SimState st = s->download();
  CavityRun r;
  r.ghia_worst = re == 1000 ? ghia_worst(st, kGhiaU1000, kGhiaV1000) : ghia_worst(st, kGhiaU100, kGhiaV100);
  r.extrema = centreline_extrema(st);
  std::ostringstream m;
  m << n << "x" << n << " Re = " << re << ", t = " << s->time() << " (" << s->step_index() << " steps, " << secs
    << " s): worst |u - u_Ghia|, |v - v_Ghia| on the centrelines = " << r.ghia_worst << "; extrema u_min "
    << r.extrema.u_min << " v_max " << r.extrema.v_max << " v_min " << r.extrema.v_min;
  r.summary = m.str();
  return r;
}

}  // namespace sim::test

// SPDX-License-Identifier: MIT
// The transform solve of the implicit viscous step's Helmholtz problems on
// the CPU (sim/model/helmholtz_fft.hpp): per component a real 2-D
// transform with FFTW in float64, the kinds per axis (R2HC / HC2R where
// periodic, RODFT00 (DST-I) for the normal component between closed sides,
// RODFT10 / RODFT01 (DST-II / III) or REDFT10 / REDFT01 (DCT-II / III) for
// the tangential one), the division by 1 - g (lambda_x + lambda_y), and
// back. As for the pressure's transform solve (sim/cpu/cpu_fft.hpp), plans
// are made for fixed blocks of rows and columns, so the result is the same
// bit for bit for any thread count.
#pragma once
#include <memory>

#include "sim/model/helmholtz_fft.hpp"
#include "sim/ranks/slab_rows.hpp"

namespace sim {

class CpuFftHelmholtz {
 public:
  explicit CpuFftHelmholtz(const Constants& k);  // plans (FFTW_ESTIMATE) and work arrays; needs an empty refusal
  ~CpuFftHelmholtz();
  CpuFftHelmholtz(const CpuFftHelmholtz&) = delete;
  CpuFftHelmholtz& operator=(const CpuFftHelmholtz&) = delete;

  // x += (I - g lap_0)^-1 (b - A x) on the unknown faces of component q
  // (0: u, 1: v), the residual taken in float64 from x with its halo
  // filled (the boundary values); b and x in the grid's layout. The halo
  // of x is not touched.
  void correct(int q, const real* b, real* x, double g);

  // A run over several ranks (slabs of rows): from then on correct() is
  // collective. Each rank takes the residual of its own rows; the x
  // transforms run on the ranks holding their blocks' rows, the y
  // transforms on columns of blocks shared out evenly, between all-to-all
  // transposes (sim/cpu/fft_blocks.hpp). Every block runs through one
  // rank's plan at one rank's place, so each rank's corrected rows are one
  // rank's, bit for bit.
  void split(std::shared_ptr<const RankSplit> split);

 private:
  struct Component;
  void solve(Component& m, double g);
  std::unique_ptr<Component> c_[2];
  int pitch_ = 0;
  std::shared_ptr<const RankSplit> owner_;
  const SlabRows* ranks_ = nullptr;  // owner_'s slabs, or null on one rank
};

}  // namespace sim

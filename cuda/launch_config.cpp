// SPDX-License-Identifier: MIT
// Launch shapes of the grid stencils.
#include <stdexcept>
#include <string>

#include "cuda/kernels.hpp"

namespace sim::cuda {

namespace {
// The static per-block limit; a larger tile would need an opt-in attribute.
constexpr size_t kMaxTileBytes = 48 * 1024;
// Tiles of at most two fields (u and v, or phi and the mask).
constexpr int kMaxTileFields = 2;
}  // namespace

int default_block_x(Stencil) { return 32; }
int default_block_y(Stencil s) { return s == Stencil::shared ? 16 : 8; }

size_t shared_tile_bytes(int fields, int bx, int by, int radius) {
  return static_cast<size_t>(fields) * tile_pitch(bx, radius) * (by + 2 * radius) * sizeof(real);
}

StencilOpts make_stencil_opts(Stencil s, int block_x, int block_y, bool solids, AdvectionScheme advection) {
  if (s == Stencil::auto_)
    throw std::invalid_argument("make_stencil_opts: gpu.stencil = auto is resolved first (resolve_strategies)");
  StencilOpts o;
  o.variant = s;
  o.block_x = block_x > 0 ? block_x : default_block_x(s);
  o.block_y = block_y > 0 ? block_y : default_block_y(s);
  o.solids = solids;
  o.advection = advection;
  const std::string shape = std::to_string(o.block_x) + "x" + std::to_string(o.block_y);
  const int threads = o.block_x * o.block_y;
  if (threads > 1024) throw std::runtime_error("gpu.block_x * gpu.block_y: block " + shape + " has more than 1024 threads");
  // block reductions work on whole warps
  if (threads % 32 != 0)
    throw std::runtime_error("gpu.block_x * gpu.block_y: block " + shape + " must hold a multiple of 32 threads");
  // the largest tile: two fields, with the momentum stage's halo (two cells for quick)
  const size_t tile = shared_tile_bytes(kMaxTileFields, o.block_x, o.block_y, o.stage_radius());
  if (s == Stencil::shared && tile > kMaxTileBytes)
    throw std::runtime_error("gpu.block_x/gpu.block_y: the shared tiles of a " + shape + " block need " +
                             std::to_string(tile) + " bytes, more than 48 KiB; use a wider, lower block");
  return o;
}

int cell_blocks(const Exec& e, const StencilOpts& o) {
  return ((e.nx + o.block_x - 1) / o.block_x) * ((e.ny + o.block_y - 1) / o.block_y);
}

int own_cell_blocks(const Exec& e, const StencilOpts& o) {
  const int rows = e.cell_row_end() - e.row0;
  return ((e.nx + o.block_x - 1) / o.block_x) * ((rows + o.block_y - 1) / o.block_y);
}

}  // namespace sim::cuda

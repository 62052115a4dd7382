// The XDMF index sim.xdmf: a temporal collection over the snapshot files that
// ParaView (XDMF reader, 5.11) opens as one time series. The shape follows
// /work/shared/docs/PARAVIEW.md: the grid is a 3DCoRectMesh one cell thick so
// it lands in the x-y plane with cell data; particles are a Polyvertex set.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sim {

struct XdmfStep {
  std::string file;       // snapshot path relative to the index
  int64_t step = 0;
  double time = 0;        // [s]
  int nx = 0, ny = 0;
  double dx = 0, dy = 0;  // [m]
  int64_t particles = 0;  // 0: the step has no particle grid
};

std::string xdmf_document(const std::vector<XdmfStep>& steps);

}  // namespace sim

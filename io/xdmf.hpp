// SPDX-License-Identifier: MIT
// The XDMF index sim.xdmf: a temporal collection over the snapshot files that
// ParaView (XDMF reader, 5.11, checked with pvpython by the io_paraview test)
// opens as one time series. The grid is a 3DCoRectMesh one cell thick, so it
// lands in the x-y plane with cell data (a 2DCoRectMesh lands in the y-z
// plane); dimensions are listed slowest first (z y x); vectors have three
// components so ParaView shows them as vectors; particles are a Polyvertex set.
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

// How every index sim writes begins: what tells sim's own sim.xdmf (and the
// temporary it is written under) from a file of the same name it did not write.
inline constexpr const char* kXdmfPrologue =
    "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"2.0\">\n";

}  // namespace sim

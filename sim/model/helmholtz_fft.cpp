// SPDX-License-Identifier: MIT
#include "sim/model/helmholtz_fft.hpp"

#include <cmath>
#include <stdexcept>

namespace sim {

namespace {
bool closed(int kind) {
  const auto b = static_cast<BoundaryKind>(kind);
  return b == BoundaryKind::wall || b == BoundaryKind::free_slip || b == BoundaryKind::inflow;
}
// The tangential ghost rule (tangential_ghost): mirrored (no-slip, inflow)
// or copied (free-slip, outflow).
bool mirrored(int kind) {
  const auto b = static_cast<BoundaryKind>(kind);
  return b == BoundaryKind::wall || b == BoundaryKind::inflow;
}
const char* side_name(int s) {
  static const char* names[4] = {"left", "right", "bottom", "top"};
  return names[s];
}

// The axis of the component normal to sides lo and hi, and of the one
// tangential to them.
HelmholtzLine normal_line(const Constants& k, int lo, int cells, double c) {
  HelmholtzLine l;
  l.cells = cells;
  l.c = c;
  if (k.bc_kind[lo] == static_cast<int>(BoundaryKind::periodic)) {
    l.kind = HelmholtzAxis::periodic;
    l.unknowns = cells;
    l.first = 0;
  } else {
    l.kind = HelmholtzAxis::dst1;
    l.unknowns = cells - 1;
    l.first = 1;
  }
  return l;
}
HelmholtzLine tangential_line(const Constants& k, int lo, int cells, double c) {
  HelmholtzLine l;
  l.cells = cells;
  l.c = c;
  l.unknowns = cells;
  l.first = 0;
  if (k.bc_kind[lo] == static_cast<int>(BoundaryKind::periodic)) l.kind = HelmholtzAxis::periodic;
  else l.kind = mirrored(k.bc_kind[lo]) ? HelmholtzAxis::dst2 : HelmholtzAxis::dct2;
  return l;
}
}  // namespace

std::string helmholtz_transform_refusal(const Constants& k, bool ranks) {
  if (k.has_solids) return "the domain has obstacles";
  if (ranks) return "the run is split over GPU ranks";
  for (int lo : {kLeft, kBottom}) {
    const int hi = lo == kLeft ? kRight : kTop;
    const int a = k.bc_kind[lo], b = k.bc_kind[hi];
    const bool pa = a == static_cast<int>(BoundaryKind::periodic), pb = b == static_cast<int>(BoundaryKind::periodic);
    if (pa != pb) return std::string("the ") + side_name(lo) + " and " + side_name(hi) + " sides are not both periodic";
    if (pa) continue;
    if (!closed(a) || !closed(b))
      return std::string("an outflow side (") + (closed(a) ? side_name(hi) : side_name(lo)) +
             ") leaves the normal velocity free there";
    if (mirrored(a) != mirrored(b))
      return std::string("the ") + side_name(lo) + " and " + side_name(hi) +
             " sides treat the tangential velocity differently (no-slip and free-slip)";
  }
  return {};
}

HelmholtzComponent helmholtz_component(const Constants& k, int q) {
  const std::string why = helmholtz_transform_refusal(k, false);
  if (!why.empty()) throw std::invalid_argument("the transform viscous solve does not apply: " + why);
  const double cx = static_cast<double>(k.inv_dx2), cy = static_cast<double>(k.inv_dy2);
  HelmholtzComponent h;
  if (q == 0) {
    h.x = normal_line(k, kLeft, k.nx, cx);
    h.y = tangential_line(k, kBottom, k.ny, cy);
  } else {
    h.x = tangential_line(k, kLeft, k.nx, cx);
    h.y = normal_line(k, kBottom, k.ny, cy);
  }
  return h;
}

double helmholtz_eigenvalue(const HelmholtzLine& l, int m) {
  const double pi = 3.14159265358979323846;
  const double n = l.cells;
  double s = 0;
  switch (l.kind) {
    case HelmholtzAxis::periodic: s = std::sin(pi * m / n); break;
    case HelmholtzAxis::dct2: s = std::sin(pi * m / (2.0 * n)); break;
    case HelmholtzAxis::dst2:
    case HelmholtzAxis::dst1: s = std::sin(pi * (m + 1) / (2.0 * n)); break;
  }
  return -4.0 * l.c * s * s;
}

double helmholtz_round_trip(const HelmholtzLine& l) {
  return l.kind == HelmholtzAxis::periodic ? static_cast<double>(l.cells) : 2.0 * l.cells;
}

}  // namespace sim

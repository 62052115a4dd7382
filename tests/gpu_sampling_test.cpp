// SPDX-License-Identifier: MIT
// Interpolation error of sampling=texture against the software bilinear
// path: the texture unit rounds the weights to 9-bit fixed point (8
// fractional bits), so a weight is off by at most 2^-9 and the sample by at
// most 2^-9 (|f10 - f00| + |f01 - f00|) to first order. Measured on a
// smooth field and on random noise (the worst case per cell). And
// sampling=packed, which reads the same corners from the packed layout,
// against the software path: bit for bit equal at every point.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cuda/device.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/kernels.hpp"
#include "cuda/velocity_textures.hpp"
#include "sim/model/random.hpp"

namespace {

struct SampleError {
  double max_abs = 0;    // max |texture - software|
  double scale = 0;      // max |software|
  double max_rel = 0;    // max |texture - software| / |software| where |software| > scale / 10
  int packed_differ = 0;  // points where packed and software differ in any bit
  double relative() const { return scale > 0 ? max_abs / scale : max_abs; }
};

// Samples u and v at n uniform random points of [0, 1]^2 both ways.
SampleError measure(int n_cells, bool noise, int points) {
  sim::Config cfg;
  cfg.source = "test";
  cfg.nx = cfg.ny = n_cells;
  const sim::Grid g = sim::Grid::make(cfg.nx, cfg.ny, cfg.lx, cfg.ly);
  const sim::Constants k = sim::make_constants(cfg, g);
  std::vector<float> u(g.size(), 0.f), v(g.size(), 0.f);
  const double tau = 2.0 * M_PI;
  for (int j = -1; j <= g.ny + 1; ++j)
    for (int i = -1; i <= g.nx + 1; ++i) {
      const uint64_t id = static_cast<uint64_t>(g.idx(i, j));
      u[g.idx(i, j)] = noise ? static_cast<float>(2 * sim::uniform01(7, id, 0) - 1)
                             : static_cast<float>(std::sin(tau * i * g.dx) * std::cos(tau * (j + 0.5) * g.dy));
      v[g.idx(i, j)] = noise ? static_cast<float>(2 * sim::uniform01(7, id, 1) - 1)
                             : static_cast<float>(-std::cos(tau * (i + 0.5) * g.dx) * std::sin(tau * j * g.dy));
    }
  std::vector<float> x(points), y(points);
  for (int q = 0; q < points; ++q) {
    x[q] = static_cast<float>(sim::uniform01(11, q, 0));
    y[q] = static_cast<float>(sim::uniform01(11, q, 1));
  }

  const sim::cuda::DeviceInfo dev = sim::cuda::query_device();
  sim::cuda::Stream stream;
  sim::cuda::DeviceBuffer<float> du(g.size()), dv(g.size()), dx(points), dy(points);
  sim::cuda::DeviceBuffer<float> su(points), sv(points), tu(points), tv(points), pu(points), pv(points);
  sim::cuda::DeviceBuffer<float4> du4(g.size()), dv4(g.size());
  du.upload(u.data(), u.size(), stream.get());
  dv.upload(v.data(), v.size(), stream.get());
  dx.upload(x.data(), x.size(), stream.get());
  dy.upload(y.data(), y.size(), stream.get());
  sim::cuda::upload_particle_constants(k, stream.get());
  const sim::cuda::VelocityTextures tex(du.data(), dv.data(), g, dev);
  sim::cuda::Exec e;
  e.stream = stream.get();
  e.nx = g.nx;
  e.ny = g.ny;
  e.pitch = g.pitch;
  sim::cuda::VelocitySource software, texture, packed;
  software.u = du.data();
  software.v = dv.data();
  texture.sampling = sim::Sampling::texture;
  texture.tex_u = tex.u();
  texture.tex_v = tex.v();
  packed.sampling = sim::Sampling::packed;
  packed.u4 = du4.data();
  packed.v4 = dv4.data();
  sim::cuda::pack_velocity(e, du.data(), dv.data(), du4.data(), dv4.data(), g.size());
  sim::cuda::sample_fluid_velocity(e, software, dx.data(), dy.data(), points, su.data(), sv.data());
  sim::cuda::sample_fluid_velocity(e, texture, dx.data(), dy.data(), points, tu.data(), tv.data());
  sim::cuda::sample_fluid_velocity(e, packed, dx.data(), dy.data(), points, pu.data(), pv.data());
  std::vector<float> hsu(points), hsv(points), htu(points), htv(points), hpu(points), hpv(points);
  pu.download(hpu.data(), points, stream.get());
  pv.download(hpv.data(), points, stream.get());
  su.download(hsu.data(), points, stream.get());
  sv.download(hsv.data(), points, stream.get());
  tu.download(htu.data(), points, stream.get());
  tv.download(htv.data(), points, stream.get());
  stream.synchronize();

  SampleError err;
  for (int q = 0; q < points; ++q)
    if (std::memcmp(&hpu[q], &hsu[q], sizeof(float)) != 0 || std::memcmp(&hpv[q], &hsv[q], sizeof(float)) != 0)
      ++err.packed_differ;
  for (int q = 0; q < points; ++q)
    err.scale = std::max({err.scale, std::abs(double(hsu[q])), std::abs(double(hsv[q]))});
  for (int q = 0; q < points; ++q)
    for (auto [s, t] : {std::pair{hsu[q], htu[q]}, std::pair{hsv[q], htv[q]}}) {
      const double d = std::abs(double(t) - double(s));
      err.max_abs = std::max(err.max_abs, d);
      if (std::abs(s) > 0.1 * err.scale) err.max_rel = std::max(err.max_rel, d / std::abs(s));
    }
  return err;
}

}  // namespace

TEST_CASE("gpu: texture sampling error against software bilinear interpolation") {
  constexpr int kCells = 256, kPoints = 1 << 20;
  const SampleError smooth = measure(kCells, false, kPoints);
  const SampleError noise = measure(kCells, true, kPoints);
  MESSAGE("texture vs software, " << kPoints << " points on " << kCells << "^2 cells:\n"
                                  << "  smooth field sin(2 pi x) cos(2 pi y): max |diff| / max |f| = "
                                  << smooth.relative() << ", max relative (|f| > max/10) = " << smooth.max_rel << "\n"
                                  << "  uniform noise in [-1, 1]:            max |diff| / max |f| = "
                                  << noise.relative() << ", max relative (|f| > max/10) = " << noise.max_rel);
  // Bounds from the 9-bit weights (8 fractional bits): each weight is off by
  // less than 2^-8 (the H200 measured up to ~2^-8.3 on noise, so the weights
  // are truncated rather than rounded), times the differences across a cell
  // in x and y (2 pi / 256 each for the smooth field, 2 each for noise).
  const double weight_error = std::ldexp(1.0, -8);
  CHECK(smooth.relative() < weight_error * 2 * (2 * M_PI / kCells));
  CHECK(noise.relative() < weight_error * 2 * 2);
  CHECK(smooth.packed_differ == 0);
  CHECK(noise.packed_differ == 0);
}


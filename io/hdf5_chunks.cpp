// SPDX-License-Identifier: MIT
#include "io/hdf5_chunks.hpp"

#include <omp.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace sim::h5 {

uint32_t fletcher32(const void* data, size_t bytes) {
  const auto* d = static_cast<const uint8_t*>(data);
  size_t words = bytes / 2;
  uint32_t s1 = 0, s2 = 0;
  while (words > 0) {
    size_t n = std::min<size_t>(words, 360);
    words -= n;
    do {
      s1 += static_cast<uint32_t>((d[0] << 8) | d[1]);
      d += 2;
      s2 += s1;
    } while (--n);
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
  }
  if (bytes % 2) {
    s1 += static_cast<uint32_t>(*d << 8);
    s2 += s1;
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
  }
  s1 = (s1 & 0xffff) + (s1 >> 16);
  s2 = (s2 & 0xffff) + (s2 >> 16);
  return (s2 << 16) | s1;
}

namespace {

// Where chunk q starts (element coordinates) and how many of its elements
// hold data (the rest of an edge chunk is padding).
struct ChunkPlace {
  std::vector<hsize_t> offset;
  size_t first = 0;  // first element in the row-major array
  size_t filled = 0;
};

struct Grid {
  size_t k = 0;         // the dimension chunks are cut along
  size_t per_k = 0;     // chunks along dimension k
  size_t inner = 1;     // elements of one index of dimension k
  size_t elements = 0;  // per chunk
  size_t count = 0;     // chunks
};

// The layouts write_dataset makes; anything else is refused (false).
bool grid_of(const ChunkLayout& l, Grid& g) {
  const size_t r = l.dims.size();
  if (r == 0 || l.chunk.size() != r) return false;
  size_t k = 0;
  while (k + 1 < r && l.chunk[k] == 1 && l.dims[k] > 1) ++k;
  for (size_t a = 0; a < k; ++a)
    if (l.chunk[a] != 1) return false;
  for (size_t a = k + 1; a < r; ++a)
    if (l.chunk[a] != l.dims[a]) return false;
  if (l.chunk[k] == 0) return false;
  g.k = k;
  for (size_t a = k + 1; a < r; ++a) g.inner *= static_cast<size_t>(l.dims[a]);
  g.per_k = static_cast<size_t>((l.dims[k] + l.chunk[k] - 1) / l.chunk[k]);
  size_t outer = 1;
  for (size_t a = 0; a < k; ++a) outer *= static_cast<size_t>(l.dims[a]);
  g.elements = static_cast<size_t>(l.chunk[k]) * g.inner;
  g.count = outer * g.per_k;
  return true;
}

ChunkPlace place(const ChunkLayout& l, const Grid& g, size_t q) {
  ChunkPlace p;
  p.offset.assign(l.dims.size(), 0);
  size_t outer = q / g.per_k;
  const size_t b = q % g.per_k;
  for (size_t a = g.k; a-- > 0;) {
    p.offset[a] = outer % l.dims[a];
    outer /= static_cast<size_t>(l.dims[a]);
  }
  p.offset[g.k] = static_cast<hsize_t>(b) * l.chunk[g.k];
  size_t row = 0;  // index along dimensions 0..k in row-major order
  for (size_t a = 0; a <= g.k; ++a) row = row * static_cast<size_t>(l.dims[a]) + static_cast<size_t>(p.offset[a]);
  p.first = row * g.inner;
  const size_t rows = static_cast<size_t>(std::min<hsize_t>(l.chunk[g.k], l.dims[g.k] - p.offset[g.k]));
  p.filled = rows * g.inner;
  return p;
}

// The chunk as stored: shuffled and deflated when asked, then checksummed.
void filter_chunk(const ChunkLayout& l, const Grid& g, const unsigned char* src, size_t filled,
                  std::vector<unsigned char>& raw, std::vector<unsigned char>& out) {
  const size_t bytes = g.elements * l.element_bytes, used = filled * l.element_bytes;
  if (!l.shuffle_deflate) {
    out.resize(bytes + 4);
    std::memcpy(out.data(), src, used);
    std::memset(out.data() + used, 0, bytes - used);
  } else {
    raw.assign(bytes, 0);  // shuffled: byte b of element e at b * elements + e
    const size_t s = l.element_bytes;
    for (size_t b = 0; b < s; ++b) {
      unsigned char* dst = raw.data() + b * g.elements;
      for (size_t e = 0; e < filled; ++e) dst[e] = src[e * s + b];
    }
    uLongf n = compressBound(static_cast<uLong>(bytes));
    out.resize(static_cast<size_t>(n) + 4);
    if (compress2(out.data(), &n, raw.data(), static_cast<uLong>(bytes), std::clamp(l.level, 1, 9)) != Z_OK)
      throw std::runtime_error("zlib could not compress a chunk");
    out.resize(static_cast<size_t>(n) + 4);
  }
  const size_t body = out.size() - 4;
  const uint32_t sum = fletcher32(out.data(), body);
  for (int i = 0; i < 4; ++i) out[body + static_cast<size_t>(i)] = static_cast<unsigned char>(sum >> (8 * i));
}

}  // namespace

bool write_chunks(hid_t dset, const ChunkLayout& layout, const void* data) {
  Grid g;
  if (!grid_of(layout, g) || layout.element_bytes == 0) return false;
  const auto* bytes = static_cast<const unsigned char*>(data);
  const int threads = std::max(1, omp_get_max_threads());
  const size_t batch = static_cast<size_t>(threads) * 4;
  std::vector<std::vector<unsigned char>> out(std::min(batch, g.count)), raw(static_cast<size_t>(threads));
  std::vector<ChunkPlace> places(out.size());
  for (size_t q0 = 0; q0 < g.count; q0 += batch) {
    const size_t n = std::min(batch, g.count - q0);
    std::string error;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (size_t i = 0; i < n; ++i) {
      try {
        places[i] = place(layout, g, q0 + i);
        filter_chunk(layout, g, bytes + places[i].first * layout.element_bytes, places[i].filled,
                     raw[static_cast<size_t>(omp_get_thread_num())], out[i]);
      } catch (const std::exception& e) {
#pragma omp critical(sim_chunk_error)
        error = e.what();
      }
    }
    if (!error.empty()) throw std::runtime_error(error);
    for (size_t i = 0; i < n; ++i)
      if (H5Dwrite_chunk(dset, H5P_DEFAULT, 0, places[i].offset.data(), out[i].size(), out[i].data()) < 0)
        throw std::runtime_error("cannot write a chunk");
  }
  return true;
}

}  // namespace sim::h5

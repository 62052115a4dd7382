// SPDX-License-Identifier: MIT
// A dataset's chunks filtered here, many at a time, and handed to HDF5 as
// they are to be stored (H5Dwrite_chunk), instead of through HDF5's filter
// pipeline one chunk after another.
//
// The filters are the ones write_dataset declares on the dataset, applied
// exactly as HDF5 applies them, so every reader decodes the chunks through
// its own pipeline: byte shuffle (H5Z_FILTER_SHUFFLE) and zlib's compress2
// (H5Z_FILTER_DEFLATE) when compressed, then Fletcher32 (HDF5's checksum of
// the bytes so far, appended little-endian). Chunks at the far edge of a
// dimension are stored whole, padded with zeros, as HDF5 stores them.
//
// Why: a 4096^2 snapshot's chunks of 1 MiB went through HDF5's pipeline at
// about 130 MB/s (one writer thread, any disk), where the bytes alone move
// at memory speed; here the chunks of a batch are filtered in parallel
// (OpenMP) and written in order.
#pragma once
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sim::h5 {

// HDF5's Fletcher32 (H5_checksum_fletcher32): 16-bit big-endian words,
// sums folded every 360 words.
uint32_t fletcher32(const void* data, size_t bytes);

struct ChunkLayout {
  std::vector<hsize_t> dims;   // the dataset's, slowest first
  std::vector<hsize_t> chunk;  // {1, ..., 1, c_k, dims[k + 1], ...}: each chunk is contiguous in row-major order
  size_t element_bytes = 0;
  bool shuffle_deflate = false;
  int level = 4;
};

// Writes every chunk of the row-major array `data` (the whole dataset) to
// the open dataset `dset`, created with the filters `layout` names and
// Fletcher32 last. Returns false, having written nothing, where the layout
// is not the one this supports (the caller then writes through H5Dwrite);
// throws std::runtime_error("...") with HDF5's or zlib's complaint.
bool write_chunks(hid_t dset, const ChunkLayout& layout, const void* data);

}  // namespace sim::h5

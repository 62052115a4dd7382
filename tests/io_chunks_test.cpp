// SPDX-License-Identifier: MIT
// Chunks filtered outside HDF5 (io/hdf5_chunks.hpp) against HDF5's own
// filter pipeline: the stored bytes of every chunk equal what H5Dwrite
// stores for the same dataset (so the shuffle, the deflate stream and the
// Fletcher32 checksum are HDF5's, edge chunks padded as HDF5 pads them), and
// HDF5 reads the data back through its pipeline, checksum verified.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "io/hdf5_chunks.hpp"
#include "io/hdf5_file.hpp"

using namespace sim;

namespace {

template <class T> hid_t mem_type();
template <> hid_t mem_type<float>() { return H5T_NATIVE_FLOAT; }
template <> hid_t mem_type<uint8_t>() { return H5T_NATIVE_UINT8; }
template <> hid_t mem_type<uint64_t>() { return H5T_NATIVE_UINT64; }

template <class T>
std::vector<T> sample(size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>) x = static_cast<T>(std::normal_distribution<double>(0, 1)(rng));
    else x = static_cast<T>(rng() % 5);  // repetitive, so deflate has work
  }
  return v;
}

// Every stored chunk of `name`: its offset's bytes as stored, filter mask 0.
std::vector<std::vector<unsigned char>> stored_chunks(hid_t file, const std::string& name) {
  const hid_t d = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  const hid_t space = H5Dget_space(d);
  hsize_t n = 0;
  REQUIRE(H5Dget_num_chunks(d, space, &n) >= 0);
  std::vector<std::vector<unsigned char>> out;
  for (hsize_t q = 0; q < n; ++q) {
    hsize_t offset[4] = {};
    unsigned mask = 1;
    haddr_t addr = 0;
    hsize_t size = 0;
    REQUIRE(H5Dget_chunk_info(d, space, q, offset, &mask, &addr, &size) >= 0);
    CHECK(mask == 0u);
    std::vector<unsigned char> bytes(size);
    uint32_t read_mask = 1;
    REQUIRE(H5Dread_chunk(d, H5P_DEFAULT, offset, &read_mask, bytes.data()) >= 0);
    out.push_back(std::move(bytes));
  }
  H5Sclose(space);
  H5Dclose(d);
  return out;
}

template <class T>
void check_shape(const std::vector<hsize_t>& dims, bool compressed) {
  size_t total = 1;
  for (hsize_t d : dims) total *= d;
  const std::vector<T> data = sample<T>(total, static_cast<unsigned>(total + dims.size()));
  const std::string path = "io_chunks_test.h5";
  h5::Compression c;
  c.enabled = compressed;
  c.level = 6;
  {
    h5::File f = h5::File::create(path);
    h5::write_dataset(f, f.id(), "ours", dims, data.data(), c);  // whole: chunks filtered here
    // The same dataset, created with the same properties, through HDF5's pipeline.
    const hid_t d = H5Dopen2(f.id(), "ours", H5P_DEFAULT);
    const hid_t dcpl = H5Dget_create_plist(d), type = H5Dget_type(d), space = H5Dget_space(d);
    const hid_t ref = H5Dcreate2(f.id(), "hdf5", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    REQUIRE(ref >= 0);
    CHECK(H5Dwrite(ref, mem_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0);
    for (hid_t id : {ref, d}) H5Dclose(id);
    H5Pclose(dcpl);
    H5Tclose(type);
    H5Sclose(space);
    f.close();
  }
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const auto ours = stored_chunks(file, "ours"), theirs = stored_chunks(file, "hdf5");
  H5Fclose(file);
  REQUIRE(ours.size() == theirs.size());
  CHECK(ours.size() > 1);
  for (size_t q = 0; q < ours.size(); ++q) CHECK(ours[q] == theirs[q]);
  h5::File f = h5::File::open_read(path);
  std::vector<hsize_t> got_dims;
  CHECK(h5::read_dataset<T>(f, f.id(), "ours", &got_dims) == data);
  CHECK(got_dims == dims);
  f.close();
  std::remove(path.c_str());
}

}  // namespace

TEST_CASE("chunks filtered outside HDF5 are the bytes HDF5's pipeline stores, and read back") {
  for (bool compressed : {false, true}) {
    CAPTURE(compressed);
    check_shape<float>({700, 517}, compressed);        // rows of 517: edge chunk along the rows
    check_shape<float>({300000, 2}, compressed);       // particle positions: cut along the rows
    check_shape<uint8_t>({1500, 1100}, compressed);    // the solid flags
    check_shape<uint64_t>({300001}, compressed);       // ids, an odd count
    check_shape<float>({3, 400, 300}, compressed);     // cut along the middle dimension
  }
}

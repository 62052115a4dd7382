// SPDX-License-Identifier: MIT
// Restart validation: a snapshot with a non-finite value, a particle outside
// the domain or in an obstacle, a diameter <= 0 or a bad step, time or dt is
// refused with one line naming the file, the dataset and the first bad index.
#include <doctest/doctest.h>
#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "io/restart.hpp"
#include "io/snapshot_fields.hpp"
#include "io/snapshot_files.hpp"
#include "support/cases.hpp"
#include "support/cli.hpp"
#include "support/io.hpp"

using namespace sim;

namespace {

const std::vector<std::string> kSets = {"domain.nx=16", "domain.ny=16", "particles.regions[0].count=50",
                                        "run.steps=2"};

std::string sets_args() {
  std::string a;
  for (const std::string& s : kSets) a += " --set " + test::quoted(s);
  return a + " --set 'run.backend=\"cpu\"'";
}

// A good snapshot of the small box at step 2 (written once).
std::string good_snapshot() {
  static const std::string path = [] {
    const std::string dir = test::scratch_dir("restart_validation_good");
    REQUIRE(test::run_case(test::case_config("box.toml", dir, kSets)) == 0);
    return join_path(dir, snapshot_file_name(2));
  }();
  return path;
}

// A copy of the good snapshot, `poison` applied to it with the HDF5 C API.
template <class Poison>
std::string poisoned(const std::string& name, Poison poison) {
  const std::string dir = test::scratch_dir("restart_validation_" + name);
  const std::string path = dir + "/bad.h5";
  std::filesystem::copy_file(good_snapshot(), path);
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  poison(f);
  H5Fclose(f);
  return path;
}

// Element `k` (flat) of float dataset `name` set to `value`.
std::string poison_float(const std::string& name, size_t k, float value) {
  std::string tag = name;
  for (char& c : tag) c = c == '/' ? '_' : c;
  return poisoned(tag + std::to_string(k), [&](hid_t f) {
    const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
    REQUIRE(d >= 0);
    const hid_t sp = H5Dget_space(d);
    std::vector<float> v(static_cast<size_t>(H5Sget_simple_extent_npoints(sp)));
    REQUIRE(k < v.size());
    REQUIRE(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
    v[k] = value;
    REQUIRE(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
    H5Sclose(sp);
    H5Dclose(d);
  });
}

template <class T>
std::string poison_attr(const std::string& name, hid_t type, T value) {
  return poisoned("attr_" + name, [&](hid_t f) {
    const hid_t a = H5Aopen(f, name.c_str(), H5P_DEFAULT);
    REQUIRE(a >= 0);
    REQUIRE(H5Awrite(a, type, &value) >= 0);
    H5Aclose(a);
  });
}

// `path` replaced by a chunked dataset of shape `dims` with nothing written:
// the file declares a size it does not hold.
std::string declare_shape(const std::string& tag, const std::string& path, const std::vector<hsize_t>& dims,
                          hid_t type) {
  return poisoned("shape_" + tag, [&](hid_t f) {
    REQUIRE(H5Ldelete(f, path.c_str(), H5P_DEFAULT) >= 0);
    const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    REQUIRE(space >= 0);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    std::vector<hsize_t> chunk;
    for (hsize_t n : dims) chunk.push_back(std::min<hsize_t>(n, 16));
    REQUIRE(H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()) >= 0);
    const hid_t d = H5Dcreate2(f, path.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    REQUIRE(d >= 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
  });
}

// Restarting from `file` through the binary: one line starting with `start`
// and holding every part of `expect`, status 1.
void check_refused_with(const std::string& file, const std::string& start, const std::vector<std::string>& expect) {
  const std::string out = test::scratch_dir("restart_validation_out");
  const test::SimResult r = test::run_sim(test::quoted(test::source_path("config/box.toml")) + sets_args() +
                                          " --quiet --output " + test::quoted(out) + " --restart " + test::quoted(file));
  INFO(r.out);
  CHECK(r.status == 1);
  CHECK(test::count_lines(r.out) == 1);
  CHECK(r.out.rfind(start, 0) == 0);
  for (const std::string& e : expect) CHECK(r.out.find(e) != std::string::npos);
}

// Restarting from `file` through the binary: fails with one line holding every part of `expect`.
void check_refused(const std::string& file, const std::vector<std::string>& expect) {
  const std::string out = test::scratch_dir("restart_validation_out");
  const test::SimResult r = test::run_sim(test::quoted(test::source_path("config/box.toml")) + sets_args() +
                                          " --quiet --output " + test::quoted(out) + " --restart " + test::quoted(file));
  INFO(r.out);
  CHECK(r.status == 1);
  CHECK(test::count_lines(r.out) == 1);
  CHECK(r.out.rfind("sim: error: restart from '" + file + "': ", 0) == 0);
  for (const std::string& e : expect) CHECK(r.out.find(e) != std::string::npos);
}

// A copy of the good snapshot with one byte of dataset `name`'s stored data
// flipped (byte `offset` of its first chunk), behind HDF5's back.
std::string flip_data_byte(const std::string& name, hsize_t offset) {
  std::string tag = name;
  for (char& c : tag) c = c == '/' ? '_' : c;
  const std::string dir = test::scratch_dir("restart_validation_flip" + tag);
  const std::string path = dir + "/corrupt.h5";
  std::filesystem::copy_file(good_snapshot(), path);
  haddr_t addr = HADDR_UNDEF;
  hsize_t size = 0;
  {
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
    REQUIRE(d >= 0);
    const hid_t sp = H5Dget_space(d);
    unsigned mask = 0;
    hsize_t chunk_offset[3] = {0, 0, 0};
    REQUIRE(H5Dget_chunk_info(d, sp, 0, chunk_offset, &mask, &addr, &size) >= 0);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(f);
  }
  REQUIRE(addr != HADDR_UNDEF);
  REQUIRE(offset < size);
  std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
  io.seekg(static_cast<std::streamoff>(addr + offset));
  char b = 0;
  io.read(&b, 1);
  b = static_cast<char>(b ^ 0x10);
  io.seekp(static_cast<std::streamoff>(addr + offset));
  io.write(&b, 1);
  io.close();
  REQUIRE(!io.fail());
  return path;
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("restart validation: the good snapshot restarts") {
  const std::string out = test::scratch_dir("restart_validation_ok");
  const test::SimResult r =
      test::run_sim(test::quoted(test::source_path("config/box.toml")) + sets_args() + " --set run.steps=3 --quiet --output " +
                    test::quoted(out) + " --restart " + test::quoted(good_snapshot()));
  INFO(r.out);
  CHECK(r.status == 0);
}

TEST_CASE("restart validation: a non-finite value in any field is refused with dataset and index") {
  // u is (16, 17): flat 5 * 17 + 3 is [5, 3]
  check_refused(poison_float("/grid/u", 5 * 17 + 3, kNaN), {"dataset '/grid/u' index [5, 3] = nan is not finite"});
  check_refused(poison_float("/grid/v", 16 + 2, kInf), {"dataset '/grid/v' index [1, 2] = inf is not finite"});
  check_refused(poison_float("/grid/phi", 7, kNaN), {"dataset '/grid/phi' index [0, 7] = nan"});
  check_refused(poison_float("/grid/pressure", 16 * 15, -kInf), {"dataset '/grid/pressure' index [15, 0] = -inf"});
  check_refused(poison_float("/grid/velocity", 3 * 20 + 1, kNaN), {"dataset '/grid/velocity' index [1, 4, 1] = nan"});
  check_refused(poison_float("/particles/position", 3 * 9 + 1, kNaN), {"dataset '/particles/position' index [9, 1] = nan"});
  check_refused(poison_float("/particles/velocity", 3 * 4, kInf), {"dataset '/particles/velocity' index [4, 0] = inf"});
  check_refused(poison_float("/particles/diameter", 11, kNaN), {"dataset '/particles/diameter' index [11] = nan"});
}

TEST_CASE("restart validation: a NaN in each float dataset of the snapshot field table is refused") {
  for (const SnapshotField& f : kSnapshotFields) {
    if (!f.holds_float()) continue;
    CAPTURE(f.path());
    std::string index = "[0";
    for (size_t k = 1; k < f.dims(16, 16, 50).size(); ++k) index += ", 0";
    check_refused(poison_float(f.path(), 0, kNaN), {"dataset '" + f.path() + "' index " + index + "] = nan is not finite"});
  }
}

TEST_CASE("restart validation: particles outside the domain, diameters <= 0") {
  check_refused(poison_float("/particles/position", 3 * 6, -0.01f), {"dataset '/particles/position' index [6]", "outside the domain"});
  check_refused(poison_float("/particles/position", 3 * 2 + 1, 0.2f), {"dataset '/particles/position' index [2]", "outside the domain"});
  check_refused(poison_float("/particles/diameter", 8, 0.0f), {"dataset '/particles/diameter' index [8] = 0", "must be > 0"});
  check_refused(poison_float("/particles/diameter", 9, -1e-4f), {"dataset '/particles/diameter' index [9]", "must be > 0"});
}

TEST_CASE("restart validation: step, time and dt") {
  check_refused(poison_attr<int64_t>("step", H5T_NATIVE_INT64, -3), {"attribute 'step' = -3 must be >= 0"});
  check_refused(poison_attr<double>("time", H5T_NATIVE_DOUBLE, std::numeric_limits<double>::quiet_NaN()),
                {"attribute 'time' = nan"});
  check_refused(poison_attr<double>("time", H5T_NATIVE_DOUBLE, -1.0), {"attribute 'time' = -1 must be finite and >= 0"});
  check_refused(poison_attr<double>("dt", H5T_NATIVE_DOUBLE, std::numeric_limits<double>::infinity()),
                {"attribute 'dt' = inf"});
}

TEST_CASE("restart validation: sizes a file declares are checked before its datasets are read") {
  // 2^30 x 2^30 cells (2^60 floats): refused from the header, not allocated.
  check_refused(declare_shape("grid", "/grid/pressure", {hsize_t(1) << 30, hsize_t(1) << 30}, H5T_NATIVE_FLOAT),
                {"the file's grid is 1073741824 x 1073741824 cells, the config's 16 x 16"});
  // 2^40 rows: more than an int holds (it was cut to 0).
  const std::string rows = declare_shape("rows", "/grid/pressure", {hsize_t(1) << 40, 16}, H5T_NATIVE_FLOAT);
  check_refused_with(rows, "sim: error: restart: " + rows + ": /grid/pressure has shape (1099511627776, 16)",
                     {"more cells a side than a grid holds (at most 2147483647)"});
  // 2^40 particles: more than the config's capacity, refused from the header.
  check_refused(declare_shape("ids", "/particles/id", {hsize_t(1) << 40}, H5T_NATIVE_UINT32),
                {"1099511627776 particles do not fit the config's capacity 50"});
  // (2^60 + 1) x 16 elements wrap to 16 in 64 bits: the dataset would have
  // been read into a vector of 16 floats.
  const std::string wrap = declare_shape("wrap", "/grid/u", {(hsize_t(1) << 60) + 1, 16}, H5T_NATIVE_FLOAT);
  check_refused_with(wrap, "sim: error: restart: " + wrap + ": ", {"dataset 'u' declares more elements than a vector can hold"});
}

TEST_CASE("restart validation: a dataset whose bytes changed fails its checksum, one line naming file and dataset") {
  // A flipped bit inside a float that stays finite and in range: only the
  // Fletcher32 checksum of the chunk sees it.
  const std::string u = flip_data_byte("/grid/u", 4 * (5 * 17 + 3) + 1);
  check_refused_with(u, "sim: error: restart: " + u + ": dataset '/grid/u' fails its Fletcher32 checksum: the file is corrupted",
                     {});
  const std::string pos = flip_data_byte("/particles/position", 0);
  check_refused_with(pos, "sim: error: restart: " + pos + ": dataset '/particles/position' fails its Fletcher32 checksum",
                     {});
  const std::string solid = flip_data_byte("/grid/solid", 3);
  check_refused_with(solid, "sim: error: restart: " + solid + ": dataset '/grid/solid' fails its Fletcher32 checksum",
                     {});
}

TEST_CASE("restart validation: read a row or a record at a time, a file is refused as read whole") {
  // The first bad value in each dataset, in the first, a middle and the
  // last row (v's row ny only in the last block of rows).
  const Config cfg = test::case_config("box.toml", test::scratch_dir("restart_validation_parts"), kSets);
  const std::vector<std::string> files = {
      poison_float("/grid/u", 0, kNaN),          poison_float("/grid/u", 9 * 17 + 4, kInf),
      poison_float("/grid/v", 16 * 16 + 3, kNaN), poison_float("/grid/phi", 15 * 16 + 15, kNaN),
      poison_float("/grid/velocity", 3 * (7 * 16 + 2) + 1, kNaN), poison_float("/grid/vorticity", 200, -kInf),
      poison_float("/particles/velocity", 3 * 49, kNaN), poison_float("/particles/position", 3 * 30, -1.0f)};
  const auto refusal = [&](const std::string& path, int64_t chunk) {
    try {
      load_restart(cfg, path, chunk);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  for (const std::string& f : files) {
    const std::string whole = refusal(f, kRestartChunk);
    CAPTURE(whole);
    const bool refused = whole.find("is not finite") != std::string::npos ||
                         whole.find("outside the domain") != std::string::npos;
    CHECK(refused);
    for (const int64_t chunk : {int64_t(1), int64_t(17), int64_t(40)}) CHECK(refusal(f, chunk) == whole);
  }
}

// SPDX-License-Identifier: MIT
#include "io/hdf5_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "io/hdf5_chunks.hpp"
#include "sim/model/checked.hpp"

namespace sim::h5 {
namespace {

// The innermost message on this thread's HDF5 error stack: the one that
// says what went wrong ("unable to open file", "no space left on device").
struct StackInfo {
  std::string detail;
  int err = 0;
};
herr_t take_innermost(unsigned n, const H5E_error2_t* e, void* out) {
  auto* info = static_cast<StackInfo*>(out);
  if (!e->desc) return 0;
  if (n == 0) info->detail = e->desc;
  // The sec2 driver reports a failed read or write as "... errno = 28,
  // error message = 'No space left on device' ...": the OS error is the
  // only part a user can act on.
  if (const char* at = std::strstr(e->desc, "errno = "); at && info->err == 0) info->err = std::atoi(at + 8);
  return 0;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  StackInfo info;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, take_innermost, &info);
  H5Eclear2(H5E_DEFAULT);
  std::string msg = path + ": " + what;
  if (info.err != 0) msg += ": " + std::string(std::strerror(info.err));
  else if (!info.detail.empty()) msg += " (HDF5: " + info.detail + ")";
  throw Error(msg, info.err);
}

// Whether any message on this thread's HDF5 error stack holds `word`.
bool stack_mentions(const char* word) {
  struct Search {
    const char* word;
    bool found = false;
  } search{word};
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        auto* s = static_cast<Search*>(data);
        if (e->desc && std::strstr(e->desc, s->word)) s->found = true;
        return 0;
      },
      &search);
  return search.found;
}

// "/grid/pressure": the object's path in its file, else `fallback`.
std::string object_name(hid_t id, const std::string& fallback) {
  const ssize_t n = H5Iget_name(id, nullptr, 0);
  if (n <= 0) return fallback;
  std::string s(static_cast<size_t>(n) + 1, '\0');
  if (H5Iget_name(id, s.data(), s.size()) <= 0) return fallback;
  s.resize(static_cast<size_t>(n));
  return s;
}

hid_t check(hid_t id, const File& f, const std::string& what) {
  if (id < 0) fail(f.path(), what);
  return id;
}

void check_status(herr_t rc, const File& f, const std::string& what) {
  if (rc < 0) fail(f.path(), what);
}

// HDF5 prints its error stack to stderr by default; errors reach the user
// as exceptions instead. The setting is per thread in thread-safe builds.
// Once per process, before the library initialises itself: no atexit
// cleanup. A file whose close failed (full disk, I/O error) stays in the
// library's ID table half-destroyed, and the exit cleanup closing it again
// crashed the process (SIGSEGV after a multi-line error dump) instead of
// letting it exit with the one-line error. Every file is closed explicitly
// by its owner, so the cleanup has nothing else to do.
void silence_hdf5() {
  static std::once_flag once;
  std::call_once(once, [] { H5dont_atexit(); });
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

template <class T> struct Types;
template <> struct Types<float> {
  static hid_t mem() { return H5T_NATIVE_FLOAT; }
  static hid_t file() { return H5T_IEEE_F32LE; }
  static constexpr H5T_class_t cls = H5T_FLOAT;
};
template <> struct Types<double> {
  static hid_t mem() { return H5T_NATIVE_DOUBLE; }
  static hid_t file() { return H5T_IEEE_F64LE; }
  static constexpr H5T_class_t cls = H5T_FLOAT;
};
template <> struct Types<uint8_t> {
  static hid_t mem() { return H5T_NATIVE_UINT8; }
  static hid_t file() { return H5T_STD_U8LE; }
  static constexpr H5T_class_t cls = H5T_INTEGER;
};
template <> struct Types<uint32_t> {
  static hid_t mem() { return H5T_NATIVE_UINT32; }
  static hid_t file() { return H5T_STD_U32LE; }
  static constexpr H5T_class_t cls = H5T_INTEGER;
};
template <> struct Types<int64_t> {
  static hid_t mem() { return H5T_NATIVE_INT64; }
  static hid_t file() { return H5T_STD_I64LE; }
  static constexpr H5T_class_t cls = H5T_INTEGER;
};
template <> struct Types<uint64_t> {
  static hid_t mem() { return H5T_NATIVE_UINT64; }
  static hid_t file() { return H5T_STD_U64LE; }
  static constexpr H5T_class_t cls = H5T_INTEGER;
};

template <class T>
void write_attr_array(const File& f, hid_t loc, const std::string& name, const T* v, hsize_t n, bool scalar) {
  Handle space(check(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), f, "attribute space"),
               H5Sclose);
  Handle a(check(H5Acreate2(loc, name.c_str(), Types<T>::file(), space, H5P_DEFAULT, H5P_DEFAULT), f,
                 "cannot create attribute " + name),
           H5Aclose);
  check_status(H5Awrite(a, Types<T>::mem(), v), f, "cannot write attribute " + name);
}

Handle open_attr(const File& f, hid_t loc, const std::string& name) {
  if (H5Aexists(loc, name.c_str()) <= 0) fail(f.path(), "attribute '" + name + "' is missing");
  return Handle(check(H5Aopen(loc, name.c_str(), H5P_DEFAULT), f, "cannot open attribute " + name), H5Aclose);
}

template <class T>
T read_attr_scalar(const File& f, hid_t loc, const std::string& name) {
  Handle a = open_attr(f, loc, name);
  Handle space(check(H5Aget_space(a), f, "attribute space"), H5Sclose);
  if (H5Sget_simple_extent_npoints(space) != 1) fail(f.path(), "attribute '" + name + "' is not a scalar");
  T v{};
  check_status(H5Aread(a, Types<T>::mem(), &v), f, "cannot read attribute " + name);
  return v;
}

}  // namespace

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
  }
  return *this;
}

void Handle::release() { id_ = -1; }

void Handle::reset() {
  if (id_ >= 0 && close_) close_(id_);
  id_ = -1;
}

File File::create(const std::string& path) {
  silence_hdf5();
  File f;
  f.path_ = path;
  f.h_ = Handle(check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), f, "cannot create file"),
                H5Fclose);
  return f;
}

bool File::collective_available() {
#ifdef H5_HAVE_PARALLEL
  return true;
#else
  return false;
#endif
}

File File::create_collective(const std::string& path, const Comm& comm) {
  silence_hdf5();
  File f;
  f.path_ = path;
#ifdef H5_HAVE_PARALLEL
  if (comm.is_serial()) fail(path, "a collective file needs an MPI communicator");
  f.comm_ = comm;
  Handle fapl(check(H5Pcreate(H5P_FILE_ACCESS), f, "file access properties"), H5Pclose);
  check_status(H5Pset_fapl_mpio(fapl, *static_cast<const MPI_Comm*>(comm.native_handle()), MPI_INFO_NULL), f,
               "MPI-IO driver");
  // Metadata written once, collectively, instead of by every process.
  check_status(H5Pset_coll_metadata_write(fapl, true), f, "collective metadata");
  f.h_ = Handle(check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), f, "cannot create file"), H5Fclose);
  f.collective_ = true;
#else
  (void)comm;
  fail(path, "this sim was built without parallel HDF5 (libhdf5-openmpi-dev)");
#endif
  return f;
}

File File::open_read(const std::string& path) {
  silence_hdf5();
  File f;
  f.path_ = path;
  f.h_ = Handle(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), f, "cannot open as an HDF5 file"),
                H5Fclose);
  return f;
}

void File::discard() {
  if (h_.get() < 0) return;
  // After a write error HDF5 still holds dirty metadata, and H5Fclose fails
  // while it cannot write it out, leaving the file open in the library.
  // Emptying the file first gives back what it took of a full disk, so the
  // close can complete; the caller removes the file anyway.
  if (!path_.empty()) {
    const int rc = ::truncate(path_.c_str(), 0);
    (void)rc;  // best effort: on failure the close below may fail too, which is all it costs
  }
  H5Fclose(h_.get());
  H5Eclear2(H5E_DEFAULT);
  h_.release();
}

void File::check_everywhere(bool ok, const std::string& what) const {
  const bool all = !collective_ || comm_.allreduce_min(static_cast<int64_t>(ok)) == 1;
  if (!ok) fail(path_, what);
  if (!all) {
    H5Eclear2(H5E_DEFAULT);
    throw PeerFailure(path_ + ": " + what + " failed on another rank", 0);
  }
}

void File::close() {
  if (h_.get() < 0) return;
  // The flush is where a full disk shows; the close after it only frees memory.
  // On failure the file stays open: the owner discard()s it.
  check_everywhere(H5Fflush(h_.get(), H5F_SCOPE_LOCAL) >= 0, "cannot flush file");
  const herr_t rc = H5Fclose(h_.get());
  h_.release();
  if (rc < 0) fail(path_, "cannot close file");
}

Handle create_group(const File& f, const std::string& name) {
  return Handle(check(H5Gcreate2(f.id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), f,
                      "cannot create group " + name),
                H5Gclose);
}

Handle open_group(const File& f, const std::string& name) {
  if (!exists(f, name)) fail(f.path(), "group '" + name + "' is missing");
  return Handle(check(H5Gopen2(f.id(), name.c_str(), H5P_DEFAULT), f, "cannot open group " + name), H5Gclose);
}

bool exists(const File& f, const std::string& object) {
  return H5Lexists(f.id(), object.c_str(), H5P_DEFAULT) > 0;
}

void write_attr(const File& f, hid_t loc, const std::string& name, double value) {
  write_attr_array(f, loc, name, &value, 1, true);
}
void write_attr(const File& f, hid_t loc, const std::string& name, int64_t value) {
  write_attr_array(f, loc, name, &value, 1, true);
}
void write_attr(const File& f, hid_t loc, const std::string& name, uint64_t value) {
  write_attr_array(f, loc, name, &value, 1, true);
}
void write_attr(const File& f, hid_t loc, const std::string& name, const std::vector<double>& values) {
  write_attr_array(f, loc, name, values.data(), values.size(), false);
}

void write_attr(const File& f, hid_t loc, const std::string& name, const std::string& value) {
  Handle type(check(H5Tcopy(H5T_C_S1), f, "string type"), H5Tclose);
  check_status(H5Tset_size(type, H5T_VARIABLE), f, "string type");
  check_status(H5Tset_cset(type, H5T_CSET_UTF8), f, "string type");
  Handle space(check(H5Screate(H5S_SCALAR), f, "attribute space"), H5Sclose);
  Handle a(check(H5Acreate2(loc, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), f,
                 "cannot create attribute " + name),
           H5Aclose);
  const char* p = value.c_str();
  check_status(H5Awrite(a, type, &p), f, "cannot write attribute " + name);
}

double read_attr_double(const File& f, hid_t loc, const std::string& name) {
  return read_attr_scalar<double>(f, loc, name);
}
int64_t read_attr_int64(const File& f, hid_t loc, const std::string& name) {
  return read_attr_scalar<int64_t>(f, loc, name);
}
uint64_t read_attr_uint64(const File& f, hid_t loc, const std::string& name) {
  return read_attr_scalar<uint64_t>(f, loc, name);
}

std::vector<double> read_attr_doubles(const File& f, hid_t loc, const std::string& name) {
  Handle a = open_attr(f, loc, name);
  Handle space(check(H5Aget_space(a), f, "attribute space"), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  std::vector<double> v(static_cast<size_t>(std::max<hssize_t>(n, 0)));
  check_status(H5Aread(a, H5T_NATIVE_DOUBLE, v.data()), f, "cannot read attribute " + name);
  return v;
}

std::string read_attr_string(const File& f, hid_t loc, const std::string& name) {
  Handle a = open_attr(f, loc, name);
  Handle ftype(check(H5Aget_type(a), f, "attribute type"), H5Tclose);
  if (H5Tget_class(ftype) != H5T_STRING) fail(f.path(), "attribute '" + name + "' is not a string");
  Handle mtype(check(H5Tcopy(H5T_C_S1), f, "string type"), H5Tclose);
  check_status(H5Tset_cset(mtype, H5Tget_cset(ftype)), f, "string type");
  if (H5Tis_variable_str(ftype) > 0) {
    check_status(H5Tset_size(mtype, H5T_VARIABLE), f, "string type");
    char* p = nullptr;
    check_status(H5Aread(a, mtype, &p), f, "cannot read attribute " + name);
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  const size_t n = H5Tget_size(ftype);
  check_status(H5Tset_size(mtype, n), f, "string type");
  std::string s(n, '\0');
  check_status(H5Aread(a, mtype, s.data()), f, "cannot read attribute " + name);
  s.resize(s.find('\0') == std::string::npos ? n : s.find('\0'));
  return s;
}

template <class T>
void write_dataset(const File& f, hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                   const T* data, const Compression& c, Rows rows) {
  Handle space(check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), f, "dataspace"),
               H5Sclose);
  Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), f, "dataset properties"), H5Pclose);
  hsize_t total = 1;
  for (hsize_t d : dims) total *= d;
  std::vector<hsize_t> chunk = dims;
  if (total > 0) {
    // Chunked, for the Fletcher32 checksum (a filter needs chunks), in
    // blocks of whole rows: about 64 Ki elements when compressed (large
    // enough for deflate, small enough that a reader slicing rows
    // decompresses little extra), about 1 MiB otherwise (few chunks to index,
    // one checksum per MiB). A row larger than that is cut along the next
    // dimension, so no chunk passes HDF5's 4 GiB limit.
    const hsize_t target =
        c.enabled ? hsize_t(1) << 16 : std::max<hsize_t>(1, (hsize_t(1) << 20) / sizeof(T));
    hsize_t inner = total;  // elements below dimension k
    for (size_t k = 0; k < dims.size(); ++k) {
      inner /= dims[k];
      chunk[k] = std::max<hsize_t>(1, std::min<hsize_t>(dims[k], target / std::max<hsize_t>(inner, 1)));
      if (chunk[k] > 1 || inner <= target) break;  // the dimensions after k stay whole
    }
    check_status(H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()), f, "chunk layout");
    if (c.enabled) {
      check_status(H5Pset_shuffle(dcpl), f, "shuffle filter");
      check_status(H5Pset_deflate(dcpl, static_cast<unsigned>(std::clamp(c.level, 1, 9))), f, "deflate filter");
    }
    // Last in the pipeline: on reading, the stored bytes are checked before
    // anything else (deflate) sees them.
    check_status(H5Pset_fletcher32(dcpl), f, "Fletcher32 filter");
  }
  Handle d(check(H5Dcreate2(loc, name.c_str(), Types<T>::file(), space, H5P_DEFAULT, dcpl, H5P_DEFAULT), f,
                 "cannot create dataset " + name),
           H5Dclose);
  const hsize_t all_rows = dims.empty() ? 1 : dims[0];
  if (rows.count == ~hsize_t(0)) rows.count = all_rows - std::min(rows.first, all_rows);
  if (rows.first + rows.count > all_rows) fail(f.path(), "rows beyond dataset " + name);
  if (total == 0) return;  // nothing to write (the same on every process)
  if (!f.collective()) {
    if (rows.count == 0) return;
    if (rows.first == 0 && rows.count == all_rows) {
      // The chunks filtered in parallel and stored as they are (io/hdf5_chunks.hpp),
      // where memory and file hold the same bytes.
      try {
        const ChunkLayout layout{dims, chunk, sizeof(T), c.enabled, c.level};
        if (H5Tequal(Types<T>::mem(), Types<T>::file()) > 0 && write_chunks(d, layout, data)) return;
      } catch (const std::runtime_error& e) {
        fail(f.path(), "cannot write dataset " + name + " (" + e.what() + ")");
      }
      check_status(H5Dwrite(d, Types<T>::mem(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data), f,
                   "cannot write dataset " + name);
      return;
    }
  }
  // Some rows: the same rows of the file's space, from a memory space of
  // just those rows. Every process of a collective file writes, possibly
  // nothing (a none selection), for the write is collective.
  std::vector<hsize_t> start(dims.size(), 0), count = dims;
  if (!dims.empty()) {
    start[0] = rows.first;
    count[0] = rows.count;
  }
  Handle mem(check(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), f, "dataspace"),
             H5Sclose);
  if (rows.count == 0) {
    check_status(H5Sselect_none(space), f, "dataspace");
    check_status(H5Sselect_none(mem), f, "dataspace");
  } else {
    check_status(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), f,
                 "dataspace");
  }
  Handle dxpl(check(H5Pcreate(H5P_DATASET_XFER), f, "transfer properties"), H5Pclose);
#ifdef H5_HAVE_PARALLEL
  if (f.collective()) check_status(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), f, "collective transfer");
#endif
  f.check_everywhere(H5Dwrite(d, Types<T>::mem(), mem, space, dxpl, data) >= 0, "cannot write dataset " + name);
}

std::vector<hsize_t> dataset_dims(const File& f, hid_t loc, const std::string& name) {
  if (H5Lexists(loc, name.c_str(), H5P_DEFAULT) <= 0) fail(f.path(), "dataset '" + name + "' is missing");
  Handle d(check(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), f, "cannot open dataset " + name), H5Dclose);
  Handle space(check(H5Dget_space(d), f, "dataspace of " + name), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) fail(f.path(), "dataspace of " + name);
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
}

template <class T>
std::vector<T> read_dataset(const File& f, hid_t loc, const std::string& name, std::vector<hsize_t>* dims_out,
                            Rows rows) {
  const std::vector<hsize_t> dims = dataset_dims(f, loc, name);
  Handle d(check(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), f, "cannot open dataset " + name), H5Dclose);
  Handle type(check(H5Dget_type(d), f, "type of " + name), H5Tclose);
  const bool same_class = H5Tget_class(type) == Types<T>::cls;
  const bool fits = H5Tget_size(type) <= sizeof(T);
  const bool sign_ok = Types<T>::cls != H5T_INTEGER || H5Tget_sign(type) == H5Tget_sign(Types<T>::mem());
  if (!same_class || !fits || !sign_ok) fail(f.path(), "dataset '" + name + "' has an unexpected element type");
  // The rows read: all, or [first, first + count) cut at the end.
  std::vector<hsize_t> start(dims.size(), 0), count = dims;
  const bool some = !dims.empty() && (rows.first > 0 || rows.count < dims[0]);
  if (some) {
    start[0] = std::min(rows.first, dims[0]);
    count[0] = std::min(rows.count, dims[0] - start[0]);
  }
  // The product of the dims in 64 bits, checked (the whole dataset's, then
  // the rows read): a file may declare any shape, and a wrapped product
  // would read into a too-small vector.
  uint64_t total = 1;
  for (const std::vector<hsize_t>* shape : {&dims, static_cast<const std::vector<hsize_t>*>(&count)}) {
    total = 1;
    for (hsize_t n : *shape) {
      const auto t = checked_mul<uint64_t>(total, n);
      if (!t || *t > std::vector<T>().max_size())
        fail(f.path(), "dataset '" + name + "' declares more elements than a vector can hold");
      total = *t;
    }
  }
  std::vector<T> v(static_cast<size_t>(total));
  herr_t status = 0;
  if (total > 0 && !some) {
    status = H5Dread(d, Types<T>::mem(), H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  } else if (total > 0) {
    Handle space(check(H5Dget_space(d), f, "dataspace of " + name), H5Sclose);
    Handle mem(check(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), f, "dataspace"),
               H5Sclose);
    check_status(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), f,
                 "dataspace");
    status = H5Dread(d, Types<T>::mem(), mem, space, H5P_DEFAULT, v.data());
  }
  if (status < 0) {
    // A chunk whose bytes changed since they were written fails its
    // Fletcher32 check inside HDF5; say so, with the dataset's full name.
    if (stack_mentions("Fletcher32")) {
      H5Eclear2(H5E_DEFAULT);
      throw Error(f.path() + ": dataset '" + object_name(d, name) +
                      "' fails its Fletcher32 checksum: the file is corrupted",
                  0);
    }
    fail(f.path(), "cannot read dataset " + name);
  }
  if (dims_out) *dims_out = dims;
  return v;
}

template void write_dataset<float>(const File&, hid_t, const std::string&, const std::vector<hsize_t>&, const float*,
                                   const Compression&, Rows);
template void write_dataset<uint8_t>(const File&, hid_t, const std::string&, const std::vector<hsize_t>&,
                                     const uint8_t*, const Compression&, Rows);
template void write_dataset<uint32_t>(const File&, hid_t, const std::string&, const std::vector<hsize_t>&,
                                      const uint32_t*, const Compression&, Rows);
template void write_dataset<uint64_t>(const File&, hid_t, const std::string&, const std::vector<hsize_t>&,
                                      const uint64_t*, const Compression&, Rows);
template std::vector<float> read_dataset<float>(const File&, hid_t, const std::string&, std::vector<hsize_t>*, Rows);
template std::vector<uint8_t> read_dataset<uint8_t>(const File&, hid_t, const std::string&, std::vector<hsize_t>*, Rows);
template std::vector<uint32_t> read_dataset<uint32_t>(const File&, hid_t, const std::string&, std::vector<hsize_t>*, Rows);
template std::vector<uint64_t> read_dataset<uint64_t>(const File&, hid_t, const std::string&, std::vector<hsize_t>*, Rows);

}  // namespace sim::h5

// SPDX-License-Identifier: MIT
// Thin RAII layer over the HDF5 C API: owned handles, typed attributes and
// whole-dataset reads and writes. Every failure throws std::runtime_error
// naming the file and the object, so callers never check return codes.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/ranks/comm.hpp"

namespace sim::h5 {

// Owns one hid_t and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  ~Handle() { reset(); }
  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }
  void reset();
  void release();  // forgets the id without closing it

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

// What every function here throws: the message names the file and the
// object; `err` is the OS errno behind it when HDF5 reported one (ENOSPC
// for a full disk), else 0.
struct Error : std::runtime_error {
  Error(const std::string& what, int err) : std::runtime_error(what), err(err) {}
  int err;
};

// In a collective file: this process's call succeeded, another's failed
// (every process of the file throws at the same call, so that they close
// it together instead of some waiting in the next collective call).
struct PeerFailure : Error {
  using Error::Error;
};

// Shuffle + deflate when enabled. Every non-empty dataset is chunked and
// carries a Fletcher32 checksum either way (write_dataset).
struct Compression {
  bool enabled = false;
  int level = 4;  // deflate level 1..9
};

// A file; `path` is kept for error messages.
class File {
 public:
  static File create(const std::string& path);  // truncates
  // Created by every rank of `comm` together, through MPI-IO: every call on
  // the file is then collective (each rank makes it, with the same
  // arguments but its own dataset rows), and a write or the final flush that
  // fails on one rank throws on all (PeerFailure where it succeeded). Only
  // in a build with parallel HDF5 (collective_available()); throws
  // otherwise.
  static File create_collective(const std::string& path, const Comm& comm);
  static bool collective_available();
  static File open_read(const std::string& path);
  // Closes and reports errors from the final flush (the destructor cannot).
  void close();
  // After a failed write: closes without reporting, whatever state the file
  // is in, so that no HDF5 object outlives the error. The file's contents
  // are lost (it is truncated first); for temporaries only.
  void discard();
  hid_t id() const { return h_.get(); }
  const std::string& path() const { return path_; }
  bool collective() const { return collective_; }
  // Throws unless `ok` (the outcome of this process's call `what`); in a
  // collective file, also when it failed on another rank (PeerFailure).
  void check_everywhere(bool ok, const std::string& what) const;

 private:
  Handle h_;
  std::string path_;
  bool collective_ = false;
  Comm comm_ = Comm::serial();
};

Handle create_group(const File& f, const std::string& name);
Handle open_group(const File& f, const std::string& name);
bool exists(const File& f, const std::string& object);

// Scalar and 1-D attributes on the object `loc` (a file or a group).
void write_attr(const File& f, hid_t loc, const std::string& name, double value);
void write_attr(const File& f, hid_t loc, const std::string& name, int64_t value);
void write_attr(const File& f, hid_t loc, const std::string& name, uint64_t value);
void write_attr(const File& f, hid_t loc, const std::string& name, const std::string& value);  // UTF-8, variable length
void write_attr(const File& f, hid_t loc, const std::string& name, const std::vector<double>& values);
double read_attr_double(const File& f, hid_t loc, const std::string& name);
int64_t read_attr_int64(const File& f, hid_t loc, const std::string& name);
uint64_t read_attr_uint64(const File& f, hid_t loc, const std::string& name);
std::string read_attr_string(const File& f, hid_t loc, const std::string& name);
std::vector<double> read_attr_doubles(const File& f, hid_t loc, const std::string& name);

// The rows [first, first + count) of a dataset's slowest dimension that one
// process writes; all of them by default.
struct Rows {
  hsize_t first = 0;
  hsize_t count = ~hsize_t(0);
};

// Row-major datasets, any rank; `dims` slowest first. T is float, double,
// uint8_t or uint32_t. `data` holds the rows written (`rows`, all by
// default), contiguous; in a collective file each process passes its own
// rows (or none), and together they cover the dataset. A non-empty dataset
// is chunked in blocks of whole rows and checksummed (Fletcher32), also in a
// collective file (parallel HDF5 >= 1.10.2 writes filtered datasets).
template <class T>
void write_dataset(const File& f, hid_t loc, const std::string& name, const std::vector<hsize_t>& dims,
                   const T* data, const Compression& c, Rows rows = {});
std::vector<hsize_t> dataset_dims(const File& f, hid_t loc, const std::string& name);
// Throws unless the stored type converts to T without loss of class (float to
// float, unsigned integer to unsigned integer). A chunk that fails its
// Fletcher32 checksum throws "<file>: dataset '/grid/u' fails its Fletcher32
// checksum: the file is corrupted". `rows`: only those rows of the slowest
// dimension (cut at its end), contiguous; `dims` is the whole dataset's shape.
template <class T>
std::vector<T> read_dataset(const File& f, hid_t loc, const std::string& name, std::vector<hsize_t>* dims = nullptr,
                            Rows rows = {});

}  // namespace sim::h5

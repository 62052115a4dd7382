// SPDX-License-Identifier: MIT
// Grid arrays of the CPU backend placed by first touch: a page lands on the
// memory node of the thread that first writes it, so the arrays are sized
// without writing (HostArray leaves new elements uninitialised) and then
// zeroed by the same static row partition the sweeps use (rows 0..ny-1 over
// the threads of the parallel region; the halo row below row 0 goes with
// row 0, the one above row ny-1 with row ny-1). On a one-node host this only
// saves the serial zeroing.
#pragma once
#include <omp.h>

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace sim {

// std::allocator, except that resize() default-initialises (leaves a
// trivially constructible element unwritten) instead of zeroing.
template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <class T>
using HostArray = std::vector<T, NoInitAllocator<T>>;

// A pitched array: `rows` storage rows of `pitch` elements; grid row j in
// 0..ny-1 is storage row j + 1. The rows before row 0 go with row 0, those
// after row ny-1 with row ny-1.
struct RowBlocks {
  int ny = 0;
  int rows = 0;
  size_t pitch = 0;
  size_t first(int j) const { return static_cast<size_t>(j == 0 ? 0 : j + 1) * pitch; }
  size_t last(int j) const { return static_cast<size_t>(j == ny - 1 ? rows : j + 2) * pitch; }
  bool valid(size_t n) const { return ny >= 1 && rows >= ny + 1 && static_cast<size_t>(rows) * pitch == n; }
};

// Sets every element of a (rows * pitch elements) to `value`, each interior row
// (and the halo row next to it at either end) by the thread of the static
// partition of the interior rows that runs it in the sweeps.
template <class T>
void fill_rows(T* a, RowBlocks b, T value) {
#pragma omp parallel for schedule(static)
  for (int j = 0; j < b.ny; ++j)
    for (size_t c = b.first(j); c < b.last(j); ++c) a[c] = value;
}

// a = rows * pitch zeros, placed by fill_rows.
template <class T>
void first_touch(HostArray<T>& a, RowBlocks b) {
  const size_t n = static_cast<size_t>(b.rows) * b.pitch;
  a.clear();
  a.shrink_to_fit();
  a.resize(n);
  if (b.valid(n)) fill_rows(a.data(), b, T(0));
  else
    for (T& x : a) x = T(0);
}

// to = from (same size), row blocks copied by the threads that own them.
template <class T, class V>
void copy_rows(HostArray<T>& to, const V& from, RowBlocks b) {
  if (to.size() != from.size() || !b.valid(from.size())) {
    to.assign(from.begin(), from.end());
    return;
  }
  T* t = to.data();
  const auto* f = from.data();
#pragma omp parallel for schedule(static)
  for (int j = 0; j < b.ny; ++j)
    for (size_t c = b.first(j); c < b.last(j); ++c) t[c] = f[c];
}

}  // namespace sim

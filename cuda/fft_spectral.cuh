// SPDX-License-Identifier: MIT
// The spectral step shared by the transform solves on the device (the
// pressure's, cuda/cuda_fft.cu, and the viscous step's,
// cuda/cuda_helmholtz_fft.cu): on the half spectrum of a real 2-D DFT,
// Makhoul's twiddles to the cosine coefficients on a cosine axis, the
// division by the operator's eigenvalue, and back (cuda/cuda_fft.hpp
// explains the method).
#pragma once
#include <cuda_runtime.h>
#include <cufft.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace sim::cuda {

inline void check_cufft(cufftResult r, const char* what, const char* file, int line) {
  if (r != CUFFT_SUCCESS)
    throw std::runtime_error(std::string("cufft: ") + file + ":" + std::to_string(line) + ": " + what +
                             ": error " + std::to_string(static_cast<int>(r)));
}
#define SIM_CUFFT_CHECK(call) ::sim::cuda::check_cufft((call), #call, __FILE__, __LINE__)

// Makhoul's twiddles E_k = exp(-i pi k / (2n)), k in [0, n), for a cosine axis.
inline std::vector<double2> twiddle_table(int n) {
  const double pi = 3.14159265358979323846;
  std::vector<double2> t(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k)
    t[static_cast<size_t>(k)] = make_double2(std::cos(pi * k / (2.0 * n)), -std::sin(pi * k / (2.0 * n)));
  return t;
}

__device__ __forceinline__ double2 cmul(double2 a, double2 b) {
  return make_double2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
__device__ __forceinline__ double2 conjg(double2 a) { return make_double2(a.x, -a.y); }
__device__ __forceinline__ double2 cadd(double2 a, double2 b) { return make_double2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ double2 cscale(double2 a, double s) { return make_double2(a.x * s, a.y * s); }
__device__ __forceinline__ double2 minus_i(double2 a) { return make_double2(a.y, -a.x); }  // -i a

struct AxisView {
  const double* lam;  // eigenvalue of coefficient index k (the DCT index on a cosine or sine axis)
  const double2* tw;  // E_k = exp(-i pi k / (2n)), k in [0, n)
  int n;
  int cosine;  // Makhoul twiddles apply (Neumann or Dirichlet)
};

// (V_k, V_{n-k}) -> (C_k, C_{n-k}) on a cosine axis:
//   C_k = (E_k V_k + conj(E_k) V_{n-k}) / 2, C_{n-k} = (E_{n-k} V_{n-k} + conj(E_{n-k}) V_k) / 2.
// The sequence along the axis may be complex (the other axis transformed
// already), so V_{n-k} is not conj(V_k). k = 0: C_0 = V_0.
__device__ __forceinline__ void to_cosine(const AxisView& a, int k, double2& vk, double2& vn) {
  if (!a.cosine || k == 0) return;
  const double2 e = a.tw[k], f = a.tw[a.n - k];
  const double2 ck = cscale(cadd(cmul(e, vk), cmul(conjg(e), vn)), 0.5);
  const double2 cn = cscale(cadd(cmul(f, vn), cmul(conjg(f), vk)), 0.5);
  vk = ck;
  vn = cn;
}
// The inverse: V_k = conj(E_k) (C_k - i C_{n-k}), V_{n-k} = conj(E_{n-k}) (C_{n-k} - i C_k).
__device__ __forceinline__ void from_cosine(const AxisView& a, int k, double2& ck, double2& cn) {
  if (!a.cosine || k == 0) return;
  const double2 e = a.tw[k], f = a.tw[a.n - k];
  const double2 vk = cmul(conjg(e), cadd(ck, minus_i(cn)));
  const double2 vn = cmul(conjg(f), cadd(cn, minus_i(ck)));
  ck = vk;
  cn = vn;
}

// The Poisson solve's division: by lambda (and the DFT's nx ny); the
// constant mode of a singular operator (eigenvalue exactly 0) -> 0.
struct PoissonDivide {
  __device__ __forceinline__ double2 operator()(double2 c, double lam, double inv_n) const {
    return lam != 0.0 ? cscale(c, inv_n / lam) : make_double2(0.0, 0.0);
  }
};

// One thread per (k1, k2), k1 in [0, nx/2] (the stored half along x), k2 in
// [0, ny/2]. It owns V(k1, k2) and V(k1, ny-k2); with the Hermitian
// symmetry of a real input, V(nx-k1, k2) = conj V(k1, ny-k2) and
// V(nx-k1, ny-k2) = conj V(k1, k2), the 2 x 2 block closed under both
// axes' pairings is known: transform it to the cosine/Fourier coefficients
// (y then x), divide by lambda_x + lambda_y and by nx ny (cuFFT's inverse
// is unnormalised), transform back, and store the two owned values.
template <class Divide>
__global__ void spectral_kernel(double2* __restrict__ s, int hc, AxisView x, AxisView y, double inv_n, Divide divide) {
  const int k1 = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int k2 = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (k1 >= hc || k2 > y.n / 2) return;
  const int k1n = (x.n - k1) % x.n, k2n = (y.n - k2) % y.n;
  double2 v00 = s[static_cast<size_t>(k2) * hc + k1];   // (k1,  k2)
  double2 v01 = s[static_cast<size_t>(k2n) * hc + k1];  // (k1,  ny-k2)
  double2 v10 = conjg(v01);                             // (nx-k1, k2)
  double2 v11 = conjg(v00);                             // (nx-k1, ny-k2)
  to_cosine(y, k2, v00, v01);
  to_cosine(y, k2, v10, v11);
  to_cosine(x, k1, v00, v10);
  to_cosine(x, k1, v01, v11);
  v00 = divide(v00, x.lam[k1] + y.lam[k2], inv_n);
  v01 = divide(v01, x.lam[k1] + y.lam[k2n], inv_n);
  v10 = divide(v10, x.lam[k1n] + y.lam[k2], inv_n);
  v11 = divide(v11, x.lam[k1n] + y.lam[k2n], inv_n);
  from_cosine(x, k1, v00, v10);
  from_cosine(x, k1, v01, v11);
  from_cosine(y, k2, v00, v01);
  s[static_cast<size_t>(k2) * hc + k1] = v00;
  if (k2n != k2) s[static_cast<size_t>(k2n) * hc + k1] = v01;
}


}  // namespace sim::cuda

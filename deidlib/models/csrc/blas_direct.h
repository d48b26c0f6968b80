// Per-step matrix products through the BLAS torch itself calls, for the compiled RNN kernels
// (gru.cpp, rnn_infer.cpp). torch's x86-64 builds link MKL's LP64 interface (32-bit ints) into
// libtorch_cpu and export its Fortran gemm symbols; torch's own matmul calls them. Declared weak:
// where they are absent the pointers are null and the kernels use at::mm_out. Used only when
// at::hasMKL() (so the int width is the LP64 one). The calls pass the operands at::mm_out passes
// for these row-major layouts, so the products are the same bits without building a tensor view
// and dispatching on every step (tests compare the two paths with torch.equal).
// Each extension that includes this has its own copy of `use_blas` (tests switch it off).
#pragma once
#include <ATen/Context.h>

#include <type_traits>

#if defined(__linux__) && defined(__x86_64__)
extern "C" {
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*, const int*,
            const float*, const int*, const float*, float*, const int*) __attribute__((weak));
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*) __attribute__((weak));
}
#define DEID_BLAS 1
#endif

namespace deid_blas {

inline bool use_blas = true;

// Whether direct calls are possible and allowed now.
inline bool blas_ok() {
#ifdef DEID_BLAS
  static const bool ok = at::hasMKL() && sgemm_ != nullptr && dgemm_ != nullptr;
  return ok && use_blas;
#else
  return false;
#endif
}

// C [m, n] (row-major, contiguous) = A [m, k] (row-major, contiguous) x op(W), W row-major and
// contiguous: trans 'N' for W [k, n] (C = A W), 'T' for W [n, k] (C = A W^T). float or double
// (sgemm_ / dgemm_). Call only when blas_ok() (and every size below 2^31).
template <typename T>
inline void gemm(char trans, int m, int n, int k, const T* A, const T* W, T* C) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "float or double");
#ifdef DEID_BLAS
  const int ldw = trans == 'T' ? k : n;
  const char tr[2] = {trans, 0};
  const T one = 1, zero = 0;
  if constexpr (std::is_same_v<T, float>) {
    sgemm_(tr, "N", &n, &m, &k, &one, W, &ldw, A, &k, &zero, C, &n);  // column-major C^T = op(W)^T A^T
  } else {
    dgemm_(tr, "N", &n, &m, &k, &one, W, &ldw, A, &k, &zero, C, &n);
  }
#endif
}

}  // namespace deid_blas

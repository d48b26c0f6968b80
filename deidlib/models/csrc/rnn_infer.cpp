// A one-layer (bidirectional) LSTM or GRU for inference on the CPU (deidlib.models.fused_infer):
// the function of torch's packed RNN (each row runs its own length; the reverse direction runs each
// row backwards from its last valid step) without packing or autograd.
//
// Per layer: the valid (row, step) pairs of x are gathered once (skipped when there is no padding)
// and each direction's input projection is one product over them. The rows are visited longest
// first, so step s works on the leading rows still running: one [n_s, H] x [H, G*H] product (the
// packed kernel's shrinking batch; BLAS called directly where torch's own sgemm_/dgemm_ can be
// reached, else at::mm_out); the pre-activations are summed into gate planes and one fused loop
// over all running rows' units computes the gates and the new state. Equations and gate order are torch's (nn.LSTM: i, f, g, o; nn.GRU:
// r, z, n):
//   LSTM: c' = f * c + i * g, h' = o * tanh(c');  GRU: n = tanh(x_n + r * (h_n + b_hn)),
//   h' = n + z * (h - n).
// float32 non-linearities: sigmoid(x) = 1 / (1 + exp(-x)) and tanh(x) = (1 - e) / (1 + e), e =
// exp(-2|x|) (odd Taylor polynomial below |x| < 1/16), with exp the Cephes single-precision
// polynomial (range reduction by ln 2, degree-5 polynomial, 2^n built in the exponent bits), so
// the loop is plain arithmetic the compiler vectorises; compiled for AVX-512, AVX2 and baseline
// x86-64 and picked at load time (target_clones), with floating-point contraction off so every
// variant gives the same bits. Errors against the exact functions: a few float ulps (tested, see
// gate_math). float64 uses std::exp / std::tanh. Equal to torch's kernels up to float rounding;
// outputs are 0 at padding, as pad_packed_sequence gives.
#include <torch/extension.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define DEID_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DEID_CLONES
#endif
#define DEID_INLINE inline __attribute__((always_inline))

#include "blas_direct.h"

namespace {

// ---------------------------------------------------------------- element-wise math
struct FastF {
  static DEID_INLINE float exp(float x) {
    x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);  // NaN passes through both comparisons
    float fx = x * 1.44269504088896341f;
    fx = (fx + 12582912.0f) - 12582912.0f;  // round to nearest (1.5 * 2^23), no fast-math here
    float r = x - fx * 0.693359375f;
    r = r - fx * -2.12194440e-4f;
    const float z = r * r;
    float y = 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * z + r + 1.0f;
    const int32_t bits = (static_cast<int32_t>(fx) + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return y * scale;
  }
  static DEID_INLINE float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }
  static DEID_INLINE float tanh(float x) {
    const float a = std::fabs(x);
    const float e = exp(-2.0f * a);
    const float t = std::copysign((1.0f - e) / (1.0f + e), x);
    const float x2 = x * x;  // tanh x = x - x^3/3 + 2x^5/15 - 17x^7/315 + O(x^9), |x| < 1/16
    const float p = x * (1.0f + x2 * (-0.333333333f + x2 * (0.133333333f + x2 * -0.053968254f)));
    return a < 0.0625f ? p : t;
  }
};

struct StdD {
  static DEID_INLINE double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
  static DEID_INLINE double tanh(double x) { return std::tanh(x); }
};

// One step over the n running rows. g[r]: row r's input projection (G*H), q: the recurrent
// products [n, G*H], bi/bh: the biases, P: scratch [planes][n*H], c, h: the state [n, H] (updated).
// First the pre-activations are summed row by row into gate planes, then the non-linearities and
// the state update run as one flat loop over n*H (vectorised across rows: hidden sizes such as 25
// or 100 would otherwise leave a scalar remainder in every row).
template <typename T, typename M>
DEID_INLINE void lstm_step(int64_t n, int64_t H, const T* const* g, const T* __restrict__ q, const T* __restrict__ bi,
                           const T* __restrict__ bh, T* __restrict__ P, T* __restrict__ c, T* __restrict__ h) {
  const int64_t nH = n * H;
  for (int64_t r = 0; r < n; ++r) {
    const T* __restrict__ gr = g[r];
    const T* __restrict__ qr = q + r * 4 * H;
    for (int64_t k = 0; k < 4; ++k) {
      T* __restrict__ p = P + k * nH + r * H;
      for (int64_t j = 0; j < H; ++j) p[j] = (gr[k * H + j] + bi[k * H + j]) + (qr[k * H + j] + bh[k * H + j]);
    }
  }
  const T* __restrict__ pi = P;
  const T* __restrict__ pf = P + nH;
  const T* __restrict__ pg = P + 2 * nH;
  const T* __restrict__ po = P + 3 * nH;
  for (int64_t j = 0; j < nH; ++j) {
    const T cj = M::sigmoid(pf[j]) * c[j] + M::sigmoid(pi[j]) * M::tanh(pg[j]);
    c[j] = cj;
    h[j] = M::sigmoid(po[j]) * M::tanh(cj);
  }
}

template <typename T, typename M>
DEID_INLINE void gru_step(int64_t n, int64_t H, const T* const* g, const T* __restrict__ q, const T* __restrict__ bi,
                          const T* __restrict__ bh, T* __restrict__ P, T* __restrict__ h) {
  const int64_t nH = n * H;
  for (int64_t r = 0; r < n; ++r) {
    const T* __restrict__ gr = g[r];
    const T* __restrict__ qr = q + r * 3 * H;
    for (int64_t k = 0; k < 2; ++k) {  // r, z: x + h summed
      T* __restrict__ p = P + k * nH + r * H;
      for (int64_t j = 0; j < H; ++j) p[j] = (gr[k * H + j] + bi[k * H + j]) + (qr[k * H + j] + bh[k * H + j]);
    }
    T* __restrict__ px = P + 2 * nH + r * H;  // n: x_n and h_n + b_hn apart (r multiplies the second)
    T* __restrict__ ph = P + 3 * nH + r * H;
    for (int64_t j = 0; j < H; ++j) {
      px[j] = gr[2 * H + j] + bi[2 * H + j];
      ph[j] = qr[2 * H + j] + bh[2 * H + j];
    }
  }
  const T* __restrict__ pr = P;
  const T* __restrict__ pz = P + nH;
  const T* __restrict__ px = P + 2 * nH;
  const T* __restrict__ ph = P + 3 * nH;
  for (int64_t j = 0; j < nH; ++j) {
    const T nj = M::tanh(px[j] + M::sigmoid(pr[j]) * ph[j]);
    h[j] = nj + M::sigmoid(pz[j]) * (h[j] - nj);
  }
}

DEID_CLONES void lstm_step_f(int64_t n, int64_t H, const float* const* g, const float* q, const float* bi,
                             const float* bh, float* P, float* c, float* h) {
  lstm_step<float, FastF>(n, H, g, q, bi, bh, P, c, h);
}
DEID_CLONES void gru_step_f(int64_t n, int64_t H, const float* const* g, const float* q, const float* bi,
                            const float* bh, float* P, float* h) {
  gru_step<float, FastF>(n, H, g, q, bi, bh, P, h);
}
DEID_CLONES void math_f(int64_t n, const float* x, float* s, float* t) {
  for (int64_t j = 0; j < n; ++j) {
    s[j] = FastF::sigmoid(x[j]);
    t[j] = FastF::tanh(x[j]);
  }
}

void step_any(bool lstm, int64_t n, int64_t H, const float* const* g, const float* q, const float* bi, const float* bh,
              float* P, float* c, float* h) {
  if (lstm) {
    lstm_step_f(n, H, g, q, bi, bh, P, c, h);
  } else {
    gru_step_f(n, H, g, q, bi, bh, P, h);
  }
}
void step_any(bool lstm, int64_t n, int64_t H, const double* const* g, const double* q, const double* bi,
              const double* bh, double* P, double* c, double* h) {
  if (lstm) {
    lstm_step<double, StdD>(n, H, g, q, bi, bh, P, c, h);
  } else {
    gru_step<double, StdD>(n, H, g, q, bi, bh, P, h);
  }
}

// ---------------------------------------------------------------- buffers
at::Tensor& kept(at::Tensor& buf, int64_t need, const at::TensorOptions& opts) {
  // buffers kept between calls (a fresh multi-megabyte tensor page-faults on every call)
  if (!buf.defined() || buf.scalar_type() != opts.dtype().toScalarType() || buf.numel() < need) {
    buf = at::empty({std::max<int64_t>(need, 1)}, opts);
  }
  return buf;
}

}  // namespace

// x [B, T, D] contiguous, lengths [B] (int64, 1..T); weights: per direction (w_ih [G*H, D], w_hh
// [G*H, H], b_ih [G*H], b_hh [G*H]), contiguous, x's dtype (G = 4 for an LSTM, 3 for a GRU);
// reverse[d]: whether direction d runs backwards. Returns (out [B, T, dirs*H], direction d in
// columns [d*H, (d+1)*H), 0 at padding; an empty tensor when !want_out) and h_last [dirs, B, H]
// (each row's state after its last valid step).
std::vector<at::Tensor> rnn_infer(const at::Tensor& x, const at::Tensor& lengths, const std::vector<at::Tensor>& weights,
                                  const std::vector<bool>& reverse, bool lstm, bool want_out) {
  at::NoGradGuard no_grad;
  TORCH_CHECK(x.dim() == 3 && x.is_contiguous() && x.device().is_cpu(), "x: contiguous CPU [B, T, D]");
  const int64_t dirs = static_cast<int64_t>(reverse.size());
  TORCH_CHECK(dirs >= 1 && static_cast<int64_t>(weights.size()) == 4 * dirs, "4 weights per direction");
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2), G = lstm ? 4 : 3, H = weights[1].size(1);
  for (int64_t d = 0; d < dirs; ++d) {
    const auto &w_ih = weights[4 * d], &w_hh = weights[4 * d + 1], &b_ih = weights[4 * d + 2],
               &b_hh = weights[4 * d + 3];
    TORCH_CHECK(w_ih.dim() == 2 && w_ih.size(0) == G * H && w_ih.size(1) == D && w_hh.dim() == 2 &&
                    w_hh.size(0) == G * H && w_hh.size(1) == H,
                "weight shapes");
    TORCH_CHECK(b_ih.numel() == G * H && b_hh.numel() == G * H, "bias shapes");
    for (const auto* t : {&w_ih, &w_hh, &b_ih, &b_hh}) {
      TORCH_CHECK(t->scalar_type() == x.scalar_type() && t->device().is_cpu() && t->is_contiguous(),
                  "weights must be contiguous CPU tensors of x's dtype");
    }
  }
  TORCH_CHECK(lengths.numel() == B && lengths.scalar_type() == at::kLong && lengths.is_contiguous(), "lengths: int64 [B]");
  const int64_t* len = lengths.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) TORCH_CHECK(len[b] >= 1 && len[b] <= T, "lengths must lie in [1, T]");
  std::vector<int64_t> order(B);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return len[a] > len[b]; });
  std::vector<int64_t> off(B + 1, 0);  // row off[b] + t of the gathered input is (b, t)
  for (int64_t b = 0; b < B; ++b) off[b + 1] = off[b] + len[b];
  const int64_t N = off[B];

  auto opts = x.options();
  thread_local at::Tensor gi_buf, xv_buf;
  auto X = x.reshape({B * T, D});
  at::Tensor xv = X;  // no padding: off[b] = b * T
  if (N != B * T) {  // the valid pairs, once for every direction (character batches are mostly padding)
    auto rows = at::empty({N}, lengths.options());
    int64_t* rp = rows.data_ptr<int64_t>();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < len[b]; ++t) *rp++ = b * T + t;
    xv = kept(xv_buf, N * D, opts).narrow(0, 0, N * D).view({N, D});
    at::index_select_out(xv, X, 0, rows);
  }
  auto gi = kept(gi_buf, N * G * H, opts).narrow(0, 0, N * G * H).view({N, G * H});
  const int64_t W = dirs * H;
  at::Tensor out = want_out ? at::empty({B, T, W}, opts) : at::empty({0}, opts);
  auto last = at::empty({dirs, B, H}, opts);
  auto h = at::empty({B, H}, opts);  // rows in `order`
  auto c = at::empty({B, H}, opts);
  auto gh = at::empty({B, G * H}, opts);
  auto P = at::empty({4 * B * H}, opts);
  const bool blas = deid_blas::blas_ok() && std::max({B, G * H, H}) < (int64_t{1} << 30);
  const int64_t steps = B ? len[order[0]] : 0;
  auto order_t = at::empty({B}, lengths.options());  // h's row r is batch row order[r]
  std::copy(order.begin(), order.end(), order_t.data_ptr<int64_t>());

  for (int64_t d = 0; d < dirs; ++d) {
    const auto &w_ih = weights[4 * d], &w_hh = weights[4 * d + 1], &b_ih = weights[4 * d + 2],
               &b_hh = weights[4 * d + 3];
    const bool rev = reverse[d];
    at::mm_out(gi, xv, w_ih.t());
    auto whh_t = w_hh.t().contiguous();  // [H, G*H]
    h.zero_();
    c.zero_();
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "rnn_infer", [&] {
      const scalar_t* __restrict__ gi_p = gi.data_ptr<scalar_t>();
      const scalar_t* __restrict__ bh = b_hh.data_ptr<scalar_t>();
      const scalar_t* __restrict__ bi = b_ih.data_ptr<scalar_t>();
      const scalar_t* __restrict__ wt = whh_t.data_ptr<scalar_t>();
      scalar_t* __restrict__ hp = h.data_ptr<scalar_t>();
      scalar_t* __restrict__ cp = c.data_ptr<scalar_t>();
      scalar_t* __restrict__ gh_p = gh.data_ptr<scalar_t>();
      scalar_t* __restrict__ pp = P.data_ptr<scalar_t>();
      scalar_t* op = want_out ? out.data_ptr<scalar_t>() : nullptr;
      std::vector<const scalar_t*> grow(B);
      std::vector<int64_t> tt(B);
      int64_t n = B;
      for (int64_t s = 0; s < steps; ++s) {
        while (n > 0 && len[order[n - 1]] <= s) --n;  // rows that have ended keep their final state
        if (blas) {
          deid_blas::gemm('N', static_cast<int>(n), static_cast<int>(G * H), static_cast<int>(H), hp, wt, gh_p);
        } else {
          auto ghn = gh.narrow(0, 0, n);
          at::mm_out(ghn, h.narrow(0, 0, n), whh_t);
        }
        for (int64_t r = 0; r < n; ++r) {
          const int64_t b = order[r];
          tt[r] = rev ? len[b] - 1 - s : s;
          grow[r] = gi_p + (off[b] + tt[r]) * G * H;
        }
        step_any(lstm, n, H, grow.data(), gh_p, bi, bh, pp, cp, hp);
        if (op) {
          for (int64_t r = 0; r < n; ++r)
            std::memcpy(op + (order[r] * T + tt[r]) * W + d * H, hp + r * H, H * sizeof(scalar_t));
        }
      }
      if (op) {  // padding: 0, as pad_packed_sequence gives
        for (int64_t b = 0; b < B; ++b)
          for (int64_t t = len[b]; t < T; ++t) std::memset(op + (b * T + t) * W + d * H, 0, H * sizeof(scalar_t));
      }
    });
    last.select(0, d).index_copy_(0, order_t, h);
  }
  return {out, last};
}

// The float32 non-linearities of the kernel, element-wise (tests compare them with the exact ones).
std::vector<at::Tensor> gate_math(const at::Tensor& x) {
  TORCH_CHECK(x.scalar_type() == at::kFloat && x.device().is_cpu(), "x: CPU float32");
  auto xc = x.contiguous();
  auto s = at::empty_like(xc), t = at::empty_like(xc);
  math_f(xc.numel(), xc.data_ptr<float>(), s.data_ptr<float>(), t.data_ptr<float>());
  return {s, t};
}

// Whether the per-step products call BLAS directly (else at::mm_out); `allow` false forces
// at::mm_out (tests), true restores the default.
bool direct_blas(bool allow) {
  deid_blas::use_blas = allow;
  return deid_blas::blas_ok();
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("rnn_infer", &rnn_infer, "a one-layer (bidirectional) LSTM/GRU for inference (deidlib)");
  m.def("gate_math", &gate_math, "the kernel's float32 sigmoid and tanh (deidlib tests)");
  m.def("direct_blas", &direct_blas, "whether the step products call BLAS directly (allow=False: never)",
        py::arg("allow") = true);
}

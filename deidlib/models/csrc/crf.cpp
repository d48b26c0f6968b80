// log Z of a linear-chain CRF and its gradient (forward-backward), and the Viterbi path, for
// the CPU (deidlib.models.fused_crf). The recursion is CRF.log_partition's (deidlib/models/crf.py):
// each step alpha'_j = m + c_j + log sum_i exp(alpha_i - m) exp(A_ij - c_j) + E_tj, one
// [B, L] x [L, L] product in scaled probability space (m = max_i alpha_i, c_j = max_i A_ij,
// exp arguments clamped at -80, disallowed moves exactly 0), with the exact logsumexp for
// any entry whose scaled sum is below 1e-20. The backward runs the same recursion backwards
// for beta (row maxima c'_i = max_j A_ij, product with the transposed matrix), gives the
// unary marginals exp(alpha + beta - log Z) as the emission gradient and the pairwise
// ones for the transition gradient as one [L, N] x [N, L] product over all N (sentence,
// step) pairs: xi_t(i, j) = p_i * et_ij * w_j with p = exp(alpha_{t-1} - m) and
// w_j = exp(m + c_j + E_tj + beta_tj - log Z) (exact per entry where the scaled sum was tiny).
// Padding steps (t >= length) keep alpha, as the Python recursion does; masks are prefixes.
#include <torch/extension.h>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define DEID_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DEID_CLONES
#endif

namespace {
constexpr double kTiny = 1e-20;
constexpr double kFloor = -80.0;

// The transition matrix scaled for one direction of the recursion: {max of A over `dim`
// (dim 0: column maxima c_j, the forward's; dim 1: row maxima c'_i, the backward's),
// exp(max(A - that max, -80)) with disallowed moves exactly 0}.
std::pair<at::Tensor, at::Tensor> scaled_transitions(const at::Tensor& A, const at::Tensor& allowed, int64_t dim) {
  auto mx = std::get<0>(A.max(dim, /*keepdim=*/true));
  auto e = at::exp((A - mx).clamp_min(kFloor)).masked_fill(allowed.logical_not(), 0).contiguous();
  return {mx.flatten(), e};
}

template <typename scalar_t>
scalar_t logsumexp_col(const scalar_t* prev, const scalar_t* A, int64_t L, int64_t j) {
  // log sum_i exp(prev_i + A_ij)
  scalar_t mx = -std::numeric_limits<scalar_t>::infinity();
  for (int64_t i = 0; i < L; ++i) mx = std::max(mx, prev[i] + A[i * L + j]);
  scalar_t s = 0;
  for (int64_t i = 0; i < L; ++i) s += std::exp(prev[i] + A[i * L + j] - mx);
  return mx + std::log(s);
}

template <typename scalar_t>
scalar_t logsumexp_row(const scalar_t* next, const scalar_t* A, int64_t L, int64_t i) {
  // log sum_j exp(A_ij + next_j)
  scalar_t mx = -std::numeric_limits<scalar_t>::infinity();
  for (int64_t j = 0; j < L; ++j) mx = std::max(mx, A[i * L + j] + next[j]);
  scalar_t s = 0;
  for (int64_t j = 0; j < L; ++j) s += std::exp(A[i * L + j] + next[j] - mx);
  return mx + std::log(s);
}

// The shapes crf_forward and crf_viterbi share: em contiguous CPU [B, T, L], lengths int64 [B],
// A [L, L], start and end [L].
void check_scores(const at::Tensor& em, const at::Tensor& lengths, const at::Tensor& A, const at::Tensor& start,
                  const at::Tensor& end) {
  TORCH_CHECK(em.dim() == 3 && em.is_contiguous() && em.device().is_cpu(), "emissions: contiguous CPU [B, T, L]");
  const int64_t B = em.size(0), L = em.size(2);
  TORCH_CHECK(lengths.numel() == B && lengths.scalar_type() == at::kLong, "lengths: int64 [B]");
  TORCH_CHECK(A.sizes() == at::IntArrayRef({L, L}) && start.numel() == L && end.numel() == L, "score shapes");
}
}  // namespace

// em [B, T, L], lengths [B] (int64, >= 1), A [L, L] (from, to), start [L], end [L], allowed
// [L, L] (uint8: 0 = the move gets exactly 0 in the scaled product). Returns
// {logZ [B], alpha [B, T, L], S [B, T, L] (the scaled sums; 0 at t = 0)}.
std::vector<at::Tensor> crf_forward(const at::Tensor& em, const at::Tensor& lengths, const at::Tensor& A,
                                    const at::Tensor& start, const at::Tensor& end, const at::Tensor& allowed) {
  at::NoGradGuard no_grad;
  check_scores(em, lengths, A, start, end);
  const int64_t B = em.size(0), T = em.size(1), L = em.size(2);
  TORCH_CHECK(allowed.sizes() == at::IntArrayRef({L, L}) && allowed.scalar_type() == at::kByte, "allowed: uint8 [L, L]");
  auto [c, et] = scaled_transitions(A, allowed, 0);
  auto alpha = at::empty({B, T, L}, em.options());
  auto S = at::empty({B, T, L}, em.options());  // read only at valid t >= 1
  auto P = at::empty({B, L}, em.options());
  auto Sbuf = at::empty({B, L}, em.options());
  auto logS = at::empty({B, L}, em.options());
  auto logZ = at::empty({B}, em.options());
  const int64_t* len = lengths.data_ptr<int64_t>();
  AT_DISPATCH_FLOATING_TYPES(em.scalar_type(), "crf_forward", [&] {
    const scalar_t* E = em.data_ptr<scalar_t>();
    const scalar_t* Ap = A.data_ptr<scalar_t>();
    const scalar_t* cp = c.data_ptr<scalar_t>();
    const scalar_t* st = start.data_ptr<scalar_t>();
    const scalar_t* en = end.data_ptr<scalar_t>();
    scalar_t* al = alpha.data_ptr<scalar_t>();
    scalar_t* Sp = S.data_ptr<scalar_t>();
    scalar_t* Pp = P.data_ptr<scalar_t>();
    const scalar_t* Sb = Sbuf.data_ptr<scalar_t>();
    const scalar_t* lS = logS.data_ptr<scalar_t>();
    std::vector<scalar_t> m(B);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < L; ++j) al[(b * T) * L + j] = st[j] + E[(b * T) * L + j];
    for (int64_t t = 1; t < T; ++t) {
      for (int64_t b = 0; b < B; ++b) {
        const scalar_t* prev = al + (b * T + t - 1) * L;
        scalar_t mx = prev[0];
        for (int64_t i = 1; i < L; ++i) mx = std::max(mx, prev[i]);
        m[b] = mx;
        for (int64_t i = 0; i < L; ++i) Pp[b * L + i] = std::max<scalar_t>(prev[i] - mx, kFloor);
      }
      P.exp_();  // vectorised
      at::mm_out(Sbuf, P, et);
      at::log_out(logS, Sbuf);
      for (int64_t b = 0; b < B; ++b) {
        const scalar_t* prev = al + (b * T + t - 1) * L;
        scalar_t* cur = al + (b * T + t) * L;
        if (t >= len[b]) {  // padding: alpha stays
          for (int64_t j = 0; j < L; ++j) cur[j] = prev[j];
          continue;
        }
        const scalar_t* e = E + (b * T + t) * L;
        for (int64_t j = 0; j < L; ++j) {
          const scalar_t s = Sb[b * L + j];
          Sp[(b * T + t) * L + j] = s;
          cur[j] = s > kTiny ? lS[b * L + j] + m[b] + cp[j] + e[j] : logsumexp_col(prev, Ap, L, j) + e[j];
        }
      }
    }
    scalar_t* lz = logZ.data_ptr<scalar_t>();
    for (int64_t b = 0; b < B; ++b) {
      const scalar_t* last = al + (b * T + T - 1) * L;  // padding kept the final alpha
      scalar_t mx = -std::numeric_limits<scalar_t>::infinity();
      for (int64_t j = 0; j < L; ++j) mx = std::max(mx, last[j] + en[j]);
      scalar_t s = 0;
      for (int64_t j = 0; j < L; ++j) s += std::exp(last[j] + en[j] - mx);
      lz[b] = mx + std::log(s);
    }
  });
  return {logZ, alpha, S};
}

// grad [B] of log Z; the forward's inputs and saved {logZ, alpha, S}. Returns {d_em [B, T, L],
// d_A [L, L], d_start [L], d_end [L]}.
std::vector<at::Tensor> crf_backward(const at::Tensor& grad, const at::Tensor& em, const at::Tensor& lengths,
                                     const at::Tensor& A, const at::Tensor& end, const at::Tensor& allowed,
                                     const at::Tensor& logZ, const at::Tensor& alpha, const at::Tensor& S) {
  at::NoGradGuard no_grad;
  const int64_t B = em.size(0), T = em.size(1), L = em.size(2);
  TORCH_CHECK(grad.numel() == B && grad.scalar_type() == em.scalar_type(), "grad: [B] of the emissions' dtype");
  auto g_ = grad.contiguous();
  auto [c, et] = scaled_transitions(A, allowed, 0);  // the forward's scaling (its alphas, pairwise terms)
  auto [r, er] = scaled_transitions(A, allowed, 1);  // the backward's, for beta
  auto er_t = er.t();                                   // [to, from]
  auto beta = at::empty({B, T, L}, em.options());  // read only at valid steps
  auto d_em = at::empty({B, T, L}, em.options());  // every entry written
  auto d_A = at::zeros({L, L}, em.options());
  auto d_start = at::zeros({L}, em.options());
  auto d_end = at::zeros({L}, em.options());
  const int64_t* len = lengths.data_ptr<int64_t>();
  int64_t N = 0;
  for (int64_t b = 0; b < B; ++b) N += len[b] - 1;
  auto Pm = at::empty({std::max<int64_t>(N, 1), L}, em.options());  // g_b * exp(alpha_{t-1} - m), one row a pair
  auto Wm = at::empty({std::max<int64_t>(N, 1), L}, em.options());  // exp(m + c + E_t + beta_t - log Z)
  auto grow = at::empty({std::max<int64_t>(N, 1)}, em.options());  // g_b of each (sentence, step) row
  auto Q = at::empty({B, L}, em.options());
  auto R = at::empty({B, L}, em.options());
  auto logR = at::empty({B, L}, em.options());
  AT_DISPATCH_FLOATING_TYPES(em.scalar_type(), "crf_backward", [&] {
    const scalar_t* E = em.data_ptr<scalar_t>();
    const scalar_t* Ap = A.data_ptr<scalar_t>();
    const scalar_t* cp = c.data_ptr<scalar_t>();
    const scalar_t* rp = r.data_ptr<scalar_t>();
    const scalar_t* en = end.data_ptr<scalar_t>();
    const scalar_t* al = alpha.data_ptr<scalar_t>();
    const scalar_t* Sp = S.data_ptr<scalar_t>();
    const scalar_t* lz = logZ.data_ptr<scalar_t>();
    const scalar_t* g = g_.data_ptr<scalar_t>();
    scalar_t* be = beta.data_ptr<scalar_t>();
    scalar_t* de = d_em.data_ptr<scalar_t>();
    scalar_t* dA = d_A.data_ptr<scalar_t>();
    scalar_t* Qp = Q.data_ptr<scalar_t>();
    const scalar_t* Rp = R.data_ptr<scalar_t>();
    const scalar_t* lR = logR.data_ptr<scalar_t>();
    std::vector<scalar_t> m(B);
    // beta, backwards in time: beta_{n-1} = end; beta_t(i) = logsumexp_j(A_ij + E_{t+1, j} + beta_{t+1, j})
    for (int64_t t = T - 1; t >= 0; --t) {
      bool any = false;
      for (int64_t b = 0; b < B; ++b) {
        scalar_t* q = Qp + b * L;
        if (t + 1 < len[b]) {
          const scalar_t* e = E + (b * T + t + 1) * L;
          const scalar_t* nb = be + (b * T + t + 1) * L;
          scalar_t mx = e[0] + nb[0];
          for (int64_t j = 1; j < L; ++j) mx = std::max(mx, e[j] + nb[j]);
          m[b] = mx;
          for (int64_t j = 0; j < L; ++j) q[j] = std::max<scalar_t>(e[j] + nb[j] - mx, kFloor);
          any = true;
        } else {
          for (int64_t j = 0; j < L; ++j) q[j] = -std::numeric_limits<scalar_t>::infinity();  // exp -> 0
        }
      }
      if (any) {
        Q.exp_();  // vectorised
        at::mm_out(R, Q, er_t);
        at::log_out(logR, R);
      }
      for (int64_t b = 0; b < B; ++b) {
        scalar_t* cur = be + (b * T + t) * L;
        if (t == len[b] - 1) {
          for (int64_t i = 0; i < L; ++i) cur[i] = en[i];
        } else if (t + 1 < len[b]) {
          const scalar_t* e = E + (b * T + t + 1) * L;
          const scalar_t* nb = be + (b * T + t + 1) * L;
          std::vector<scalar_t> nxt;
          for (int64_t i = 0; i < L; ++i) {
            const scalar_t s = Rp[b * L + i];
            if (s > kTiny) {
              cur[i] = lR[b * L + i] + m[b] + rp[i];
            } else {
              if (nxt.empty()) {
                nxt.resize(L);
                for (int64_t j = 0; j < L; ++j) nxt[j] = e[j] + nb[j];
              }
              cur[i] = logsumexp_row(nxt.data(), Ap, L, i);
            }
          }
        }
      }
    }
    // exponents of the unary marginals (d_em), of p (Pm) and w (Wm); exponentiated at once below
    const scalar_t ninf = -std::numeric_limits<scalar_t>::infinity();
    scalar_t* pmp = Pm.data_ptr<scalar_t>();
    scalar_t* wmp = Wm.data_ptr<scalar_t>();
    scalar_t* gr = grow.data_ptr<scalar_t>();
    int64_t row = 0;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t t = 0; t < T; ++t) {
        const scalar_t* a = al + (b * T + t) * L;
        const scalar_t* bt = be + (b * T + t) * L;
        scalar_t* d = de + (b * T + t) * L;
        if (t >= len[b]) {
          for (int64_t j = 0; j < L; ++j) d[j] = ninf;
          continue;
        }
        for (int64_t j = 0; j < L; ++j) d[j] = a[j] + bt[j] - lz[b];
        if (t == 0) continue;
        const scalar_t* prev = al + (b * T + t - 1) * L;
        const scalar_t* e = E + (b * T + t) * L;
        const scalar_t* s = Sp + (b * T + t) * L;
        scalar_t mx = prev[0];
        for (int64_t i = 1; i < L; ++i) mx = std::max(mx, prev[i]);
        scalar_t* pm = pmp + row * L;
        scalar_t* wm = wmp + row * L;
        gr[row] = g[b];
        for (int64_t i = 0; i < L; ++i) pm[i] = std::max<scalar_t>(prev[i] - mx, kFloor);
        for (int64_t j = 0; j < L; ++j) {
          if (s[j] > kTiny) {
            wm[j] = mx + cp[j] + e[j] + bt[j] - lz[b];
          } else {  // the forward used the exact logsumexp here: exact pairwise terms too
            wm[j] = ninf;
            for (int64_t i = 0; i < L; ++i)
              dA[i * L + j] += g[b] * std::exp(prev[i] + Ap[i * L + j] + e[j] + bt[j] - lz[b]);
          }
        }
        ++row;
      }
    }
  });
  d_em.exp_().mul_(g_.view({B, 1, 1}));
  d_start.copy_(d_em.select(1, 0).sum(0));
  d_end.copy_(d_em.gather(1, (lengths - 1).view({B, 1, 1}).expand({B, 1, L})).squeeze(1).sum(0));
  if (N > 0) {
    Pm.exp_().mul_(grow.unsqueeze(1));
    Wm.exp_();
  }
  if (N > 0) d_A += et * at::mm(Pm.t(), Wm);
  return {d_em, d_A, d_start, d_end};
}

// Viterbi best path (CRF.decode): em [B, T, L], lengths [B] (int64, >= 1), A [L, L] (from, to),
// start, end [L]. Returns tags [B, T] (int64; 0 after each length). The same arithmetic as the
// Python decode: score'_k = max_j (score_j + A_jk) + E_tk, the first maximal j on ties (torch's
// argmax rule), the final tag the first maximum of score + end; so the paths are identical.
// As there, the forward keeps only the maxima (the inner loop over the current tag k, contiguous
// in A's row j, is a running maximum that vectorises) and the backtrack finds each step's best
// predecessor of the chosen tag (L candidates a step).
// The Viterbi scores of one sentence of n steps: S[t, k] = max_j (S[t-1, j] + A[j, k]) + E[t, k]
// (S[0] = start + E[0]). The maximum runs over j as a running maximum across k (vectorised;
// additions and maxima are exact, so the AVX-512, AVX2 and baseline variants agree bit for bit).
template <typename T>
inline __attribute__((always_inline)) void viterbi_scores_t(int64_t n, int64_t L, const T* __restrict st,
                                                            const T* __restrict Eb, const T* __restrict Ap,
                                                            T* __restrict S) {
  for (int64_t k = 0; k < L; ++k) S[k] = st[k] + Eb[k];
  for (int64_t t = 1; t < n; ++t) {
    const T* __restrict prev = S + (t - 1) * L;
    T* __restrict cur = S + t * L;
    const T s0 = prev[0];
    for (int64_t k = 0; k < L; ++k) cur[k] = s0 + Ap[k];
    for (int64_t j = 1; j < L; ++j) {
      const T sj = prev[j];
      const T* __restrict row = Ap + j * L;
      for (int64_t k = 0; k < L; ++k) {  // a running maximum: vectorises (maxps)
        const T cand = sj + row[k];
        cur[k] = cand > cur[k] ? cand : cur[k];
      }
    }
    const T* Et = Eb + t * L;
    for (int64_t k = 0; k < L; ++k) cur[k] += Et[k];
  }
}
DEID_CLONES void viterbi_scores(int64_t n, int64_t L, const float* st, const float* Eb, const float* Ap, float* S) {
  viterbi_scores_t<float>(n, L, st, Eb, Ap, S);
}
void viterbi_scores(int64_t n, int64_t L, const double* st, const double* Eb, const double* Ap, double* S) {
  viterbi_scores_t<double>(n, L, st, Eb, Ap, S);
}

at::Tensor crf_viterbi(const at::Tensor& em, const at::Tensor& lengths, const at::Tensor& A, const at::Tensor& start,
                       const at::Tensor& end) {
  at::NoGradGuard no_grad;
  check_scores(em, lengths, A, start, end);
  const int64_t B = em.size(0), T = em.size(1), L = em.size(2);
  TORCH_CHECK(A.scalar_type() == em.scalar_type() && start.scalar_type() == em.scalar_type() &&
                  end.scalar_type() == em.scalar_type(), "scores must have the emissions' dtype");
  auto Ac = A.contiguous(), sc = start.contiguous(), ec = end.contiguous();
  auto tags = at::zeros({B, T}, lengths.options());
  const int64_t* len = lengths.data_ptr<int64_t>();
  int64_t* out = tags.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) TORCH_CHECK(len[b] >= 1 && len[b] <= T, "lengths must lie in [1, T]");
  AT_DISPATCH_FLOATING_TYPES(em.scalar_type(), "crf_viterbi", [&] {
    const scalar_t* E = em.data_ptr<scalar_t>();
    const scalar_t* Ap = Ac.data_ptr<scalar_t>();
    const scalar_t* st = sc.data_ptr<scalar_t>();
    const scalar_t* en = ec.data_ptr<scalar_t>();
    std::vector<scalar_t> S(static_cast<size_t>(T) * L);  // score_t per step, for the backtrack
    for (int64_t b = 0; b < B; ++b) {
      const scalar_t* Eb = E + b * T * L;
      const int64_t n = len[b];
      viterbi_scores(n, L, st, Eb, Ap, S.data());
      const scalar_t* last = S.data() + (n - 1) * L;
      int64_t y = 0;
      scalar_t top = last[0] + en[0];
      for (int64_t k = 1; k < L; ++k) {
        const scalar_t v = last[k] + en[k];
        if (v > top) top = v, y = k;
      }
      int64_t* ob = out + b * T;
      ob[n - 1] = y;
      for (int64_t t = n - 1; t > 0; --t) {  // the first maximal predecessor of the chosen tag
        const scalar_t* prev = S.data() + (t - 1) * L;
        int64_t arg = 0;
        scalar_t m = prev[0] + Ap[y];
        for (int64_t j = 1; j < L; ++j) {
          const scalar_t v = prev[j] + Ap[j * L + y];
          if (v > m) m = v, arg = j;
        }
        y = arg;
        ob[t - 1] = y;
      }
    }
  });
  return tags;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("viterbi", &crf_viterbi, "CRF Viterbi decoding (deidlib)");
  m.def("forward", &crf_forward, "CRF log-partition (deidlib)");
  m.def("backward", &crf_backward, "CRF log-partition gradient (deidlib)");
}

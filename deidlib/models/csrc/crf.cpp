// log Z of a linear-chain CRF and its gradient, and the Viterbi path, for the CPU
// (deidlib.models.fused_crf). The recursion is CRF.log_partition's (deidlib/models/crf.py):
// each step alpha'_j = m + c_j + log sum_i exp(alpha_i - m) exp(A_ij - c_j) + E_tj, one
// [B, L] x [L, L] product in scaled probability space (m = max_i alpha_i, c_j = max_i A_ij,
// exp arguments clamped at -80, disallowed moves exactly 0), with the exact logsumexp for
// any entry whose scaled sum is below 1e-20. The gradient is that recursion's adjoint (what
// autograd computes through the Python loop, see crf_backward): the unary marginals
// gamma_t = d log Z / d alpha_t run backwards in the same scaled space, one product per step,
// and the pairwise marginals for the transition gradient come as one [L, N] x [N, L] product
// over all N (sentence, step) pairs.
// Padding steps (t >= length) keep alpha, as the Python recursion does; masks are prefixes.
#include <torch/extension.h>
#include <cmath>
#include <cstring>
#include <limits>
#include <algorithm>
#include <utility>
#include <vector>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define DEID_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DEID_CLONES
#endif
#define DEID_INLINE inline __attribute__((always_inline))

namespace {
constexpr double kTiny = 1e-20;
constexpr double kFloor = -80.0;

// The transition matrix scaled for the recursion: {max of A over `dim` (dim 0: the column
// maxima c_j), exp(max(A - that max, -80)) with disallowed moves exactly 0}.
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
// The adjoint of the forward recursion (what autograd computes through CRF.log_partition's
// Python loop), in the forward's scaled space: gamma_t = d log Z / d alpha_t is the unary
// marginal of step t. gamma_{n-1} = softmax(alpha_{n-1} + end); going back one step,
// u_j = gamma_t(j) / S_t(j) and gamma_{t-1}(i) = p_i * sum_j et_ij u_j (p = exp(alpha_{t-1} - m),
// one [B, L] x [L, L] product per step); the pairwise marginals are p_i * et_ij * u_j, summed
// over every (sentence, step) pair as one [L, N] x [N, L] product. Where the forward took the
// exact logsumexp (S_t(j) below 1e-20), the terms of that column are exact:
// exp(alpha_{t-1}(i) + A_ij + E_tj - alpha_t(j)). Every quantity is a probability-sized
// ratio, so float32 rounding stays relative to the marginals: no exp(alpha + beta - log Z),
// whose argument loses |log Z| x eps to cancellation (a marginal near 1 of a long,
// well-fitted sentence then came out ~1e-5 off, the whole size of its gradient).
std::vector<at::Tensor> crf_backward(const at::Tensor& grad, const at::Tensor& em, const at::Tensor& lengths,
                                     const at::Tensor& A, const at::Tensor& end, const at::Tensor& allowed,
                                     const at::Tensor& logZ, const at::Tensor& alpha, const at::Tensor& S) {
  at::NoGradGuard no_grad;
  const int64_t B = em.size(0), T = em.size(1), L = em.size(2);
  TORCH_CHECK(grad.numel() == B && grad.scalar_type() == em.scalar_type(), "grad: [B] of the emissions' dtype");
  auto g_ = grad.contiguous();
  auto [c, et] = scaled_transitions(A, allowed, 0);  // the forward's scaling: c_j, et [from, to]
  auto et_t = et.t();                                   // [to, from]: V = U @ et^T
  auto d_em = at::zeros({B, T, L}, em.options());      // gamma_t at valid steps (times g_b at the end)
  auto d_A = at::zeros({L, L}, em.options());
  auto d_start = at::zeros({L}, em.options());
  auto d_end = at::zeros({L}, em.options());
  const int64_t* len = lengths.data_ptr<int64_t>();
  int64_t N = 0;
  for (int64_t b = 0; b < B; ++b) N += len[b] - 1;
  auto Pm = at::empty({std::max<int64_t>(N, 1), L}, em.options());  // g_b * p, one row a (sentence, step) pair
  auto Wm = at::zeros({std::max<int64_t>(N, 1), L}, em.options());  // u (0 in exact columns)
  auto U = at::zeros({B, L}, em.options());
  auto V = at::empty({B, L}, em.options());
  auto c_in = at::zeros({L}, em.options());  // sum over steps of g_b * gamma_t(j) in the scaled columns
  AT_DISPATCH_FLOATING_TYPES(em.scalar_type(), "crf_backward", [&] {
    const scalar_t* E = em.data_ptr<scalar_t>();
    const scalar_t* Ap = A.data_ptr<scalar_t>();
    const scalar_t* en = end.data_ptr<scalar_t>();
    const scalar_t* al = alpha.data_ptr<scalar_t>();
    const scalar_t* Sp = S.data_ptr<scalar_t>();
    const scalar_t* g = g_.data_ptr<scalar_t>();
    scalar_t* de = d_em.data_ptr<scalar_t>();
    scalar_t* dA = d_A.data_ptr<scalar_t>();
    scalar_t* Up = U.data_ptr<scalar_t>();
    const scalar_t* Vp = V.data_ptr<scalar_t>();
    scalar_t* pmp = Pm.data_ptr<scalar_t>();
    scalar_t* wmp = Wm.data_ptr<scalar_t>();
    scalar_t* cin = c_in.data_ptr<scalar_t>();
    // the rows of Pm / Wm: sentence b's steps t = 1 .. len-1 at offset[b] + t - 1
    std::vector<int64_t> offset(B);
    for (int64_t b = 0, o = 0; b < B; ++b) offset[b] = o, o += len[b] - 1;
    // gamma at each sentence's last step: softmax(alpha + end), as log Z's own logsumexp
    for (int64_t b = 0; b < B; ++b) {
      const scalar_t* last = al + (b * T + len[b] - 1) * L;
      scalar_t* gm = de + (b * T + len[b] - 1) * L;
      scalar_t mx = -std::numeric_limits<scalar_t>::infinity();
      for (int64_t j = 0; j < L; ++j) mx = std::max(mx, last[j] + en[j]);
      scalar_t s = 0;
      for (int64_t j = 0; j < L; ++j) s += (gm[j] = std::exp(last[j] + en[j] - mx));
      for (int64_t j = 0; j < L; ++j) gm[j] /= s;
    }
    for (int64_t t = T - 1; t >= 1; --t) {
      bool any = false;
      for (int64_t b = 0; b < B; ++b) {
        scalar_t* u = Up + b * L;
        if (t >= len[b]) {
          for (int64_t j = 0; j < L; ++j) u[j] = 0;
          continue;
        }
        any = true;
        const scalar_t* gm = de + (b * T + t) * L;
        const scalar_t* s = Sp + (b * T + t) * L;
        for (int64_t j = 0; j < L; ++j) u[j] = s[j] > kTiny ? gm[j] / s[j] : scalar_t(0);
      }
      if (!any) continue;
      at::mm_out(V, U, et_t);
      for (int64_t b = 0; b < B; ++b) {
        if (t >= len[b]) continue;
        const scalar_t* prev = al + (b * T + t - 1) * L;
        const scalar_t* cur = al + (b * T + t) * L;
        const scalar_t* e = E + (b * T + t) * L;
        const scalar_t* gm = de + (b * T + t) * L;
        const scalar_t* s = Sp + (b * T + t) * L;
        const scalar_t* v = Vp + b * L;
        scalar_t* gp = de + (b * T + t - 1) * L;
        scalar_t* pm = pmp + (offset[b] + t - 1) * L;
        scalar_t* wm = wmp + (offset[b] + t - 1) * L;
        scalar_t mx = prev[0];
        for (int64_t i = 1; i < L; ++i) mx = std::max(mx, prev[i]);
        scalar_t in = 0, out = 0, ties = 0;  // the shift m's adjoint: sum of gamma_t over the scaled
        for (int64_t i = 0; i < L; ++i) {    // columns minus what reached alpha_{t-1} through p
          const scalar_t d = prev[i] - mx;
          const scalar_t p = std::exp(std::max<scalar_t>(d, kFloor));
          gp[i] = d > kFloor ? p * v[i] : scalar_t(0);  // a clamped entry passes no gradient
          out += gp[i];
          ties += d == 0;
          pm[i] = g[b] * p;
        }
        const scalar_t* u = Up + b * L;
        for (int64_t j = 0; j < L; ++j) {
          const scalar_t gj = s[j] > kTiny ? gm[j] : scalar_t(0);
          wm[j] = u[j];
          in += gj;
          cin[j] += g[b] * gj;
        }
        // 0 in exact arithmetic; in floats it is the rounding of the step, and handing it to the
        // arg-max entries (evenly among ties), as autograd does through m = max(alpha), keeps
        // sum(gamma) = 1 step by step: the marginal near 1 of a well-fitted sentence stays accurate
        const scalar_t fix = (in - out) / ties;
        for (int64_t i = 0; i < L; ++i) if (prev[i] == mx) gp[i] += fix;
        for (int64_t j = 0; j < L; ++j) {
          if (s[j] > kTiny) continue;  // the forward used the exact logsumexp here: exact terms too
          for (int64_t i = 0; i < L; ++i) {
            const scalar_t w = gm[j] * std::exp(prev[i] + Ap[i * L + j] + e[j] - cur[j]);
            gp[i] += w;
            dA[i * L + j] += g[b] * w;
          }
        }
      }
    }
    scalar_t* ds = d_start.data_ptr<scalar_t>();
    scalar_t* dn = d_end.data_ptr<scalar_t>();
    for (int64_t b = 0; b < B; ++b) {
      const scalar_t* g0 = de + (b * T) * L;
      const scalar_t* gl = de + (b * T + len[b] - 1) * L;
      for (int64_t j = 0; j < L; ++j) ds[j] += g[b] * g0[j], dn[j] += g[b] * gl[j];
    }
  });
  d_em.mul_(g_.view({B, 1, 1}));
  if (N > 0) {
    // through et = exp(A - c) (a clamped entry passes nothing), and through the column maxima c
    // as autograd does: their adjoint, 0 up to rounding, goes to each column's arg-max entries
    auto live = (A - c.view({1, L})).gt(kFloor).logical_and(allowed.to(at::kBool));
    auto through = (et * at::mm(Pm.t(), Wm)).masked_fill(live.logical_not(), 0);
    auto at_max = A.eq(c.view({1, L}));
    auto c_adj = (c_in - through.sum(0)) / at_max.sum(0).to(em.scalar_type());
    d_A += through + at_max.to(em.scalar_type()) * c_adj.view({1, L});
  }
  return {d_em, d_A, d_start, d_end};
}

// Viterbi best path (CRF.decode): em [B, T, L], lengths [B] (int64, >= 1), A [L, L] (from, to),
// start, end [L], allowed [L, L] (uint8; empty: every move allowed). Returns tags [B, T] (int64;
// 0 after each length). The same arithmetic as the Python decode: score'_k = max_j (score_j +
// A_jk) + E_tk, the first maximal j on ties (torch's argmax rule), the final tag the first maximum
// of score + end; so the paths are identical.
// As there, the forward keeps only the maxima (a running maximum across the current tags k, which
// vectorises) and the backtrack finds each step's best predecessor of the chosen tag (L
// candidates a step).
//
// Constrained transitions (a mask given): the maximum runs over the allowed
// predecessors only, and is checked to be the maximum over all of them. A constrained BIOES CRF
// with 113 labels lets I-X and E-X follow only B-X and I-X, and O, B-* and S-* follow only O, E-*
// and S-*: 3,361 allowed (j, k) pairs of 12,769. The targets are grouped by their set of allowed
// predecessors: {O, B-*, S-*} (57 predecessors) is one block, its predecessors' scores gathered
// into a short vector and its transitions into a contiguous [predecessors, targets] block, so it
// is the same vectorised running maximum over fewer candidates; the 56 I-X and E-X targets (2
// predecessors each) run as one loop across targets (see SparsePlan). Disallowed moves carry the CRF's finite -1e4, so they cannot
// be skipped blindly: with D_k = max over the disallowed j of A_jk and M = max_j score_j, every
// disallowed candidate score_j + A_jk <= M + D_k (rounding is monotone, so also in floating
// point); where M + D_k < the allowed maximum the two maxima are equal (maxima are exact), and
// every other target k (and every step whose scores are not all finite) takes the full
// maximum over all j. So the scores, and with them the paths, are the unconstrained loop's,
// bit for bit, whatever the emissions. The grouping pays where few moves are allowed: CRF.decode
// gives the mask only where at most half are (a BIO CRF, 53 %, measured 0.98x with it).
namespace {
// The Viterbi scores of one sentence of n steps: S[t, k] = max_j (S[t-1, j] + A[j, k]) + E[t, k]
// (S[0] = start + E[0]). The maximum runs over j as a running maximum across k (vectorised;
// additions and maxima are exact, so the AVX-512, AVX2 and baseline variants agree bit for bit).
template <typename T>
DEID_INLINE void dense_max_t(int64_t L, const T* __restrict prev, const T* __restrict Ap, T* __restrict cur) {
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
}

// The targets of a constrained CRF grouped by their allowed predecessors (see above). Groups of
// at least kWide targets are blocks (their target count padded to a multiple of 16 with copies
// of the first column, which leave a maximum unchanged); the other targets ("narrow": each I-X,
// E-X of a BIOES CRF) keep their own list of predecessors, padded to the longest such list with
// copies of the first, and run as one loop across all narrow targets, list entry by entry.
constexpr int64_t kWide = 8;
template <typename T>
struct SparsePlan {
  // wide group g: predecessors pred[pred_off[g] .. pred_off[g+1]), targets tgt[tgt_off[g] ..
  // tgt_off[g+1]), block [n_pred, tgt_pad[g]] row-major from block_off[g]: A[pred[i], tgt[k]]
  std::vector<int64_t> pred_off, pred, tgt_off, tgt, tgt_pad, block_off;
  std::vector<T> block;
  // narrow targets: ntgt[k], their predecessor lists [depth][n_narrow] (npred) with A (na)
  std::vector<int64_t> ntgt, npred;
  std::vector<T> na;
  int64_t depth = 0;
  std::vector<T> dis_max;  // D_k: max over disallowed j of A[j, k] (-inf: none)
  int64_t max_pred = 0, max_tgt = 0;
};

template <typename T>
SparsePlan<T> sparse_plan(int64_t L, const T* Ap, const uint8_t* ok) {
  SparsePlan<T> p;
  p.dis_max.assign(L, -std::numeric_limits<T>::infinity());
  std::vector<std::vector<int64_t>> preds, tgts, kpreds(L);
  for (int64_t k = 0; k < L; ++k) {
    for (int64_t j = 0; j < L; ++j) {
      if (ok[j * L + k]) {
        kpreds[k].push_back(j);
      } else if (Ap[j * L + k] > p.dis_max[k]) {
        p.dis_max[k] = Ap[j * L + k];
      }
    }
    size_t g = 0;
    while (g < preds.size() && preds[g] != kpreds[k]) ++g;
    if (g == preds.size()) preds.push_back(kpreds[k]), tgts.emplace_back();
    tgts[g].push_back(k);
  }
  p.pred_off.push_back(0), p.tgt_off.push_back(0), p.block_off.push_back(0);
  std::vector<int64_t> narrow;
  for (size_t g = 0; g < preds.size(); ++g) {
    const int64_t np = static_cast<int64_t>(preds[g].size()), nt = static_cast<int64_t>(tgts[g].size());
    if (np == 0) continue;  // nothing may move there: the check below takes the full maximum
    if (nt < kWide) {
      for (int64_t k : tgts[g]) narrow.push_back(k);
      continue;
    }
    const int64_t pad = (nt + 15) / 16 * 16;
    for (int64_t j : preds[g]) p.pred.push_back(j);
    for (int64_t k : tgts[g]) p.tgt.push_back(k);
    for (int64_t j : preds[g])
      for (int64_t c = 0; c < pad; ++c) p.block.push_back(Ap[j * L + tgts[g][c < nt ? c : 0]]);
    p.tgt_pad.push_back(pad);
    p.pred_off.push_back(static_cast<int64_t>(p.pred.size()));
    p.tgt_off.push_back(static_cast<int64_t>(p.tgt.size()));
    p.block_off.push_back(static_cast<int64_t>(p.block.size()));
    p.max_pred = std::max(p.max_pred, np);
    p.max_tgt = std::max(p.max_tgt, pad);
  }
  for (int64_t k : narrow) p.depth = std::max<int64_t>(p.depth, static_cast<int64_t>(kpreds[k].size()));
  const int64_t nn = static_cast<int64_t>(narrow.size());
  p.ntgt = narrow;
  p.npred.resize(p.depth * nn);
  p.na.resize(p.depth * nn);
  for (int64_t i = 0; i < p.depth; ++i) {
    for (int64_t q = 0; q < nn; ++q) {
      const auto& pk = kpreds[narrow[q]];
      const int64_t j = pk[i < static_cast<int64_t>(pk.size()) ? i : 0];
      p.npred[i * nn + q] = j;
      p.na[i * nn + q] = Ap[j * L + narrow[q]];
    }
  }
  p.max_tgt = std::max(p.max_tgt, nn);
  return p;
}

// Whether x[0..n) are all finite, and then their maximum in *mx. Sixteen running maxima and
// sums x * 0 (NaN for an infinite or NaN entry) side by side, so the loop vectorises: a single
// running maximum is a chain of dependent scalar operations (a quarter of the decode's time).
template <typename T>
DEID_INLINE bool finite_max(int64_t n, const T* __restrict x, T* mx) {
  constexpr int64_t W = 16;
  T acc[W], chk[W];
  for (int64_t i = 0; i < W; ++i) acc[i] = x[0], chk[i] = 0;
  int64_t j = 0;
  for (; j + W <= n; j += W) {
    for (int64_t i = 0; i < W; ++i) {
      const T v = x[j + i];
      acc[i] = v > acc[i] ? v : acc[i];
      chk[i] += v * T(0);
    }
  }
  T m = acc[0], c = chk[0];
  for (int64_t i = 1; i < W; ++i) m = acc[i] > m ? acc[i] : m, c += chk[i];
  for (; j < n; ++j) m = x[j] > m ? x[j] : m, c += x[j] * T(0);
  *mx = m;
  return c == T(0);
}

// The first j maximising prev[j] + col[j] (the backtrack's argmax and the last tag's, ties to the
// first as torch's argmax): the sums and their maximum vectorised, then the first index reaching it. For
// non-finite sums the plain compare-and-select loop, whose NaN semantics the result keeps.
template <typename T>
DEID_INLINE int64_t first_argmax(int64_t L, const T* __restrict prev, const T* __restrict col, T* __restrict v) {
  for (int64_t j = 0; j < L; ++j) v[j] = prev[j] + col[j];
  T m;
  if (finite_max(L, v, &m)) {
    for (int64_t j = 0; j < L; ++j)
      if (v[j] == m) return j;
  }
  int64_t arg = 0;
  m = v[0];
  for (int64_t j = 1; j < L; ++j)
    if (v[j] > m) m = v[j], arg = j;
  return arg;
}

// One step of the constrained maximum: cur[k] = max_j (prev[j] + A[j, k]), as dense_max_t gives.
// sp, sc: scratch of max_pred and max_tgt entries; need: scratch of L flags.
template <typename T>
DEID_INLINE void sparse_max_t(int64_t L, const T* __restrict prev, const T* __restrict Ap, const SparsePlan<T>& p,
                              T* __restrict sp, T* __restrict sc, uint8_t* __restrict need, T* __restrict cur) {
  T M;
  if (!finite_max(L, prev, &M)) {  // NaN or infinite scores: the plain loop's own semantics
    dense_max_t<T>(L, prev, Ap, cur);
    return;
  }
  for (int64_t k = 0; k < L; ++k) cur[k] = -std::numeric_limits<T>::infinity();
  const int64_t G = static_cast<int64_t>(p.tgt_pad.size());
  for (int64_t g = 0; g < G; ++g) {  // wide groups: a running maximum over a [n_pred, pad] block
    const int64_t p0 = p.pred_off[g], np = p.pred_off[g + 1] - p0;
    const int64_t t0 = p.tgt_off[g], nt = p.tgt_off[g + 1] - t0, pad = p.tgt_pad[g];
    const int64_t* __restrict tg = p.tgt.data() + t0;
    const int64_t* __restrict pr = p.pred.data() + p0;
    const T* __restrict blk = p.block.data() + p.block_off[g];
    for (int64_t i = 0; i < np; ++i) sp[i] = prev[pr[i]];
    const T s0 = sp[0];
    for (int64_t k = 0; k < pad; ++k) sc[k] = s0 + blk[k];
    for (int64_t i = 1; i < np; ++i) {
      const T si = sp[i];
      const T* __restrict row = blk + i * pad;
      for (int64_t k = 0; k < pad; ++k) {
        const T cand = si + row[k];
        sc[k] = cand > sc[k] ? cand : sc[k];
      }
    }
    for (int64_t k = 0; k < nt; ++k) cur[tg[k]] = sc[k];
  }
  const int64_t nn = static_cast<int64_t>(p.ntgt.size());
  if (nn) {  // narrow targets: their short predecessor lists, entry by entry across the targets
    const int64_t* __restrict pj = p.npred.data();
    const T* __restrict na = p.na.data();
    for (int64_t q = 0; q < nn; ++q) sc[q] = prev[pj[q]] + na[q];
    for (int64_t i = 1; i < p.depth; ++i) {
      const int64_t* __restrict pji = pj + i * nn;
      const T* __restrict nai = na + i * nn;
      for (int64_t q = 0; q < nn; ++q) {
        const T cand = prev[pji[q]] + nai[q];
        sc[q] = cand > sc[q] ? cand : sc[q];
      }
    }
    const int64_t* __restrict tg = p.ntgt.data();
    for (int64_t q = 0; q < nn; ++q) cur[tg[q]] = sc[q];
  }
  const T* __restrict dm = p.dis_max.data();
  bool any = false;
  for (int64_t k = 0; k < L; ++k) {  // can a disallowed move reach the allowed maximum?
    need[k] = !(M + dm[k] < cur[k]);
    any |= need[k];
  }
  if (!any) return;
  for (int64_t k = 0; k < L; ++k) {
    if (!need[k]) continue;
    T m = prev[0] + Ap[k];
    for (int64_t j = 1; j < L; ++j) {
      const T cand = prev[j] + Ap[j * L + k];
      m = cand > m ? cand : m;
    }
    cur[k] = m;
  }
}

template <typename T>
DEID_INLINE void viterbi_scores_t(int64_t n, int64_t L, const T* __restrict st, const T* __restrict Eb,
                                  const T* __restrict Ap, const SparsePlan<T>* plan, T* __restrict sp,
                                  T* __restrict sc, uint8_t* __restrict need, T* __restrict S) {
  for (int64_t k = 0; k < L; ++k) S[k] = st[k] + Eb[k];
  for (int64_t t = 1; t < n; ++t) {
    const T* __restrict prev = S + (t - 1) * L;
    T* __restrict cur = S + t * L;
    if (plan) {
      sparse_max_t<T>(L, prev, Ap, *plan, sp, sc, need, cur);
    } else {
      dense_max_t<T>(L, prev, Ap, cur);
    }
    const T* Et = Eb + t * L;
    for (int64_t k = 0; k < L; ++k) cur[k] += Et[k];
  }
}
// The backtrack of one sentence of n steps: its last tag the first maximum of S[n-1] + end, then
// each step's first maximal predecessor of the chosen tag; tags ob[0..n) (At: A transposed,
// [to, from]; v: scratch of L).
template <typename T>
DEID_INLINE void backtrack_t(int64_t n, int64_t L, const T* __restrict S, const T* __restrict At,
                             const T* __restrict end, T* __restrict v, int64_t* __restrict ob) {
  int64_t y = first_argmax<T>(L, S + (n - 1) * L, end, v);
  ob[n - 1] = y;
  for (int64_t t = n - 1; t > 0; --t) {  // the first maximal predecessor of the chosen tag
    y = first_argmax<T>(L, S + (t - 1) * L, At + y * L, v);
    ob[t - 1] = y;
  }
}

DEID_CLONES void viterbi_scores(int64_t n, int64_t L, const float* st, const float* Eb, const float* Ap,
                                const SparsePlan<float>* plan, float* sp, float* sc, uint8_t* need, float* S) {
  viterbi_scores_t<float>(n, L, st, Eb, Ap, plan, sp, sc, need, S);
}
void viterbi_scores(int64_t n, int64_t L, const double* st, const double* Eb, const double* Ap,
                    const SparsePlan<double>* plan, double* sp, double* sc, uint8_t* need, double* S) {
  viterbi_scores_t<double>(n, L, st, Eb, Ap, plan, sp, sc, need, S);
}
DEID_CLONES void backtrack(int64_t n, int64_t L, const float* S, const float* At, const float* end, float* v,
                           int64_t* ob) {
  backtrack_t<float>(n, L, S, At, end, v, ob);
}
void backtrack(int64_t n, int64_t L, const double* S, const double* At, const double* end, double* v, int64_t* ob) {
  backtrack_t<double>(n, L, S, At, end, v, ob);
}

// The plan of the last call, kept while the transitions and the mask stay the same (a decode
// pass calls once per batch with the same weights; building the plan costs about a fifth of a
// batch's decode).
template <typename T>
const SparsePlan<T>& cached_plan(int64_t L, const T* Ap, const uint8_t* ok) {
  thread_local std::vector<T> key_a;
  thread_local std::vector<uint8_t> key_ok;
  thread_local SparsePlan<T> plan;
  const size_t n = static_cast<size_t>(L * L);
  if (key_a.size() != n || std::memcmp(key_a.data(), Ap, n * sizeof(T)) != 0 ||
      std::memcmp(key_ok.data(), ok, n) != 0) {
    plan = sparse_plan<T>(L, Ap, ok);
    key_a.assign(Ap, Ap + n);
    key_ok.assign(ok, ok + n);
  }
  return plan;
}
}  // namespace

at::Tensor crf_viterbi(const at::Tensor& em, const at::Tensor& lengths, const at::Tensor& A, const at::Tensor& start,
                       const at::Tensor& end, const at::Tensor& allowed) {
  at::NoGradGuard no_grad;
  check_scores(em, lengths, A, start, end);
  const int64_t B = em.size(0), T = em.size(1), L = em.size(2);
  TORCH_CHECK(A.scalar_type() == em.scalar_type() && start.scalar_type() == em.scalar_type() &&
                  end.scalar_type() == em.scalar_type(), "scores must have the emissions' dtype");
  TORCH_CHECK(allowed.numel() == 0 || (allowed.sizes() == at::IntArrayRef({L, L}) &&
                                        allowed.scalar_type() == at::kByte && allowed.device().is_cpu()),
              "allowed: empty or uint8 [L, L]");
  auto Ac = A.contiguous(), sc = start.contiguous(), ec = end.contiguous();
  auto okc = allowed.contiguous();
  const bool constrained = okc.numel() > 0;  // the caller decides where the grouping pays (CRF.viterbi_mask)
  auto tags = at::zeros({B, T}, lengths.options());
  const int64_t* len = lengths.data_ptr<int64_t>();
  int64_t* out = tags.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) TORCH_CHECK(len[b] >= 1 && len[b] <= T, "lengths must lie in [1, T]");
  AT_DISPATCH_FLOATING_TYPES(em.scalar_type(), "crf_viterbi", [&] {
    const scalar_t* E = em.data_ptr<scalar_t>();
    const scalar_t* Ap = Ac.data_ptr<scalar_t>();
    const scalar_t* st = sc.data_ptr<scalar_t>();
    const scalar_t* en = ec.data_ptr<scalar_t>();
    const SparsePlan<scalar_t>* plan = constrained ? &cached_plan<scalar_t>(L, Ap, okc.data_ptr<uint8_t>()) : nullptr;
    auto At = Ac.t().contiguous();  // [to, from]: the backtrack reads a column of A contiguously
    const scalar_t* Atp = At.data_ptr<scalar_t>();
    std::vector<scalar_t> sp(plan ? std::max<int64_t>(plan->max_pred, 1) : 1);
    std::vector<scalar_t> sct(plan ? std::max<int64_t>(plan->max_tgt, 1) : 1), v(L);
    std::vector<uint8_t> need(L);
    std::vector<scalar_t> S(static_cast<size_t>(T) * L);  // score_t per step, for the backtrack
    for (int64_t b = 0; b < B; ++b) {
      const scalar_t* Eb = E + b * T * L;
      const int64_t n = len[b];
      viterbi_scores(n, L, st, Eb, Ap, plan, sp.data(), sct.data(), need.data(), S.data());
      backtrack(n, L, S.data(), Atp, en, v.data(), out + b * T);
    }
  });
  return tags;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("viterbi", &crf_viterbi, "CRF Viterbi decoding (deidlib)");
  m.def("forward", &crf_forward, "CRF log-partition (deidlib)");
  m.def("backward", &crf_backward, "CRF log-partition gradient (deidlib)");
}

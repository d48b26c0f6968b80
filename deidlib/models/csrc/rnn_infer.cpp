// One direction of a one-layer LSTM or GRU for inference on the CPU (deidlib.models.fused_infer):
// the function of torch's packed RNN (each row runs its own length; the reverse direction runs each
// row backwards from its last valid step) without packing or autograd. The input projection
// of every valid (row, step) pair is one product; the rows are visited longest first, so step s
// works on the leading rows still running (one [n_s, H] x [H, G*H] product, as the packed kernel's
// shrinking batch) and three plain loops over the gates, torch's vectorised sigmoid_/tanh_ for the
// non-linearities. Equations and gate order are torch's (nn.LSTM: i, f, g, o; nn.GRU: r, z, n):
//   LSTM: c' = f * c + i * g, h' = o * tanh(c');  GRU: n = tanh(x_n + r * (h_n + b_hn)),
//   h' = n + z * (h - n). Equal to torch's kernels up to float rounding (the order of the bias
// additions differs); outputs are 0 at padding, as pad_packed_sequence gives.
#include <torch/extension.h>
#include <algorithm>
#include <numeric>
#include <vector>

// x [B, T, D], lengths [B] (int64, 1..T), w_ih [G*H, D], w_hh [G*H, H], b_ih, b_hh [G*H] (G = 4
// for an LSTM, 3 for a GRU), all contiguous, x's dtype. Writes the outputs into columns
// [col, col + H) of `out` [B, T, W] (contiguous, zero-filled by the caller: padding stays 0) when
// `out` is defined and non-empty, so both directions fill one tensor without a concatenation.
// Returns h_last [B, H]: each row's state after its last valid step.
at::Tensor rnn_infer(const at::Tensor& x, const at::Tensor& lengths, const at::Tensor& w_ih, const at::Tensor& w_hh,
                     const at::Tensor& b_ih, const at::Tensor& b_hh, bool lstm, bool reverse, at::Tensor out,
                     int64_t col) {
  at::NoGradGuard no_grad;
  TORCH_CHECK(x.dim() == 3 && x.is_contiguous() && x.device().is_cpu(), "x: contiguous CPU [B, T, D]");
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2), G = lstm ? 4 : 3, H = w_hh.size(1);
  TORCH_CHECK(w_ih.size(0) == G * H && w_ih.size(1) == D && w_hh.size(0) == G * H, "weight shapes");
  TORCH_CHECK(b_ih.numel() == G * H && b_hh.numel() == G * H, "bias shapes");
  for (const auto* t : {&w_ih, &w_hh, &b_ih, &b_hh}) {
    TORCH_CHECK(t->scalar_type() == x.scalar_type() && t->device().is_cpu() && t->is_contiguous(),
                "weights must be contiguous CPU tensors of x's dtype");
  }
  TORCH_CHECK(lengths.numel() == B && lengths.scalar_type() == at::kLong && lengths.is_contiguous(), "lengths: int64 [B]");
  const int64_t* len = lengths.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) TORCH_CHECK(len[b] >= 1 && len[b] <= T, "lengths must lie in [1, T]");
  std::vector<int64_t> order(B);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return len[a] > len[b]; });

  // the input projection of the valid (row, step) pairs only: row off[b] + t of gi (character
  // batches run mostly padding: a padded product would multiply it too)
  auto opts = x.options();
  std::vector<int64_t> off(B + 1, 0);
  for (int64_t b = 0; b < B; ++b) off[b + 1] = off[b] + len[b];
  // into a buffer kept between calls (a fresh multi-megabyte output page-faults on every call);
  // one of more than 16M entries is not kept
  thread_local at::Tensor buffer;
  const int64_t need = off[B] * G * H;
  at::Tensor store;
  if (need > (int64_t{1} << 24)) {
    store = at::empty({need}, opts);
  } else {
    if (!buffer.defined() || buffer.scalar_type() != x.scalar_type() || buffer.numel() < need) {
      buffer = at::empty({std::max<int64_t>(need, 1)}, opts);
    }
    store = buffer;
  }
  auto gi = store.narrow(0, 0, need).view({off[B], G * H});
  auto X = x.reshape({B * T, D});
  if (off[B] == B * T) {
    at::mm_out(gi, X, w_ih.t());  // no padding: off[b] = b * T
  } else {
    auto rows = at::empty({off[B]}, lengths.options());
    int64_t* rp = rows.data_ptr<int64_t>();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < len[b]; ++t) *rp++ = b * T + t;
    at::mm_out(gi, X.index_select(0, rows), w_ih.t());
  }
  auto h = at::zeros({B, H}, opts);  // rows in `order`
  auto c = at::zeros({B, H}, opts);
  auto gh = at::empty({B, G * H}, opts);
  auto P = at::empty({G * B * H}, opts);
  auto tc = at::empty({B, H}, opts);
  const bool want_out = out.defined() && out.numel() > 0;
  int64_t W = 0;
  if (want_out) {
    TORCH_CHECK(out.dim() == 3 && out.size(0) == B && out.size(1) == T && out.is_contiguous() &&
                    out.scalar_type() == x.scalar_type() && col >= 0 && col + H <= out.size(2),
                "out: contiguous [B, T, W] of x's dtype with room for columns [col, col + H)");
    W = out.size(2);
  }
  auto whh_t = w_hh.t().contiguous();  // [H, G*H], once per call
  const int64_t steps = B ? len[order[0]] : 0;
  int64_t n = B;
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "rnn_infer", [&] {
    const scalar_t* __restrict__ gi_p = gi.data_ptr<scalar_t>();
    const scalar_t* __restrict__ bh = b_hh.data_ptr<scalar_t>();
    const scalar_t* __restrict__ bi = b_ih.data_ptr<scalar_t>();
    scalar_t* __restrict__ hp = h.data_ptr<scalar_t>();
    scalar_t* __restrict__ cp = c.data_ptr<scalar_t>();
    scalar_t* __restrict__ gh_p = gh.data_ptr<scalar_t>();
    scalar_t* __restrict__ pp = P.data_ptr<scalar_t>();
    scalar_t* __restrict__ tp = tc.data_ptr<scalar_t>();
    scalar_t* op = want_out ? out.data_ptr<scalar_t>() : nullptr;
    std::vector<int64_t> tt(B);
    for (int64_t s = 0; s < steps; ++s) {
      while (n > 0 && len[order[n - 1]] <= s) --n;  // rows that have ended keep their final state
      for (int64_t r = 0; r < n; ++r) {
        const int64_t b = order[r];
        tt[r] = reverse ? len[b] - 1 - s : s;
      }
      auto ghn = gh.narrow(0, 0, n);
      at::mm_out(ghn, h.narrow(0, 0, n), whh_t);
      // pre-activations in gate planes [G][n][H]: each non-linearity is one contiguous op
      auto Pn = P.narrow(0, 0, G * n * H);
      const int64_t nH = n * H;
      // gates that are plain sums x + h: all four of an LSTM's; a GRU's r and z (its n needs r first)
      const int64_t summed = lstm ? 4 : 2;
      for (int64_t r = 0; r < n; ++r) {
        const scalar_t* __restrict__ g = gi_p + (off[order[r]] + tt[r]) * G * H;
        const scalar_t* __restrict__ q = gh_p + r * G * H;
        for (int64_t k = 0; k < summed; ++k) {
          scalar_t* __restrict__ p = pp + k * nH + r * H;
          for (int64_t j = 0; j < H; ++j) p[j] = (g[k * H + j] + bi[k * H + j]) + (q[k * H + j] + bh[k * H + j]);
        }
      }
      Pn.narrow(0, 0, 2 * nH).sigmoid_();  // LSTM i, f; GRU r, z
      if (lstm) {
        Pn.narrow(0, 2 * nH, nH).tanh_();
        Pn.narrow(0, 3 * nH, nH).sigmoid_();
        for (int64_t r = 0; r < n; ++r) {
          const scalar_t* __restrict__ ig = pp + r * H;
          const scalar_t* __restrict__ fg = pp + nH + r * H;
          const scalar_t* __restrict__ gg = pp + 2 * nH + r * H;
          scalar_t* __restrict__ cr = cp + r * H;
          scalar_t* __restrict__ tr = tp + r * H;
          for (int64_t j = 0; j < H; ++j) {
            cr[j] = fg[j] * cr[j] + ig[j] * gg[j];
            tr[j] = cr[j];
          }
        }
        tc.narrow(0, 0, n).tanh_();
        for (int64_t r = 0; r < n; ++r) {
          const scalar_t* __restrict__ o = pp + 3 * nH + r * H;
          const scalar_t* __restrict__ tr = tp + r * H;
          scalar_t* __restrict__ hr = hp + r * H;
          for (int64_t j = 0; j < H; ++j) hr[j] = o[j] * tr[j];
        }
      } else {
        for (int64_t r = 0; r < n; ++r) {
          const scalar_t* __restrict__ g = gi_p + (off[order[r]] + tt[r]) * 3 * H + 2 * H;
          const scalar_t* __restrict__ q = gh_p + r * 3 * H + 2 * H;
          const scalar_t* __restrict__ bn = bh + 2 * H;
          const scalar_t* __restrict__ rg = pp + r * H;
          scalar_t* __restrict__ p = pp + 2 * nH + r * H;
          for (int64_t j = 0; j < H; ++j) p[j] = (g[j] + bi[2 * H + j]) + rg[j] * (q[j] + bn[j]);
        }
        Pn.narrow(0, 2 * nH, nH).tanh_();
        for (int64_t r = 0; r < n; ++r) {
          const scalar_t* __restrict__ z = pp + nH + r * H;
          const scalar_t* __restrict__ nn = pp + 2 * nH + r * H;
          scalar_t* __restrict__ hr = hp + r * H;
          for (int64_t j = 0; j < H; ++j) hr[j] = nn[j] + z[j] * (hr[j] - nn[j]);
        }
      }
      if (op) {
        for (int64_t r = 0; r < n; ++r) {
          const scalar_t* __restrict__ hr = hp + r * H;
          scalar_t* __restrict__ o = op + (order[r] * T + tt[r]) * W + col;
          for (int64_t j = 0; j < H; ++j) o[j] = hr[j];
        }
      }
    }
  });
  auto last = at::empty({B, H}, opts);
  auto idx = at::empty({B}, lengths.options());
  std::copy(order.begin(), order.end(), idx.data_ptr<int64_t>());
  last.index_copy_(0, idx, h);
  return last;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("rnn_infer", &rnn_infer, "one direction of an LSTM/GRU layer for inference (deidlib)");
}

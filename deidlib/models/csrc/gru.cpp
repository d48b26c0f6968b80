// One direction of a one-layer GRU over a padded batch-first input, forward and backward
// through time, for the CPU (deidlib.models.fused_gru). torch has no fused CPU GRU kernel:
// torch.gru runs a per-step loop of small autograd-recorded ops. Here each step is one
// matrix product (torch's own sgemm_/dgemm_ called directly where reachable, blas_direct.h; else
// at::mm_out, the same bits) and plain loops over the gates; the
// backward is one product and one loop per step, and the weight gradients are two large
// products after the loop. Gate order and equations are torch's nn.GRU:
//   r = s(W_ir x + b_ir + W_hr h + b_hr),  z = s(W_iz x + b_iz + W_hz h + b_hz)
//   n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),  h' = (1 - z) * n + z * h
#include <torch/extension.h>
#include <algorithm>
#include <vector>

#include "blas_direct.h"

// One batch row of the backward step: from the gradient reaching h_t (carry + hz + grad_out)
// and the step's saved gates, the gradients of the input-side pre-activations (di: r, z, n)
// and of the hidden-side ones (dq: r, z and W_hn h + b_hn); hz becomes g * z for the step before.
template <typename scalar_t>
static void gate_grads(int64_t H, const scalar_t* __restrict__ c, scalar_t* __restrict__ e,
                       const scalar_t* __restrict__ gout, const scalar_t* __restrict__ r,
                       const scalar_t* __restrict__ z, const scalar_t* __restrict__ nn,
                       const scalar_t* __restrict__ hp, const scalar_t* __restrict__ ghn,
                       const scalar_t* __restrict__ bn, scalar_t* __restrict__ di, scalar_t* __restrict__ dq) {
  for (int64_t j = 0; j < H; ++j) {
    const scalar_t g = c[j] + e[j] + gout[j];
    const scalar_t dn = g * (1 - z[j]) * (1 - nn[j] * nn[j]);
    const scalar_t dz = g * (hp[j] - nn[j]) * z[j] * (1 - z[j]);
    const scalar_t dr = dn * (ghn[j] + bn[j]) * r[j] * (1 - r[j]);
    di[j] = dr;
    di[H + j] = dz;
    di[2 * H + j] = dn;
    dq[j] = dr;
    dq[H + j] = dz;
    dq[2 * H + j] = dn * r[j];
    e[j] = g * z[j];
  }
}

// x [B, T, D], h0 [B, H], w_ih [3H, D], w_hh [3H, H], b_ih [3H], b_hh [3H], all contiguous.
// Returns {out [B, T, H], hs [T + 1, B, H] (hs[0] = h0), rz [T, B, 2H], n [T, B, H], gh [T, B, 3H]}
// where gh holds W_h h (without b_hh: the bias is added in the gate loops, which saves the
// broadcast copy an addmm would make on every step).
std::vector<at::Tensor> gru_forward(const at::Tensor& x, const at::Tensor& h0, const at::Tensor& w_ih,
                                    const at::Tensor& w_hh, const at::Tensor& b_ih, const at::Tensor& b_hh) {
  at::NoGradGuard no_grad;
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2), H = h0.size(1);
  TORCH_CHECK(T >= 1, "empty sequence");
  TORCH_CHECK(x.dim() == 3 && h0.dim() == 2 && h0.size(0) == B, "x [B, T, D] and h0 [B, H] expected");
  TORCH_CHECK(w_ih.size(0) == 3 * H && w_ih.size(1) == D && w_hh.size(0) == 3 * H && w_hh.size(1) == H,
              "weight shapes");
  TORCH_CHECK(b_ih.numel() == 3 * H && b_hh.numel() == 3 * H, "bias shapes");
  for (const auto* t : {&h0, &w_ih, &w_hh, &b_ih, &b_hh}) {
    TORCH_CHECK(t->scalar_type() == x.scalar_type() && t->device().is_cpu() && t->is_contiguous(),
                "every tensor must be a contiguous CPU tensor of x's dtype");
  }
  auto gi = at::addmm(b_ih, x.reshape({B * T, D}), w_ih.t());  // [B*T, 3H], row b*T + t
  auto opts = x.options();
  auto hs = at::empty({T + 1, B, H}, opts);
  hs[0].copy_(h0);
  auto rz = at::empty({T, B, 2 * H}, opts);
  auto n = at::empty({T, B, H}, opts);
  auto gh = at::empty({T, B, 3 * H}, opts);
  auto whh_t = w_hh.t();
  const bool blas = deid_blas::blas_ok() && std::max({B, 3 * H}) < (int64_t{1} << 30);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "gru_forward", [&] {
    const scalar_t* __restrict__ gi_p = gi.data_ptr<scalar_t>();
    const scalar_t* __restrict__ bh = b_hh.data_ptr<scalar_t>();
    const scalar_t* whh = w_hh.data_ptr<scalar_t>();
    for (int64_t t = 0; t < T; ++t) {
      auto rz_t = rz.select(0, t);
      auto n_t = n.select(0, t);
      scalar_t* __restrict__ gh_p = gh.data_ptr<scalar_t>() + t * B * 3 * H;
      if (blas) {
        deid_blas::gemm('T', B, 3 * H, H, hs.data_ptr<scalar_t>() + t * B * H, whh, gh_p);
      } else {
        auto gh_t = gh[t];
        at::mm_out(gh_t, hs[t], whh_t);
      }
      scalar_t* __restrict__ rz_p = rz_t.data_ptr<scalar_t>();
      scalar_t* __restrict__ n_p = n_t.data_ptr<scalar_t>();
      const scalar_t* __restrict__ hp = hs.data_ptr<scalar_t>() + t * B * H;
      scalar_t* __restrict__ hn = hs.data_ptr<scalar_t>() + (t + 1) * B * H;
      for (int64_t b = 0; b < B; ++b) {
        const scalar_t* __restrict__ g = gi_p + (b * T + t) * 3 * H;
        const scalar_t* __restrict__ q = gh_p + b * 3 * H;
        scalar_t* __restrict__ o = rz_p + b * 2 * H;
        for (int64_t j = 0; j < 2 * H; ++j) o[j] = g[j] + q[j] + bh[j];
      }
      rz_t.sigmoid_();
      for (int64_t b = 0; b < B; ++b) {
        const scalar_t* __restrict__ g = gi_p + (b * T + t) * 3 * H + 2 * H;
        const scalar_t* __restrict__ q = gh_p + b * 3 * H + 2 * H;
        const scalar_t* __restrict__ bn = bh + 2 * H;
        const scalar_t* __restrict__ r = rz_p + b * 2 * H;
        scalar_t* __restrict__ o = n_p + b * H;
        for (int64_t j = 0; j < H; ++j) o[j] = g[j] + r[j] * (q[j] + bn[j]);
      }
      n_t.tanh_();
      for (int64_t b = 0; b < B; ++b) {
        const scalar_t* __restrict__ z = rz_p + b * 2 * H + H;
        const scalar_t* __restrict__ nn = n_p + b * H;
        const scalar_t* __restrict__ hpb = hp + b * H;
        scalar_t* __restrict__ hnb = hn + b * H;
        for (int64_t j = 0; j < H; ++j) hnb[j] = nn[j] + z[j] * (hpb[j] - nn[j]);
      }
    }
  });
  auto out = hs.narrow(0, 1, T).transpose(0, 1).contiguous();
  return {out, hs, rz, n, gh};
}

// Gradients of out [B, T, H] and h_T [B, H] given the forward's saved {hs, rz, n, gh} and b_hh.
// Returns {dx [B, T, D], dh0 [B, H], dw_ih, dw_hh, db_ih, db_hh}.
std::vector<at::Tensor> gru_backward(const at::Tensor& grad_out, const at::Tensor& grad_hT, const at::Tensor& x,
                                     const at::Tensor& w_ih, const at::Tensor& w_hh, const at::Tensor& b_hh,
                                     const at::Tensor& hs, const at::Tensor& rz, const at::Tensor& n,
                                     const at::Tensor& gh) {
  at::NoGradGuard no_grad;
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2), H = w_hh.size(1);
  TORCH_CHECK(w_hh.is_contiguous() && hs.is_contiguous() && rz.is_contiguous() && n.is_contiguous() &&
              gh.is_contiguous(), "w_hh and the saved tensors must be contiguous");
  auto go = grad_out.contiguous();
  // the gradient reaching h_{t}: carry = dgh_{t+1} @ W_hh (a product) + hz = g_{t+1} * z_{t+1} (a loop)
  TORCH_CHECK(grad_out.sizes() == at::IntArrayRef({B, T, H}) && grad_hT.sizes() == at::IntArrayRef({B, H}),
              "gradient shapes");
  TORCH_CHECK(grad_out.scalar_type() == x.scalar_type() && grad_hT.scalar_type() == x.scalar_type(),
              "gradient dtypes");
  auto carry = grad_hT.contiguous().clone();
  auto hz = at::zeros({B, H}, x.options());
  auto dgi = at::empty({B, T, 3 * H}, x.options());
  auto dgh = at::empty({T, B, 3 * H}, x.options());
  const bool blas = deid_blas::blas_ok() && std::max({B, 3 * H}) < (int64_t{1} << 30);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "gru_backward", [&] {
    const scalar_t* whh = w_hh.data_ptr<scalar_t>();
    const scalar_t* __restrict__ go_p = go.data_ptr<scalar_t>();
    scalar_t* __restrict__ dgi_p = dgi.data_ptr<scalar_t>();
    const scalar_t* __restrict__ bn = b_hh.data_ptr<scalar_t>() + 2 * H;
    scalar_t* __restrict__ carry_p = carry.data_ptr<scalar_t>();
    scalar_t* __restrict__ hz_p = hz.data_ptr<scalar_t>();
    for (int64_t t = T - 1; t >= 0; --t) {
      const scalar_t* __restrict__ rz_p = rz.data_ptr<scalar_t>() + t * B * 2 * H;
      const scalar_t* __restrict__ n_p = n.data_ptr<scalar_t>() + t * B * H;
      const scalar_t* __restrict__ hp_p = hs.data_ptr<scalar_t>() + t * B * H;
      const scalar_t* __restrict__ gh_p = gh.data_ptr<scalar_t>() + t * B * 3 * H;
      scalar_t* __restrict__ dgh_p = dgh.data_ptr<scalar_t>() + t * B * 3 * H;
      for (int64_t b = 0; b < B; ++b) {
        const scalar_t* __restrict__ r = rz_p + b * 2 * H;
        const scalar_t* __restrict__ z = r + H;
        const scalar_t* __restrict__ nn = n_p + b * H;
        const scalar_t* __restrict__ hp = hp_p + b * H;
        const scalar_t* __restrict__ ghn = gh_p + b * 3 * H + 2 * H;
        const scalar_t* __restrict__ gout = go_p + (b * T + t) * H;
        scalar_t* __restrict__ c = carry_p + b * H;
        scalar_t* __restrict__ e = hz_p + b * H;
        scalar_t* __restrict__ di = dgi_p + (b * T + t) * 3 * H;
        scalar_t* __restrict__ dq = dgh_p + b * 3 * H;
        gate_grads(H, c, e, gout, r, z, nn, hp, ghn, bn, di, dq);
      }
      if (blas) {
        deid_blas::gemm('N', B, H, 3 * H, dgh_p, whh, carry_p);
      } else {
        auto carry_t = carry;
        at::mm_out(carry_t, dgh[t], w_hh);
      }
    }
  });
  auto dh0 = carry + hz;
  auto dgh2 = dgh.view({T * B, 3 * H});
  auto dgi2 = dgi.view({B * T, 3 * H});
  auto x2 = x.reshape({B * T, D});
  auto dw_hh = at::mm(dgh2.t(), hs.narrow(0, 0, T).reshape({T * B, H}));
  auto db_hh = dgh2.sum(0);
  auto dw_ih = at::mm(dgi2.t(), x2);
  auto db_ih = dgi2.sum(0);
  auto dx = at::mm(dgi2, w_ih).view({B, T, D});
  return {dx, dh0, dw_ih, dw_hh, db_ih, db_hh};
}

// Whether the per-step products call BLAS directly (else at::mm_out); `allow` false forces
// at::mm_out (tests compare the two).
bool direct_blas(bool allow) {
  deid_blas::use_blas = allow;
  return deid_blas::blas_ok();
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("forward", &gru_forward, "GRU layer forward, one direction (deidlib)");
  m.def("backward", &gru_backward, "GRU layer backward through time, one direction (deidlib)");
  m.def("direct_blas", &direct_blas, "whether the step products call BLAS directly (allow=False: never)",
        pybind11::arg("allow"));
}

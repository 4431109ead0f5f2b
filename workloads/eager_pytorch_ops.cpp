// Eager RMSNorm and rotary embedding as torchtitan @ 9dec370 runs them (train_configs/llama3_8b.toml,
// llama3_70b.toml: norm_type = "rmsnorm", compile = false).
//
// RMSNorm (torchtitan/models/norms.py, class RMSNorm):
//   output = (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)).type_as(x) * weight
// forward kernels over [T x h], bytes per element read + written (e = activation bytes, fp32 = 4):
//   x.float()           e + 4       pow(2)             4 + 4        mean(-1)      4 (writes [T x 1])
//   x * rsqrt(..)       4 + 4       .type_as(x)        4 + e        * weight      e + e
//   (+ eps and rsqrt run on [T x 1]: not counted)                       total 4e + 28 (36 for bf16)
// backward (autograd of the same ops, in reverse):
//   * weight: dx = g * w  e + e; dw = (g * y).sum over tokens: mul 3e, reduction e      6e
//   .type_as backward (bf16 -> fp32)  e + 4
//   x * r: dx1 = g * r  4 + 4; dr = (g * x).sum(-1): mul 4 + 4 + 4, reduction 4            24
//   mean backward: the [T x 1] gradient expanded / h                                         4
//   pow(2) backward: g * 2x                                                                4 + 4 + 4
//   the two gradients of the fp32 x summed                                                 4 + 4 + 4
//   .float() backward (fp32 -> bf16)  4 + e                              total 8e + 60 (76 for bf16)
// Against the fused kernel's 2e forward and 3e backward (read x, write y; read x, dy, write dx).
//
// Rotary embedding (torchtitan/models/llama/model.py, apply_rotary_emb), on q and on k:
//   xq_ = view_as_complex(xq.float().reshape(..., -1, 2)); out = view_as_real(xq_ * freqs_cis).flatten(3)
//   return out.type_as(xq)
// forward kernels (reshape, view_as_complex, view_as_real and flatten are views): .float() e + 4, the
// complex multiply 4 + 4 (freqs_cis: [s x d/2], small), .type_as 4 + e: 2e + 16 (20 for bf16); the
// backward runs the same three in reverse (fp32 cast of the gradient, the multiply by conj(freqs_cis),
// the cast back): 2e + 16.
//
// SwiGLU (torchtitan @ 9dec370 torchtitan/models/llama/model.py, FeedForward.forward):
//   return self.w2(F.silu(self.w1(x)) * self.w3(x))
// w1 and w3 are separate GEMMs (their outputs a = gate, u = up, [T x f]); then, per element of the
// [T x f] product (autograd of the two eager ops, no fusion without torch.compile):
//   forward   F.silu(a): read a, write s             2e      s * u: read s, u, write y       3e
//                                                                              total 5e (10 for bf16)
//   backward  mul: ds = g * u (read g, u, write ds)  3e;     du = g * s (read g, s, write du) 3e
//             silu_backward(ds, a): read ds, a, write da                                      3e
//                                                                              total 9e (18 for bf16)
// Against a fused kernel's 3e forward (read a, u, write y) and 5e backward (read a, u, g, write da,
// du): the generator's activation op (transformer_generator.cpp).
#include "workloads/eager_pytorch_ops.hpp"

namespace clustersim {

namespace {
constexpr double kFp32Bytes = 4.0;
}  // namespace

double eager_rmsnorm_forward_bytes_per_element(double e) {
  return (e + kFp32Bytes) + 2.0 * kFp32Bytes + kFp32Bytes + 2.0 * kFp32Bytes + (kFp32Bytes + e) + 2.0 * e;
}

double eager_rmsnorm_backward_bytes_per_element(double e) {
  const double weight = 2.0 * e + 3.0 * e + e;
  const double type_as = e + kFp32Bytes;
  const double mul_rsqrt = 2.0 * kFp32Bytes + 3.0 * kFp32Bytes + kFp32Bytes;
  const double mean = kFp32Bytes;
  const double pow = 3.0 * kFp32Bytes;
  const double accumulate = 3.0 * kFp32Bytes;
  const double cast = kFp32Bytes + e;
  return weight + type_as + mul_rsqrt + mean + pow + accumulate + cast;
}

double eager_rope_bytes_per_element(double e) {
  return (e + kFp32Bytes) + 2.0 * kFp32Bytes + (kFp32Bytes + e);
}

double eager_swiglu_forward_bytes_per_element(double e) {
  const double silu = e + e;
  const double multiply = 2.0 * e + e;
  return silu + multiply;
}

double eager_swiglu_backward_bytes_per_element(double e) {
  const double gate_gradient = 2.0 * e + e;  // g * u
  const double up_gradient = 2.0 * e + e;    // g * s
  const double silu_backward = 2.0 * e + e;
  return gate_gradient + up_gradient + silu_backward;
}

}  // namespace clustersim

// The kernels of a served replica's forward pass on one GPU (replica_kernels.hpp).
//
// T tokens in the batch; per GPU: h hidden, d head dim, q = heads / tp x d, kv = kv heads per GPU x d
// (replica_layout.cpp), f = ffn_hidden / tp, c = 2 for swiglu (gate and up) else 1; e = 2 bytes
// (16-bit activations), w the weight dtype's bytes per element with its group scales (serving_dtype.cpp),
// x the activation operand's bytes (1 on the fp8 GEMM path, else 2), b_kv the KV-cache dtype's.
// The per-layer kernels and their bytes are the ones Vidur times (microsoft/vidur
// vidur/profiling/mlp/mlp_impl.py, as sim/hardware/kernel_measurement.cpp reads its mlp.csv), so the
// fitted profiles and the validation against those tables apply as they are:
//   input_norm, post_attention_norm   normalization, T rows, 2 T h e bytes (RMSNorm / LayerNorm)
//   qkv           gemm m T, n q + 2 kv, k h      (column-parallel; biases in the GEMM's epilogue)
//   rope          elementwise "rope", T rows, 2 T (q + kv) e bytes (q and k rotated in place)
//   kv_cache_write  elementwise: K and V read (2 T kv e) and stored in the cache (2 T kv b_kv)
//                 (vLLM's reshape_and_cache; not in Vidur's table, which times attention apart)
//   attn_out      gemm m T, n h, k q             (row-parallel)
//   mlp_up        gemm m T, n c f, k h
//   activation    elementwise "activation", T rows, (c + 1) T f e bytes (SiluAndMul reads 2f, writes f)
//   mlp_down      gemm m T, n h, k f
//   residual      elementwise, 3 T h e bytes, twice (after attention and after the MLP)
//   A GEMM of m x n x k reads m k x + k n w bytes and writes m n e: weight-only int8 / int4 (Marlin)
//   stream their packed weights and compute at the compute precision; fp8 weights take the fp8
//   tensor-core path where the GPU has one (W8A8, activations quantized per token: x = 1), else
//   weight-only (Marlin fp8 on Ampere). The LM head and the MoE router stay 16-bit (vLLM quantizes
//   neither). Block-scaled fp8 (replica.fp8_block_scales: DeepSeek-V3 / R1's checkpoints): w = 1 + 4 /
//   16384 (an fp32 scale per 128 x 128 block), x = 1 + 4 / 128 (per 1 x 128 tile), and the GEMM runs at
//   the GPU's gemm_fp8_blockwise_efficiency (DeepGEMM's promotion to fp32 every 128 K-elements; the
//   figure's source is in the GPU catalogue), as the training generator times block-scaled GEMMs.
// MoE layers replace the MLP (E experts, top k, E_g = E / ep on this GPU, f_e the expert width per
// GPU, imbalance u >= 1 the busiest GPU's share over the mean):
//   router        gemm m T, n E, k h (16-bit)
//   rows          R = T k u / ep token-expert pairs on this GPU
//   active        A = E_g (1 - (1 - 1/E)^(T k)) experts hit (the expected distinct experts among T k
//                 uniform routes): the weights read are A experts' (decode batches touch few)
//   expert_up, expert_down   grouped GEMMs, batch ceil(A), m ceil(R / ceil(A)) rows each, flops 2 R n k
//   activation    (c + 1) R f_e e bytes
//   shared expert (model.moe.shared_experts S; DeepSeek-V3 arXiv:2412.19437 sec. 2.1.2): every token
//                 through one MLP of S f_e' / tp width (f_e' the expert width before the split; vLLM's
//                 DeepseekV2MoE.shared_experts), shared_up / activation / shared_down as the dense MLP's
// A MoE model's first_dense_layers (DeepSeek-V3: 3 of 61) run the dense MLP of ffn_hidden / tp.
// Attention:
//   prefill       FlashAttention, m = new tokens, n = context + new, k = d, batch = heads / tp, causal
//                 (query i sees the context and the chunk's tokens up to its own): flops
//                 4 d heads/tp (new x context + new^2 / 2), bytes Q and O (2 new q e) + K and V of
//                 context + new tokens (kv_bytes_per_token_layer each)
//   decode        one kernel for every decoding request (vLLM's paged attention / FlashAttention's
//                 decode path): no shape (kernel_model.cpp: memory-bound unless its flops dominate),
//                 flops 4 d heads/tp per cached token, bytes the cached K and V of every request plus
//                 its query and output (2 q e)
// Multi-head latent attention (model.attention_type "mla"; DeepSeek-V2 arXiv:2405.04434 sec. 2.1 and
// appendix C, DeepSeek-V3 arXiv:2412.19437 sec. 2.1.1; vLLM's MLA backend, vllm/attention/backends/
// mla/common.py, and deepseek-ai/FlashMLA): a = heads per GPU, R_q q_lora_rank, R kv_lora_rank, n
// qk_nope_head_dim, r qk_rope_head_dim, v v_head_dim. The attention block instead of qkv:
//   mla_qkv_a     gemm m T, n R_q + R + r, k h   (q_a_proj and kv_a_proj_with_mqa, replicated; R_q 0:
//                 the query's a (n + r) column-parallel columns instead of R_q)
//   mla_latent_norm  normalization, T rows, 2 T (R_q + R) e bytes (q_a_layernorm, kv_a_layernorm)
//   mla_q_b       gemm m T, n a (n + r), k R_q   (R_q > 0)
//   rope          2 T (a r + r) e bytes (each head's rotary query part and the shared rotary key)
//   kv_cache_write  T (R + r) e read, T (R + r) b_kv stored (concat_and_cache_mla)
//   attn_out      gemm m T, n h, k a v
// Prefill, not absorbed (vLLM's MLA prefill): the chunk's keys (context + new) are up-projected from
// the cache, mla_kv_b gemm m keys, n a (n + v), k R; then FlashAttention over a heads with query/key
// width n + r and value width v: flops 2 a (n + r + v) (new x context + new^2 / 2), bytes Q (new a
// (n + r) e), O (new a v e), K and V (keys a (n + r + v) e; the rotary key is shared but broadcast).
// Decode, absorbed (sec. 2.1.1: W_UK into the query, W_UV into the output), D decoding requests, K
// cached tokens together:
//   mla_absorb_q  batched gemm, a heads: m D, n R, k n  (q_nope W_UK; W_UK_T in 16-bit)
//   decode        FlashMLA: every head's query (R + r wide) against each cached latent and rotary key
//                 read once for all a heads: flops 2 a (R + r) K (scores) + 2 a R K (the latent as the
//                 values) = 2 a (2 R + r) K; bytes K (R + r) b_kv + D a (R + r) e (query) + D a R e
//                 (output); timed at FlashMLA's published H800 figures (deepseek-ai/FlashMLA README
//                 at its first release, 2025-02-24: "up to 3000 GB/s in memory-bound configuration and
//                 580 TFLOPS in computation-bound configuration on H800 SXM5", bf16) as fractions of
//                 the H800's HBM bandwidth (3.35 TB/s) and dense bf16 peak (989.5 TFLOP/s; the H800
//                 SXM5 has H100 SXM5's compute and memory): 0.896 and 0.586, applied to every GPU
//                 (measured on Hopper). The kernel of 2025-04-22 reaches 660 TFLOPS compute-bound
//                 (README at commit 066b5ba6f63d9d0840eac008fe58a1f70acfac78), 14 % more: not taken,
//                 as the serving frameworks validated against ran their own or the earlier kernels
//   mla_absorb_o  batched gemm, a heads: m D, n v, k R  (the latent output through W_UV)
// Per cached token and layer the decode reads R + r = 576 elements (DeepSeek-V3: 1,152 bytes in bf16)
// whatever the heads, where multi-head attention of the same heads would read a (n + r + v).
// First stage:    embedding  2 T h e + 8 T bytes (Vidur's emb: gather of T rows of int64 ids)
// Last stage:     final_norm over T tokens; lm_head gemm m = sampled rows, n = V / tp, k = h, 16-bit;
//                 sampling  elementwise over rows x V logits: the fp16 logits cast to fp32 (2 + 4 bytes)
//                 and the softmax / top-p pass reading and writing them (4 + 4): 14 bytes per logit
//                 (an assumption: vLLM's sampler runs several such passes)
#include "sim/serving/replica_kernels.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {
namespace {

constexpr double kActivationBytes = 2.0;
constexpr double kTokenIdBytes = 8.0;            // int64 token ids
constexpr double kSamplingBytesPerLogit = 14.0;  // (2 + 4) cast + (4 + 4) softmax
constexpr double kFp8Bytes = 1.0;
// Block-scaled fp8 (replica.fp8_block_scales; DeepSeek-V3 arXiv:2412.19437 sec. 3.3.2, its released
// config.json quantization_config "weight_block_size": [128, 128]): one fp32 scale per 128 x 128 block of
// a weight and per 1 x 128 tile of an activation row (quantized on the fly)
constexpr double kBlockScaleBytes = 4.0;
constexpr double kWeightBlockElements = 128.0 * 128.0;
constexpr double kActivationBlockElements = 128.0;
// FlashMLA's published H800 SXM5 figures over the H800's datasheet (top of the file)
constexpr double kFlashMlaBandwidth_Bps = 3000e9, kH800HbmBandwidth_Bps = 3.35e12;
constexpr double kFlashMlaFlops = 580e12, kH800Bf16DenseFlops = 989.5e12;

std::uint32_t u32(double v) {
  return static_cast<std::uint32_t>(std::max(0.0, std::ceil(v)));
}

// C[m x n] = A[m x k] W[k x n], `batch` times: reads m k x + k n w bytes, writes m n e.
ComputeOp make_gemm(const char* name, Precision p, double x, double w, double m, double n, double k, double batch) {
  ComputeOp op;
  op.name = name;
  op.kernel = KernelClass::gemm;
  op.precision = p;
  op.flops = 2.0 * m * n * k * batch;
  op.bytes = (m * k * x + k * n * w + m * n * kActivationBytes) * batch;
  op.m = u32(m);
  op.n = u32(n);
  op.k = u32(k);
  op.batch = std::max<std::uint32_t>(1, u32(batch));
  return op;
}

ComputeOp memory_op(const char* name, KernelClass kernel, Precision p, double bytes, double rows) {
  ComputeOp op;
  op.name = name;
  op.kernel = kernel;
  op.precision = p;
  op.bytes = bytes;
  op.m = u32(rows);
  return op;
}

}  // namespace

ReplicaKernels::ReplicaKernels(const ReplicaConfig& replica, const ReplicaLayout& layout, const GpuSpec& gpu)
    : l_(layout), compute_(replica.compute_precision), gemm_(replica.compute_precision) {
  weight_bytes_ = bytes_per_element(replica.weight_dtype, replica.group_size);
  if (replica.fp8_block_scales) weight_bytes_ += kBlockScaleBytes / kWeightBlockElements;
  if (replica.weight_dtype == ServingDtype::fp8 && gpu.has_tensor_path(Precision::fp8)) {
    gemm_ = Precision::fp8;
    input_bytes_ = kFp8Bytes;
    if (replica.fp8_block_scales) {
      input_bytes_ += kBlockScaleBytes / kActivationBlockElements;
      fp8_blockwise_ = true;
    }
  } else {
    input_bytes_ = kActivationBytes;
  }
  kv_element_bytes_ = bytes_per_element(replica.kv_dtype, replica.group_size);
  kv_bytes_per_token_layer_ = l_.kv_cache_elements_per_gpu * kv_element_bytes_;
}

ComputeOp ReplicaKernels::gemm(const char* name, double m, double n, double k, double batch) const {
  ComputeOp op = make_gemm(name, gemm_, input_bytes_, weight_bytes_, m, n, k, batch);
  op.fp8_blockwise = fp8_blockwise_;
  return op;
}

ComputeOp ReplicaKernels::gemm_16bit(const char* name, double m, double n, double k, double batch) const {
  return make_gemm(name, compute_, kActivationBytes, kActivationBytes, m, n, k, batch);
}

std::size_t ReplicaKernels::layer_kernels(double T, ComputeOp* out, bool dense_layer) const {
  const std::size_t n = attention_block_kernels(T, out);
  return n + mlp_block_kernels(T, out + n, dense_layer);
}

std::size_t ReplicaKernels::attention_block_kernels(double T, ComputeOp* out) const {
  if (l_.mla) return mla_attention_block_kernels(T, out);
  const double h = l_.hidden, q = l_.q_width_per_gpu(), kv = l_.kv_width_per_gpu();
  const double e = kActivationBytes;
  std::size_t n = 0;
  out[n++] = memory_op("serve.input_norm", KernelClass::normalization, compute_, 2.0 * T * h * e, T);
  out[n++] = gemm("serve.qkv", T, q + 2.0 * kv, h);
  out[n++] = memory_op("serve.rope", KernelClass::elementwise, compute_, 2.0 * T * (q + kv) * e, T);
  out[n++] = memory_op("serve.kv_cache_write", KernelClass::elementwise, compute_,
                       2.0 * T * kv * e + T * kv_bytes_per_token_layer_, T);
  out[n++] = gemm("serve.attn_out", T, h, q);
  out[n++] = memory_op("serve.residual", KernelClass::elementwise, compute_, 3.0 * T * h * e, 0.0);
  return n;
}

std::size_t ReplicaKernels::mla_attention_block_kernels(double T, ComputeOp* out) const {
  const double h = l_.hidden, a = l_.q_heads_per_gpu, rq = l_.q_lora_rank, rkv = l_.kv_lora_rank;
  const double qk = l_.qk_nope_head_dim + l_.qk_rope_head_dim, rope = l_.qk_rope_head_dim;
  const double e = kActivationBytes;
  std::size_t n = 0;
  out[n++] = memory_op("serve.input_norm", KernelClass::normalization, compute_, 2.0 * T * h * e, T);
  out[n++] = gemm("serve.mla_qkv_a", T, (rq > 0.0 ? rq : a * qk) + rkv + rope, h);
  out[n++] = memory_op("serve.mla_latent_norm", KernelClass::normalization, compute_, 2.0 * T * (rq + rkv) * e, T);
  if (rq > 0.0) out[n++] = gemm("serve.mla_q_b", T, a * qk, rq);
  out[n++] = memory_op("serve.rope", KernelClass::elementwise, compute_, 2.0 * T * (a * rope + rope) * e, T);
  out[n++] = memory_op("serve.kv_cache_write", KernelClass::elementwise, compute_,
                       T * (rkv + rope) * e + T * kv_bytes_per_token_layer_, T);
  out[n++] = gemm("serve.attn_out", T, h, a * l_.v_head_dim);
  out[n++] = memory_op("serve.residual", KernelClass::elementwise, compute_, 3.0 * T * h * e, 0.0);
  return n;
}

std::size_t ReplicaKernels::mlp_block_kernels(double T, ComputeOp* out, bool dense_layer) const {
  const double h = l_.hidden, c = l_.mlp_input_matrices;
  const double e = kActivationBytes;
  std::size_t n = 0;
  out[n++] = memory_op("serve.post_attention_norm", KernelClass::normalization, compute_, 2.0 * T * h * e, T);
  if (!l_.moe || dense_layer) {
    const double f = l_.ffn_per_gpu;
    out[n++] = gemm("serve.mlp_up", T, c * f, h);
    out[n++] = memory_op("serve.activation", KernelClass::elementwise, compute_, (c + 1.0) * T * f * e, T);
    out[n++] = gemm("serve.mlp_down", T, h, f);
  } else {
    const double f = l_.expert_ffn_per_gpu;
    out[n++] = gemm_16bit("serve.router", T, l_.experts, h);
    const double rows = T * l_.top_k * l_.load_imbalance / l_.ep;
    const double active = std::max(1.0, l_.experts_per_gpu * (1.0 - std::pow(1.0 - 1.0 / l_.experts, T * l_.top_k)));
    const double groups = std::ceil(active);
    const double m = std::ceil(rows / groups);
    ComputeOp up = gemm("serve.expert_up", m, c * f, h, groups);
    ComputeOp down = gemm("serve.expert_down", m, h, f, groups);
    for (ComputeOp* op : {&up, &down}) {  // the real work and the weights of the experts hit
      op->flops = 2.0 * rows * double(op->n) * double(op->k);
      op->bytes = rows * double(op->k) * input_bytes_ + active * double(op->k) * double(op->n) * weight_bytes_ +
                  rows * double(op->n) * kActivationBytes;
    }
    out[n++] = up;
    out[n++] = memory_op("serve.activation", KernelClass::elementwise, compute_, (c + 1.0) * rows * f * e, rows);
    out[n++] = down;
    if (const double s = l_.shared_expert_ffn_per_gpu; s > 0.0) {
      out[n++] = gemm("serve.shared_expert_up", T, c * s, h);
      out[n++] =
          memory_op("serve.shared_expert_activation", KernelClass::elementwise, compute_, (c + 1.0) * T * s * e, T);
      out[n++] = gemm("serve.shared_expert_down", T, h, s);
    }
  }
  out[n++] = memory_op("serve.residual", KernelClass::elementwise, compute_, 3.0 * T * h * e, 0.0);
  return n;
}

ComputeOp ReplicaKernels::prefill_attention(double new_tokens, double context_tokens) const {
  const double heads = l_.q_heads_per_gpu, keys = context_tokens + new_tokens;
  const double pairs = new_tokens * context_tokens + 0.5 * new_tokens * new_tokens;
  // MLA: query and key n + r wide, value v (the kernel's shape takes the query/key width)
  const double qk = l_.mla ? l_.qk_nope_head_dim + l_.qk_rope_head_dim : l_.head_dim;
  const double v = l_.mla ? l_.v_head_dim : l_.head_dim, d = qk;
  ComputeOp op;
  op.name = "serve.prefill_attention";
  op.kernel = KernelClass::attention;
  op.precision = compute_;
  op.flops = 2.0 * (qk + v) * heads * pairs;
  op.bytes = l_.mla ? new_tokens * heads * (qk + v) * kActivationBytes + keys * heads * (qk + v) * kActivationBytes
                    : 2.0 * new_tokens * l_.q_width_per_gpu() * kActivationBytes + keys * kv_bytes_per_token_layer_;
  op.m = u32(new_tokens);
  op.n = u32(keys);
  op.k = u32(d);
  op.batch = std::max<std::uint32_t>(1, u32(heads));
  op.causal = true;
  return op;
}

ComputeOp ReplicaKernels::decode_attention(double requests, double kv_tokens) const {
  ComputeOp op;
  op.name = "serve.decode_attention";
  op.kernel = KernelClass::attention;
  op.precision = compute_;
  if (l_.mla) {
    const double a = l_.q_heads_per_gpu, rkv = l_.kv_lora_rank, latent = rkv + l_.qk_rope_head_dim;
    op.flops = 2.0 * a * (latent + rkv) * kv_tokens;
    op.bytes = kv_tokens * kv_bytes_per_token_layer_ + requests * a * (latent + rkv) * kActivationBytes;
    return op;
  }
  op.flops = 4.0 * l_.head_dim * l_.q_heads_per_gpu * kv_tokens;
  op.bytes = kv_tokens * kv_bytes_per_token_layer_ + 2.0 * requests * l_.q_width_per_gpu() * kActivationBytes;
  return op;
}

std::size_t ReplicaKernels::prefill_up_projection(double keys, ComputeOp* out) const {
  if (!l_.mla) return 0;
  out[0] = gemm("serve.mla_kv_b", keys, l_.q_heads_per_gpu * (l_.qk_nope_head_dim + l_.v_head_dim), l_.kv_lora_rank);
  return 1;
}

std::size_t ReplicaKernels::decode_absorption(double requests, ComputeOp* out) const {
  if (!l_.mla) return 0;
  const double a = l_.q_heads_per_gpu;
  out[0] = gemm_16bit("serve.mla_absorb_q", requests, l_.kv_lora_rank, l_.qk_nope_head_dim, a);
  out[1] = gemm_16bit("serve.mla_absorb_o", requests, l_.v_head_dim, l_.kv_lora_rank, a);
  return 2;
}

GpuSpec ReplicaKernels::decode_attention_gpu(const GpuSpec& gpu) const {
  GpuSpec g = gpu;
  if (l_.mla) {
    g.attention_efficiency = kFlashMlaFlops / kH800Bf16DenseFlops;
    g.memory_efficiency = kFlashMlaBandwidth_Bps / kH800HbmBandwidth_Bps;
  }
  return g;
}

ComputeOp ReplicaKernels::embedding(double T) const {
  return memory_op("serve.embedding", KernelClass::embedding, compute_,
                   2.0 * T * l_.hidden * kActivationBytes + kTokenIdBytes * T, 0.0);
}

ComputeOp ReplicaKernels::final_norm(double T) const {
  return memory_op("serve.final_norm", KernelClass::normalization, compute_, 2.0 * T * l_.hidden * kActivationBytes, T);
}

ComputeOp ReplicaKernels::lm_head(double rows) const {
  return gemm_16bit("serve.lm_head", rows, l_.vocab_per_gpu, l_.hidden);
}

ComputeOp ReplicaKernels::sampling(double rows) const {
  return memory_op("serve.sampling", KernelClass::elementwise, compute_, kSamplingBytesPerLogit * rows * l_.vocab,
                   rows);
}

double ReplicaKernels::layer_linear_weight_bytes(bool dense_layer) const {
  const double h = l_.hidden, q = l_.q_width_per_gpu(), kv = l_.kv_width_per_gpu(), c = l_.mlp_input_matrices;
  const bool moe = l_.moe && !dense_layer;
  const double mlp = moe ? (c + 1.0) * h * (l_.experts_per_gpu * l_.expert_ffn_per_gpu + l_.shared_expert_ffn_per_gpu)
                         : (c + 1.0) * h * l_.ffn_per_gpu;
  if (l_.mla) {  // the latent projections (replicated), q_b, kv_b and o_proj's heads on this GPU
    const double a = l_.q_heads_per_gpu, rq = l_.q_lora_rank, rkv = l_.kv_lora_rank;
    const double qk = l_.qk_nope_head_dim + l_.qk_rope_head_dim, rope = l_.qk_rope_head_dim;
    const double attention = h * ((rq > 0.0 ? rq : a * qk) + rkv + rope) + rq * a * qk +
                             rkv * a * (l_.qk_nope_head_dim + l_.v_head_dim) + a * l_.v_head_dim * h;
    return weight_bytes_ * (attention + mlp);
  }
  return weight_bytes_ * (h * (q + 2.0 * kv) + q * h + mlp);
}

double ReplicaKernels::layer_16bit_weight_bytes(bool dense_layer) const {
  const double h = l_.hidden, q = l_.q_width_per_gpu(), kv = l_.kv_width_per_gpu();
  const bool moe = l_.moe && !dense_layer;
  const double norms = 2.0 * (l_.biases ? 2.0 * h : h);  // LayerNorm: scale and shift; RMSNorm: scale
  const double router = moe ? h * l_.experts : 0.0;
  const double mlp_biases = moe ? 0.0 : l_.mlp_input_matrices * l_.ffn_per_gpu + h;
  const double biases = l_.biases ? (q + 2.0 * kv) + h + mlp_biases : 0.0;
  // MLA: the latent norms, and W_UK and W_UV kept apart in 16-bit for the absorbed decode (vLLM's
  // W_UK_T and W_UV, taken from kv_b_proj)
  const double mla = l_.mla ? l_.q_lora_rank + l_.kv_lora_rank +
                                  l_.q_heads_per_gpu * l_.kv_lora_rank * (l_.qk_nope_head_dim + l_.v_head_dim)
                            : 0.0;
  return kActivationBytes * (norms + router + biases + mla);
}

}  // namespace clustersim

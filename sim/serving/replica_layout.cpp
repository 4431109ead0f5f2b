// A served replica's layout over its GPUs, as vLLM lays it out.
//
// Tensor parallelism (Megatron-style, vllm/model_executor/layers/linear.py): QKV and the MLP's input
// projections are column-parallel, the attention output and the MLP's down projection row-parallel;
// heads, ffn_hidden and expert widths must divide by tp. KV heads: kv_heads / tp per GPU when tp
// divides kv_heads; when tp > kv_heads (GQA with few KV heads), each GPU keeps one KV head, replicated
// tp / kv_heads times (vLLM QKVParallelLinear: num_kv_head_replicas = tp / total_num_kv_heads), so
// tp must be a multiple of kv_heads.
// Vocabulary: padded to a multiple of 64 and split over tp (VocabParallelEmbedding and
// ParallelLMHead, DEFAULT_VOCAB_PADDING_SIZE = 64).
// Pipeline parallelism: L / pp layers per stage, the remainder L % pp given one each to the stages
// before the last (vllm/distributed/utils.py get_pp_indices: the last stage also holds the LM head);
// the embedding on the first stage, the final norm and LM head on the last.
// Experts (MoE): expert parallelism inside the tensor-parallel group (vLLM's FusedMoE with
// enable_expert_parallel over the tp ranks): ep must divide tp; each GPU holds experts / ep experts,
// each split over the tp / ep GPUs that share them. Tokens reach the experts through the layer's
// tensor-parallel all-reduce (no all-to-all).
// Data-parallel attention (dp_attention = D > 1, MoE only; SGLang's --enable-dp-attention with
// --dp-size D, as DeepSeek-V3 is served: sglang python/sglang/srt/layers/dp_attention.py,
// attn_tp_size = tp_size // dp_size): the tp GPUs form D attention ranks of tp / D consecutive GPUs;
// each rank holds the attention weights split over its tp / D GPUs (heads and KV heads divide by
// tp / D, the rules above with tp / D for tp) and the KV cache of its own requests; the experts stay
// over all tp GPUs as above (ep divides tp). Each rank embeds its own tokens and samples its own
// requests: the vocabulary is split over the rank's tp / D GPUs (an assumption: the logits then need
// no communication outside the rank). Pipeline stages are not combined with it (pp must be 1).
// Multi-head latent attention (vllm/model_executor/models/deepseek_v2.py, DeepseekV2MLAAttention): the
// latent projections (q_a_proj, kv_a_proj_with_mqa) are replicated on every GPU, q_b_proj and kv_b_proj
// column-parallel over the heads, o_proj row-parallel; the KV cache (the latent and the rotary key) is
// whole on every GPU (replicated tp times).
#include "sim/serving/replica_layout.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/core/error.hpp"
#include "workloads/transformer_math.hpp"

namespace clustersim {
namespace {

constexpr const char* kFile = "serving replica";
constexpr double kVocabPadding = 64.0;

[[noreturn]] void bad(const std::string& path, const std::string& message) {
  throw SpecError(kFile, path, message);
}

void require_divides(int divisor, int value, const std::string& path, const std::string& what) {
  if (divisor <= 0 || value % divisor != 0)
    bad(path, "expected " + what + " (" + std::to_string(value) + ") to be a multiple of " + std::to_string(divisor));
}

}  // namespace

int ReplicaLayout::max_stage_layers() const {
  return stage_layers.empty() ? 0 : *std::max_element(stage_layers.begin(), stage_layers.end());
}

int ReplicaLayout::stage_dense_layers(int stage) const {
  const int dense = moe ? dense_layers : layers;
  int first = 0;
  for (int s = 0; s < stage; ++s)
    first += stage_layers[static_cast<std::size_t>(s)];
  const int last = first + stage_layers[static_cast<std::size_t>(stage)];
  return std::max(0, std::min(last, dense) - first);
}

ReplicaLayout replica_layout(const ReplicaConfig& r) {
  const ModelSpec& m = r.model;
  if (r.tp < 1) bad("/tp", "expected a tensor-parallel degree >= 1, got " + std::to_string(r.tp));
  if (r.pp < 1) bad("/pp", "expected a pipeline degree >= 1, got " + std::to_string(r.pp));
  if (r.ep < 1) bad("/ep", "expected an expert-parallel degree >= 1, got " + std::to_string(r.ep));
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.ffn_hidden < 1 || m.vocab < 1)
    bad("/model", "expected layers, hidden, heads, ffn_hidden and vocab >= 1");
  if (m.layers < r.pp)
    bad("/pp", "expected at most " + std::to_string(m.layers) + " pipeline stages (one layer each), got " +
                   std::to_string(r.pp));
  if (r.max_batch_tokens < 1)
    bad("/max_batch_tokens", "expected >= 1 token per iteration, got " + std::to_string(r.max_batch_tokens));
  if (!(r.gpu_memory_utilization > 0.0 && r.gpu_memory_utilization <= 1.0))
    bad("/gpu_memory_utilization", "expected a fraction in (0, 1], got " + std::to_string(r.gpu_memory_utilization));
  if (!(r.host_overhead_s >= 0.0) || !std::isfinite(r.host_overhead_s))
    bad("/host_overhead_s", "expected a time >= 0 s, got " + std::to_string(r.host_overhead_s));
  if (r.fp8_block_scales && r.weight_dtype != ServingDtype::fp8)
    bad("/fp8_block_scales", std::string("expected false with weight_dtype ") + to_string(r.weight_dtype) +
                                 " (block scales are an fp8 weight format), got true");
  if (r.dp_attention < 1 || r.dp_attention > kMaxAttentionRanks)
    bad("/dp_attention", "expected 1 .. " + std::to_string(kMaxAttentionRanks) +
                             " data-parallel attention ranks, got " + std::to_string(r.dp_attention));
  if (r.dp_attention > 1) {
    if (m.moe.experts < 1)
      bad("/dp_attention", "expected 1 for a dense model (data-parallel attention needs model.moe.experts > 0), got " +
                               std::to_string(r.dp_attention));
    require_divides(r.dp_attention, r.tp, "/dp_attention",
                    "the tensor-parallel degree (each attention rank takes tp / dp_attention GPUs)");
    if (r.pp != 1)
      bad("/dp_attention", "expected 1 with pipeline stages (pp " + std::to_string(r.pp) +
                               "): data-parallel attention is modelled on one stage");
  }
  const int attention_tp = r.tp / r.dp_attention;
  const std::string attention_path = r.dp_attention > 1 ? "/dp_attention" : "/tp";
  require_divides(attention_tp, m.heads, "/model/heads",
                  r.dp_attention > 1 ? "the heads (split over tp / dp_attention GPUs)" : "the heads");
  const int kv = m.effective_kv_heads();
  if (kv >= attention_tp)
    require_divides(attention_tp, kv, "/model/kv_heads", "the KV heads");
  else
    require_divides(kv, attention_tp, attention_path,
                    "the attention's tensor-parallel degree (more GPUs than KV heads replicate them)");
  require_divides(r.tp, m.ffn_hidden, "/model/ffn_hidden", "ffn_hidden");

  ReplicaLayout l;
  l.tp = r.tp;
  l.pp = r.pp;
  l.ep = r.ep;
  l.attention_dp = r.dp_attention;
  l.attention_tp = attention_tp;
  l.hidden = m.hidden;
  l.head_dim = m.effective_head_dim();
  l.q_heads_per_gpu = double(m.heads) / attention_tp;
  l.kv_heads_per_gpu = kv >= attention_tp ? double(kv) / attention_tp : 1.0;
  // the model's KV elements per token and layer (transformer_math.hpp), this GPU's share of them
  l.kv_cache_elements_per_gpu =
      kv_cache_elements_per_token_layer(m) * (m.latent_attention() ? 1.0 : l.kv_heads_per_gpu / kv);
  l.mla = m.latent_attention();
  if (l.mla) {
    l.q_lora_rank = m.mla.q_lora_rank;
    l.kv_lora_rank = m.mla.kv_lora_rank;
    l.qk_nope_head_dim = m.mla.qk_nope_head_dim;
    l.qk_rope_head_dim = m.mla.qk_rope_head_dim;
    l.v_head_dim = m.mla.v_head_dim;
  }
  l.mlp_input_matrices = llama_style(m) ? 2.0 : 1.0;
  l.ffn_per_gpu = double(m.ffn_hidden) / r.tp;
  l.moe = m.moe.experts > 0;
  if (l.moe) {
    if (m.moe.top_k < 1 || m.moe.top_k > m.moe.experts)
      bad("/model/moe/top_k", "expected 1..experts routed experts per token, got " + std::to_string(m.moe.top_k));
    require_divides(r.ep, r.tp, "/ep", "the tensor-parallel degree (experts are spread over the tensor-parallel GPUs)");
    require_divides(r.ep, m.moe.experts, "/model/moe/experts", "the experts");
    const int expert_ffn = m.moe.expert_ffn_hidden > 0 ? m.moe.expert_ffn_hidden : m.ffn_hidden;
    require_divides(r.tp / r.ep, expert_ffn, "/model/moe/expert_ffn_hidden", "the expert width");
    l.experts = m.moe.experts;
    l.top_k = m.moe.top_k;
    l.load_imbalance = std::max(1.0, m.moe.load_imbalance);
    l.experts_per_gpu = double(m.moe.experts) / r.ep;
    l.expert_ffn_per_gpu = double(expert_ffn) / (r.tp / r.ep);
    // DeepSeek-V3's shared expert and first dense layers (vLLM's DeepseekV2MoE.shared_experts and
    // DeepseekV2MLP, both column/row-parallel over the tensor-parallel group)
    if (m.moe.shared_experts > 0)
      require_divides(r.tp, m.moe.shared_experts * expert_ffn, "/model/moe/shared_experts",
                      "the shared experts' width (shared_experts x expert_ffn_hidden)");
    l.shared_expert_ffn_per_gpu = double(m.moe.shared_experts) * expert_ffn / r.tp;
    l.dense_layers = std::min(m.moe.first_dense_layers, m.layers);
  } else if (r.ep != 1) {
    bad("/ep",
        "expected 1 for a dense model (expert parallelism needs model.moe.experts > 0), got " + std::to_string(r.ep));
  }
  l.vocab = std::ceil(m.vocab / kVocabPadding) * kVocabPadding;
  l.vocab_per_gpu = std::ceil(l.vocab / attention_tp);
  l.biases = !llama_style(m);
  l.position_embedding = !llama_style(m);
  l.seq_len = m.seq_len;
  l.tied_embeddings = m.tied_embeddings;
  l.layers = m.layers;
  l.stage_layers.assign(static_cast<std::size_t>(r.pp), m.layers / r.pp);
  for (int i = 0; i < m.layers % r.pp; ++i)
    ++l.stage_layers[static_cast<std::size_t>(r.pp - 2 - i)];
  return l;
}

}  // namespace clustersim

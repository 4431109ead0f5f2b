#include "workloads/attention_implementation.hpp"

#include "sim/core/named_table.hpp"

namespace clustersim {

const std::vector<AttentionImplementation>& attention_implementations() {
  // triton: the Triton FlashAttention kernel (Tri Dao's flash_attn_triton.py, which llm-foundry ships
  // as MPT's attn_impl "triton" for its attention bias: ALiBi). Dao, "FlashAttention-2: Faster
  // Attention with Better Parallelism and Work Partitioning" (arXiv 2307.08691, sec. 4.1, Fig. 4,
  // A100 forward + backward, sequence 512 to 16k, head dim 64 and 128, causal or not):
  // FlashAttention-2 is 1.3 to 2.5x faster than FlashAttention in Triton. The ratio used is the
  // geometric middle of that range, sqrt(1.3 x 2.5) = 1.80 (the range is the uncertainty: +-39 %).
  static const std::vector<AttentionImplementation> kImplementations = {
      {"flash", true, 1.0, "FlashAttention-2 (Dao 2023): the kernel model's own tile model"},
      {"triton", true, 1.80,
       "Dao 2023 (arXiv 2307.08691) sec. 4.1: FlashAttention-2 1.3-2.5x faster than FlashAttention in "
       "Triton (A100, forward + backward); geometric middle 1.80"},
      {"unfused", false, 1.0, "Megatron-LM's unfused attention: its GEMMs and softmax are timed as kernels"},
  };
  return kImplementations;
}

std::vector<std::string> attention_implementation_names() {
  return names_of(std::span<const AttentionImplementation>(attention_implementations()));
}

const AttentionImplementation& find_attention_implementation(std::string_view name) {
  return find_named(std::span<const AttentionImplementation>(attention_implementations()), name,
                    "attention implementation");
}

}  // namespace clustersim

#pragma once
// The attention implementations a workload can name (training.attention), one registry entry each:
// whether the kernel is fused (one kernel per attention, nothing s x s in memory) and the time of its
// kernel relative to the FlashAttention-2 tile model of sim/hardware/kernel_model.cpp, with the
// source of that ratio.
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

struct AttentionImplementation {
  std::string_view name;
  // true: one fused kernel per attention, timed by the FlashAttention-2 tile model; false: Megatron-LM's
  // unfused path (batched GEMMs around a scale-mask-softmax over the s x s scores in memory).
  bool fused = true;
  // The fused kernel's time over FlashAttention-2's for the same shape (1: FlashAttention-2 itself).
  double time_vs_flash2 = 1.0;
  std::string_view source;
};

// Every implementation, in documentation order.
const std::vector<AttentionImplementation>& attention_implementations();
std::vector<std::string> attention_implementation_names();
// The named implementation; the name must be one of attention_implementation_names().
const AttentionImplementation& find_attention_implementation(std::string_view name);

}  // namespace clustersim

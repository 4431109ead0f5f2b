#pragma once
// What the error bars compare a prediction by: the features of a simulated run that the model's
// error depends on most, in the validation data (docs/validation.md, "Error bars").
//   generation   the GPU's architecture (ampere, hopper, ...), from its catalogue id (registry below);
//                a GPU outside the registry is its own generation (every validation row differs)
//   precision    the training precision (fp16, bf16, fp8, ...)
//   sharding     how the model is split: "fsdp" (ZeRO stage 3: every layer's weights gathered before
//                use, as PyTorch FSDP's FULL_SHARD), "megatron" (tensor / pipeline / data parallel,
//                ZeRO 0-2)
//   gpus         the GPU count (compared on a log scale)
// Both the validation rows (their residuals) and every report's prediction take their features from
// here, so the two are compared by the same rule.
#include <string>
#include <string_view>

#include "workloads/workload_spec.hpp"

namespace clustersim {

struct PredictionFeatures {
  std::string gpu;  // catalogue id
  std::string generation;
  std::string precision;
  std::string sharding;
  int gpus = 0;
};

// The architecture of a catalogue GPU id ("h100-sxm5-80gb" -> "hopper"); the id itself when unknown.
std::string gpu_generation(std::string_view gpu_id);

PredictionFeatures prediction_features(std::string_view gpu_id, const WorkloadSpec& workload, int gpus);

}  // namespace clustersim

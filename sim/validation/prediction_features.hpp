#pragma once
// What the error bars compare a prediction by: the features of a simulated run that the model's
// error depends on most, in the validation data (docs/validation.md, "Error bars").
//   generation   the GPU's architecture (ampere, hopper, ...), from its catalogue id (registry below);
//                a GPU outside the registry is its own generation (every validation row differs)
//   precision    the training precision (fp16, bf16, fp8, ...)
//   sharding     how the model is split: "fsdp" (ZeRO stage 3: every layer's weights gathered before
//                use, as PyTorch FSDP's FULL_SHARD), "megatron" (tensor / pipeline / data parallel,
//                ZeRO 0-2); a serving replica (sim/api/serving_validation.hpp, serving_features):
//                "serving" (tensor / pipeline parallel), "serving-ep" (experts over ep > 1 GPUs or
//                data-parallel attention: each GPU holds some experts whole, tokens go by all-to-all)
//   gpus         the GPU count (compared on a log scale)
//   model        "dense" or "moe" (model.moe.experts > 0: routed experts)
//   attention    the model's model.attention_type: "mha" (multi-head, grouped-query included) or "mla"
//                (multi-head latent attention)
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
  std::string model = "dense";
  std::string attention = "mha";
};

// The architecture of a catalogue GPU id ("h100-sxm5-80gb" -> "hopper"); the id itself when unknown.
std::string gpu_generation(std::string_view gpu_id);

// The model's features (model, attention) of `f` from its shape: the one rule training rows, serving rows
// and every prediction share.
void set_model_features(PredictionFeatures& f, const ModelSpec& model);

PredictionFeatures prediction_features(std::string_view gpu_id, const WorkloadSpec& workload, int gpus);

}  // namespace clustersim

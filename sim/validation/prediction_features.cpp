#include "sim/validation/prediction_features.hpp"

#include <array>
#include <utility>

namespace clustersim {
namespace {

// Catalogue id prefix -> architecture (NVIDIA's datasheets: V100 Volta, A100 Ampere, L4 Ada Lovelace,
// H100 and H200 Hopper, B200 Blackwell).
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kGenerations{{
    {"v100", "volta"},
    {"a100", "ampere"},
    {"l4", "ada"},
    {"h100", "hopper"},
    {"h200", "hopper"},
    {"b200", "blackwell"},
}};

}  // namespace

std::string gpu_generation(std::string_view gpu_id) {
  for (const auto& [prefix, generation] : kGenerations)
    if (gpu_id.starts_with(prefix)) return std::string(generation);
  return std::string(gpu_id);
}

void set_model_features(PredictionFeatures& f, const ModelSpec& model) {
  f.model = model.moe.experts > 0 ? "moe" : "dense";
  f.attention = model.attention_type;
}

PredictionFeatures prediction_features(std::string_view gpu_id, const WorkloadSpec& workload, int gpus) {
  PredictionFeatures f;
  f.gpu = std::string(gpu_id);
  f.generation = gpu_generation(gpu_id);
  f.precision = to_string(workload.training.precision);
  f.sharding = workload.parallelism.zero_stage >= 3 ? "fsdp" : "megatron";
  f.gpus = gpus;
  set_model_features(f, workload.model);
  return f;
}

}  // namespace clustersim

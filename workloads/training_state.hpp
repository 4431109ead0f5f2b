#pragma once
// What training keeps per parameter (weights, gradients, optimizer state) and what one optimizer step
// moves through memory. Shared by the generator (gradient all-reduce sizes, optimizer kernel) and the
// memory model so that both count the same bytes. Equations and sources in training_state.cpp.
#include "workloads/workload_spec.hpp"

namespace clustersim {

// Bytes per parameter, before any ZeRO sharding.
struct ParameterStateBytes {
  double weights = 0.0;    // the weights the kernels read (bf16/fp16 copy, or fp32)
  double gradients = 0.0;  // the gradients accumulated and all-reduced (fp32 "main grads", or 16-bit)
  double optimizer = 0.0;  // fp32 master weights (mixed precision) and the optimizer's moments
};
ParameterStateBytes parameter_state_bytes(const TrainingSpec& t);

// Bytes per parameter of a linear layer's quantized weight copies under fp8 (the row-wise and the
// column-wise copy with their scales, kept between micro-batches); 0 for other precisions.
double fp8_weight_copy_bytes(const TrainingSpec& t);

// One optimizer step, per parameter: bytes read and written, and vector flops.
struct OptimizerStepCost {
  double bytes = 0.0;
  double flops = 0.0;
};
OptimizerStepCost optimizer_step_cost(const TrainingSpec& t);

}  // namespace clustersim

#include "sim/hardware/gpu_spec.hpp"

namespace clustersim {
namespace {

// The dense tensor-core peak of each dtype. tf32 is the fp32-storage tensor path (fp32 GEMMs use it
// only when the framework allows TF32); `tensor_fp32_flops` is for GPUs with a full-fp32 tensor path.
struct TensorPeak {
  Precision precision;
  double GpuSpec::*flops;
};
constexpr TensorPeak kTensorPeaks[] = {
    {Precision::fp32, &GpuSpec::tensor_fp32_flops},   {Precision::tf32, &GpuSpec::tensor_tf32_flops},
    {Precision::fp16, &GpuSpec::tensor_fp16_flops},   {Precision::bf16, &GpuSpec::tensor_bf16_flops},
    {Precision::fp8, &GpuSpec::tensor_fp8_flops},     {Precision::mxfp8, &GpuSpec::tensor_mxfp8_flops},
    {Precision::nvfp4, &GpuSpec::tensor_nvfp4_flops},
};

double tensor_peak(const GpuSpec& gpu, Precision p) {
  for (const auto& t : kTensorPeaks) {
    if (t.precision == p) return gpu.*t.flops;
  }
  return 0.0;
}

}  // namespace

bool GpuSpec::has_tensor_path(Precision p) const {
  return tensor_peak(*this, p) > 0.0;
}

// A dtype without a tensor-core path runs on the CUDA cores at the vector fp32 rate (e.g. bf16 on
// V100, fp32 GEMMs without TF32).
double GpuSpec::peak_flops(Precision p) const {
  const double tensor = tensor_peak(*this, p);
  return tensor > 0.0 ? tensor : vector_fp32_flops;
}

double GpuSpec::peak_16bit_flops() const {
  if (tensor_bf16_flops > 0.0) return tensor_bf16_flops;
  if (tensor_fp16_flops > 0.0) return tensor_fp16_flops;
  return vector_fp32_flops;
}

}  // namespace clustersim

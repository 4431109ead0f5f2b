#include "workloads/kernel_names.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace clustersim {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool has_any(const std::string& s, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view n) { return s.find(n) != std::string::npos; });
}

}  // namespace

KernelClass kernel_class_from_name(std::string_view name) {
  const std::string s = lower(name);
  // Attention first: fused attention kernels often also contain "gemm" in their names. cuDNN's SDPA
  // backward runs two helper kernels beside its flash kernel (cudnn::fusion::compute_dot_do_o_specialized,
  // convert_dq_to_16bits: PyTorch 2.11 on H100, calibration/data/device/h100-2026-11-28/traces).
  if (has_any(s, {"flash", "fmha", "attention", "attn", "sdpa", "softmax_warp", "cudnn::fusion::compute_dot_do_o",
                  "cudnn::fusion::convert_dq"}))
    return KernelClass::attention;
  // "nvjet": cuBLAS 12.x's Hopper/Blackwell GEMM kernels (nvjet_sm90_tst_256x128_64x4_...), which carry
  // none of the older names.
  if (has_any(s, {"gemm", "nvjet", "cutlass", "xmma", "cublas", "s884", "s1688", "h1688", "h16816", "bf16816", "aten::mm",
                  "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear"}))
    return KernelClass::gemm;
  if (has_any(s, {"layer_norm", "layernorm", "rms_norm", "rmsnorm", "group_norm", "batch_norm", "batchnorm",
                  "native_norm", "gammabetabackward"}))
    return KernelClass::normalization;
  if (has_any(s, {"adam", "sgd", "multi_tensor_apply", "optimizer"})) return KernelClass::optimizer;
  if (has_any(s, {"embedding", "indexselect", "index_select"})) return KernelClass::embedding;
  // PyTorch's log-softmax kernels: cunn_SoftMaxForward<..., LogSoftMaxForwardEpilogue> (and Backward).
  if (has_any(s, {"cross_entropy", "nll_loss", "log_softmax", "logsoftmax", "crossentropy"})) return KernelClass::loss;
  return KernelClass::elementwise;
}

Precision precision_from_name(std::string_view name, Precision fallback) {
  const std::string s = lower(name);
  if (has_any(s, {"e4m3", "e5m2", "fp8", "float8"})) return Precision::fp8;
  if (has_any(s, {"bf16", "bfloat16", "bfloat"})) return Precision::bf16;
  if (has_any(s, {"tf32"})) return Precision::tf32;
  if (has_any(s, {"fp16", "f16", "half", "h884", "h1688", "h16816"})) return Precision::fp16;
  if (has_any(s, {"fp32", "f32", "float", "sgemm", "s1688", "s884"})) return Precision::fp32;
  return fallback;
}

}  // namespace clustersim

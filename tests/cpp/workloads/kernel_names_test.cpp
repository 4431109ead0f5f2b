// Kernel classes from the kernel names that real profiler traces carry. The names below are copied from
// the project's own PyTorch 2.11 traces of one H100 (calibration/data/device/h100-2026-11-28/traces),
// where cuBLAS 12.x names its Hopper GEMMs "nvjet_..." and cuDNN's SDPA runs helper kernels beside its
// flash kernel: before these names were known, every GEMM of those traces was counted as elementwise.
#include <gtest/gtest.h>

#include "workloads/kernel_names.hpp"

namespace clustersim {
namespace {

struct NamedKernel {
  const char* name;
  KernelClass expected;
};

class KernelNames : public ::testing::TestWithParam<NamedKernel> {};

TEST_P(KernelNames, ClassFromTheName) {
  EXPECT_EQ(kernel_class_from_name(GetParam().name), GetParam().expected) << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(
    PyTorch211OnH100, KernelNames,
    ::testing::Values(
        NamedKernel{"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NTT", KernelClass::gemm},
        NamedKernel{"nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN", KernelClass::gemm},
        NamedKernel{"cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x128_1x4x1_cga1x1",
                    KernelClass::attention},
        NamedKernel{"void cudnn::fusion::compute_dot_do_o_specialized<true, 128>(void const*, void const*)",
                    KernelClass::attention},
        NamedKernel{"void cudnn::fusion::convert_dq_to_16bits<true>(void const*, void*, unsigned int)",
                    KernelClass::attention},
        NamedKernel{"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
                    "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
                    KernelClass::loss},
        NamedKernel{"void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, "
                    "long>(float*, float*, float const*, long const*)",
                    KernelClass::loss},
        NamedKernel{"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<c10::BFloat16, "
                    "float, 32u, 32u, 256u, false, true, false>(long, long)",
                    KernelClass::normalization},
        NamedKernel{"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float, "
                    "true>(int, float, c10::BFloat16 const*)",
                    KernelClass::normalization},
        NamedKernel{"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
                    "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor>",
                    KernelClass::optimizer},
        NamedKernel{"void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, "
                    "float, long>(long const*, c10::BFloat16 const*)",
                    KernelClass::embedding},
        NamedKernel{"void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl(at::"
                    "TensorIteratorBase&, at::native::GeluType)>",
                    KernelClass::elementwise},
        // An unfused attention's softmax stays attention; a GEMM inside a fused attention kernel too.
        NamedKernel{"softmax_warp_forward<c10::Half, c10::Half, float, 11, false>", KernelClass::attention},
        NamedKernel{"fmha_cutlassF_bf16_aligned_64x128_rf_sm80", KernelClass::attention}));

}  // namespace
}  // namespace clustersim

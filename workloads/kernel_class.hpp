#pragma once
// The kernel classes of compute ops: what the kernel-time model sees of an op, and what a software
// stack's measured profile scales (StackProfile::kernel_time_scale).
#include <cstddef>
#include <cstdint>

namespace clustersim {

enum class KernelClass : std::uint8_t { gemm, attention, elementwise, normalization, optimizer, embedding, loss };
inline constexpr std::size_t kKernelClassCount = 7;  // the enumerators above
inline constexpr KernelClass kKernelClasses[kKernelClassCount] = {
    KernelClass::gemm,      KernelClass::attention, KernelClass::elementwise, KernelClass::normalization,
    KernelClass::optimizer, KernelClass::embedding, KernelClass::loss};

const char* to_string(KernelClass k);  // "gemm", "attention", ... (execution_graph.cpp)

}  // namespace clustersim

#pragma once
// What a GPU kernel's (or an operator's) name says about it: its kernel class and precision. Used by
// the trace readers, which know a kernel by name and measured duration. Internal.
#include <string_view>

#include "workloads/execution_graph.hpp"

namespace clustersim {

// gemm (cuBLAS/CUTLASS GEMM kernels, aten::mm/addmm/bmm/linear/matmul), attention (flash/fused
// multi-head attention), normalization (layer/RMS/group/batch norm), optimizer (Adam, SGD,
// multi-tensor apply), embedding, loss (cross entropy, nll), else elementwise.
KernelClass kernel_class_from_name(std::string_view name);
// bf16, fp16, tf32, fp8 or fp32 from dtype hints in the name; `fallback` when there is none.
Precision precision_from_name(std::string_view name, Precision fallback);

}  // namespace clustersim

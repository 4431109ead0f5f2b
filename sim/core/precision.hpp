#pragma once
// The dtypes of kernels: shared vocabulary of the workload spec (`training.precision`), the execution
// graph (each compute op's dtype) and the GPU model (peaks per dtype).
#include <cstdint>
#include <vector>

namespace clustersim {

// fp32 ... fp8 are also training precisions (`training.precision`); mxfp8 and nvfp4 are the
// block-scaled GEMM dtypes of the Blackwell fp8 recipes (workloads/fp8_recipe.hpp).
enum class Precision : std::uint8_t { fp32, tf32, fp16, bf16, fp8, mxfp8, nvfp4 };
const char* to_string(Precision p);
// Bytes of one element of the dtype (tf32 is stored as fp32; fp8 and mxfp8 as one byte, nvfp4 as
// half a byte; block scales not included).
double bytes_per_element(Precision p);
// True for the 8-bit and narrower float dtypes (fp8, mxfp8, nvfp4).
bool low_precision(Precision p);
// The values of training.precision.
std::vector<Precision> training_precisions();

}  // namespace clustersim

// Number formats of served weights and KV caches (iteration_model.hpp): names and bytes per element.
//
// fp16, bf16   2 bytes.
// fp8          1 byte (e4m3). Its scales are one fp32 per tensor (vLLM's default fp8 checkpoints and
//              its fp8 KV cache) or per output channel: under 0.01 % of the bytes, not counted.
// int8, int4   1 and 0.5 bytes plus one fp16 scale per group of `group_size` elements along the input
//              dimension: GPTQ's symmetric format as vLLM's Marlin kernels read it (Frantar et al. 2023,
//              "GPTQ"; vllm/model_executor/layers/quantization/gptq_marlin.py: scales of shape
//              [in / group_size, out] in fp16, no zero points when sym=True). int4 at group 128:
//              0.5 + 2 / 128 = 0.515625 bytes. AWQ adds a packed 4-bit zero point per group
//              (0.5 / group_size bytes more): not modelled.
#include <cmath>
#include <string>

#include "sim/core/error.hpp"
#include "sim/serving/iteration_model.hpp"

namespace clustersim {
namespace {

struct DtypeRow {
  ServingDtype dtype;
  const char* name;
  double element_bytes;
  bool grouped;  // one fp16 scale per group
};
constexpr DtypeRow kDtypes[] = {
    {ServingDtype::fp16, "fp16", 2.0, false}, {ServingDtype::bf16, "bf16", 2.0, false},
    {ServingDtype::fp8, "fp8", 1.0, false},   {ServingDtype::int8, "int8", 1.0, true},
    {ServingDtype::int4, "int4", 0.5, true},
};
constexpr double kScaleBytes = 2.0;  // fp16 group scales

const DtypeRow& row_of(ServingDtype d) {
  for (const auto& r : kDtypes)
    if (r.dtype == d) return r;
  return kDtypes[0];
}

}  // namespace

const char* to_string(ServingDtype d) {
  return row_of(d).name;
}

double bytes_per_element(ServingDtype d, int group_size) {
  const DtypeRow& r = row_of(d);
  if (!r.grouped) return r.element_bytes;
  if (group_size <= 0)
    throw SpecError(
        "serving replica", "/group_size",
        "expected a positive group size for " + std::string(r.name) + " weights, got " + std::to_string(group_size));
  return r.element_bytes + kScaleBytes / group_size;
}

}  // namespace clustersim

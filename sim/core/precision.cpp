#include "sim/core/precision.hpp"

namespace clustersim {
namespace {

// The dtypes: name, bytes of one element, whether `training.precision` accepts it, and whether it is
// an 8-bit or narrower float.
struct PrecisionInfo {
  Precision precision;
  const char* name;
  double bytes;
  bool training;
  bool low;
};
constexpr PrecisionInfo kPrecisions[] = {
    {Precision::fp32, "fp32", 4.0, true, false},   {Precision::tf32, "tf32", 4.0, true, false},
    {Precision::fp16, "fp16", 2.0, true, false},   {Precision::bf16, "bf16", 2.0, true, false},
    {Precision::fp8, "fp8", 1.0, true, true},      {Precision::mxfp8, "mxfp8", 1.0, false, true},
    {Precision::nvfp4, "nvfp4", 0.5, false, true},
};

const PrecisionInfo& info(Precision p) {
  for (const auto& i : kPrecisions) {
    if (i.precision == p) return i;
  }
  return kPrecisions[0];  // unreachable: every enumerator is in the table
}

}  // namespace

const char* to_string(Precision p) {
  return info(p).name;
}

double bytes_per_element(Precision p) {
  return info(p).bytes;
}

bool low_precision(Precision p) {
  return info(p).low;
}

std::vector<Precision> training_precisions() {
  std::vector<Precision> out;
  for (const auto& i : kPrecisions)
    if (i.training) out.push_back(i.precision);
  return out;
}

}  // namespace clustersim

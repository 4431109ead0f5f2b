#include "sim/core/precision.hpp"

#include <gtest/gtest.h>

namespace clustersim {
namespace {

// The dtypes are core vocabulary: this suite links clustersim_core only, so the GPU model and the
// execution graph can name them without the workload spec.
TEST(CorePrecision, BlockScaledDtypesAreNarrowAndNotTrainingPrecisions) {
  EXPECT_STREQ(to_string(Precision::mxfp8), "mxfp8");
  EXPECT_STREQ(to_string(Precision::nvfp4), "nvfp4");
  EXPECT_EQ(bytes_per_element(Precision::mxfp8), 1.0);  // one byte per element, block scales apart
  EXPECT_EQ(bytes_per_element(Precision::nvfp4), 0.5);  // 4 bits per element
  for (Precision p : {Precision::fp8, Precision::mxfp8, Precision::nvfp4})
    EXPECT_TRUE(low_precision(p)) << to_string(p);
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16})
    EXPECT_FALSE(low_precision(p)) << to_string(p);
}

TEST(CorePrecision, TrainingPrecisionsAreTheFiveOfTrainingPrecision) {
  // docs/architecture.md: `precision`: fp32, tf32, fp16, bf16, fp8, in that order.
  EXPECT_EQ(training_precisions(), (std::vector<Precision>{Precision::fp32, Precision::tf32, Precision::fp16,
                                                           Precision::bf16, Precision::fp8}));
}

}  // namespace
}  // namespace clustersim

// The application layer's requests (sim/api): what both front ends fill in, with the defaults and
// checks written once.
#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "sim/api/measurement_files.hpp"
#include "sim/api/simulation_request.hpp"
#include "sim/api/spec_overrides.hpp"
#include "sim/api/validation_request.hpp"

namespace clustersim {
namespace {

TEST(SimulationRequest, EmptyRequestTakesSimulateDefaults) {
  const SimulationOptions o = simulation_options(SimulationRequest{});
  const SimulationOptions defaults;
  EXPECT_EQ(o.fidelity, "flow");
  EXPECT_EQ(o.collective_algorithm, defaults.collective_algorithm);
  EXPECT_EQ(o.network_profile, "auto");
  EXPECT_EQ(o.timeline_path, "");
  EXPECT_EQ(o.timeline_classes, 64u);
  EXPECT_TRUE(o.algorithm_by_communicator.empty());
}

TEST(SimulationRequest, AlgorithmsForEveryGroupAndPerGroup) {
  SimulationRequest r;
  add_algorithm(r, "tree");
  add_algorithm(r, "dp=ring");
  add_algorithm(r, "tp=direct");
  r.fidelity = "analytical";
  r.timeline_classes = 8;
  const SimulationOptions o = simulation_options(r);
  EXPECT_EQ(o.collective_algorithm, "tree");
  EXPECT_EQ(o.algorithm_by_communicator, (std::map<std::string, std::string>{{"dp", "ring"}, {"tp", "direct"}}));
  EXPECT_EQ(o.fidelity, "analytical");
  EXPECT_EQ(o.timeline_classes, 8u);
}

TEST(SimulationRequest, TimelineClassesMustBePositive) {
  SimulationRequest r;
  r.timeline_classes = 0;
  const SpecError e = testing::spec_error_of([&] { simulation_options(r); });
  EXPECT_EQ(e.file(), "--timeline-ranks");
  EXPECT_NE(e.message().find("positive"), std::string::npos) << e.message();
}

TEST(ValidationRequest, DefaultsAndCountsBelowOneRefused) {
  const ValidationRequest none;
  EXPECT_EQ(validation_options(none).fidelity, "flow");
  EXPECT_EQ(validation_options(none).jobs, 2);
  EXPECT_EQ(validation_row_limit(none), 0u);  // every row
  const ValidationRequest given{"analytical", 4, 3};
  EXPECT_EQ(validation_options(given).fidelity, "analytical");
  EXPECT_EQ(validation_options(given).jobs, 4);
  EXPECT_EQ(validation_row_limit(given), 3u);
  EXPECT_EQ(testing::spec_error_of([] { validation_options({std::nullopt, 0, std::nullopt}); }).file(), "--jobs");
  EXPECT_EQ(testing::spec_error_of([] { validation_row_limit({std::nullopt, std::nullopt, -1}); }).file(), "--limit");
}

TEST(SpecOverrides, FirstKeyDecidesTheSpecAndTheWorkloadSectionsComeFromItsSchema) {
  const SplitOverrides s =
      split_overrides({"nodes=4", "fabric.oversubscription=2", "training.micro_batch=2", "trace.step=3",
                       "model.moe.experts=8", "workload.name=\"w\"", "cluster.name=\"c\""});
  EXPECT_EQ(s.cluster, (Overrides{{"nodes", "4"}, {"fabric.oversubscription", "2"}, {"name", "\"c\""}}));
  EXPECT_EQ(s.workload,
            (WorkloadOverrides{
                {"training.micro_batch", "2"}, {"trace.step", "3"}, {"model.moe.experts", "8"}, {"name", "\"w\""}}));
  EXPECT_EQ(testing::spec_error_of([] { split_overrides({"name=x"}); }).file(), "--set name=x");
  EXPECT_EQ(testing::spec_error_of([] { split_overrides({"moe.experts=8"}); }).file(), "--set moe.experts=8");
}

// A measurement argument is found as given, else under the data folder (its selector kept), else among
// the compiled-in files; anything else is a SpecError naming the path and the folder.
TEST(MeasurementFiles, ArgumentsResolveAsTheCalibrateCommandDoes) {
  const std::string data = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibration";
  EXPECT_EQ(resolve_measurement_argument("power_cap/h100-device-gemm.json#1..2", data),
            data + "/power_cap/h100-device-gemm.json#1..2");
  const std::string absolute = data + "/power_cap/h100-device-gemm.json";
  EXPECT_EQ(resolve_measurement_argument(absolute, "/nonexistent"), absolute);
  const SpecError e = testing::spec_error_of([] { resolve_measurement_argument("no/such.json#3", "/nowhere"); });
  EXPECT_EQ(e.file(), "no/such.json");
  EXPECT_NE(e.message().find("/nowhere"), std::string::npos) << e.message();
  EXPECT_EQ(std::string(kDefaultMeasurementDataDir), "calibration/data");
}

// Files of two GPUs: without a GPU it cannot tell which to fit (SpecError at --gpu naming both); with
// one, the other's records are skipped with a note per file.
TEST(MeasurementFiles, SelectionKeepsOneGpusMeasurements) {
  const std::vector<std::string> files = {"vidur/compute/h100/Llama-2-7b-hf/mlp.csv",
                                          "vidur/compute/a100/Llama-2-7b-hf/mlp.csv"};
  const std::string data = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibration/data";
  const SpecError e = testing::spec_error_of([&] { select_measurements(files, data, ""); });
  EXPECT_EQ(e.file(), "--gpu");
  EXPECT_NE(e.message().find("a100-sxm4-80gb, h100-sxm5-80gb"), std::string::npos) << e.message();
  const MeasurementSelection h100 = select_measurements(files, data, "h100-sxm5-80gb");
  const MeasurementSelection only = select_measurements({files[0]}, data, "");
  EXPECT_EQ(only.gpu, "h100-sxm5-80gb");
  ASSERT_FALSE(only.kernels.empty());
  EXPECT_EQ(h100.kernels.size(), only.kernels.size());  // the a100 file adds nothing
  ASSERT_FALSE(h100.notes.empty());
  EXPECT_NE(h100.notes.back().find(files[1] + ": " +
                                   std::to_string(select_measurements({files[1]}, data, "").kernels.size()) +
                                   " measurements of other GPUs skipped"),
            std::string::npos)
      << h100.notes.back();
}

TEST(MeasurementFiles, GemmTablesAreComparedByThroughput) {
  for (const char* op : {"gemm", "gemm_max_achievable", "grouped_gemm"})
    EXPECT_TRUE(compared_by_throughput(op)) << op;
  for (const char* op : {"mlp_up_proj", "attention", "gemm_fp8"})
    EXPECT_FALSE(compared_by_throughput(op)) << op;
}

}  // namespace
}  // namespace clustersim

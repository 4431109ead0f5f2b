// clustersim validate end to end: a quick run prints the header, the rows and the summary; --json is
// machine-readable; bad datasets exit with status 2 and name the file and the row or JSON path.
// Predicted figures are not asserted (they move with the models; see bench/bench_validation.py).
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../validation_fixture.hpp"
#include "cli_support.hpp"

namespace clustersim {
namespace {

using namespace testing;  // cli_support.hpp: expect_refused, run_cli, write_temp

TEST(ValidateCli, QuickRunOnVtrainSinglePrintsRowsAndSummary) {
  const auto r = run_cli("validate vtrain-single --limit 2 --fidelity analytical");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("# clustersim validate vtrain-single"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# assumptions:"), std::string::npos);
  EXPECT_NE(r.out.find("vtrain_ground_truth_single.csv (1440 rows; the first 2 replayed)"), std::string::npos);
  EXPECT_NE(r.out.find("  0000 "), std::string::npos);
  EXPECT_NE(r.out.find("  0001 "), std::string::npos);
  EXPECT_EQ(r.out.find("  0002 "), std::string::npos);
  EXPECT_NE(r.out.find("# summary vtrain-single: 2 rows: "), std::string::npos);
}

TEST(ValidateCli, JsonHasEveryRowAndTheSummary) {
  const std::string out = testing::temp_path("validate_out.json");
  const auto r = run_cli("validate vtrain-multi --limit 3 --fidelity analytical --jobs 2 --json --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j, nlohmann::json::parse(testing::read_file(out)));
  ASSERT_EQ(j["datasets"].size(), 1u);
  const auto& d = j["datasets"][0];
  EXPECT_EQ(d["dataset"], "vtrain-multi");
  EXPECT_EQ(d["metric"], "iteration_time_ms");
  EXPECT_EQ(d["total_rows"], 109);
  ASSERT_EQ(d["rows"].size(), 3u);
  EXPECT_EQ(d["rows"][0]["id"], "0000");
  EXPECT_EQ(d["rows"][0]["measured"], 3566.5);
  for (const auto& row : d["rows"]) {
    const std::string status = row["status"];
    EXPECT_TRUE(status == "simulated" || status == "unsupported" || status == "failed") << status;
    if (status == "simulated") {
      EXPECT_GT(row["predicted"].get<double>(), 0.0);
      const double expected = (row["predicted"].get<double>() - 3566.5) / 3566.5;
      if (row["id"] == "0000") {
        EXPECT_NEAR(row["error"].get<double>(), expected, 1e-9);
      }
    } else {
      EXPECT_TRUE(row["predicted"].is_null());
      EXPECT_FALSE(row["reason"].get<std::string>().empty());
    }
  }
  const auto& s = d["summary"];
  EXPECT_EQ(s["rows"], 3);
  EXPECT_EQ(s["simulated"].get<int>() + s["unsupported"].get<int>() + s["failed"].get<int>(), 3);
  for (const char* k : {"mape", "median_abs_error", "p90_abs_error", "max_abs_error", "bias"})
    EXPECT_TRUE(s[k].is_number()) << k;
}

// --residuals (like every output file) is written whole or not at all: to a temporary file beside
// the target, renamed over it once complete. A target that cannot be written is bad input (exit 2)
// and leaves what was there untouched; a success leaves no temporary behind.
TEST(ValidateCli, ResidualsFileIsReplacedWholeOrNotAtAll) {
  namespace fs = std::filesystem;
  const fs::path dir = testing::temp_path("validate_atomic_dir");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string out = (dir / "residuals.json").string();
  std::ofstream(out) << "previous contents";
  const std::string validate = "validate korthikanti2022-a100 --limit 1 --fidelity analytical --residuals ";
  auto r = run_cli(validate + out);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(testing::read_file(out))["rows"].size(), 1u);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"residuals.json"});
  // A directory in the way, and a directory that does not exist: refused, nothing written.
  expect_refused(validate + dir.string(),
                 {dir.string() + ": (document): cannot write the residual file: it is a directory"});
  expect_refused(validate + (dir / "missing" / "residuals.json").string(),
                 {"missing/residuals.json: (document): cannot write the residual file"});
  EXPECT_FALSE(fs::exists(dir / "missing"));
  names.clear();
  for (const auto& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"residuals.json"});
}

TEST(ValidateCli, ResidualsFileHoldsEverySimulatedRowWithItsFeatures) {
  const std::string out = testing::temp_path("validate_residuals.json");
  const auto r = run_cli("validate korthikanti2022-a100 --limit 2 --fidelity analytical --json --residuals " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto results = nlohmann::json::parse(r.out);
  const auto residuals = nlohmann::json::parse(testing::read_file(out));
  EXPECT_EQ(residuals["fidelity"], "analytical");
  ASSERT_EQ(residuals["rows"].size(), 2u);
  const auto& row = residuals["rows"][0];
  const auto& result = results["datasets"][0]["rows"][0];
  EXPECT_EQ(row["dataset"], "korthikanti2022-a100");
  EXPECT_EQ(row["id"], "e2e-0020");
  EXPECT_EQ(row["stack"], "megatron-lm");
  EXPECT_EQ(row["gpu"], "a100-sxm4-80gb");
  EXPECT_EQ(row["generation"], "ampere");
  EXPECT_EQ(row["precision"], "fp16");
  EXPECT_EQ(row["sharding"], "megatron");
  EXPECT_EQ(row["gpus"], 8);
  // An iteration-time dataset: the step-time error is the row's error (rounded to 1e-6 in the file).
  EXPECT_NEAR(row["step_time_error"].get<double>(), result["error"].get<double>(), 1e-6);
  EXPECT_NEAR(result["step_time_error"].get<double>(), result["error"].get<double>(), 1e-12);
}

TEST(ValidateCli, CoverageListsEveryShippedDataset) {
  const auto r = run_cli("validate --coverage --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j["datasets"].size(), 10u);
  for (const auto& d : j["datasets"]) {
    EXPECT_GE(d["coverage"].get<double>(), 0.8) << d["dataset"];
    EXPECT_LE(d["coverage"].get<double>(), 1.0) << d["dataset"];
    EXPECT_GT(d["rows"].get<int>(), 0);
  }
  expect_refused("validate --coverage vtrain-multi");
  const auto text = run_cli("validate --coverage");
  EXPECT_NE(text.out.find("leave one row out"), std::string::npos) << text.out;
}

TEST(ValidateCli, UnsupportedRowsAreListedNotFatal) {
  const std::string csv =
      write_temp("validate_refused.csv", std::string(testing::kTinyDatasetHeader) + "3,2,1024,16,3,3,1,100\n");
  const auto r = run_cli("validate " + write_temp("validate_refused.json", testing::tiny_dataset_description(csv)) +
                         " --fidelity analytical");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("unsupported: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 rows: 0 simulated, 1 unsupported, 0 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no row simulated"), std::string::npos);
}

TEST(ValidateCli, BadDatasetPathExitsTwoNamingIt) {
  expect_refused("validate /nonexistent/dataset.json", {"/nonexistent/dataset.json"});
  expect_refused("validate no-such-dataset", {"vtrain-single"});
  expect_refused("validate");
  expect_refused("validate vtrain-single --jobs 0");
}

TEST(ValidateCli, MalformedRowExitsTwoNamingTheFileAndRow) {
  const std::string csv = write_temp("validate_malformed.csv", std::string(testing::kTinyDatasetHeader) +
                                                                   "8,2,1024,16,32,1,8,100\n"
                                                                   "8,2,1024,sixteen,32,1,8,100\n");
  const auto r =
      expect_refused("validate " + write_temp("validate_malformed.json", testing::tiny_dataset_description(csv)),
                     {csv, "row 3/column heads"});
  EXPECT_TRUE(r.out.empty()) << "nothing is simulated before every row is read";
}

TEST(ValidateCli, MalformedDescriptionExitsTwoWithTheJsonPath) {
  const std::string csv =
      write_temp("validate_desc.csv", std::string(testing::kTinyDatasetHeader) + "8,2,1024,16,32,1,8,100\n");
  std::string text = testing::tiny_dataset_description(csv);
  text.replace(text.find("\"csv\""), 5, "\"xlsx\"");
  const std::string desc = write_temp("validate_desc.json", text);
  expect_refused("validate " + desc, {desc + ": /data/format"});
}

}  // namespace
}  // namespace clustersim

// Loading spec documents: malformed JSON located by line and column; --set overrides.
#include "sim/core/spec_document.hpp"

#include <gtest/gtest.h>

#include "sim/core/error.hpp"

namespace clustersim {
namespace {

TEST(SpecDocument, MalformedJsonGivesLineAndColumn) {
  try {
    parse_spec_text("{\n  \"nodes\": 4,\n  \"gpu\" \"h100\"\n}", "bad.json");
    FAIL() << "expected a SpecError";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.file(), "bad.json");
    // nlohmann stops at the end of the offending token ("h100" ends in column 14).
  EXPECT_NE(e.message().find("malformed JSON at line 3, column 14"), std::string::npos) << e.message();
  }
}

TEST(SpecDocument, OverrideCreatesNestedKeysAndParsesJsonValues) {
  SpecDocument d = parse_spec_text(R"({"fabric": {"tiers": 2}})", "c.json");
  apply_override(d, "fabric.oversubscription", "2");
  apply_override(d, "fabric.rail_optimized", "true");
  apply_override(d, "name", "my-cluster");
  apply_override(d, "power.pue", "1.5");
  EXPECT_EQ(d.json["fabric"]["oversubscription"], 2);
  EXPECT_EQ(d.json["fabric"]["rail_optimized"], true);
  EXPECT_EQ(d.json["fabric"]["tiers"], 2);
  EXPECT_EQ(d.json["name"], "my-cluster");
  EXPECT_DOUBLE_EQ(d.json["power"]["pue"].get<double>(), 1.5);
}

TEST(SpecDocument, OverrideIntoAScalarIsRefused) {
  SpecDocument d = parse_spec_text(R"({"nodes": 4})", "c.json");
  try {
    apply_override(d, "nodes.count", "2");
    FAIL() << "expected a SpecError";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.json_path(), "/nodes");
  }
}

TEST(SpecDocument, UnknownPresetListsTheKnownOnes) {
  static constexpr Resource kTable[] = {{"alpha", "p/alpha.json", "{}"}, {"beta", "p/beta.json", "{}"}};
  try {
    load_spec_document("gamma", kTable, "cluster");
    FAIL() << "expected a SpecError";
  } catch (const SpecError& e) {
    EXPECT_NE(e.message().find("presets: alpha, beta"), std::string::npos) << e.message();
  }
  const SpecDocument d = load_spec_document("beta", kTable, "cluster");
  EXPECT_EQ(d.file, "p/beta.json");
}

TEST(SpecDocument, MissingFileIsASpecError) {
  EXPECT_THROW(load_spec_document("/nonexistent/x.json", {}, "cluster"), SpecError);
}

}  // namespace
}  // namespace clustersim

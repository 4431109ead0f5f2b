// Loading spec documents: malformed JSON located by line and column; --set overrides.
#include "sim/core/spec_document.hpp"

#include <iterator>
#include <string>
#include <utility>

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

TEST(SpecDocument, OverrideThatIsNotUtf8IsRefusedAtOnce) {
  // Found by fuzz_spec_document: invalid UTF-8 was accepted here and failed later, when the spec was
  // written out (an uncaught nlohmann type_error). Each case names the part and the bad byte's offset.
  const std::pair<std::string, std::string> cases[] = {
      {"name", "a\xff"},         // 0xFF never appears in UTF-8: byte 1
      {"name", "\xc3"},          // a 2-byte sequence cut short: byte 0
      {"name", "\xe0\x80\x80"},  // an overlong form of U+0000: byte 0
      {"name", "\xed\xa0\x80"},  // a UTF-16 surrogate (U+D800): byte 0
      {"n\x9e"
       "e",
       "1"},  // a lone continuation byte in the key path: byte 1
  };
  const char* expected[] = {"the value is not valid UTF-8 (byte 1 of 2)", "the value is not valid UTF-8 (byte 0 of 1)",
                            "the value is not valid UTF-8 (byte 0 of 3)", "the value is not valid UTF-8 (byte 0 of 3)",
                            "the key path is not valid UTF-8 (byte 1 of 3)"};
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    SpecDocument doc = parse_spec_text("{}", "spec.json");
    try {
      apply_override(doc, cases[i].first, cases[i].second);
      FAIL() << "expected a SpecError for case " << i;
    } catch (const SpecError& e) {
      EXPECT_EQ(e.file(), "--set");
      EXPECT_EQ(e.message(), expected[i]);
    }
  }
  // Well-formed multi-byte text is kept as it is (2, 3 and 4-byte sequences).
  SpecDocument doc = parse_spec_text("{}", "spec.json");
  apply_override(doc, "name", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(doc.json["name"].get<std::string>(), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
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

// JsonReader: every bad value is reported with the file, the JSON pointer and what was expected.
#include "sim/core/json_reader.hpp"

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"

namespace clustersim {
namespace {

SpecError error_of(const std::function<void()>& f) {
  return testing::spec_error_of(f);
}

TEST(JsonReader, ReadsTypedValuesWithinRange) {
  const auto j = nlohmann::json::parse(R"({"a": 2.5, "n": 4, "s": "x", "b": true, "o": {"k": 1}})");
  JsonReader r(j, "f.json");
  EXPECT_DOUBLE_EQ(r.number("a", NumberRange::positive()), 2.5);
  EXPECT_EQ(r.integer("n", 1), 4);
  EXPECT_EQ(r.string("s"), "x");
  EXPECT_TRUE(r.boolean("b"));
  JsonReader o = r.object("o");
  EXPECT_EQ(o.integer("k"), 1);
  EXPECT_EQ(o.path(), "/o");
  o.finish();
  r.finish();
}

TEST(JsonReader, NegativeBandwidthNamesPathAndExpectation) {
  const auto j = nlohmann::json::parse(R"({"fabric": {"bw": -3}})");
  JsonReader r(j, "c.json");
  JsonReader f = r.object("fabric");
  const SpecError e = error_of([&] { f.number("bw", NumberRange::positive()); });
  EXPECT_EQ(e.file(), "c.json");
  EXPECT_EQ(e.json_path(), "/fabric/bw");
  EXPECT_EQ(e.message(), "expected a number > 0, got -3");
  EXPECT_EQ(std::string(e.what()), "c.json: /fabric/bw: expected a number > 0, got -3");
}

TEST(JsonReader, WrongTypeIsDescribed) {
  const auto j = nlohmann::json::parse(R"({"nodes": "four"})");
  JsonReader r(j, "c.json");
  const SpecError e = error_of([&] { r.integer("nodes", 1); });
  EXPECT_EQ(e.json_path(), "/nodes");
  EXPECT_EQ(e.message(), "expected an integer >= 1, got the string \"four\"");
}

TEST(JsonReader, NonIntegralNumberIsNotAnInteger) {
  const auto j = nlohmann::json::parse(R"({"gpus": 2.5, "ok": 8.0})");
  JsonReader r(j, "c.json");
  EXPECT_EQ(r.integer("ok"), 8);
  EXPECT_EQ(error_of([&] { r.integer("gpus"); }).json_path(), "/gpus");
}

TEST(JsonReader, UnknownKeySuggestsTheClosestKnownKey) {
  const auto j = nlohmann::json::parse(R"({"oversubscripton": 2, "tiers": 2})");
  JsonReader r(j, "c.json", "/fabric");
  r.integer("tiers");
  r.optional_number("oversubscription");
  const SpecError e = error_of([&] { r.finish(); });
  EXPECT_EQ(e.json_path(), "/fabric/oversubscripton");
  EXPECT_EQ(e.message(), "unknown key 'oversubscripton' (did you mean 'oversubscription'?)");
}

TEST(JsonReader, MissingRequiredKey) {
  const auto j = nlohmann::json::parse(R"({})");
  JsonReader r(j, "w.json", "/model");
  const SpecError e = error_of([&] { r.integer("layers"); });
  EXPECT_EQ(e.json_path(), "/model/layers");
  EXPECT_EQ(e.message(), "required key is missing");
}

TEST(JsonReader, ChoiceListsTheAllowedValues) {
  const auto j = nlohmann::json::parse(R"({"activation": "relu6"})");
  JsonReader r(j, "w.json");
  const SpecError e = error_of([&] { r.choice("activation", {"gelu", "swiglu"}); });
  EXPECT_EQ(e.message(), "expected one of gelu, swiglu, got \"relu6\"");
}

TEST(JsonReader, PointerEscapesSlashAndTilde) {
  EXPECT_EQ(json_pointer_escape("a/b~c"), "a~1b~0c");
}

}  // namespace
}  // namespace clustersim

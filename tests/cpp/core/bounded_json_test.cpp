// The bounded JSON reader: nesting limit, the JSON pointer of a number beyond a double, the parser's
// whole reason; and spec documents that are directories, devices or invalid UTF-8 overrides.
#include "sim/core/bounded_json.hpp"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"
#include "sim/core/spec_document.hpp"

namespace clustersim {
namespace {

using testing::spec_error_of;

TEST(BoundedJson, ParsesWhatTheLimitAllows) {
  // 64 nested arrays is the limit itself: accepted, the innermost holds 7.
  const std::string text = std::string(64, '[') + "7" + std::string(64, ']');
  const BoundedJsonResult r = parse_bounded_json(text);
  ASSERT_FALSE(r.error.has_value()) << r.error->reason;
  const nlohmann::json* v = &r.value;
  for (int i = 0; i < 63; ++i)
    v = &(*v)[0];
  EXPECT_EQ((*v)[0], 7);
}

TEST(BoundedJson, NestingBeyondTheLimitIsRefusedWhereItStarts) {
  // {"a": [ + 64 more '[': the 65th bracket is at offset 6 + 63 = 69.
  const std::string text = "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  const BoundedJsonResult r = parse_bounded_json(text);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->byte, 69u);
  EXPECT_EQ(r.error->reason, "objects and arrays nested more than 64 deep (a spec or trace needs fewer than 10)");
  // /a, then the 63 arrays inside it that were opened, each at element 0.
  std::string path = "/a";
  for (int i = 0; i < 63; ++i)
    path += "/0";
  EXPECT_EQ(r.error->path, path);
}

TEST(BoundedJson, ANumberBeyondADoubleIsNamedByItsPointerAndPlace) {
  const BoundedJsonResult r = parse_bounded_json(R"({"x": {"ys": [1, 2, 1e400]}})");
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->path, "/x/ys/2");
  EXPECT_EQ(r.error->byte, 20u);  // {"x": {"ys": [1, 2, is 20 characters
  EXPECT_EQ(r.error->reason, "the number 1e400 is beyond the range of a double (about 1.8e308)");
}

TEST(BoundedJson, TheParsersReasonIsShownWhole) {
  const BoundedJsonResult r = parse_bounded_json(R"({"nodes": #})");
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->path, "");  // a syntax error is the document's
  EXPECT_EQ(r.error->reason, "syntax error while parsing value - invalid literal; last read: '\"nodes\": #'");
}

TEST(SpecDocument, ADirectoryOrADeviceIsRefusedAsSuch) {
  const std::string dir = ::testing::TempDir();
  EXPECT_EQ(spec_error_of([&] { read_text_file(dir, "cluster spec file"); }).message(),
            "cannot read the cluster spec file: it is a directory, expected a file");
  EXPECT_EQ(spec_error_of([&] { read_text_file("/dev/zero", "cluster spec file"); }).message(),
            "cannot read the cluster spec file: it is not a regular file (a device or a socket)");
}

TEST(SpecDocument, InvalidUtf8InAnOverrideIsRefusedAtOnce) {
  SpecDocument d = parse_spec_text(R"({"name": "x"})", "c.json");
  const SpecError e = spec_error_of([&] { apply_override(d, "name", "a\xff"); });
  EXPECT_EQ(e.message(), "invalid UTF-8: expected text in UTF-8");
  EXPECT_EQ(d.json["name"], "x");  // unchanged
}

TEST(SpecDocument, AnOverrideNestedTooDeepIsRefusedNotKeptAsAString) {
  SpecDocument d = parse_spec_text(R"({"name": "x"})", "c.json");
  const SpecError e = spec_error_of([&] { apply_override(d, "gpu", std::string(1000, '[') + std::string(1000, ']')); });
  EXPECT_NE(e.message().find("nested more than 64 deep"), std::string::npos) << e.message();
  EXPECT_LE(e.file().size(), 203u);  // the override as typed, cut after 200 characters
}

}  // namespace
}  // namespace clustersim

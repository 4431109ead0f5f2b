// libFuzzer target: the JSON reader every spec goes through (parse_spec_text) and a --set override
// applied to what it read (apply_override). The input's first line is the override ("key.path=value"),
// the rest the document.
#include <cstdint>

#include "sim/core/spec_document.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = clustersim::fuzz::as_text(data, size);
  const std::size_t newline = input.find('\n');
  const std::string_view setting = newline == std::string_view::npos ? std::string_view{} : input.substr(0, newline);
  const std::string_view text = newline == std::string_view::npos ? input : input.substr(newline + 1);
  clustersim::fuzz::expect_only_spec_errors([&] {
    clustersim::SpecDocument doc = clustersim::parse_spec_text(text, "fuzz.json");
    const std::size_t eq = setting.find('=');
    if (eq != std::string_view::npos && eq > 0)
      clustersim::apply_override(doc, setting.substr(0, eq), setting.substr(eq + 1));
    (void)doc.json.dump();
  });
  return 0;
}

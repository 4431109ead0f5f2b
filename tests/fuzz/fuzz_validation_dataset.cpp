// libFuzzer target: the validation dataset reader (load_validation_dataset) on a description file and
// the data file it names. The input is the description, a NUL byte, then the data file's bytes; both
// are written to a private scratch folder as dataset.json and data.json (the seeds' descriptions name
// "data.json" in "/data/path").
#include <cstdint>

#include "sim/validation/validation_dataset.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = clustersim::fuzz::as_text(data, size);
  const std::size_t nul = input.find('\0');
  const std::string_view description = input.substr(0, nul);
  const std::string_view records = nul == std::string_view::npos ? std::string_view{} : input.substr(nul + 1);
  const auto& dir = clustersim::fuzz::scratch();
  dir.write("data.json", records);
  const std::string file = dir.write("dataset.json", description);
  clustersim::fuzz::expect_only_spec_errors([&] { (void)clustersim::load_validation_dataset(file); });
  return 0;
}

#pragma once
// The JSON pointer of a dotted spec path, for the schema tests: "training.micro_batch" ->
// "/training/micro_batch".
#include <string>
#include <string_view>

namespace clustersim::testing {

inline std::string pointer(std::string_view dotted_path) {
  std::string out = "/" + std::string(dotted_path);
  for (char& c : out)
    if (c == '.') c = '/';
  return out;
}

}  // namespace clustersim::testing

#pragma once
// A table of published measurements in the repository's calibration/data/published/, parsed (the
// tests that check a model against them read it from the source tree, CLUSTERSIM_SOURCE_DIR).
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace clustersim::testing {

// `file`: the name under calibration/data/published/ (e.g. "serving_latency.json"). Throws naming the
// path when it cannot be read, which fails the calling test.
inline nlohmann::json published_table(const std::string& file) {
  const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibration/data/published/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return nlohmann::json::parse(in);
}

}  // namespace clustersim::testing

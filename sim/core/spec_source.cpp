#include "sim/core/spec_source.hpp"

#include <filesystem>
#include <string>
#include <system_error>

namespace clustersim {

bool path_exists(std::string_view path) {
  if (path.empty() || path.find('\0') != std::string_view::npos) return false;
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::path(std::string(path)), ec) && !ec;
}

bool looks_like_path(std::string_view source) {
  return source.find('/') != std::string_view::npos || source.ends_with(".json") || path_exists(source);
}

}  // namespace clustersim

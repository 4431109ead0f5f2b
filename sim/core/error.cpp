#include "sim/core/error.hpp"

#include <utility>

namespace clustersim {
namespace {
std::string format(const std::string& file, const std::string& path, const std::string& message) {
  std::string out = file.empty() ? std::string("<input>") : file;
  out += ": ";
  out += path.empty() ? std::string("(document)") : path;
  out += ": ";
  out += message;
  return out;
}
}  // namespace

SpecError::SpecError(std::string file, std::string json_path, std::string message)
    : std::runtime_error(format(file, json_path, message)),
      file_(std::move(file)),
      json_path_(std::move(json_path)),
      message_(std::move(message)) {}

}  // namespace clustersim

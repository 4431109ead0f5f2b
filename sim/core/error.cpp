#include "sim/core/error.hpp"

#include <utility>

namespace clustersim {
namespace {
// A command-line option ("--ranks 0-99") has no document: its value is the whole of what is wrong.
std::string format(const std::string& file, const std::string& path, const std::string& message) {
  std::string out = file.empty() ? std::string("<input>") : file;
  out += ": ";
  if (!path.empty() || !file.starts_with("--")) out += (path.empty() ? std::string("(document)") : path) + ": ";
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

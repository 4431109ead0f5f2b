#pragma once
// The two kinds of failure a user can meet, and how the CLI and the Python module report them.
//
// SpecError: the input is wrong (a file, a preset, a --set override). It names the file, the JSON
// path of the bad value (RFC 6901 pointer, e.g. "/fabric/oversubscription") and what was expected;
// a bad command-line option is named in place of the file ("--ranks 0-99"), with no path. The CLI
// prints it and exits with status 2.
//
// SimulationError: the input was valid but the simulation could not finish (a deadlock, a crashed
// child process, a model asked to leave its domain). Exit status 1.
#include <stdexcept>
#include <string>

namespace clustersim {

class SpecError : public std::runtime_error {
 public:
  SpecError(std::string file, std::string json_path, std::string message);

  const std::string& file() const { return file_; }
  const std::string& json_path() const { return json_path_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  std::string json_path_;
  std::string message_;
};

class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace clustersim

#pragma once
// Runs the clustersim executable and captures its exit status, stdout and stderr.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace clustersim::testing {

struct CliResult {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Temporary paths are unique per process: ctest runs tests in parallel, each in its own process.
inline std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "clustersim_" + std::to_string(::getpid()) + "_" + name;
}

inline std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// `args` is appended to the executable path as given (quote it yourself).
inline CliResult run_cli(const std::string& args) {
  static int counter = 0;
  const std::string base = temp_path("cli_" + std::to_string(++counter));
  const std::string cmd = std::string(CLUSTERSIM_CLI) + " " + args + " >" + base + ".out 2>" + base + ".err";
  const int raw = std::system(cmd.c_str());
  CliResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_file(base + ".out");
  r.err = read_file(base + ".err");
  return r;
}

}  // namespace clustersim::testing

#pragma once
// Runs the clustersim executable and captures its exit status, stdout and stderr.
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

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
// `shell_prefix`: shell commands run before it, in the same shell.
inline CliResult run_cli(const std::string& args, const std::string& shell_prefix = "") {
  static int counter = 0;
  const std::string base = temp_path("cli_" + std::to_string(++counter));
  const std::string cmd =
      shell_prefix + std::string(CLUSTERSIM_CLI) + " " + args + " >" + base + ".out 2>" + base + ".err";
  const int raw = std::system(cmd.c_str());
  CliResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_file(base + ".out");
  r.err = read_file(base + ".err");
  return r;
}

// run_cli under a limit of `cpu_s` seconds of CPU for the command and each process it forks
// (RLIMIT_CPU: a process past it is killed by SIGXCPU, and the status is not 0).
inline CliResult run_cli_with_cpu_limit(const std::string& args, int cpu_s) {
  return run_cli(args, "ulimit -t " + std::to_string(cpu_s) + "; ");
}

// The command refuses its input as bad input does (exit status 2) and its stderr names each of
// `fragments` (the file, the JSON path or option, what was expected). Returns the run for more checks.
inline CliResult expect_refused(const std::string& args, std::initializer_list<std::string_view> fragments = {}) {
  SCOPED_TRACE("clustersim " + args);
  CliResult r = run_cli(args);
  EXPECT_EQ(r.status, 2) << r.err;
  for (const std::string_view f : fragments)
    EXPECT_NE(r.err.find(f), std::string::npos) << r.err;
  return r;
}

}  // namespace clustersim::testing

#pragma once
// The CLI's subcommands, as a registry: each command is a name, a one-line summary, its usage text
// and a function returning the process exit status (0 done, 1 simulation failed, 2 bad input).
#include <span>
#include <string>
#include <vector>

namespace clustersim::cli {

struct Command {
  const char* name;
  const char* summary;
  const char* usage;
  int (*run)(const std::vector<std::string>& args);
};

std::span<const Command> commands();

int run_simulate(const std::vector<std::string>& args);
int run_compare(const std::vector<std::string>& args);
int run_presets(const std::vector<std::string>& args);
int run_calibrate(const std::vector<std::string>& args);
int run_topology(const std::vector<std::string>& args);
int run_collective(const std::vector<std::string>& args);
int run_calibrate_network(const std::vector<std::string>& args);
int run_validate(const std::vector<std::string>& args);
int run_schema(const std::vector<std::string>& args);
int run_serve(const std::vector<std::string>& args);

}  // namespace clustersim::cli

// clustersim: the command-line interface. Subcommands live in a registry (command.hpp).
// Exit status: 0 done, 1 the simulation could not finish, 2 bad input (usage or spec).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"

namespace {

void print_help() {
  std::cout << "clustersim: simulate distributed training on GPU clusters\n\nusage: clustersim <command> [options]\n\n"
               "commands:\n";
  std::size_t width = 0;  // the longest name and two spaces
  for (const auto& c : clustersim::cli::commands())
    width = std::max(width, std::string(c.name).size() + 2);
  for (const auto& c : clustersim::cli::commands()) {
    std::string name = c.name;
    name.resize(width, ' ');
    std::cout << "  " << name << c.summary << "\n";
  }
  std::cout << "\n'clustersim <command> --help' shows a command's options.\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_help();
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "clustersim 0.1.0\n";
    return 0;
  }
  for (const auto& c : clustersim::cli::commands()) {
    if (args[0] != c.name) continue;
    std::vector<std::string> rest(args.begin() + 1, args.end());
    for (const auto& a : rest) {
      if (a == "--help" || a == "-h") {
        std::cout << c.usage;
        return 0;
      }
    }
    try {
      const int status = c.run(rest);
      // stdout is an output too (--json > report.json): a failed write (a full disk, /dev/full) is
      // exit 2 with the OS reason, never a silent exit 0 with a truncated report.
      std::cout.flush();
      errno = 0;
      if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout) {
        int error = errno;
        // An earlier failed write lost its errno: one more byte (harmless on an output already
        // broken) tells the reason again (ENOSPC, EIO, EFBIG).
        if (error == 0 && ::write(STDOUT_FILENO, "\n", 1) < 0) error = errno;
        std::cerr << "error: (stdout): cannot write the output: "
                  << (error != 0 ? std::strerror(error) : "a write failed") << "\n";
        return 2;
      }
      return status;
    } catch (const clustersim::cli::UsageError& e) {
      std::cerr << "clustersim " << c.name << ": " << e.what() << "\n\n" << c.usage;
      return 2;
    } catch (const clustersim::SpecError& e) {
      std::cerr << "error: " << e.what() << "\n";
      return 2;
    } catch (const clustersim::SimulationError& e) {
      std::cerr << "simulation failed: " << e.what() << "\n";
      return 1;
    } catch (const std::exception& e) {
      std::cerr << "internal error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << "clustersim: unknown command '" << args[0] << "'\n\n";
  print_help();
  return 2;
}

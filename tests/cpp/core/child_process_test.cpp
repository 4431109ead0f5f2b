// Child-process isolation: results and errors cross the process boundary; crashes become errors.
#include "sim/core/child_process.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>

#include "sim/core/error.hpp"

namespace clustersim {
namespace {

TEST(ChildProcess, ReturnsTheChildsResultFromAnotherProcess) {
  const pid_t parent = ::getpid();
  const std::string out = run_in_child_process([] { return std::to_string(::getpid()); });
  EXPECT_NE(std::stoi(out), parent);
}

TEST(ChildProcess, LargeResultsArriveWhole) {
  const std::string out = run_in_child_process([] { return std::string(5'000'000, 'x'); });
  EXPECT_EQ(out.size(), 5'000'000u);
}

TEST(ChildProcess, SpecErrorKeepsFileAndPath) {
  try {
    run_in_child_process([]() -> std::string { throw SpecError("c.json", "/nodes", "expected an integer >= 1, got 0"); });
    FAIL() << "expected a SpecError";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.file(), "c.json");
    EXPECT_EQ(e.json_path(), "/nodes");
    EXPECT_EQ(e.message(), "expected an integer >= 1, got 0");
  }
}

TEST(ChildProcess, ACrashBecomesASimulationErrorAndTheParentLivesOn) {
  try {
    run_in_child_process([]() -> std::string {
      std::raise(SIGSEGV);
      return "";
    });
    FAIL() << "expected a SimulationError";
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("signal 11"), std::string::npos) << e.what();
  }
  EXPECT_EQ(run_in_child_process([] { return std::string("alive"); }), "alive");
}

}  // namespace
}  // namespace clustersim

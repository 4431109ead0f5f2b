// Child-process isolation: results and errors cross the process boundary; crashes become errors.
#include "sim/core/child_process.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sys/wait.h>

#include <csignal>
#include <fstream>
#include <string>

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

// Killing the parent (a CLI killed with SIGKILL, a crashed kernel) kills the simulation child too:
// nothing keeps running and writing files (PR_SET_PDEATHSIG).
TEST(ChildProcess, TheChildDiesWithItsParent) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t middle = ::fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    ::close(fds[0]);
    run_in_child_process([&]() -> std::string {
      const pid_t me = ::getpid();
      (void)!::write(fds[1], &me, sizeof me);
      ::sleep(60);
      return "";
    });
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t child = 0;
  ASSERT_EQ(::read(fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ::close(fds[0]);
  ::kill(middle, SIGKILL);
  ::waitpid(middle, nullptr, 0);
  // Gone (or a zombie waiting for init to reap it) within 5 s, not 60.
  const auto gone = [child] {
    if (::kill(child, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string pid, name, state;
    stat >> pid >> name >> state;
    return state == "Z" || state == "X";
  };
  bool dead = false;
  for (int i = 0; i < 500 && !dead; ++i) {
    dead = gone();
    if (!dead) ::usleep(10000);
  }
  EXPECT_TRUE(dead) << "the simulation child " << child << " outlived its parent";
  if (!dead) ::kill(child, SIGKILL);
}

}  // namespace
}  // namespace clustersim

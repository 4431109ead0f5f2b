// Child-process isolation: results and errors cross the process boundary; crashes become errors.
#include "sim/core/child_process.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

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

// Several children: outcome i is item i's whatever order they finish in, and no more than `jobs` run
// at once. Each child leaves a marker file while it works and counts the markers it sees after 100 ms:
// with 3 at once over 9 items, the most any child sees is 3 (itself and two siblings), and at least
// two ran together.
TEST(ChildProcess, ManyChildrenKeepTheirOrderAndRunAtMostJobsAtOnce) {
  const auto dir = std::filesystem::temp_directory_path() / ("child_process_jobs_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::vector<ChildOutcome> out = run_in_child_processes(9, 3, [&](std::size_t i) {
    const auto marker = dir / std::to_string(i);
    std::ofstream(marker) << i;
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + 20 * (8 - static_cast<int>(i))));
    const auto seen = std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator());
    std::filesystem::remove(marker);
    return std::to_string(i) + ":" + std::to_string(seen);
  });
  std::filesystem::remove_all(dir);
  ASSERT_EQ(out.size(), 9u);
  long most = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::string& text = out[i].get();
    const auto colon = text.find(':');
    EXPECT_EQ(text.substr(0, colon), std::to_string(i));
    most = std::max(most, std::stol(text.substr(colon + 1)));
  }
  EXPECT_LE(most, 3);
  EXPECT_GE(most, 2);
}

// One item's error or crash is that item's outcome; the other items still return theirs.
TEST(ChildProcess, OneChildsErrorIsItsOwnOutcome) {
  const std::vector<ChildOutcome> out = run_in_child_processes(4, 2, [](std::size_t i) -> std::string {
    if (i == 1) throw SpecError("w.json", "/model/layers", "expected an integer >= 1, got 0");
    if (i == 2) std::raise(SIGKILL);
    return "item " + std::to_string(i);
  });
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].get(), "item 0");
  EXPECT_EQ(out[3].get(), "item 3");
  try {
    out[1].get();
    FAIL() << "expected a SpecError";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.json_path(), "/model/layers");
  }
  try {
    out[2].get();
    FAIL() << "expected a SimulationError";
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("signal 9"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(run_in_child_processes(0, 2, [](std::size_t) { return std::string(); }).empty());
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

// Output files are all or nothing: a failed write (a file-size limit standing in for a full disk,
// /dev/full) leaves the previous file intact and no temporary behind; outputs that are inputs or each
// other, or cannot be written, are refused before any work.
#include "sim/core/output_file.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../spec_error_of.hpp"
#include "sim/core/error.hpp"

namespace clustersim {
namespace {

namespace fs = std::filesystem;
using testing::spec_error_of;

// A fresh directory per test (ctest runs tests in parallel processes).
fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("clustersim_out_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int entries(const fs::path& d) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d))
    ++n;
  return n;
}

TEST(OutputFile, WritesTheWholeTextWithAPlainFilesMode) {
  const fs::path d = fresh_dir("whole");
  const fs::path f = d / "report.json";
  write_output_file(f.string(), "{\"a\": 1}\n", "report file");
  EXPECT_EQ(slurp(f), "{\"a\": 1}\n");
  EXPECT_EQ(entries(d), 1);  // no temporary left
  const mode_t mask = ::umask(0);
  ::umask(mask);
  const auto perms = static_cast<mode_t>(fs::status(f).permissions());
  EXPECT_EQ(perms, static_cast<mode_t>(0666 & ~mask));  // not mkstemp's 0600
}

TEST(OutputFile, AFailedWriteLeavesThePreviousFileIntact) {
  const fs::path d = fresh_dir("limit");
  const fs::path f = d / "timeline.json";
  { std::ofstream(f) << "previous, whole"; }
  // In a child: a file-size limit of 1024 bytes (RLIMIT_FSIZE, SIGXFSZ ignored) makes the write of
  // 64 KiB fail with EFBIG, as a full disk fails with ENOSPC.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{1024, 1024};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      write_output_file(f.string(), std::string(65536, 'x'), "timeline file");
    } catch (const SpecError& e) {
      ::_exit(e.message() == "cannot write the timeline file: File too large" ? 42 : 1);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 42);
  EXPECT_EQ(slurp(f), "previous, whole");
  EXPECT_EQ(entries(d), 1);  // the temporary was removed
}

TEST(OutputFile, ADeviceIsWrittenInPlaceAndAFullOneRefused) {
  write_output_file("/dev/null", "anything", "report file");  // not replaced by a rename
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_EQ(spec_error_of([] { write_output_file("/dev/full", "x", "report file"); }).message(),
            "cannot write the report file: No space left on device");
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
}

TEST(OutputFile, OutputsAreCheckedBeforeAnyWork) {
  const fs::path d = fresh_dir("check");
  const fs::path spec = d / "spec.json";
  { std::ofstream(spec) << "{}"; }
  const std::string out = (d / "out.json").string();
  check_output_paths({{out, "report file"}, {(d / "t.json").string(), "timeline file"}}, {spec.string(), "gpt3-1.3b"});

  SpecError e = spec_error_of([&] { check_output_paths({{spec.string(), "report file"}}, {spec.string()}); });
  EXPECT_EQ(e.file(), spec.string());
  EXPECT_EQ(e.message(), "cannot write the report file: it is the input " + spec.string() + " (it would be lost)");
  // The same file by another name (d/./out.json) is still the same output.
  e = spec_error_of([&] {
    check_output_paths({{out, "report file"}, {(d / "." / "out.json").string(), "timeline file"}}, {});
  });
  EXPECT_EQ(e.message(), "cannot write the timeline file: it is also the report file (one would overwrite the other)");
  e = spec_error_of([&] { check_output_paths({{(d / "missing" / "x.json").string(), "report file"}}, {}); });
  EXPECT_EQ(e.message(), "cannot write the report file: no such directory: " + (d / "missing").string());
  e = spec_error_of([&] { check_output_paths({{d.string(), "report file"}}, {}); });
  EXPECT_EQ(e.message(), "cannot write the report file: it is a directory");
  // Devices may take several outputs.
  check_output_paths({{"/dev/null", "report file"}, {"/dev/null", "timeline file"}}, {});
  EXPECT_EQ(entries(d), 1);  // checking wrote nothing
}

}  // namespace
}  // namespace clustersim

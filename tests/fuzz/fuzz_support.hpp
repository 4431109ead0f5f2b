#pragma once
// What every fuzz target shares: the outcome rule and a scratch file for the readers that take a path.
//
// A reader given arbitrary bytes may refuse them with the project's SpecError (or the CLI's
// UsageError): that is the expected outcome. Anything else that escapes (another exception, a crash,
// a sanitizer report, a hang, memory past libFuzzer's -rss_limit_mb) is a finding: the exception is
// printed and the process aborts, so libFuzzer saves the input as crash-*.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>

#include <unistd.h>

#include "sim/core/error.hpp"

namespace clustersim::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs `body`; SpecError (and the exception types listed in Expected...) are expected outcomes.
template <class... Expected, class Body>
void expect_only_spec_errors(Body&& body) {
  try {
    try {
      body();
    } catch (const SpecError&) {
    }
  } catch (const std::exception& e) {
    if ((... || (dynamic_cast<const Expected*>(&e) != nullptr))) return;
    std::fprintf(stderr, "fuzz finding: uncaught %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "fuzz finding: uncaught non-standard exception\n");
    std::abort();
  }
}

// The shape of the spec and trace targets: `parse(text, "fuzz.json")` on the bytes, then `use` on what it
// accepted (its writer, its derived quantities); both under expect_only_spec_errors. Returns 0, what
// LLVMFuzzerTestOneInput returns.
template <class Parse, class Use>
int parse_then_use(const std::uint8_t* data, std::size_t size, Parse&& parse, Use&& use) {
  expect_only_spec_errors([&] { use(parse(as_text(data, size), "fuzz.json")); });
  return 0;
}

// A private folder (mkdtemp: no guessable name) for this process's scratch files, removed at exit.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/clustersim-fuzz.XXXXXX";
    if (!mkdtemp(pattern.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Writes `bytes` to `name` in the folder (replacing it) and returns its path.
  std::string write(const std::string& name, std::string_view bytes) const {
    const std::string file = path_ + "/" + name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::fprintf(stderr, "fuzz harness: cannot write %s\n", file.c_str());
      std::abort();
    }
    return file;
  }

 private:
  std::string path_;
};

// One scratch folder per fuzzer process.
inline const ScratchDir& scratch() {
  static const ScratchDir dir;
  return dir;
}

}  // namespace clustersim::fuzz

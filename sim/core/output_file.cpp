#include "sim/core/output_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <unistd.h>

#include "sim/core/error.hpp"

namespace clustersim {

void write_output_file(const std::string& path, std::string_view text, std::string_view what) {
  namespace fs = std::filesystem;
  const auto fail = [&](const std::string& why) {
    throw SpecError(path, "", "cannot write the " + std::string(what) + ": " + why);
  };
  if (path.empty()) fail("no file name given");
  const fs::path target(path);
  if (fs::is_directory(target)) fail("it is a directory");
  // Beside the target (a rename does not cross file systems), named after this process so that two
  // writers of the same file do not share a temporary.
  const fs::path temp = target.parent_path() / ("." + target.filename().string() + ".tmp" + std::to_string(::getpid()));
  {
    std::ofstream f(temp, std::ios::binary | std::ios::trunc);
    if (!f) fail(std::strerror(errno));
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    f.close();  // flushes: a full disk shows here
    if (f.fail()) {
      const std::string why = std::strerror(errno);
      std::error_code ignored;
      fs::remove(temp, ignored);
      fail(why);
    }
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    fail(ec.message());
  }
}

}  // namespace clustersim

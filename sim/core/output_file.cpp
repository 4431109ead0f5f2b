#include "sim/core/output_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/core/error.hpp"

namespace clustersim {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& path, std::string_view what, const std::string& why) {
  throw SpecError(path, "", "cannot write the " + std::string(what) + ": " + why);
}

// Writes all of `text` to `fd`; false (errno set) on the first failed write.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The directory a file is created in ("." for a bare name).
fs::path directory_of(const fs::path& target) {
  return target.has_parent_path() ? target.parent_path() : fs::path(".");
}

// Two outputs naming one file: the same inode, or the same absolute, normalized path.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec) && !ec;
  const fs::path ca = fs::weakly_canonical(a, ec);
  if (ec) return false;
  const fs::path cb = fs::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

// An output that is an input: both exist (an input is a file that was read) and are one inode.
bool is_input(const std::string& output, const std::string& input) {
  std::error_code ec;
  return !input.empty() && fs::exists(output, ec) && fs::exists(input, ec) && fs::equivalent(output, input, ec) && !ec;
}

}  // namespace

void write_output_file(const std::string& path, std::string_view text, std::string_view what) {
  if (path.empty()) fail(path, what, "no file name given");
  const fs::path target(path);
  std::error_code ec;
  const fs::file_status status = fs::status(target, ec);
  if (fs::is_directory(status)) fail(path, what, "it is a directory");
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // A device or a pipe cannot be replaced by a rename (nor should /dev/null be): write in place.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(path, what, std::strerror(errno));
    const bool written = write_all(fd, text);
    const int write_errno = errno;
    if (::close(fd) != 0 && written) fail(path, what, std::strerror(errno));
    if (!written) fail(path, what, std::strerror(write_errno));
    return;
  }
  // Beside the target (a rename does not cross file systems); mkstemp picks an unused, unguessable
  // name and creates it exclusively with mode 0600.
  std::string temp = (directory_of(target) / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) fail(path, what, std::strerror(errno));
  const auto abandon = [&](int error) {
    ::unlink(temp.c_str());
    fail(path, what, std::strerror(error));
  };
  // The mode a plain create would give (0666 less the umask), not mkstemp's 0600.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (!write_all(fd, text) || ::fchmod(fd, 0666 & ~mask) != 0 || ::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    abandon(error);
  }
  if (::close(fd) != 0) abandon(errno);
  if (::rename(temp.c_str(), path.c_str()) != 0) abandon(errno);
}

void check_output_paths(const std::vector<OutputPath>& outputs, const std::vector<std::string>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const OutputPath& o = outputs[i];
    if (o.path.empty()) fail(o.path, o.what, "no file name given");
    std::error_code ec;
    const fs::path target(o.path);
    const fs::file_status status = fs::status(target, ec);
    if (fs::is_directory(status)) fail(o.path, o.what, "it is a directory");
    if (!fs::exists(status) || fs::is_regular_file(status)) {
      const fs::path dir = directory_of(target);
      if (!fs::is_directory(dir, ec)) fail(o.path, o.what, "no such directory: " + dir.string());
      if (::access(dir.c_str(), W_OK | X_OK) != 0)
        fail(o.path, o.what, "the directory " + dir.string() + " is not writable: " + std::strerror(errno));
    } else if (::access(o.path.c_str(), W_OK) != 0) {
      fail(o.path, o.what, std::strerror(errno));
    }
    if (fs::exists(status) && !fs::is_regular_file(status)) continue;  // /dev/null may take several
    for (const std::string& in : inputs)
      if (is_input(o.path, in)) fail(o.path, o.what, "it is the input " + in + " (it would be lost)");
    for (std::size_t j = 0; j < i; ++j)
      if (same_file(o.path, outputs[j].path))
        fail(o.path, o.what, "it is also the " + outputs[j].what + " (one would overwrite the other)");
  }
}

}  // namespace clustersim

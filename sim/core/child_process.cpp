#include "sim/core/child_process.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "sim/core/error.hpp"

namespace clustersim {
namespace {

// Wire format, child to parent: one tag byte then the payload.
//   'R' result text | 'S' file \0 json_path \0 message | 'E' message (SimulationError) | 'X' message
constexpr char kResult = 'R';
constexpr char kSpecError = 'S';
constexpr char kSimulationError = 'E';
constexpr char kOtherError = 'X';

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // parent went away; nothing sensible left to do in the child
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string read_all(int fd) {
  std::string out;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string encode_child_outcome(const std::function<std::string()>& work) {
  try {
    return std::string(1, kResult) + work();
  } catch (const SpecError& e) {
    return std::string(1, kSpecError) + e.file() + '\0' + e.json_path() + '\0' + e.message();
  } catch (const SimulationError& e) {
    return std::string(1, kSimulationError) + e.what();
  } catch (const std::exception& e) {
    return std::string(1, kOtherError) + e.what();
  } catch (...) {
    return std::string(1, kOtherError) + "unknown exception";
  }
}

}  // namespace

std::string run_in_child_process(const std::function<std::string()>& work) {
  int fds[2];
  if (::pipe(fds) != 0) throw SimulationError(std::string("pipe() failed: ") + std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw SimulationError(std::string("fork() failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // The child dies with its parent (a killed CLI or kernel leaves no simulation running and
    // writing); a parent gone before the prctl is seen by getppid.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    // Crash signals get their default action: a handler inherited from the parent (Python's
    // faulthandler, say) would report the child's crash as the parent's.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
    ::close(fds[0]);
    const std::string outcome = encode_child_outcome(work);
    write_all(fds[1], outcome);
    ::close(fds[1]);
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(0);  // skip atexit handlers (SimGrid's, an embedding interpreter's)
  }
  ::close(fds[1]);
  std::string message = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    throw SimulationError("the simulation process was killed by signal " + std::to_string(sig) + " (" +
                          strsignal(sig) + ")");
  }
  if (message.empty()) throw SimulationError("the simulation process exited without a result");
  const char tag = message[0];
  std::string payload = message.substr(1);
  switch (tag) {
    case kResult: return payload;
    case kSpecError: {
      const auto a = payload.find('\0');
      const auto b = payload.find('\0', a + 1);
      throw SpecError(payload.substr(0, a), payload.substr(a + 1, b - a - 1), payload.substr(b + 1));
    }
    case kSimulationError: throw SimulationError(payload);
    default: throw SimulationError("the simulation failed: " + payload);
  }
}

}  // namespace clustersim

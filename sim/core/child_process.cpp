#include "sim/core/child_process.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

// One child at work: its item, its process and the read end of its pipe, and what it sent so far.
struct RunningChild {
  std::size_t index = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string message;
};

// Forks the child of item `index`. The child closes the read ends of its running siblings' pipes (it
// has no use for them) and dies with its parent.
RunningChild start_child(std::size_t index, const std::function<std::string(std::size_t)>& work,
                         const std::vector<RunningChild>& running) {
  int fds[2];
  if (::pipe(fds) != 0) throw SimulationError(std::string("pipe() failed: ") + std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int fork_errno = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw SimulationError(std::string("fork() failed: ") + std::strerror(fork_errno));
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
    for (const RunningChild& sibling : running) ::close(sibling.fd);
    const std::string outcome = encode_child_outcome([&] { return work(index); });
    write_all(fds[1], outcome);
    ::close(fds[1]);
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(0);  // skip atexit handlers (SimGrid's, an embedding interpreter's)
  }
  ::close(fds[1]);
  return {index, pid, fds[0], {}};
}

// Reaps a child whose pipe reached its end and decodes what it sent.
ChildOutcome finish_child(RunningChild& child) {
  ::close(child.fd);
  child.fd = -1;
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  ChildOutcome outcome;
  try {
    if (WIFSIGNALED(status)) {
      const int sig = WTERMSIG(status);
      throw SimulationError("the simulation process was killed by signal " + std::to_string(sig) + " (" +
                            strsignal(sig) + ")");
    }
    const std::string& message = child.message;
    if (message.empty()) throw SimulationError("the simulation process exited without a result");
    std::string payload = message.substr(1);
    switch (message[0]) {
      case kResult: outcome.result = std::move(payload); break;
      case kSpecError: {
        const auto a = payload.find('\0');
        const auto b = payload.find('\0', a + 1);
        throw SpecError(payload.substr(0, a), payload.substr(a + 1, b - a - 1), payload.substr(b + 1));
      }
      case kSimulationError: throw SimulationError(payload);
      default: throw SimulationError("the simulation failed: " + payload);
    }
  } catch (...) {
    outcome.error = std::current_exception();
  }
  return outcome;
}

// Kills and reaps the children still running (the caller is leaving with an exception).
void abandon(std::vector<RunningChild>& running) {
  for (RunningChild& child : running) {
    ::kill(child.pid, SIGKILL);
    ::close(child.fd);
    while (::waitpid(child.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  running.clear();
}

}  // namespace

const std::string& ChildOutcome::get() const {
  if (error) std::rethrow_exception(error);
  return result;
}

std::vector<ChildOutcome> run_in_child_processes(std::size_t count, std::size_t jobs,
                                                 const std::function<std::string(std::size_t)>& work) {
  jobs = std::max<std::size_t>(jobs, 1);
  std::vector<ChildOutcome> outcomes(count);
  std::vector<RunningChild> running;
  std::size_t next = 0;
  try {
    while (next < count || !running.empty()) {
      for (; next < count && running.size() < jobs; ++next) {
        try {
          running.push_back(start_child(next, work, running));
        } catch (const SimulationError&) {
          outcomes[next].error = std::current_exception();  // this item could not start; the others go on
        }
      }
      if (running.empty()) continue;
      std::vector<pollfd> polled;
      polled.reserve(running.size());
      for (const RunningChild& child : running) polled.push_back({child.fd, POLLIN, 0});
      if (::poll(polled.data(), polled.size(), -1) < 0) {
        if (errno == EINTR) continue;
        throw SimulationError(std::string("poll() failed: ") + std::strerror(errno));
      }
      // Read what each ready child sent; a child whose pipe ended is finished (from the back, so
      // erasing keeps the indices of the ones not yet looked at).
      for (std::size_t k = polled.size(); k-- > 0;) {
        if (polled[k].revents == 0) continue;
        char buf[1 << 16];
        const ssize_t n = ::read(running[k].fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0) {
          running[k].message.append(buf, static_cast<std::size_t>(n));
          continue;
        }
        outcomes[running[k].index] = finish_child(running[k]);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
  } catch (...) {
    abandon(running);
    throw;
  }
  return outcomes;
}

std::string run_in_child_process(const std::function<std::string()>& work) {
  return run_in_child_processes(1, 1, [&](std::size_t) { return work(); }).front().get();
}

}  // namespace clustersim

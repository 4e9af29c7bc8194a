#include "sim/simgrid/isolate.hpp"

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>

#include "sim/heap_meter.hpp"
#include "sim/resources.hpp"

namespace cubesim {

namespace {
void write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t w = ::write(fd, s.data() + off, s.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    off += static_cast<std::size_t>(w);
  }
}

/// The child's end of the pipe, for the heap meter's handler.
int g_child_fd = -1;

/// In the child, an allocation past the budget ends the child with the budget error: SimGrid's
/// run is not ours to unwind (an exception through its actors aborts it).
[[noreturn]] void child_over_budget(std::int64_t live, std::int64_t asked, std::int64_t limit) {
  write_all(g_child_fd, "Ethe memory budget of " + format_bytes(memory_budget()) +
                            " is spent in the SimGrid process: it asked for " + format_bytes(asked) + " more with " +
                            format_bytes(live) + " held on the heap, which may hold " + format_bytes(limit) +
                            " (--max-memory sets the budget)");
  ::close(g_child_fd);
  ::_exit(3);
}

/// A process's resident bytes (/proc/PID/statm); 0 where it cannot be read.
std::int64_t resident_of(pid_t pid) {
  std::ifstream statm("/proc/" + std::to_string(pid) + "/statm");
  std::int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE));
}
}  // namespace

IsolatedResult run_isolated(const std::function<std::string()>& body, std::int64_t max_resident_bytes) {
  IsolatedResult r;
  int fds[2];
  if (::pipe(fds) != 0) {
    r.error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return r;
  }
  // Nothing buffered may be written twice, once by each process.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    r.error = std::string("cannot fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return r;
  }
  if (pid == 0) {
    ::close(fds[0]);
    // SIGINT and SIGTERM end the child at once (the parent's handlers, which only ask a run to
    // stop at its next check, do not reach into SimGrid's run): the parent then sees it die.
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    std::string out;
    int code = 0;
    g_child_fd = fds[1];
    try {
      const heap::HeapBudgetScope scope(max_resident_bytes > 0 ? child_over_budget : nullptr);
      out = "O";
      out += body();
    } catch (const std::exception& e) {
      out = std::string("E") + e.what();
      code = 3;
    } catch (...) {
      out = "Ean unknown exception";
      code = 3;
    }
    write_all(fds[1], out);
    ::close(fds[1]);
    std::fflush(nullptr);
    ::_exit(code);  // no destructors, no atexit handlers: SimGrid's state dies with the child
  }
  ::close(fds[1]);
  std::string got;
  char buf[65536];
  std::int64_t over = 0;  // the child's resident bytes when it was killed for passing the budget
  std::int64_t rss = 0;   // its last reading
  for (;;) {
    if (max_resident_bytes > 0) {
      // Every 2 ms, or as soon as the child writes: its resident memory against the budget (a
      // reading is about 10 us; SimGrid grows by a few MiB in 5 ms). Past three quarters of the
      // budget every 200 us: at 2 ms a child growing fast passed a 64 MiB budget by 11-14 %
      // before it was read (Memory.TheSimGridProcessIsHeldToTheBudget, 3 runs of 4 on an idle
      // machine), where the budget allows 10 %.
      pollfd p{fds[0], POLLIN, 0};
      const timespec wait{0, 4 * rss > 3 * max_resident_bytes ? 200'000 : 2'000'000};
      const int ready = ::ppoll(&p, 1, &wait, nullptr);
      if (ready < 0 && errno != EINTR) break;
      if (ready <= 0) {
        rss = resident_of(pid);
        if (rss > max_resident_bytes) {
          over = rss;
          ::kill(pid, SIGKILL);
          break;
        }
        continue;
      }
    }
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  struct rusage ru {};
  while (::wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.max_rss_kib = ru.ru_maxrss;
  if (over > 0) {
    r.error = "the memory budget of " + format_bytes(max_resident_bytes) + " is spent by the SimGrid process (" +
              format_bytes(over) + " resident; it was stopped) (--max-memory sets the budget)";
    return r;
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    r.error = "the SimGrid process died of signal " + std::to_string(sig) + " (" + strsignal(sig) + ")" +
              (sig == SIGKILL ? ", perhaps for lack of memory" : "");
    return r;
  }
  if (got.empty()) {
    r.error = "the SimGrid process exited with status " + std::to_string(WEXITSTATUS(status)) + " and no result";
    return r;
  }
  if (got.front() == 'O') {
    r.ok = true;
    r.output = got.substr(1);
  } else {
    r.error = got.substr(1);
  }
  return r;
}

}  // namespace cubesim

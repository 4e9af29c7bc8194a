#include "sim/simgrid/isolate.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

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
}  // namespace

IsolatedResult run_isolated(const std::function<std::string()>& body) {
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
    try {
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
  for (;;) {
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

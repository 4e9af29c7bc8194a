#include "app/io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "machines/json_text.hpp"
#include "sim/input_error.hpp"

namespace cubesim {

void check_readable_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::string jsons;  // a folder where a file belongs: name what it holds that would do
    std::size_t count = 0;
    for (const auto& e : std::filesystem::directory_iterator(path, ec))
      if (e.path().extension() == ".json" && ++count <= 3)
        jsons += (jsons.empty() ? "" : ", ") + e.path().filename().string();
    throw InputError(
        path, "",
        "is a folder, not a file" +
            (count == 0 ? std::string() : " (it holds " + jsons + (count > 3 ? ", ..." : "") + ": name one of them)"));
  }
  if (!std::filesystem::exists(path, ec)) throw InputError(path, "", "cannot read the file: there is no such file");
}

std::string read_text_file(const std::string& path) {
  check_readable_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot read the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

namespace fs = std::filesystem;

/// The temporary name of `target` for process `pid`: ".<name>.tmp<pid>" beside it.
fs::path temporary_name(const fs::path& target, long pid) {
  std::string name = ".";
  name.append(target.filename().string()).append(".tmp").append(std::to_string(pid));
  return (target.has_parent_path() ? target.parent_path() : fs::path(".")) / name;
}

/// The pid at the end of `name` after `marker` ("report.json.tmp123" -> 123), or -1.
long pid_after(const std::string& name, const std::string& marker) {
  const auto at = name.rfind(marker);
  if (at == std::string::npos || at + marker.size() >= name.size()) return -1;
  long pid = 0;
  for (std::size_t i = at + marker.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || pid > 1'000'000'000) return -1;
    pid = pid * 10 + (name[i] - '0');
  }
  return pid;
}

/// A process that left files behind and is gone (signal 0 finds no such process).
bool dead(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  const fs::path target(path);
  const fs::path tmp = temporary_name(target, ::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
    f << content;
    f.flush();
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, target);
}

OutputDir::OutputDir(std::string dir, std::string option) : dir_(std::move(dir)) {
  if (dir_.empty()) return;
  std::error_code ec;
  const fs::path d(dir_);
  if (fs::exists(d, ec) && !fs::is_directory(d, ec))
    throw InputError("", option, dir_ + " exists and is not a folder: name a folder (made if missing)");
  const fs::path norm = fs::path(dir_).lexically_normal();
  const fs::path base = norm.filename().empty() ? norm.parent_path() : norm;
  const fs::path above = base.has_parent_path() ? base.parent_path() : fs::path(".");
  std::string marker = ".";
  marker.append(base.filename().string()).append(".staging-");
  // What killed runs left: their staging folders beside the folder, temporary files inside it.
  for (const fs::path& where : {above, base}) {
    if (!fs::is_directory(where, ec)) continue;
    for (const auto& e : fs::directory_iterator(where, ec)) {
      const std::string n = e.path().filename().string();
      const bool staging = where == above && n.rfind(marker, 0) == 0 && dead(pid_after(n, ".staging-"));
      const bool temporary = where == base && n.size() > 1 && n[0] == '.' && dead(pid_after(n, ".tmp"));
      if (staging || temporary) fs::remove_all(e.path(), ec);
    }
  }
  staging_ = (above / (marker + std::to_string(::getpid()))).string();
  fs::remove_all(staging_, ec);
  fs::create_directories(staging_, ec);
  if (ec) throw InputError("", option, "cannot write beside " + dir_ + ": " + ec.message());
}

OutputDir::~OutputDir() {
  if (staging_.empty()) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

std::string OutputDir::staged(const std::string& relative) const {
  if (!active()) throw std::logic_error("OutputDir: no --out folder");
  return (fs::path(staging_) / relative).string();
}

void OutputDir::write(const std::string& relative, const std::string& content) const {
  const fs::path p = staged(relative);
  fs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << content;
  f.flush();
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

void OutputDir::commit(const std::string& last) {
  if (!active() || committed_) return;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(staging_))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), staging_));
  std::sort(files.begin(), files.end());
  std::stable_partition(files.begin(), files.end(), [&](const fs::path& f) { return f != fs::path(last); });
  fs::create_directories(dir_);
  std::error_code gone;
  for (const std::string& d : drops_) fs::remove(fs::path(dir_) / d, gone);
  for (const fs::path& f : files) {
    const fs::path to = fs::path(dir_) / f;
    fs::create_directories(to.parent_path());
    fs::rename(fs::path(staging_) / f, to);
  }
  committed_ = true;
  std::error_code ec;
  fs::remove_all(staging_, ec);
  staging_.clear();
}

namespace {

std::runtime_error io_error(const std::string& what, const std::string& path) {
  return std::runtime_error("cannot " + what + " " + path + ": " + std::strerror(errno));
}

/// Puts a folder's entries on disk (a file made in it survives a power cut).
void sync_folder(const fs::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

AppendFile::AppendFile(const std::string& path, std::uintmax_t keep) : path_(path) {
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  const bool existed = fs::exists(p, ec);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw io_error("open", path);
  if (::ftruncate(fd_, static_cast<off_t>(keep)) != 0) {
    const auto e = io_error("cut", path);
    ::close(fd_);
    fd_ = -1;
    throw e;
  }
  (void)::fdatasync(fd_);
  if (!existed) sync_folder(p.parent_path());
  syncer_ = std::thread([this] { sync_loop(); });
}

AppendFile::~AppendFile() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  wake_.notify_one();
  syncer_.join();  // it syncs what is pending first
  ::close(fd_);
}

void AppendFile::sync_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return pending_ || closing_; });
    if (!pending_ && closing_) return;
    pending_ = false;
    lock.unlock();
    const int rc = ::fdatasync(fd_);  // every record written before this point
    const int e = errno;
    lock.lock();
    if (rc != 0 && sync_errno_ == 0) sync_errno_ = e;
  }
}

void AppendFile::append(const std::string& record) {
  {
    std::lock_guard lock(mutex_);
    if (sync_errno_ != 0) {
      errno = sync_errno_;
      throw io_error("sync", path_);
    }
  }
  const char* data = record.data();
  std::size_t left = record.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw io_error("append to", path_);
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  {
    std::lock_guard lock(mutex_);
    pending_ = true;
  }
  wake_.notify_one();
}

ojson parse_json_text(const std::string& text, const std::string& file) { return parse_json(text, file); }

ojson read_json_file(const std::string& path) { return parse_json_text(read_text_file(path), path); }

}  // namespace cubesim

#pragma once
/// File input and output for the application: whole-file reads, atomic writes, JSON with line
/// and column in its syntax errors. Formats (traces/, machines/) work on text; only the
/// application touches files.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace cubesim {

using ojson = nlohmann::ordered_json;

/// InputError when `path` is a folder (naming the JSON files it holds) or does not exist.
void check_readable_file(const std::string& path);
/// Reads a whole file. Throws InputError ("cannot read the file", or check_readable_file's).
std::string read_text_file(const std::string& path);
/// Writes `content` to `path` atomically: a temporary file in the same folder, then a rename.
void write_file_atomic(const std::string& path, const std::string& content);
/// An --out folder that changes all at once or not at all. Files are written into a staging
/// folder beside it (`.<name>.staging-<pid>`) and moved in by commit(): a run that fails, throws
/// or is killed leaves the folder as it was. The constructor refuses (InputError, exit 2) a path
/// that names something other than a folder, before anything runs, and removes the stagings and
/// temporary files that killed runs left (their process is gone).
class OutputDir {
 public:
  /// `dir` empty: no output; every call but commit() is then an error.
  explicit OutputDir(std::string dir, std::string option = "--out");
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  ~OutputDir();
  [[nodiscard]] bool active() const { return !dir_.empty(); }
  /// The staged path of `relative` (e.g. "traces"), for writers that make their own files.
  [[nodiscard]] std::string staged(const std::string& relative) const;
  /// Stages one file.
  void write(const std::string& relative, const std::string& content) const;
  /// Removes `relative` from the folder at commit (a file the new contents make stale), first.
  void drop(const std::string& relative) { drops_.push_back(relative); }
  /// Moves every staged file into the folder, replacing files of the same name and keeping
  /// others; `last` (the report, which describes the rest) moves last.
  void commit(const std::string& last);

 private:
  std::string dir_, staging_;
  std::vector<std::string> drops_;
  bool committed_ = false;
};

/// A file that grows one record at a time. append() writes the record whole before it returns,
/// so a SIGKILL or the OOM killer leaves every record appended (the kernel has it), the last one
/// perhaps torn; a thread of its own then syncs it to the disk (fdatasync), several records that
/// came while it synced the last in one go, so that a power cut loses at most the records of
/// the last sync's time and a sweep of millisecond points does not wait for the disk at each.
/// The destructor syncs what is left. The sweeps' journal (app/resume.hpp).
class AppendFile {
 public:
  /// Opens `path` for appending, its folder made if missing, the file made if missing and cut to
  /// its first `keep` bytes (0: empty; a torn record's bytes are dropped so that the next one
  /// starts a line). Throws std::runtime_error naming the file.
  AppendFile(const std::string& path, std::uintmax_t keep);
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;
  ~AppendFile();
  /// Appends `record` (synced soon after, as above). Throws std::runtime_error, also when an
  /// earlier record could not be synced.
  void append(const std::string& record);
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  void sync_loop();
  std::string path_;
  int fd_ = -1;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool pending_ = false, closing_ = false;
  int sync_errno_ = 0;
  std::thread syncer_;
};

/// Parses JSON text; a syntax error is an InputError naming `file`, the line and the column.
ojson parse_json_text(const std::string& text, const std::string& file);
/// Reads and parses a JSON file. Throws InputError.
ojson read_json_file(const std::string& path);

}  // namespace cubesim

#pragma once
// Files as salient reads and writes them, for its clients too: whole-file reads with errors naming
// the path, and outputs put in place whole (a temporary beside the file, then rename(2)), so an
// interrupted or failed run never leaves a half-written output behind.
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace salient {

std::string read_file(const std::string& path);  // a NotFoundError naming a missing path
bool file_exists(const std::string& path);
bool dir_exists(const std::string& path);
void make_dirs(const std::string& path);
std::string join_path(const std::string& a, const std::string& b);

// Writes `data` to `path` via a temporary (temporary_path) and rename(2).
void write_file_atomic(const std::string& path, const std::string& data);
void write_file_atomic(const std::string& path, const void* data, size_t size);

// Where an AtomicFile of this process writes `path` before the rename:
// PATH.salient-tmp.<host>.<pid>.
std::string temporary_path(const std::string& path);

// A file written as a stream and put in place whole: the bytes go to the temporary as they come,
// and commit() syncs them, renames the temporary onto PATH and syncs the directory. A file that is
// never committed (an error, an exception) is removed, so PATH holds its old content or the
// complete new one, never part of it.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();  // removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(const void* data, size_t size);
  void write(const std::string& text) { write(text.data(), text.size()); }
  void commit();

 private:
  [[noreturn]] void failed(int err);
  std::string path_, tmp_;
  std::FILE* file_ = nullptr;
};

// A command's output: to stdout ("" or "-"), collected and printed by commit(), or streamed into
// a file put in place whole by commit() (AtomicFile), so a failure midway leaves no partial output
// file and a long output does not have to fit in memory.
class Output {
 public:
  explicit Output(const std::string& path);
  void line(const nlohmann::json& j) { text(j.dump() + '\n'); }
  void text(const std::string& s);
  void commit();

 private:
  std::unique_ptr<AtomicFile> file_;  // none: stdout
  std::string buffer_;
};

// Text made safe inside HTML/SVG/XML content and attribute values (&, <, >, ").
std::string html_escape(const std::string& s);

// "a, b,,c" → {"a", "b", "c"}: comma-separated names with spaces and empty items dropped.
std::vector<std::string> split_list(const std::string& s);

}  // namespace salient

#pragma once
// A file written as a stream and put in place whole: the bytes go to a temporary beside PATH
// (temporary_path: PATH.salient-tmp.<host>.<pid>) as they come,
// and commit() syncs them, renames the temporary onto PATH and syncs the directory. A file that
// is never committed (an error, an exception) is removed, so PATH holds its old content or the
// complete new one, never part of it. write_file_atomic is this for a file already in memory.
#include <cstdio>
#include <string>

namespace salient {

// Where an AtomicFile of this process writes `path` before the rename.
std::string temporary_path(const std::string& path);

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

// A directory of files replaced as a whole: a training checkpoint, whose weights, optimizer state
// and trainer state must be of one step. The files are written into DIR.new/, and commit() swaps
// it in (DIR → DIR.old, DIR.new → DIR, DIR.old removed). recover_dir(DIR), called before DIR is
// read, undoes what a crash left between the two renames, so DIR is always one complete set: the
// old or the new. (Each file written atomically is not enough: a crash after the weights but
// before the state would resume new weights with the old state.)
class StagedDir {
 public:
  explicit StagedDir(const std::string& dir);  // an empty DIR.new
  const std::string& path() const { return staging_; }  // where the files go
  void commit();

 private:
  std::string dir_, staging_;
};
void recover_dir(const std::string& dir);

}  // namespace salient

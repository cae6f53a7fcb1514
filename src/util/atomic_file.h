#pragma once
// A file written as a stream and put in place whole: the bytes go to PATH.tmp.<pid> as they come,
// and commit() syncs them, renames the temporary onto PATH and syncs the directory. A file that
// is never committed (an error, an exception) is removed, so PATH holds its old content or the
// complete new one, never part of it. write_file_atomic is this for a file already in memory.
#include <cstdio>
#include <string>

namespace salient {

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

}  // namespace salient

#pragma once
// A JSON-lines file that a resumable run appends to, record by record (benchmark results, SST
// evaluation records). Each write is flushed to the OS and checked: a full disk is a one-line
// error naming the file. No fsync per record: after a power loss the file may lack its last
// records or end inside one; the readers drop such a tail and recompute it. (Whole files go
// through write_file_atomic, which does fsync.)
#include <cstdio>
#include <string>

namespace salient {

class AppendFile {
 public:
  explicit AppendFile(const std::string& path);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;
  void write(const std::string& text);

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace salient

#pragma once
// Outputs put in place whole: AtomicFile and write_file_atomic are public (salient/files.h); a
// directory of files replaced as a whole (StagedDir) is the library's own.
#include <string>

#include "salient/files.h"

namespace salient {

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

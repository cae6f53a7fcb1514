#pragma once
// For harnesses whose parsers read files: the input's bytes written plainly into a scratch
// directory in memory (/dev/shm where there is one). Not write_file_atomic: its fsyncs made a
// harness about five times slower, and fuzz inputs need not survive a power loss.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace fuzz {

// A directory of this process's own, made once.
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    struct stat st;
    const std::string base = ::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
    const std::string d = base + "/salient_fuzz_" + std::to_string(::getpid());
    ::mkdir(d.c_str(), 0700);
    return d;
  }();
  return dir;
}

inline void write_plain(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) std::abort();  // the scratch directory itself failed: not a finding of the parser
}

}  // namespace fuzz

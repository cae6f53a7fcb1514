#include "util/io.h"

#include "util/atomic_file.h"
#include "util/append_file.h"
#include "util/error.h"
#include "util/model_folder.h"
#include "salient/error.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

namespace salient {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in && errno == ENOENT) fail_not_found("{}: cannot open ({})", path, std::strerror(errno));
  if (!in) fail("{}: cannot open ({})", path, std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) fail("{}: read error", path);
  return ss.str();
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool dir_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void make_dirs(const std::string& path) {
  if (path.empty() || dir_exists(path)) return;
  auto slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) make_dirs(path.substr(0, slash));
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    fail("{}: cannot create directory ({})", path, std::strerror(errno));
}

std::vector<std::string> list_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file()) out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string join_path(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (!b.empty() && b[0] == '/') return b;
  return a.back() == '/' ? a + b : a + "/" + b;
}

std::string read_gzip_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) fail("{}: cannot open ({})", path, std::strerror(errno));
  std::string out;
  char buf[1 << 16];
  for (;;) {
    int n = gzread(f, buf, sizeof(buf));
    if (n < 0) {
      int code = 0;
      std::string msg = gzerror(f, &code);
      gzclose(f);
      fail("{}: gzip read error ({})", path, msg);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  // gzclose reports a stream that ended mid-member (a truncated file) as Z_BUF_ERROR.
  if (gzclose(f) == Z_BUF_ERROR) fail("{}: truncated gzip data", path);
  return out;
}

// Via temporary_path(path) and rename(2): a reader (or a crash) sees the old file or the new one, never
// a part. The data is fsync'ed before the rename and the directory after it, so a file this
// returned from survives a power loss too. A failed write (a full disk) is a one-line error naming
// `path`; the old file stays and no temporary is left.
namespace {

void sync_dir(const std::string& dir) {
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) fail("{}: cannot remove ({})", path, ec.message());
}

void rename_or_fail(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) fail("{}: cannot rename to {} ({})", from, to, std::strerror(errno));
}

}  // namespace

namespace {

// ".salient-tmp.<host>." : what every temporary of this host is named with, before the pid.
const std::string& temporary_marker() {
  static const std::string marker = [] {
    char host[256] = {0};
    if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "localhost");
    for (char* c = host; *c; ++c)
      if (*c == '/') *c = '_';
    return std::string(".salient-tmp.") + host + ".";
  }();
  return marker;
}

}  // namespace

std::string temporary_path(const std::string& path) { return path + temporary_marker() + std::to_string(::getpid()); }

Output::Output(const std::string& path) {
  if (!path.empty() && path != "-") file_ = std::make_unique<AtomicFile>(path);
}

void Output::text(const std::string& s) {
  if (file_) file_->write(s);
  else buffer_ += s;
}

void Output::commit() {
  if (file_) {
    file_->commit();
  } else {
    std::fwrite(buffer_.data(), 1, buffer_.size(), stdout);
    std::fflush(stdout);
  }
}

AtomicFile::AtomicFile(const std::string& path) : path_(path), tmp_(temporary_path(path)) {
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (!file_) fail("{}: cannot write ({})", path_, std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (file_) {
    std::fclose(file_);
    std::remove(tmp_.c_str());
  }
}

void AtomicFile::failed(int err) {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  std::remove(tmp_.c_str());
  fail("{}: write failed ({})", path_, std::strerror(err != 0 ? err : EIO));
}

void AtomicFile::write(const void* data, size_t size) {
  if (!file_) fail("{}: written after commit", path_);
  errno = 0;
  if (size > 0 && std::fwrite(data, 1, size, file_) != size) failed(errno);
}

void AtomicFile::commit() {
  if (!file_) fail("{}: committed twice", path_);
  errno = 0;
  if (std::fflush(file_) != 0) failed(errno);
  if (::fsync(::fileno(file_)) != 0) failed(errno);  // the data is on disk before the name points at it
  errno = 0;
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (closed != 0) failed(errno);
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp_.c_str());
    fail("{}: cannot rename temporary file into place ({})", path_, std::strerror(err));
  }
  // The rename itself is durable once the directory is synced (best effort: some file systems
  // refuse to open or sync a directory, and the file is already complete).
  sync_dir(std::filesystem::path(path_).parent_path().string());
}

void remove_stale_temporaries(const std::string& dir) {
  if (!dir_exists(dir)) return;
  const std::string& marker = temporary_marker();
  std::error_code ec;
  std::vector<std::string> stale;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const std::string name = it->path().filename().string();
    const size_t mark = name.rfind(marker);
    if (mark == std::string::npos) continue;
    const std::string pid = name.substr(mark + marker.size());
    if (pid.empty() || pid.size() > 9 || !std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    // kill(pid, 0) fails with ESRCH only when no such process exists (EPERM: it runs, as another user).
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) == 0 || errno != ESRCH) continue;
    stale.push_back(it->path().string());
  }
  if (ec) fail("{}: cannot list ({})", dir, ec.message());
  for (const std::string& path : stale)
    if (std::remove(path.c_str()) != 0 && errno != ENOENT) fail("{}: cannot remove ({})", path, std::strerror(errno));
}

StagedDir::StagedDir(const std::string& dir) : dir_(dir), staging_(dir + ".new") {
  remove_tree(staging_);  // a set a crash left half-written
  make_dirs(staging_);
}

void StagedDir::commit() {
  const std::string old = dir_ + ".old";
  remove_tree(old);
  if (dir_exists(dir_)) rename_or_fail(dir_, old);
  rename_or_fail(staging_, dir_);
  sync_dir(std::filesystem::path(dir_).parent_path().string());
  remove_tree(old);
}

void recover_dir(const std::string& dir) {
  const std::string old = dir + ".old";
  // Crashed between commit's renames: DIR.new is complete (commit starts only once it is), but
  // the previous set is as good a place to resume from, and the one known to be whole.
  if (!dir_exists(dir) && dir_exists(old)) rename_or_fail(old, dir);
  remove_tree(old);
  remove_tree(dir + ".new");
}

void write_file_atomic(const std::string& path, const void* data, size_t size) {
  AtomicFile file(path);
  file.write(data, size);
  file.commit();
}

AppendFile::AppendFile(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "ab")) {
  if (!file_) fail("{}: cannot open for appending ({})", path, std::strerror(errno));
}

AppendFile::~AppendFile() {
  if (file_) std::fclose(file_);
}

void AppendFile::write(const std::string& text) {
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0)
    fail("{}: write failed ({})", path_, std::strerror(errno != 0 ? errno : EIO));
}

void write_file_atomic(const std::string& path, const std::string& data) {
  write_file_atomic(path, data.data(), data.size());
}

nlohmann::json parse_json_file(const std::string& path) {
  std::string text = read_file(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail("{}: invalid JSON at byte {}", path, e.byte);
  } catch (const nlohmann::json::exception&) {  // e.g. a number beyond double's range
    fail("{}: invalid JSON (a number out of range)", path);
  }
}

nlohmann::json parse_json_line(const std::string& line, const std::string& source, size_t line_no) {
  try {
    return nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    fail("{}:{}: invalid JSON at column {}", source, line_no, e.byte);
  } catch (const nlohmann::json::exception&) {
    fail("{}:{}: invalid JSON (a number out of range)", source, line_no);
  }
}

std::string shared_dir() {
  if (const char* env = std::getenv("SALIENT_SHARED"); env && *env) return env;
  char buf[4096];
  if (!::getcwd(buf, sizeof(buf))) return "";
  std::string dir = buf;
  while (!dir.empty()) {
    std::string cand = join_path(dir, "shared");
    if (dir_exists(join_path(cand, "data")) || dir_exists(join_path(cand, "fixtures"))) return cand;
    auto slash = dir.find_last_of('/');
    if (slash == std::string::npos) break;
    dir = dir.substr(0, slash);
  }
  return "";
}

std::string shared_data_dir() {
  const std::string s = shared_dir();
  return s.empty() ? "" : join_path(s, "data");
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return out;
}

std::string show_json(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

std::string differing_keys(const nlohmann::json& before, const nlohmann::json& now) {
  std::string out;
  auto add = [&](const std::string& key) { out += (out.empty() ? "" : ", ") + key; };
  if (before.is_object() && now.is_object()) {
    for (const auto& [key, value] : now.items())
      if (!before.contains(key) || before.at(key) != value) add(key);
    for (const auto& [key, value] : before.items())
      if (!now.contains(key)) add(key);
  }
  return out.empty() ? "fields" : out;
}

std::string weights_fingerprint(const std::string& model_dir) {
  const std::string path = resolve_model_folder(model_dir).weights;
  if (!file_exists(path)) return "none";
  const std::string bytes = read_file(path);
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ULL;
  return fmt::format("{} bytes, fnv1a {:016x}", bytes.size(), h);
}

}  // namespace salient

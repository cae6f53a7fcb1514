#include "text/sentencepiece.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "spm_shim.h"  // kSpmShim: the shim's shared object (src/text/sentencepiece_shim), embedded by CMake
#include "text/unicode.h"
#include "util/error.h"
#include "util/io.h"

namespace salient::spm {

namespace {

// The shim's functions (src/text/sentencepiece_shim/shim.cpp).
struct Shim {
  void* (*load)(const char*, size_t, char*, size_t);
  void (*free)(void*);
  int (*size)(const void*);
  const char* (*piece)(const void*, int, size_t*);
  int (*is_unknown)(const void*, int);
  long (*encode)(const void*, const char*, size_t, void (*)(void*, int, const char*, size_t, uint32_t, uint32_t), void*);
};

bool write_all(int fd, const unsigned char* data, size_t size) {
  size_t written = 0;
  while (written < size) {
    const ssize_t n = write(fd, data + written, size - written);
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

// Opens the embedded shim's bytes in a new link namespace: from an anonymous in-memory file, or,
// where that cannot be executed (vm.memfd_noexec, some SELinux policies), from a temporary file
// removed once loaded.
void* open_in_new_namespace(const std::string& path) { return dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL); }

void* load_embedded_shim(std::string* error) {
  std::string why = "cannot make an in-memory file";
  const int fd = memfd_create("salient-sentencepiece", MFD_CLOEXEC);
  if (fd >= 0) {
    void* handle = write_all(fd, kSpmShim, kSpmShim_size) ? open_in_new_namespace(fmt::format("/proc/self/fd/{}", fd))
                                                         : nullptr;
    close(fd);
    if (handle) return handle;
    const char* e = dlerror();
    why = e ? e : "write failed";
  }
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/salient-sentencepiece-XXXXXX";
  const int tmp = mkstemp(path.data());
  if (tmp >= 0) {
    const bool ok = write_all(tmp, kSpmShim, kSpmShim_size);
    close(tmp);
    void* handle = ok ? open_in_new_namespace(path) : nullptr;
    unlink(path.c_str());
    if (handle) return handle;
    const char* e = ok ? dlerror() : nullptr;
    why += fmt::format("; from a temporary file: {}", e ? e : "it could not be written");
  }
  *error = fmt::format("SentencePiece: cannot load its library ({}; Debian's libsentencepiece0 is needed)", why);
  return nullptr;
}

// Loads the embedded shim once, into a link namespace of its own (dlmopen): libsentencepiece and its
// protobuf, libstdc++ and libc there never meet LibTorch's libprotobuf nor a sanitizer's runtime
// (RTLD_DEEPBIND isolates less: the sanitizers refuse it, and a program's copy relocations of
// libstdc++'s data still reach the shim). Nothing allocated on one side is freed on the other: the shim owns its
// models and the caller copies every string out.
const Shim& shim() {
  static Shim s;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    void* handle = load_embedded_shim(&error);
    if (!handle) return;
    auto get = [&](const char* name) { return dlsym(handle, name); };
    s.load = reinterpret_cast<decltype(s.load)>(get("salient_spm_load"));
    s.free = reinterpret_cast<decltype(s.free)>(get("salient_spm_free"));
    s.size = reinterpret_cast<decltype(s.size)>(get("salient_spm_size"));
    s.piece = reinterpret_cast<decltype(s.piece)>(get("salient_spm_piece"));
    s.is_unknown = reinterpret_cast<decltype(s.is_unknown)>(get("salient_spm_is_unknown"));
    s.encode = reinterpret_cast<decltype(s.encode)>(get("salient_spm_encode"));
    if (!s.load || !s.free || !s.size || !s.piece || !s.is_unknown || !s.encode)
      error = "SentencePiece: its library lacks a function";
  });
  if (!error.empty()) fail("{}", error);
  return s;
}

struct RawPiece {
  int id;
  std::string piece;
  uint32_t begin, end;
};

std::vector<RawPiece> encode_raw(const void* model, const std::string& text) {
  std::vector<RawPiece> out;
  auto emit = [](void* context, int id, const char* piece, size_t length, uint32_t begin, uint32_t end) {
    static_cast<std::vector<RawPiece>*>(context)->push_back({id, std::string(piece, length), begin, end});
  };
  if (shim().encode(model, text.data(), text.size(), emit, &out) < 0) fail("SentencePiece: encoding failed");
  return out;
}

}  // namespace

std::shared_ptr<const Model> Model::load(const std::string& path) {
  if (!file_exists(path)) fail("{}: no such file", path);
  return from_bytes(read_file(path), path);
}

std::shared_ptr<const Model> Model::from_bytes(const std::string& serialized, const std::string& where) {
  std::shared_ptr<Model> m(new Model());
  char message[512] = {0};
  m->handle_ = shim().load(serialized.data(), serialized.size(), message, sizeof message);
  if (!m->handle_) fail("{}: not a SentencePiece model ({})", where, one_line(message));
  const int n = shim().size(m->handle_);
  if (n < 1) fail("{}: the SentencePiece model has no pieces", where);
  m->pieces_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    size_t length = 0;
    const char* p = shim().piece(m->handle_, i, &length);
    m->pieces_.emplace_back(p, length);
    if (m->pieces_.back() == kSpace) m->space_id_ = i;
    if (m->unk_id_ < 0 && shim().is_unknown(m->handle_, i)) m->unk_id_ = i;
  }
  m->bytes_ = serialized;
  return m;
}

Model::~Model() {
  if (handle_) shim().free(handle_);
}

int Model::size() const { return static_cast<int>(pieces_.size()); }
const std::string& Model::piece(int id) const { return pieces_.at(static_cast<size_t>(id)); }
bool Model::is_unknown(int id) const { return id >= 0 && id < size() && shim().is_unknown(handle_, id) != 0; }

bool Model::vanishes(const std::string& input, size_t at, size_t len) const {
  size_t unused = 0;
  switch (text::category(text::char_at(input, at, &unused))) {
    case UTF8PROC_CATEGORY_CC:  // what a normalizer may delete: controls, format characters (U+200B,
    case UTF8PROC_CATEGORY_CF:  // U+FEFF...), private use, unassigned
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
      return encode_raw(handle_, input.substr(at, len)).empty();
    default:
      return false;
  }
}

namespace {

// Characters that continue the grapheme before them (combining marks, ZWJ, Hangul vowels and finals).
bool extends_grapheme(char32_t cp) {
  switch (utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->boundclass) {
    case UTF8PROC_BOUNDCLASS_EXTEND:
    case UTF8PROC_BOUNDCLASS_SPACINGMARK:
    case UTF8PROC_BOUNDCLASS_ZWJ:
    case UTF8PROC_BOUNDCLASS_V:
    case UTF8PROC_BOUNDCLASS_T:
      return true;
    default:
      return false;
  }
}

size_t previous_char(const std::string& input, size_t at) {  // the start of the character before `at`
  do --at;
  while (at > 0 && (static_cast<unsigned char>(input[at]) & 0xC0) == 0x80);
  return at;
}

size_t count_chars(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

size_t Model::composed_end(const std::string& input, size_t begin, size_t end) const {
  // tokenizers' Precompiled normalizer (normalizers/precompiled.rs) maps a grapheme shorter than 6
  // bytes as a whole; a shorter result takes the alignment of the grapheme's first characters.
  if (end <= begin) return end;
  size_t length = 0, start = previous_char(input, end);
  if (!extends_grapheme(text::char_at(input, start, &length))) return end;
  while (start > begin && end - start < 6) {
    const size_t before = previous_char(input, start);
    start = before;
    if (!extends_grapheme(text::char_at(input, before, &length))) break;
  }
  if (end - start >= 6) return end;
  std::string normalized;
  for (const RawPiece& p : encode_raw(handle_, input.substr(start, end - start))) normalized += p.piece;
  if (normalized.compare(0, 3, kSpace) == 0) normalized.erase(0, 3);
  const size_t kept = count_chars(normalized), original = count_chars(input.substr(start, end - start));
  if (kept == 0 || kept >= original) return end;
  size_t at = start;
  for (size_t k = 0; k < kept; ++k) {
    text::char_at(input, at, &length);
    at += length;
  }
  return at;
}

void Model::encode(const std::string& input, size_t begin, size_t end, bool keep_leading_space, bool keep_trailing_space,
                   std::vector<Piece>& out) const {
  out.clear();
  const std::vector<RawPiece> encoded = encode_raw(handle_, input.substr(begin, end - begin));
  size_t length = 0;
  auto space_or_deleted = [&](size_t at, size_t* last_space) {  // at a whitespace or deleted character?
    const char32_t cp = text::char_at(input, at, &length);
    if (text::is_whitespace(cp)) {
      *last_space = at;
      return true;
    }
    return vanishes(input, at, length);
  };
  for (size_t k = 0; k < encoded.size(); ++k) {
    const RawPiece& p = encoded[k];
    size_t b = begin + p.begin, e = begin + p.end;
    const bool word = p.piece.compare(0, 3, kSpace) == 0;
    size_t content = b;  // where the piece's own characters start
    if (word) {
      size_t last_space = std::string::npos;
      if (k == 0 && keep_leading_space)
        for (size_t at = begin; at < b && space_or_deleted(at, &last_space);) at += length;
      while (content < e && space_or_deleted(content, &last_space)) content += length;
      if (last_space != std::string::npos) b = last_space;
    }
    const bool has_text = p.piece.size() > (word ? 3 : 0);
    if (content == e && e < end && (has_text || b == e)) {
      text::char_at(input, e, &length);
      e += length;
    }
    out.push_back({p.id, b, composed_end(input, b, e), word});
  }
  if (!keep_trailing_space || (encoded.empty() && !keep_leading_space)) return;
  // The whitespace at the segment's end (or the whole segment's) as a "▁" on its last character.
  size_t last_space = std::string::npos, tail = encoded.empty() ? begin : begin + encoded.back().end;
  for (size_t at = tail; at < end && space_or_deleted(at, &last_space);) at += length;
  if (last_space == std::string::npos) return;
  text::char_at(input, last_space, &length);
  // A model without the piece "▁" (made with other settings) gives the space its unknown piece.
  out.push_back({space_id_ >= 0 ? space_id_ : std::max(unk_id_, 0), last_space, last_space + length, true});
}

}  // namespace salient::spm

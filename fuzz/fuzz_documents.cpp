// libFuzzer harness: the dataset readers that read more than one file, and the IDX reader. The
// first byte picks the reader; a 0 byte splits the rest into the reader's two files:
//   0  ERASER: annotations jsonl, then the document docs/d (seeds use docid "d")
//   1  HateXplain's original dataset.json, then post_id_divisions.json (split "train")
//   2  IDX images (plain or gzip)          3  IDX labels (plain or gzip)
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "data/dataset.h"
#include "fuzz_files.h"
#include "data/idx.h"
#include "util/error.h"
#include "util/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const std::string dir = [] {
    const std::string d = fuzz::scratch_dir();
    ::mkdir((d + "/docs").c_str(), 0700);
    return d;
  }();
  const int kind = data[0] % 4;
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t zero = bytes.find('\0');
  const std::string first = bytes.substr(0, zero);
  const std::string second = zero == std::string::npos ? std::string() : bytes.substr(zero + 1);
  const std::string a = dir + "/a", b = kind == 0 ? dir + "/docs/d" : dir + "/b";
  fuzz::write_plain(a, kind >= 2 ? bytes : first);
  fuzz::write_plain(b, second);
  try {
    switch (kind) {
      case 0: salient::read_eraser(a, dir + "/docs"); break;
      case 1: salient::read_hatexplain_original(a, b, "train"); break;
      case 2: {
        const salient::IdxImages images = salient::read_idx_images(a);
        if (images.pixels.size() != static_cast<size_t>(images.count * images.rows * images.cols)) std::abort();
        break;
      }
      default: salient::read_idx_labels(a); break;
    }
  } catch (const salient::Error&) {
  }
  return 0;
}

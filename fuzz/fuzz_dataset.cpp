// libFuzzer harness: the dataset readers on a file's bytes. The first byte picks the reader
// (generic JSONL / CSV / TSV, GLUE TSV, CoLA TSV, SST trees, HateXplain JSONL / CSV).
#include <unistd.h>

#include <cstdint>
#include <string>

#include "data/dataset.h"
#include "fuzz_files.h"
#include "util/error.h"
#include "util/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const suffixes[] = {".jsonl", ".csv", ".tsv", ".glue", ".cola", ".trees", ".hx.jsonl", ".hx.csv"};
  const int kind = data[0] % 8;
  const std::string path = fuzz::scratch_dir() + "/input" + suffixes[kind];
  fuzz::write_plain(path, std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  try {
    switch (kind) {
      case 0: case 1: case 2: salient::read_generic(path); break;
      case 3: salient::read_glue_tsv(path); break;
      case 4: salient::read_cola_tsv(path); break;
      case 5: salient::sst_trees_to_binary(salient::read_sst_trees(path)); break;
      case 6: salient::read_hatexplain_jsonl(path); break;
      default: salient::read_hatexplain_csv(path); break;
    }
  } catch (const salient::Error&) {
  }
  return 0;
}

// libFuzzer harness: tokenizer files. The first byte picks the format: 0 vocab.txt, 1
// tokenizer.json, 2 a directory with vocab.txt and tokenizer_config.json (a 0 byte splits the two),
// 3 a directory with RoBERTa's vocab.json and merges.txt (split the same way), 4 and 5 a directory
// with a SentencePiece model (DeBERTa's spm.model, XLM-R's sentencepiece.bpe.model) and
// tokenizer_config.json (split at the last 0 byte).
// A tokenizer that loads must encode a fixed text pair into ids of its own vocabulary.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_files.h"
#include "text/tokenizer.h"
#include "util/error.h"
#include "util/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string& dir = fuzz::scratch_dir();
  const int kind = data[0] % 6;
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string vocab = dir + "/vocab.txt", config = dir + "/tokenizer_config.json",
                    json = dir + "/tokenizer.json", vocab_json = dir + "/vocab.json", merges = dir + "/merges.txt",
                    spm = dir + "/spm.model", xlmr = dir + "/sentencepiece.bpe.model";
  for (const std::string* path : {&json, &config, &vocab, &vocab_json, &merges, &spm, &xlmr}) ::unlink(path->c_str());
  try {
    salient::Tokenizer tok = [&] {
      if (kind == 0) {
        fuzz::write_plain(vocab, bytes);
        return salient::Tokenizer::from_vocab_file(vocab);
      }
      if (kind == 1) {
        fuzz::write_plain(json, bytes);
        return salient::Tokenizer::from_tokenizer_json(json);
      }
      const size_t zero = bytes.find('\0');
      if (kind == 4 || kind == 5) {  // a binary model holds 0 bytes itself: the last one splits
        const size_t last = bytes.rfind('\0');
        fuzz::write_plain(kind == 4 ? spm : xlmr, bytes.substr(0, last));
        if (last != std::string::npos) fuzz::write_plain(config, bytes.substr(last + 1));
        return salient::Tokenizer::from_dir(dir);
      }
      if (kind == 3) {
        fuzz::write_plain(vocab_json, bytes.substr(0, zero));
        fuzz::write_plain(merges, zero == std::string::npos ? std::string() : bytes.substr(zero + 1));
        return salient::Tokenizer::from_dir(dir);
      }
      fuzz::write_plain(vocab, bytes.substr(0, zero));
      if (zero != std::string::npos) fuzz::write_plain(config, bytes.substr(zero + 1));
      return salient::Tokenizer::from_dir(dir);
    }();
    const salient::Encoding e = tok.encode("Héllo, WORLD!! unaffable 東京 [UNK] ##x", std::string("a pair\tof words"),
                                           32, salient::Truncation::LongestFirst);
    if (e.ids.size() > 32 || e.ids.size() != e.tokens.size()) std::abort();
    for (int64_t id : e.ids)
      if (id < 0 || id >= static_cast<int64_t>(tok.vocab_size())) std::abort();
  } catch (const salient::Error&) {
  }
  return 0;
}

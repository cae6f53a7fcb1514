// libFuzzer harness: tokenizer files. The first byte picks the format: 0 vocab.txt, 1
// tokenizer.json, 2 a directory with vocab.txt and tokenizer_config.json (a 0 byte splits the two).
// A tokenizer that loads must encode a fixed text pair into ids of its own vocabulary.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "text/tokenizer.h"
#include "util/error.h"
#include "util/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const std::string dir = [] {
    const std::string d = "/tmp/salient_fuzz_vocab_" + std::to_string(::getpid());
    ::mkdir(d.c_str(), 0700);
    return d;
  }();
  const int kind = data[0] % 3;
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string vocab = dir + "/vocab.txt", config = dir + "/tokenizer_config.json",
                    json = dir + "/tokenizer.json";
  ::unlink(json.c_str());
  ::unlink(config.c_str());
  try {
    salient::WordPieceTokenizer tok = [&] {
      if (kind == 0) {
        salient::write_file_atomic(vocab, bytes);
        return salient::WordPieceTokenizer::from_vocab_file(vocab);
      }
      if (kind == 1) {
        salient::write_file_atomic(json, bytes);
        return salient::WordPieceTokenizer::from_tokenizer_json(json);
      }
      const size_t zero = bytes.find('\0');
      salient::write_file_atomic(vocab, bytes.substr(0, zero));
      if (zero != std::string::npos) salient::write_file_atomic(config, bytes.substr(zero + 1));
      return salient::WordPieceTokenizer::from_dir(dir);
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

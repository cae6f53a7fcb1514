// A C interface to Debian's libsentencepiece, built as its own shared object and loaded in private
// (src/text/sentencepiece.cpp). libsentencepiece carries its own copy of protobuf-lite and exports
// its symbols; Debian's LibTorch loads libprotobuf.so.32, and in one symbol scope the two copies
// bind to each other's functions (a crash while the libraries initialise). Loaded into a link
// namespace of its own (dlmopen), this object and libsentencepiece see only each other and their own
// C and C++ runtimes.
#include <sentencepiece_processor.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#define SHIM_API extern "C" __attribute__((visibility("default")))

// No exception crosses the C interface: libsentencepiece throws on some malformed models (its
// trie builder, Darts, on pieces out of order: a libFuzzer find, fuzz_vocab), which no caller
// could catch by type.
#define SHIM_GUARD(error, error_size, failed)                      \
  catch (const std::exception& e) {                                \
    if (error) std::snprintf(error, error_size, "%s", e.what());   \
    return failed;                                                 \
  }                                                                \
  catch (...) {                                                    \
    if (error) std::snprintf(error, error_size, "unknown error");  \
    return failed;                                                 \
  }

// Loads a serialized model; nullptr with the library's message in `error` when it cannot.
SHIM_API void* salient_spm_load(const char* bytes, size_t size, char* error, size_t error_size) {
  try {
    auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
    const auto status = sp->LoadFromSerializedProto(std::string(bytes, size));
    if (status.ok()) return sp.release();
    std::snprintf(error, error_size, "%s", status.ToString().c_str());
    return nullptr;
  }
  SHIM_GUARD(error, error_size, nullptr)
}

SHIM_API void salient_spm_free(void* model) { delete static_cast<sentencepiece::SentencePieceProcessor*>(model); }

SHIM_API int salient_spm_size(const void* model) {
  return static_cast<const sentencepiece::SentencePieceProcessor*>(model)->GetPieceSize();
}

// The piece's text; the pointer lives as long as the model.
SHIM_API const char* salient_spm_piece(const void* model, int id, size_t* length) {
  const std::string& s = static_cast<const sentencepiece::SentencePieceProcessor*>(model)->IdToPiece(id);
  *length = s.size();
  return s.data();
}

SHIM_API int salient_spm_is_unknown(const void* model, int id) {
  return static_cast<const sentencepiece::SentencePieceProcessor*>(model)->IsUnknown(id) ? 1 : 0;
}

// Encodes text and calls emit(context, id, piece, piece length, begin, end) for every piece, its
// byte span in the text as the library aligns it. Returns the number of pieces, -1 on an error.
SHIM_API long salient_spm_encode(const void* model, const char* text, size_t size,
                                 void (*emit)(void*, int, const char*, size_t, uint32_t, uint32_t), void* context) {
  try {
    const auto* sp = static_cast<const sentencepiece::SentencePieceProcessor*>(model);
    const sentencepiece::ImmutableSentencePieceText encoded = sp->EncodeAsImmutableProto(std::string(text, size));
    const size_t n = encoded.pieces_size();
    for (size_t k = 0; k < n; ++k) {
      const auto p = encoded.pieces(static_cast<int>(k));
      emit(context, static_cast<int>(p.id()), p.piece().data(), p.piece().size(), p.begin(), p.end());
    }
    return static_cast<long>(n);
  }
  SHIM_GUARD(static_cast<char*>(nullptr), 0, -1L)
}

#pragma once
// English text from two dictionaries Debian ships, for the pre-training corpus: GCIDE (the
// Collaborative International Dictionary of English, package dict-gcide, GPL) as dictd's
// gcide.dict.dz, and WordNet 3.0's synset glosses (package wordnet-base) from its data.* files.
// Each parser returns plain texts, one sense, note or quotation each, whitespace collapsed.
#include <string>
#include <vector>

namespace salient::pretrain {

inline constexpr const char* kDebianGcide = "/usr/share/dictd/gcide.dict.dz";
inline constexpr const char* kDebianWordnet = "/usr/share/wordnet";
// Texts with fewer words are dropped: headword remnants, bare synonyms.
inline constexpr int kMinDictionaryWords = 3;

// Definitions, notes and quotations of a dictd-format GCIDE text (already decompressed): headword
// lines, pronunciations, bracketed etymologies/labels/sources, quotation authors, synonym lists and
// sense numbers removed; GCIDE's bracketed character codes ([ae], [e^], [deg]...) become letters.
std::vector<std::string> gcide_texts(const std::string& dict_text);
// The same from a file: gcide.dict.dz (dictzip is gzip) or an uncompressed .dict.
std::vector<std::string> read_gcide(const std::string& path);

// The glosses (text after "| ") of a WordNet data.* file; its license header (lines starting with
// two spaces) is skipped.
std::vector<std::string> wordnet_glosses(const std::string& data_text);
// The glosses of data.noun, data.verb, data.adj and data.adv in `dir`, in that order.
std::vector<std::string> read_wordnet(const std::string& dir);

// A --gcide / --wordnet value: "none" → "" (not included), "auto" → the Debian path (a one-line
// error naming it and the package when it is missing), anything else a path that must exist.
std::string resolve_gcide(const std::string& value);
std::string resolve_wordnet(const std::string& value);

}  // namespace salient::pretrain

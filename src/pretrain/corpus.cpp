#include "pretrain/corpus.h"

#include <cctype>
#include <sstream>
#include <unordered_set>

#include "data/dataset.h"
#include "pretrain/dictionaries.h"
#include "util/error.h"
#include "util/io.h"

namespace salient::pretrain {

namespace {

struct Source {
  const char* name;
  const char* spec;
  const char* license;  // as ../shared/data/MANIFEST.md records it
};
const Source kTrainSources[] = {
    {"SST-2 (GLUE) train phrases", "sst2:train", "Stanford SST: no explicit license (MANIFEST.md)"},
    {"SST trees train sentences", "sst-trees:train", "Stanford SST: no explicit license (MANIFEST.md)"},
    {"CoLA in-domain train", "cola:train", "MIT for the code (NYU); data per the CoLA README (MANIFEST.md)"},
    {"HateXplain train", "hatexplain:train", "MIT (hate-alert/HateXplain)"},
    {"ERASER Movie Reviews train documents", "eraser:train", "no LICENSE in the source repo (MANIFEST.md)"},
};
const char* const kHeldoutSpecs[] = {"sst2:dev",       "sst2:test", "sst-trees:dev", "sst-trees:test", "cola:dev",
                                     "cola:ood",       "hatexplain:val", "hatexplain:test", "eraser:val", "eraser:test"};

}  // namespace

std::string normalized_text(const std::string& text) {
  std::string out;
  bool space = false;
  for (unsigned char c : text) {
    if (std::isspace(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

std::vector<std::string> heldout_texts(const std::string& data_dir) {
  std::vector<std::string> out;
  for (const char* spec : kHeldoutSpecs)
    for (const auto& r : load_dataset(spec, data_dir).records) {
      out.push_back(normalized_text(r.text));
      if (r.text_pair) out.push_back(normalized_text(*r.text_pair));
    }
  return out;
}

nlohmann::json CorpusReport::to_json() const {
  nlohmann::json src = nlohmann::json::array();
  for (const auto& s : sources)
    src.push_back({{"name", s.name}, {"spec", s.spec}, {"license", s.license}, {"texts", s.texts}, {"words", s.words},
                   {"word_pieces", s.pieces}, {"dropped_heldout", s.dropped_heldout},
                   {"dropped_duplicate", s.dropped_duplicate}});
  return {{"texts", texts}, {"words", words}, {"word_pieces", pieces}, {"sources", src}};
}

CorpusReport build_task_corpus(const std::string& data_dir, const Tokenizer& tok, const std::string& out_path,
                               const CorpusOptions& options) {
  if (out_path.empty()) fail("--out: a corpus file to write is required");
  if (data_dir.empty() || !dir_exists(data_dir)) fail("--data-dir: '{}' is not a directory", data_dir);
  const std::vector<std::string> held = heldout_texts(data_dir);
  const std::unordered_set<std::string> heldout(held.begin(), held.end());
  std::unordered_set<std::string> seen;
  std::ostringstream text;
  CorpusReport report;
  // Every source goes through the same held-out filter and the same duplicate set, in order.
  auto add = [&](CorpusSourceStats& st, const std::string& t) {
    const std::string key = normalized_text(t);
    if (key.empty()) return;
    if (heldout.count(key)) {
      ++st.dropped_heldout;
      return;
    }
    if (!seen.insert(key).second) {
      ++st.dropped_duplicate;
      return;
    }
    std::string line = t;  // one text per line: newlines inside a document become spaces
    for (char& c : line)
      if (c == '\n' || c == '\r') c = ' ';
    text << line << '\n';
    ++st.texts;
    st.words += static_cast<int64_t>(split_whitespace(line).size());
    st.pieces += static_cast<int64_t>(tok.tokenize(line).ids.size());
  };
  auto finish = [&](const CorpusSourceStats& st) {
    report.texts += st.texts;
    report.words += st.words;
    report.pieces += st.pieces;
    report.sources.push_back(st);
  };
  for (const Source& src : kTrainSources) {
    CorpusSourceStats st{src.name, src.spec, src.license};
    for (const auto& r : load_dataset(src.spec, data_dir).records) {
      add(st, r.text);
      if (r.text_pair) add(st, *r.text_pair);
    }
    finish(st);
  }
  if (!options.gcide.empty()) {
    CorpusSourceStats st{"GCIDE definitions, notes and quotations", options.gcide,
                         "GPL-2.0-or-later (GCIDE; Debian dict-gcide)"};
    for (const auto& t : read_gcide(options.gcide)) add(st, t);
    finish(st);
  }
  if (!options.wordnet.empty()) {
    CorpusSourceStats st{"WordNet 3.0 synset glosses", options.wordnet,
                         "WordNet 3.0 license (Princeton; permissive, keep the copyright notice; Debian wordnet-base)"};
    for (const auto& t : read_wordnet(options.wordnet)) add(st, t);
    finish(st);
  }
  write_file_atomic(out_path, text.str());
  write_file_atomic(out_path + ".json", report.to_json().dump(2) + "\n");
  return report;
}

}  // namespace salient::pretrain

// ERASER Movie Reviews: the jsonl annotations and the docs/ directory of token files.
#include "data/dataset.h"
#include "data/readers/reader_util.h"
#include "util/io.h"

namespace salient {

using namespace data_detail;

Dataset read_eraser(const std::string& jsonl_path, const std::string& docs_dir) {
  Dataset ds;
  ds.name = jsonl_path;
  ds.label_names = {"NEG", "POS"};
  for (const Line& line : read_lines(read_file(jsonl_path))) {
    std::string where = loc(jsonl_path, line.no);
    json obj = parse_json_line(line.text, jsonl_path, line.no);
    Record r;
    r.id = get_string(obj, "annotation_id", where);
    std::string cls = get_string(obj, "classification", where);
    auto label = std::find(ds.label_names.begin(), ds.label_names.end(), cls);
    if (label == ds.label_names.end())
      fail("{}: classification {} is not NEG or POS", where, quote_for_error(cls));
    r.label = label - ds.label_names.begin();

    // Evidences: a list of groups, each a list of spans (a bare span object is accepted too).
    std::vector<const json*> spans;
    const json& evidences = require_field(obj, "evidences", where);
    if (!evidences.is_array()) fail("{}: field \"evidences\" must be a list", where);
    for (const auto& group : evidences) {
      if (group.is_object()) {
        spans.push_back(&group);
      } else if (group.is_array()) {
        for (const auto& span : group) spans.push_back(&span);
      } else {
        fail("{}: field \"evidences\" must hold lists of evidence objects", where);
      }
    }
    // One document per record (the movie reviews): the evidences' docid, else the annotation id.
    std::string docid = spans.empty() ? r.id : get_string(*spans[0], "docid", where);
    std::string doc_path = join_path(docs_dir, docid);
    if (!file_exists(doc_path)) fail("{}: missing document {}", where, doc_path);
    std::vector<std::string> tokens = split_whitespace(read_file(doc_path));
    r.text = join_words(tokens);
    r.rationale.assign(tokens.size(), 0.0f);
    for (const json* span : spans) {
      std::string span_doc = get_string(*span, "docid", where);
      if (span_doc != docid)
        fail("{}: evidence from document {} but the record's document is {}", where, span_doc, docid);
      int64_t start = get_int(require_field(*span, "start_token", where), "start_token", where);
      int64_t end = get_int(require_field(*span, "end_token", where), "end_token", where);
      if (start < 0 || end < start || end > static_cast<int64_t>(tokens.size()))
        fail("{}: evidence tokens [{}, {}) outside document {} ({} tokens)", where, start, end, docid,
             tokens.size());
      std::vector<std::string> span_tokens(tokens.begin() + start, tokens.begin() + end);
      std::string expected = join_words(span_tokens);
      std::string text = get_string(*span, "text", where);
      if (text != expected)
        fail("{}: evidence text {} does not match tokens [{}, {}) of {}: {}", where, quote_for_error(text),
             start, end, docid, quote_for_error(expected));
      for (int64_t i = start; i < end; ++i) r.rationale[i] = 1.0f;
    }
    ds.records.push_back(std::move(r));
  }
  return ds;
}

}  // namespace salient

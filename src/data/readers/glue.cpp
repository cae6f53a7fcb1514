// GLUE TSV files (SST-2) and CoLA's headerless TSV.
#include "data/dataset.h"
#include "data/readers/reader_util.h"
#include "util/io.h"

namespace salient {

using namespace data_detail;

Dataset read_glue_tsv(const std::string& path, const std::string& text_column,
                      const std::string& label_column) {
  std::vector<Row> rows = parse_delimited(read_file(path), path, '\t', false);
  if (rows.empty()) fail("{}: empty file (expected a header line)", path);
  const std::vector<std::string>& header = rows[0].fields;
  int text_col = find_column(header, text_column);
  if (text_col < 0) fail("{}:{}: header has no \"{}\" column", path, rows[0].line, text_column);
  int label_col = find_column(header, label_column);  // absent in GLUE's unlabelled test.tsv
  int index_col = find_column(header, "index");
  Dataset ds;
  ds.name = path;
  ds.label_names = {"negative", "positive"};
  for (size_t k = 1; k < rows.size(); ++k) {
    const Row& row = rows[k];
    check_columns(row, header.size(), path, "tab-separated");
    Record r;
    r.id = index_col >= 0 ? trim(row.fields[index_col]) : std::to_string(ds.records.size());
    // GLUE SST-2 sentences end with a space before the tab: trim it.
    r.text = trim(row.fields[text_col]);
    if (label_col >= 0) r.label = parse_label(row.fields[label_col], 2, loc(path, row.line));
    ds.records.push_back(std::move(r));
  }
  return ds;
}

Dataset read_cola_tsv(const std::string& path) {
  Dataset ds;
  ds.name = path;
  ds.label_names = {"unacceptable", "acceptable"};
  for (const Row& row : parse_delimited(read_file(path), path, '\t', false)) {
    check_columns(row, 4, path, "tab-separated");
    Record r;
    r.id = std::to_string(ds.records.size());
    r.label = parse_label(row.fields[1], 2, loc(path, row.line));
    r.text = trim(row.fields[3]);
    ds.records.push_back(std::move(r));
  }
  return ds;
}

}  // namespace salient

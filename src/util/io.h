#pragma once
// File helpers of the library beside the public ones (salient/files.h: reads, atomic writes,
// paths): listings, gzip, stale temporaries, JSON files, model folders, the shared directory.
#include <string>
#include <vector>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>

#include "salient/dataset.h"
#include "salient/files.h"

namespace salient {

// Names (not paths) of the regular files directly in `dir`, sorted.
std::vector<std::string> list_files(const std::string& dir);

// Read a gzip file (or a plain one: gzread passes plain files through).
std::string read_gzip_file(const std::string& path);

// Removes the temporaries a killed write left in `dir` and its subfolders: those of this host
// (NAME.salient-tmp.<host>.<pid>) whose pid no longer runs here, so a resumed run starts from its
// finished files only; another host's and a live writer's are kept. Call it before any other rank
// writes there (rank 0, before a barrier). A missing `dir` is no error.
void remove_stale_temporaries(const std::string& dir);

// Parse JSON; errors name the file (and line for JSON-lines).
nlohmann::json parse_json_file(const std::string& path);
nlohmann::json parse_json_line(const std::string& line, const std::string& source, size_t line_no);
// The top-level keys whose values differ between two settings objects (present in one only
// counts), comma-separated: what a refused resume names.
std::string differing_keys(const nlohmann::json& before, const nlohmann::json& now);
// A JSON value on one short line for an error message (at most 60 characters; invalid UTF-8 in
// its strings replaced, where a plain dump() would throw).
std::string show_json(const nlohmann::json& v);

// "<size> bytes, fnv1a <hash>" of a model directory's model.safetensors ("none" without one): a model
// retrained at the same path is another model, whose saved results must not mix with the old one's.
std::string weights_fingerprint(const std::string& model_dir);

// The directory holding the shared data and fixtures: $SALIENT_SHARED, else ../shared relative to
// the repository root (found from the current directory upwards), else "".
std::string shared_dir();
// shared_dir()/data, or "" when there is no shared directory: shared_data_dir() (salient/dataset.h).

}  // namespace salient

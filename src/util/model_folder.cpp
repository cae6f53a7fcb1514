#include "util/model_folder.h"

#include <string_view>

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/io.h"

namespace salient {

namespace {

// `dir` itself, or for an old-layout sentence-transformers folder (modules.json at the top and no
// config.json there) the folder of its Transformer module.
std::string files_folder(const std::string& dir) {
  const std::string modules_path = join_path(dir, "modules.json");
  if (file_exists(join_path(dir, "config.json")) || !file_exists(modules_path)) return dir;
  const nlohmann::json modules = parse_json_file(modules_path);
  if (!modules.is_array()) fail("{}: not a list of modules", modules_path);
  for (const nlohmann::json& m : modules) {
    if (!m.is_object()) continue;
    const std::string type = m.value("type", ""), path = m.value("path", "");
    constexpr std::string_view kTransformer = "models.Transformer";  // sentence_transformers.models.Transformer
    if (type.size() < kTransformer.size() || type.substr(type.size() - kTransformer.size()) != kTransformer) continue;
    if (!path.empty() && file_exists(join_path(join_path(dir, path), "config.json"))) return join_path(dir, path);
  }
  return dir;  // require_config's "missing config.json" names dir
}

}  // namespace

std::string sentencepiece_file(const std::string& dir) {
  for (const char* name : {"sentencepiece.bpe.model", "spm.model"})
    if (file_exists(join_path(dir, name))) return join_path(dir, name);
  return "";
}

ModelFolder resolve_model_folder(const std::string& dir) {
  ModelFolder f;
  f.dir = dir;
  f.files = dir_exists(dir) ? files_folder(dir) : dir;
  f.config = join_path(f.files, "config.json");
  f.weights = join_path(f.files, "model.safetensors");
  if (std::string spm = sentencepiece_file(f.files); !spm.empty()) {
    f.tokenizer = TokenizerFiles::sentencepiece;
    f.tokenizer_path = spm;
  } else if (file_exists(join_path(f.files, "tokenizer.json"))) {
    f.tokenizer = TokenizerFiles::tokenizer_json;
    f.tokenizer_path = join_path(f.files, "tokenizer.json");
  } else if (file_exists(join_path(f.files, "vocab.txt"))) {
    f.tokenizer = TokenizerFiles::vocab_txt;
    f.tokenizer_path = join_path(f.files, "vocab.txt");
  } else if (file_exists(join_path(f.files, "vocab.json")) && file_exists(join_path(f.files, "merges.txt"))) {
    f.tokenizer = TokenizerFiles::vocab_json_merges;
    f.tokenizer_path = f.files;
  }
  return f;
}

const std::string& ModelFolder::require_config() const {
  if (!dir_exists(dir)) fail_not_found("{}: model directory not found", dir);
  if (!file_exists(config)) fail_not_found("{}: missing config.json", dir);
  return config;
}

const std::string& ModelFolder::require_weights() const {
  if (!file_exists(weights)) {
    if (file_exists(join_path(files, "pytorch_model.bin")))
      fail("{}: only pytorch_model.bin found; salient reads model.safetensors (convert with HF "
           "save_pretrained(safe_serialization=True))", dir);
    fail("{}: missing model.safetensors", dir);
  }
  return weights;
}

}  // namespace salient

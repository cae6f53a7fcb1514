#pragma once
// Hugging Face model directories: config.json + model.safetensors with the HF parameter names of
// BertForSequenceClassification, RobertaForSequenceClassification,
// ElectraForSequenceClassification, DistilBertForSequenceClassification and
// ViTForImageClassification.
#include <optional>
#include <string>
#include <vector>

#include "model/safetensors.h"
#include "salient/load_options.h"
#include "model/transformer.h"
#include "util/model_folder.h"

namespace salient {

struct LoadReport {
  std::vector<std::string> missing;      // HF names the model needs but the file lacks
  std::vector<std::string> unexpected;   // names in the file the model does not use
  std::vector<std::string> initialised;  // missing head weights that were randomly initialised
  std::string weights;                   // the file read (the folder's model.safetensors)
};


// A model directory's configuration alone (one-line errors name the directory), e.g. to check a
// layout before loading weights. The ModelFolder forms read a folder resolved once
// (util/model_folder.h), for callers that read its tokenizer or other files too.
ModelConfig load_model_config(const std::string& dir);
ModelConfig load_model_config(const ModelFolder& folder);
Transformer load_model(const std::string& dir, const LoadOptions& options = {}, LoadReport* report = nullptr);
Transformer load_model(const ModelFolder& folder, const LoadOptions& options = {}, LoadReport* report = nullptr);
// The warning load_model prints (without a `report`) for weights in the file that the model does
// not use; for callers that pass a report.
void warn_unused_weights(const std::string& weights_path, const LoadReport& report);
// One tensor of a safetensors file as a float32 tensor (F32, F64, F16, BF16; other dtypes are a
// one-line error naming `name` and `path`), and back (F32, F16 or BF16).
torch::Tensor tensor_from_data(const TensorData& t, const std::string& name, const std::string& path);
TensorData tensor_to_data(const torch::Tensor& t, DType dtype = DType::F32);
// A whole safetensors file of named float tensors (learned explainers' and SST's weights).
std::map<std::string, torch::Tensor> load_tensors(const std::string& path);
void save_tensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                  const std::map<std::string, std::string>& metadata = {});  // atomic
// Writes config.json and model.safetensors (F32, F16 or BF16) atomically, file by file.
void save_model(const Transformer& model, const std::string& dir, DType dtype = DType::F32);

}  // namespace salient

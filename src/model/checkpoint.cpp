#include "model/checkpoint.h"


#include <cstring>
#include <iostream>
#include <set>

#include "util/error.h"
#include "salient/error.h"
#include "util/io.h"
#include "util/runtime.h"

namespace salient {

namespace {

std::string join_names(const std::vector<std::string>& names, size_t max = 5) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < max; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > max) s += fmt::format(", ... ({} in all)", names.size());
  return s;
}

}  // namespace

torch::Tensor tensor_from_data(const TensorData& t, const std::string& name, const std::string& path) {
  std::vector<int64_t> shape = t.shape;
  const int64_t n = t.numel();
  switch (t.dtype) {
    case DType::F32: {
      torch::Tensor out = torch::empty(shape, torch::kFloat32);
      std::memcpy(out.data_ptr(), t.bytes.data(), n * 4);
      return out;
    }
    case DType::F64: {
      torch::Tensor out = torch::empty(shape, torch::kFloat64);
      std::memcpy(out.data_ptr(), t.bytes.data(), n * 8);
      return out.to(torch::kFloat32);
    }
    case DType::F16:
    case DType::BF16: {
      torch::Tensor out = torch::empty(shape, torch::kFloat32);
      float* dst = out.data_ptr<float>();
      const auto* src = reinterpret_cast<const unsigned char*>(t.bytes.data());
      for (int64_t i = 0; i < n; ++i) {
        uint16_t bits = static_cast<uint16_t>(src[2 * i] | (src[2 * i + 1] << 8));
        dst[i] = t.dtype == DType::F16 ? half_to_float(bits) : bf16_to_float(bits);
      }
      return out;
    }
    default:
      fail("{}: tensor '{}' has dtype {}, expected F32, F16 or BF16", path, name, dtype_name(t.dtype));
  }
}

TensorData tensor_to_data(const torch::Tensor& src, DType dtype) {
  torch::Tensor t = src.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  TensorData out;
  out.dtype = dtype;
  out.shape = t.sizes().vec();
  const int64_t n = t.numel();
  const float* p = t.data_ptr<float>();
  if (dtype == DType::F32) {
    out.bytes.assign(reinterpret_cast<const char*>(p), n * 4);
  } else {
    out.bytes.resize(n * 2);
    for (int64_t i = 0; i < n; ++i) {
      uint16_t bits = dtype == DType::F16 ? float_to_half(p[i]) : float_to_bf16(p[i]);
      out.bytes[2 * i] = static_cast<char>(bits & 0xff);
      out.bytes[2 * i + 1] = static_cast<char>(bits >> 8);
    }
  }
  return out;
}


std::map<std::string, torch::Tensor> load_tensors(const std::string& path) {
  SafetensorsFile file = read_safetensors(path);
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, data] : file.tensors) out[name] = tensor_from_data(data, name, path);
  return out;
}

void save_tensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                  const std::map<std::string, std::string>& metadata) {
  SafetensorsFile file;
  file.metadata = metadata;
  for (const auto& [name, t] : tensors) file.tensors[name] = tensor_to_data(t, DType::F32);
  write_safetensors(path, file);
}

void warn_unused_weights(const std::string& weights_path, const LoadReport& report) {
  if (!report.unexpected.empty())
    std::cerr << fmt::format("salient: warning: {}: {} unused weight(s): {}\n", weights_path,
                             report.unexpected.size(), join_names(report.unexpected));
}

ModelConfig load_model_config(const std::string& dir) { return load_model_config(resolve_model_folder(dir)); }

ModelConfig load_model_config(const ModelFolder& folder) { return ModelConfig::from_file(folder.require_config()); }

Transformer load_model(const std::string& dir, const LoadOptions& options, LoadReport* report) {
  return load_model(resolve_model_folder(dir), options, report);
}

Transformer load_model(const ModelFolder& folder, const LoadOptions& options, LoadReport* report) {
  ModelConfig config = load_model_config(folder);
  const std::string& dir = folder.dir;
  if (!options.labels.empty()) {
    config.id2label = options.labels;
    config.num_labels = static_cast<int64_t>(options.labels.size());
  }
  if (options.pooling) {
    config.pooling = *options.pooling;
    config.validate(folder.config + " (with --pooling)");
  }
  if (options.hidden_dropout || options.attention_dropout) {
    if (options.hidden_dropout) config.hidden_dropout_prob = *options.hidden_dropout;
    if (options.attention_dropout) config.attention_probs_dropout_prob = *options.attention_dropout;
    config.validate(folder.config + " (with --dropout/--attention-dropout)");
  }
  const std::string& weights_path = folder.require_weights();
  SafetensorsFile file = read_safetensors(weights_path);

  // Older checkpoints name LayerNorm parameters gamma/beta.
  std::map<std::string, const TensorData*> by_name;
  for (const auto& [name, data] : file.tensors) {
    std::string n = name;
    if (n.size() > 6 && n.compare(n.size() - 6, 6, ".gamma") == 0) n = n.substr(0, n.size() - 6) + ".weight";
    else if (n.size() > 5 && n.compare(n.size() - 5, 5, ".beta") == 0) n = n.substr(0, n.size() - 5) + ".bias";
    by_name[n] = &data;
  }

  Transformer fresh(config, options.seed);  // supplies shapes and, if allowed, a new head
  LoadReport local;
  local.weights = weights_path;
  std::map<std::string, torch::Tensor> weights;
  std::set<std::string> used;
  bool missing_body = false;  // only head weights missing: a base encoder
  for (const auto& [canonical, shape] : weight_shapes(config)) {
    const std::string hf = config.family().hf_weight_name(canonical);
    auto it = by_name.find(hf);
    if (it == by_name.end()) {  // base-model files (BertModel, DebertaV2Model) without the family's prefix
      const size_t dot = hf.find('.');
      it = by_name.find(canonical);
      if (it == by_name.end() && dot != std::string::npos) it = by_name.find(hf.substr(dot + 1));
    }
    if (it == by_name.end()) {
      if (options.allow_new_head && is_head_weight(canonical)) {
        weights[canonical] = fresh.weights().at(canonical);
        local.initialised.push_back(hf);
        continue;
      }
      local.missing.push_back(hf);
      missing_body |= !is_head_weight(canonical);
      continue;
    }
    used.insert(it->first);
    if (it->second->shape != shape) {
      std::string got, want;
      for (auto d : it->second->shape) got += (got.empty() ? "" : ",") + std::to_string(d);
      for (auto d : shape) want += (want.empty() ? "" : ",") + std::to_string(d);
      fail("{}: tensor '{}' has shape [{}] but config.json implies [{}]", weights_path, it->first, got, want);
    }
    weights[canonical] = tensor_from_data(*it->second, it->first, weights_path);
  }
  for (const auto& kv : by_name) {
    const std::string& n = kv.first;
    // Position-id buffers are not parameters.
    if (used.count(n) || n.find("position_ids") != std::string::npos) continue;
    local.unexpected.push_back(n);
  }
  if (report) *report = local;
  if (!local.missing.empty()) {
    if (!missing_body)  // a base encoder (BertModel, a sentence-transformers folder, BertForMaskedLM)
      fail("{}: no classification head ({} missing: {}): a base encoder; fine-tune it first (salient train --init {})",
           dir, local.missing.size(), join_names(local.missing), dir);
    fail("{}: missing {} weight(s): {}", weights_path, local.missing.size(), join_names(local.missing));
  }
  if (!report) warn_unused_weights(weights_path, local);
  Transformer model = fresh;
  model.set_weights(std::move(weights));
  model.eval();
  const torch::Device device = options.device ? *options.device : default_device();
  if (device != model.device()) model.to(device, model.dtype());
  return model;
}

void save_model(const Transformer& model, const std::string& dir, DType dtype) {
  if (dtype != DType::F32 && dtype != DType::F16 && dtype != DType::BF16)
    fail("save_model: dtype {} not supported (F32, F16, BF16)", dtype_name(dtype));
  make_dirs(dir);
  SafetensorsFile file;
  file.metadata["format"] = "pt";
  for (const auto& [name, tensor] : model.weights())
    file.tensors[model.config().family().hf_weight_name(name)] = tensor_to_data(tensor, dtype);
  write_safetensors(join_path(dir, "model.safetensors"), file);
  write_file_atomic(join_path(dir, "config.json"), model.config().to_json().dump(2) + "\n");
}

}  // namespace salient

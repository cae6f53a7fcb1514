#include "train/trainer.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <chrono>
#include <numeric>
#include <random>
#include <sstream>
#include <type_traits>

#include "model/safetensors.h"
#include "util/error.h"
#include "util/atomic_file.h"
#include "util/io.h"
#include "util/runtime.h"
#include "util/progress.h"
#include "salient/distributed.h"
#include "util/tensor_values.h"

namespace salient {

namespace {

using Clock = std::chrono::steady_clock;


std::vector<Encoding> encode_all(const Tokenizer& tok, const Dataset& data, int64_t max_length,
                                 int64_t* truncated) {
  std::vector<Encoding> out;
  out.reserve(data.records.size());
  for (const auto& r : data.records) {
    out.push_back(tok.encode(r.text, r.text_pair, static_cast<int>(max_length), Truncation::LongestFirst));
    if (out.back().truncated && truncated) ++*truncated;
  }
  return out;
}

// Batches of similar length: shuffle, sort within windows of 50 batches, shuffle the batches.
std::vector<std::vector<int64_t>> bucketed_batches(const std::vector<Encoding>& encs, const std::vector<int64_t>& subset,
                                                   int64_t batch_size, std::mt19937_64& rng) {
  std::vector<int64_t> order = subset;
  std::shuffle(order.begin(), order.end(), rng);
  const size_t window = static_cast<size_t>(batch_size) * 50;
  for (size_t s = 0; s < order.size(); s += window) {
    auto end = order.begin() + std::min(order.size(), s + window);
    std::stable_sort(order.begin() + s, end, [&](int64_t a, int64_t b) { return encs[a].ids.size() < encs[b].ids.size(); });
  }
  std::vector<std::vector<int64_t>> batches;
  for (size_t s = 0; s < order.size(); s += batch_size)
    batches.emplace_back(order.begin() + s, order.begin() + std::min(order.size(), s + batch_size));
  std::shuffle(batches.begin(), batches.end(), rng);
  return batches;
}

double metric_value(const ClassificationMetrics& m, const std::string& name) {
  if (name == "accuracy") return m.accuracy;
  if (name == "macro_f1") return m.macro_f1;
  if (name == "mcc") return m.mcc;
  fail("--select-metric: unknown metric '{}' (accuracy, macro_f1, mcc; for regression pearson, neg_mse)", name);
}

double metric_value(const RegressionMetrics& m, const std::string& name) {
  if (name == "pearson") return m.pearson;
  if (name == "neg_mse") return -m.mse;
  fail("--select-metric: '{}' is not a regression metric (pearson, neg_mse)", name);
}

nlohmann::json metrics_json(const ClassificationMetrics& m) {
  return {{"accuracy", m.accuracy}, {"macro_f1", m.macro_f1}, {"mcc", m.mcc}, {"count", m.count}};
}

nlohmann::json metrics_json(const RegressionMetrics& m) { return {{"pearson", m.pearson}, {"mse", m.mse}, {"count", m.count}}; }

ClassificationMetrics metrics_from_json(const nlohmann::json& j) {
  ClassificationMetrics m;
  m.accuracy = j.at("accuracy");
  m.macro_f1 = j.at("macro_f1");
  m.mcc = j.at("mcc");
  m.count = j.at("count");
  return m;
}

RegressionMetrics regression_from_json(const nlohmann::json& j) {
  RegressionMetrics m;
  m.pearson = j.at("pearson");
  m.mse = j.at("mse");
  m.count = j.at("count");
  return m;
}

bool no_decay(const std::string& name) {
  return name.find("LayerNorm") != std::string::npos || (name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0);
}

}  // namespace

std::unique_ptr<torch::optim::AdamW> make_adamw(const std::vector<std::pair<std::string, torch::Tensor>>& named,
                                                double lr, double weight_decay) {
  std::vector<torch::Tensor> decay, plain;
  for (const auto& [name, t] : named) (no_decay(name) ? plain : decay).push_back(t);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(lr).weight_decay(weight_decay)));
  groups.emplace_back(plain, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(lr).weight_decay(0.0)));
  return std::make_unique<torch::optim::AdamW>(std::move(groups));
}

double warmup_linear_decay(int64_t step, int64_t total, int64_t warmup) {
  if (step < warmup) return double(step + 1) / std::max<int64_t>(1, warmup);
  return std::max(0.0, double(total - step) / std::max<int64_t>(1, total - warmup));
}

void set_learning_rate(torch::optim::AdamW& optimizer, double lr) {
  for (auto& g : optimizer.param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
}

namespace {

// AdamW's state per parameter, in param_groups order. LibTorch keys it by the tensor's address,
// which is why its own archive (optimizer.pt) differs from run to run; this one is keyed by the
// parameter's position and so is byte-stable.
std::vector<torch::Tensor> optimizer_params(torch::optim::AdamW& optimizer) {
  std::vector<torch::Tensor> params;
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params()) params.push_back(p);
  return params;
}

// The optimiser's state map is keyed by the parameter's TensorImpl address: as a string printed
// with operator<< in LibTorch 1.13, as the pointer itself in later releases (2.11 on the GPU).
using OptimizerStateKey = std::decay_t<decltype(std::declval<torch::optim::AdamW&>().state())>::key_type;

template <typename Key>
Key state_key_of(void* impl) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream os;
    os << impl;
    return os.str();
  } else {
    return impl;
  }
}

OptimizerStateKey state_key(const torch::Tensor& p) { return state_key_of<OptimizerStateKey>(p.unsafeGetTensorImpl()); }

TensorData exact_data(const torch::Tensor& src) {
  const bool f64 = src.scalar_type() == torch::kFloat64;
  torch::Tensor t = src.detach().to(torch::kCPU, f64 ? torch::kFloat64 : torch::kFloat32).contiguous();
  TensorData d;
  d.dtype = f64 ? DType::F64 : DType::F32;
  d.shape = t.sizes().vec();
  d.bytes.assign(static_cast<const char*>(t.data_ptr()), static_cast<size_t>(t.numel()) * t.element_size());
  return d;
}

torch::Tensor exact_tensor(const TensorData& d, const std::string& name, const std::string& path) {
  if (d.dtype != DType::F32 && d.dtype != DType::F64) fail("{}: tensor '{}' must be F32 or F64", path, name);
  torch::Tensor t = torch::empty(d.shape, d.dtype == DType::F64 ? torch::kFloat64 : torch::kFloat32);
  if (static_cast<size_t>(t.numel()) * t.element_size() != d.bytes.size()) fail("{}: tensor '{}' has the wrong size", path, name);
  std::memcpy(t.data_ptr(), d.bytes.data(), d.bytes.size());
  return t;
}

}  // namespace

void save_optimizer(torch::optim::AdamW& optimizer, const std::string& dir) {
  SafetensorsFile file;
  file.metadata["format"] = "salient-adamw-1";
  const std::vector<torch::Tensor> params = optimizer_params(optimizer);
  file.metadata["params"] = std::to_string(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    auto it = optimizer.state().find(state_key(params[i]));
    if (it == optimizer.state().end()) continue;  // no step taken for it yet
    const auto& st = static_cast<const torch::optim::AdamWParamState&>(*it->second);
    const std::string prefix = fmt::format("p{}.", i);
    file.metadata[prefix + "step"] = std::to_string(st.step());
    file.tensors[prefix + "exp_avg"] = exact_data(st.exp_avg());
    file.tensors[prefix + "exp_avg_sq"] = exact_data(st.exp_avg_sq());
    if (st.max_exp_avg_sq().defined()) file.tensors[prefix + "max_exp_avg_sq"] = exact_data(st.max_exp_avg_sq());
  }
  write_safetensors(join_path(dir, "optimizer.safetensors"), file);
}

void load_optimizer(torch::optim::AdamW& optimizer, const std::string& dir, torch::Device device) {
  const std::string path = join_path(dir, "optimizer.safetensors");
  if (!file_exists(path) && file_exists(join_path(dir, "optimizer.pt"))) {  // a checkpoint of an earlier salient
    torch::serialize::InputArchive archive;
    archive.load_from(join_path(dir, "optimizer.pt"), device);
    optimizer.load(archive);
    return;
  }
  const SafetensorsFile file = read_safetensors(path);
  const std::vector<torch::Tensor> params = optimizer_params(optimizer);
  auto meta = [&](const std::string& key) -> const std::string& {
    auto it = file.metadata.find(key);
    if (it == file.metadata.end()) fail("{}: metadata '{}' missing (not an optimizer state of salient)", path, key);
    return it->second;
  };
  if (meta("format") != "salient-adamw-1") fail("{}: unknown optimizer state format '{}'", path, meta("format"));
  if (meta("params") != std::to_string(params.size()))
    fail("{}: optimizer state for {} parameters, the model has {}", path, meta("params"), params.size());
  optimizer.state().clear();
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string prefix = fmt::format("p{}.", i);
    if (!file.metadata.count(prefix + "step")) continue;
    auto tensor = [&](const std::string& name) {
      auto it = file.tensors.find(prefix + name);
      if (it == file.tensors.end()) fail("{}: tensor '{}' missing", path, prefix + name);
      torch::Tensor t = exact_tensor(it->second, prefix + name, path);
      if (t.sizes() != params[i].sizes()) fail("{}: tensor '{}' has another shape than parameter {}", path, prefix + name, i);
      return t.to(device, params[i].scalar_type());
    };
    auto st = std::make_unique<torch::optim::AdamWParamState>();
    st->step(std::stoll(meta(prefix + "step")));
    st->exp_avg(tensor("exp_avg"));
    st->exp_avg_sq(tensor("exp_avg_sq"));
    if (file.tensors.count(prefix + "max_exp_avg_sq")) st->max_exp_avg_sq(tensor("max_exp_avg_sq"));
    optimizer.state()[state_key(params[i])] = std::move(st);
  }
}

namespace {
// The model's logits [n, num_labels] for every encoding, in length-sorted batches, in input order.
torch::Tensor all_logits(const Classifier& clf, const std::vector<Encoding>& encs, int64_t batch_size) {
  std::vector<int64_t> order(encs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return encs[a].ids.size() < encs[b].ids.size(); });
  torch::Tensor out = torch::zeros({static_cast<int64_t>(encs.size()), clf.model.config().num_labels}, torch::kFloat64);
  torch::NoGradGuard no_grad;
  for (size_t s = 0; s < order.size(); s += batch_size) {
    std::vector<const Encoding*> chunk;
    for (size_t i = s; i < std::min(order.size(), s + batch_size); ++i) chunk.push_back(&encs[order[i]]);
    Batch b = make_batch(chunk, clf.tokenizer.pad_id(), clf.model.device());
    torch::Tensor logits = clf.model.logits(b.input_ids, b.token_type_ids, b.attention_mask).to(torch::kCPU, torch::kFloat64);
    for (size_t i = 0; i < chunk.size(); ++i) out[order[s + i]].copy_(logits[static_cast<int64_t>(i)]);
  }
  return out;
}
}  // namespace

std::vector<int64_t> predict_labels(const Classifier& clf, const std::vector<Encoding>& encs, int64_t batch_size) {
  torch::Tensor am = all_logits(clf, encs, batch_size).argmax(-1).contiguous();
  return {am.data_ptr<int64_t>(), am.data_ptr<int64_t>() + am.numel()};
}

std::vector<double> predict_values(const Classifier& clf, const std::vector<Encoding>& encs, int64_t batch_size) {
  if (clf.model.config().num_labels != 1)
    fail("model: a regression model has one output; this one has {} labels", clf.model.config().num_labels);
  return tensor_values(all_logits(clf, encs, batch_size).select(1, 0));
}

RegressionMetrics evaluate_regressor(const Classifier& clf, const Dataset& data, int64_t max_length, int64_t batch_size) {
  if (!data.has_targets()) fail("--data: '{}' has no regression targets", data.name);
  std::vector<Encoding> encs = encode_all(clf.tokenizer, data, max_length, nullptr);
  std::vector<double> gold;
  for (const auto& r : data.records) gold.push_back(*r.target);
  return regression_metrics(gold, predict_values(clf, encs, batch_size));
}

ClassificationMetrics evaluate_classifier(const Classifier& clf, const Dataset& data, int64_t max_length,
                                          int64_t batch_size) {
  std::vector<Encoding> encs = encode_all(clf.tokenizer, data, max_length, nullptr);
  std::vector<int64_t> gold;
  for (const auto& r : data.records) gold.push_back(r.label);
  return classification_metrics(gold, predict_labels(clf, encs, batch_size), clf.model.config().num_labels);
}

TrainingObjective mean_squared_error_objective() {
  return [](const Classifier& clf, const Batch& b, const torch::Tensor& targets) {
    torch::Tensor out = clf.model.logits(b.input_ids, b.token_type_ids, b.attention_mask).select(1, 0);
    return torch::mse_loss(out, targets.to(out.scalar_type()));
  };
}

TrainingObjective cross_entropy_objective() {
  return [](const Classifier& clf, const Batch& b, const torch::Tensor& labels) {
    return torch::cross_entropy_loss(clf.model.logits(b.input_ids, b.token_type_ids, b.attention_mask), labels);
  };
}

Classifier initial_classifier(const TrainOptions& o, const std::vector<std::string>& label_names) {
  Classifier clf;
  if (!o.init_model.empty()) {
    LoadOptions lo;
    lo.allow_new_head = true;
    if (!o.pooling.empty()) lo.pooling = o.pooling;
    lo.seed = o.seed;
    lo.labels = label_names;
    lo.hidden_dropout = o.dropout;
    lo.attention_dropout = o.attention_dropout;
    LoadReport report;
    clf = load_classifier(o.init_model, lo, &report);
    // A base or pre-trained (BertForMaskedLM) checkpoint: say which weights are new and which unused.
    if (!report.initialised.empty())
      std::fprintf(stderr, "salient: note: %s: %zu head weight(s) newly initialised: %s\n", o.init_model.c_str(),
                   report.initialised.size(), fmt::format("{}", fmt::join(report.initialised, ", ")).c_str());
    if (!report.unexpected.empty())
      std::fprintf(stderr, "salient: note: %s: %zu weight(s) not used by the classifier: %s\n", o.init_model.c_str(),
                   report.unexpected.size(), fmt::format("{}", fmt::join(report.unexpected, ", ")).c_str());
    const int64_t have = clf.model.config().max_tokens();
    if (o.extend_positions && o.max_length > have) {
      clf.model = clf.model.with_position_table(o.max_length + clf.model.config().position_offset);
      std::fprintf(stderr, "salient: note: position table of %s grown from %lld to %lld tokens\n",
                   o.init_model.c_str(), (long long)have, (long long)o.max_length);
    }
  } else {
    if (o.vocab.empty()) fail("--vocab: needed when training from scratch (a vocab.txt or tokenizer directory)");
    clf.tokenizer = Tokenizer::from_path(o.vocab);
    nlohmann::json cfg = {{"model_type", o.model_type},
                          {"architectures", {o.model_type == "bert" ? "BertForSequenceClassification" : "ForSequenceClassification"}},
                          {"vocab_size", clf.tokenizer.vocab_size()},
                          {"hidden_size", o.hidden_size}, {"num_hidden_layers", o.num_layers},
                          {"num_attention_heads", o.num_heads}, {"intermediate_size", o.intermediate_size},
                          {"hidden_act", o.activation}, {"hidden_dropout_prob", o.dropout.value_or(0.1)},
                          {"attention_probs_dropout_prob", o.attention_dropout.value_or(0.1)},
                          {"max_position_embeddings", o.max_length}, {"type_vocab_size", 2},
                          {"layer_norm_eps", 1e-12}, {"pad_token_id", clf.tokenizer.pad_id()}};
    if (!o.pooling.empty()) cfg["salient_pooling"] = o.pooling;
    nlohmann::json id2label = nlohmann::json::object();
    for (size_t i = 0; i < label_names.size(); ++i) id2label[std::to_string(i)] = label_names[i];
    cfg["id2label"] = id2label;
    if (o.model_type != "bert") fail("--model-type: training from scratch supports 'bert' (got '{}')", o.model_type);
    clf.model = Transformer(ModelConfig::from_json(cfg, "<train options>"), o.seed);
    clf.model.to(default_device(), clf.model.dtype());  // drawn on the CPU: the same weights on every device
  }
  return clf;
}

// A parameter gets a gradient only if some rank computed one (a rank with an empty slice computes
// none), as in one process, where AdamW skips a parameter without gradient.
void seed_dropout(uint64_t seed, uint64_t epoch_or_step) {
  torch::manual_seed(seed * 7919ULL + epoch_or_step + 104729ULL * static_cast<uint64_t>(dist::rank()));
}

void average_gradients(const std::vector<torch::Tensor>& params, double share) {
  int64_t total = static_cast<int64_t>(params.size());  // the flags come last
  for (const auto& p : params) total += p.numel();
  // One buffer for the whole run: a fresh 10-100 MB allocation per step cost more in page faults
  // (and MPI's handling of new memory) than the allreduce itself.
  static torch::Tensor flat;
  if (!flat.defined() || flat.numel() != total) flat = torch::empty({total}, torch::kFloat32);
  int64_t at = 0;
  for (const auto& p : params) {
    torch::Tensor part = flat.slice(0, at, at + p.numel());
    if (p.grad().defined()) part.copy_(p.grad().reshape(-1)).mul_(share);
    else part.zero_();
    at += p.numel();
  }
  float* flags = flat.data_ptr<float>() + at;
  for (size_t i = 0; i < params.size(); ++i) flags[i] = params[i].grad().defined() ? 1.0f : 0.0f;
  dist::allreduce_sum(flat.data_ptr<float>(), static_cast<size_t>(total));
  at = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const torch::Tensor& p = params[i];
    const int64_t n = p.numel();
    if (flags[i] > 0) {
      torch::Tensor g = flat.slice(0, at, at + n).view(p.sizes()).to(p.device(), p.scalar_type());
      if (p.grad().defined()) p.mutable_grad().copy_(g);
      else p.mutable_grad() = g.clone();
    }
    at += n;
  }
}

TrainResult train_classifier(const TrainOptions& o_in) {
  TrainOptions o = o_in;
  if (o.select_metric.empty()) o.select_metric = o.regression ? "pearson" : "accuracy";
  const TrainingObjective objective =
      o.objective ? o.objective : o.regression ? mean_squared_error_objective() : cross_entropy_objective();
  if (o.output_dir.empty()) fail("--out: an output directory is required");
  if (o.epochs <= 0) fail("--epochs: must be positive (got {})", o.epochs);
  if (o.batch_size <= 0) fail("--batch-size: must be positive (got {})", o.batch_size);
  if (o.lr <= 0) fail("--lr: must be positive (got {})", o.lr);
  for (const auto& [flag, value] : {std::pair{"--dropout", o.dropout}, std::pair{"--attention-dropout", o.attention_dropout}})
    if (value) require_fraction_below_one(flag, *value);
  require_fraction_below_one("--warmup", o.warmup_ratio);
  if (o.max_length < 4) fail("--max-length: must be at least 4 (got {})", o.max_length);
  if (o.regression) {
    metric_value(RegressionMetrics{}, o.select_metric);
    if (!o.label_names.empty()) fail("--labels: a regression model has no label names");
  } else {
    metric_value(ClassificationMetrics{}, o.select_metric);
  }

  Dataset train = load_dataset(o.train_data, o.data_dir);
  Dataset dev = load_dataset(o.dev_data, o.data_dir);
  if (train.records.empty()) fail("{}: no training examples", o.train_data);
  if (dev.records.empty()) fail("{}: no evaluation examples", o.dev_data);
  if (!o.label_names.empty()) {
    // Only ids can be renamed: names the data gives are its own.
    for (size_t i = 0; i < train.label_names.size(); ++i)
      if (train.label_names[i] != std::to_string(i))
        fail("--labels: '{}' names its labels itself ('{}'); --labels is for integer labels", o.train_data, train.label_names[i]);
    if (o.label_names.size() < train.label_names.size())
      fail("--labels: {} names for {} label ids in '{}'", o.label_names.size(), train.label_names.size(), o.train_data);
    train.label_names = o.label_names;
  }
  if (o.regression) {
    for (const auto* d : {&train, &dev})
      for (const auto& r : d->records)
        if (!r.target) fail("{}: example '{}' has no regression target (--task regression)", d == &train ? o.train_data : o.dev_data, r.id);
    train.label_names = {"score"};  // one output: HF's problem_type "regression"
  } else {
    for (const auto* d : {&train, &dev})
      for (const auto& r : d->records)
        if (r.label < 0 || r.label >= static_cast<int64_t>(train.label_names.size()))
          fail("{}: example '{}' has no usable label", d == &train ? o.train_data : o.dev_data, r.id);
  }

  const std::string ckpt_dir = join_path(o.output_dir, "checkpoint");
  const std::string state_path = join_path(ckpt_dir, "trainer_state.json");
  if (o.resume && dist::is_root()) {
    recover_dir(ckpt_dir);
    remove_stale_temporaries(o.output_dir);  // files a killed run was writing
  }
  dist::barrier();
  const bool resuming = o.resume && file_exists(state_path);

  if (!o.pooling.empty() && !ModelConfig::is_supported_pooling(o.pooling))
    fail("--pooling: unknown value '{}' (first_token, scalar_mix, scalar_mix_cls)", o.pooling);
  Classifier clf;
  if (resuming) {
    clf = load_classifier(ckpt_dir);
    if (!o.pooling.empty() && o.pooling != clf.model.config().pooling)
      fail("--pooling: {} pools '{}', not '{}'; resume with the same options", ckpt_dir, clf.model.config().pooling,
           o.pooling);
  } else {
    clf = initial_classifier(o, train.label_names);
  }
  const int64_t max_len = std::min<int64_t>(o.max_length, clf.model.config().max_tokens());

  int64_t truncated = 0;
  std::vector<Encoding> train_enc = encode_all(clf.tokenizer, train, max_len, &truncated);
  std::vector<Encoding> dev_enc = encode_all(clf.tokenizer, dev, max_len, &truncated);
  if (truncated > 0)
    std::fprintf(stderr, "salient: note: %lld example(s) truncated to %lld tokens\n", (long long)truncated, (long long)max_len);
  std::vector<int64_t> dev_gold;
  std::vector<double> dev_targets;
  for (const auto& r : dev.records) {
    dev_gold.push_back(r.label);
    if (r.target) dev_targets.push_back(*r.target);
  }
  if (o.regression && clf.model.config().num_labels != 1)
    fail("--task regression: the model being trained has {} outputs, not 1", clf.model.config().num_labels);
  if (!o.regression && clf.model.config().num_labels == 1)
    fail("--task: the model being trained is a regression model (one output); add --task regression");

  std::vector<int64_t> subset(train.records.size());
  std::iota(subset.begin(), subset.end(), 0);
  if (o.max_train_examples > 0 && o.max_train_examples < static_cast<int64_t>(subset.size())) {
    std::mt19937_64 pick(o.seed ^ 0x5eed);
    std::shuffle(subset.begin(), subset.end(), pick);
    subset.resize(o.max_train_examples);
  }

  clf.model.set_requires_grad(true);
  const std::vector<std::pair<std::string, torch::Tensor>> named(clf.model.weights().begin(), clf.model.weights().end());
  std::unique_ptr<torch::optim::AdamW> adamw = make_adamw(named, o.lr, o.weight_decay);
  torch::optim::AdamW& optimizer = *adamw;

  const int64_t steps_per_epoch = (static_cast<int64_t>(subset.size()) + o.batch_size - 1) / o.batch_size;
  const int64_t total_steps = steps_per_epoch * o.epochs;
  const int64_t warmup = static_cast<int64_t>(o.warmup_ratio * total_steps);

  TrainResult result;
  int start_epoch = 0;
  int64_t step = 0;
  double best_value = -1e300, trained_seconds = 0;
  if (resuming) {
    nlohmann::json st = parse_json_file(state_path);
    start_epoch = st.at("epochs_done");
    step = st.at("step");
    best_value = st.at("best_value");
    trained_seconds = st.at("train_seconds");
    result.best_epoch = st.at("best_epoch");
    // The dev metrics of the task: the inverse of dev_json below.
    auto read_dev = [&](const nlohmann::json& j, ClassificationMetrics& c, RegressionMetrics& r) {
      if (o.regression) r = regression_from_json(j);
      else c = metrics_from_json(j);
    };
    if (st.contains("best")) read_dev(st["best"], result.best, result.best_regression);
    for (const auto& h : st.at("history")) {
      EpochRecord r;
      r.epoch = h.at("epoch");
      r.train_loss = h.at("train_loss");
      r.seconds = h.at("seconds");
      read_dev(h.at("dev"), r.dev, r.dev_regression);
      result.history.push_back(r);
    }
    load_optimizer(optimizer, ckpt_dir, clf.model.device());
    std::fprintf(stderr, "salient: resuming from %s after epoch %d\n", ckpt_dir.c_str(), start_epoch);
  }

  const auto train_start = Clock::now();
  bool out_of_time = false;
  for (int epoch = start_epoch; epoch < o.epochs && !out_of_time; ++epoch) {
    // Batch order depends only on (seed, epoch), so a resumed run repeats the same schedule.
    std::mt19937_64 rng(o.seed * 1000003ULL + static_cast<uint64_t>(epoch));
    seed_dropout(o.seed, static_cast<uint64_t>(epoch));
    auto batches = bucketed_batches(train_enc, subset, o.batch_size, rng);
    clf.model.train(true);
    Progress bar(fmt::format("epoch {}/{}", epoch + 1, o.epochs), static_cast<int64_t>(batches.size()), "batch");
    double loss_sum = 0;
    int64_t loss_count = 0;
    const auto epoch_start = Clock::now();
    for (const auto& global : batches) {
      bool stop = o.max_minutes > 0 && trained_seconds + seconds_since(train_start) > o.max_minutes * 60;
      if (dist::sharded()) stop = dist::broadcast_from_root(stop ? 1 : 0) != 0;  // rank 0's clock decides for all
      if (stop) {
        out_of_time = true;
        break;
      }
      // Data-parallel (mpirun -np N): this rank's contiguous slice of the global batch.
      const size_t r = static_cast<size_t>(dist::rank()), n = static_cast<size_t>(dist::size());
      const std::vector<int64_t> idx(global.begin() + global.size() * r / n, global.begin() + global.size() * (r + 1) / n);
      std::vector<const Encoding*> chunk;
      std::vector<int64_t> labels;
      std::vector<double> targets;
      for (int64_t i : idx) {
        chunk.push_back(&train_enc[i]);
        labels.push_back(train.records[i].label);
        if (o.regression) targets.push_back(*train.records[i].target);
      }
      const double lr_scale = warmup_linear_decay(step, total_steps, warmup);
      set_learning_rate(optimizer, o.lr * lr_scale);
      optimizer.zero_grad();
      double batch_loss = 0;
      if (!idx.empty()) {
        Batch b = make_batch(chunk, clf.tokenizer.pad_id(), clf.model.device());
        auto loss = objective(clf, b,
                              (o.regression ? torch::tensor(targets, torch::kFloat64) : torch::tensor(labels, torch::kLong))
                                  .to(clf.model.device()));
        loss.backward();
        batch_loss = loss.item<double>() * static_cast<double>(idx.size());
      }
      // The global batch's mean gradient: each rank's mean weighted by its share, summed (the
      // objective averages over its batch). One process: nothing to do.
      if (dist::sharded()) {
        average_gradients(clf.model.parameters(), static_cast<double>(idx.size()) / static_cast<double>(global.size()));
        dist::allreduce_sum(&batch_loss, 1);
      }
      if (o.clip_norm > 0) torch::nn::utils::clip_grad_norm_(clf.model.parameters(), o.clip_norm);
      optimizer.step();
      ++step;
      loss_sum += batch_loss;
      loss_count += static_cast<int64_t>(global.size());
      bar.update(1, fmt::format("loss {:.4f} lr {:.2e}", loss_sum / loss_count, o.lr * lr_scale));
    }
    bar.finish(fmt::format("loss {:.4f}", loss_count ? loss_sum / loss_count : 0.0));
    // The cap ended the run before this epoch's first step (e.g. a --resume with a spent
    // --max-minutes): nothing was trained, so no epoch is recorded or checkpointed.
    if (out_of_time && loss_count == 0) break;
    clf.model.eval();
    EpochRecord rec;
    rec.epoch = epoch + 1;
    rec.train_loss = loss_count ? loss_sum / loss_count : 0.0;
    rec.seconds = seconds_since(epoch_start);
    if (o.regression) {
      rec.dev_regression = regression_metrics(dev_targets, predict_values(clf, dev_enc));
      if (dist::is_root() && Progress::enabled()) std::fprintf(stderr, "epoch %d: train loss %.4f, dev Pearson %.4f, MSE %.4f (%s)\n", rec.epoch, rec.train_loss,
                   rec.dev_regression.pearson, rec.dev_regression.mse, format_duration(rec.seconds).c_str());
    } else {
      rec.dev = classification_metrics(dev_gold, predict_labels(clf, dev_enc), clf.model.config().num_labels);
      if (dist::is_root() && Progress::enabled()) std::fprintf(stderr, "epoch %d: train loss %.4f, dev accuracy %.4f, macro-F1 %.4f, MCC %.4f (%s)\n", rec.epoch,
                   rec.train_loss, rec.dev.accuracy, rec.dev.macro_f1, rec.dev.mcc, format_duration(rec.seconds).c_str());
    }
    result.history.push_back(rec);
    // Every rank holds the same model and the same dev numbers (so the same decisions); rank 0
    // alone writes.
    const double value = o.regression ? metric_value(rec.dev_regression, o.select_metric) : metric_value(rec.dev, o.select_metric);
    if (value > best_value) {
      best_value = value;
      result.best = rec.dev;
      result.best_regression = rec.dev_regression;
      result.best_epoch = rec.epoch;
      clf.model.set_requires_grad(false);
      if (dist::is_root()) save_classifier(clf, o.output_dir);
      clf.model.set_requires_grad(true);
    }
    // Resumable state, written after the best model so a crash never loses a better checkpoint.
    const double elapsed = trained_seconds + seconds_since(train_start);
    nlohmann::json hist = nlohmann::json::array();
    auto dev_json = [&](const ClassificationMetrics& c, const RegressionMetrics& r) {
      return o.regression ? metrics_json(r) : metrics_json(c);
    };
    for (const auto& h : result.history)
      hist.push_back({{"epoch", h.epoch}, {"train_loss", h.train_loss}, {"seconds", h.seconds},
                      {"dev", dev_json(h.dev, h.dev_regression)}});
    nlohmann::json st = {{"epochs_done", epoch + 1}, {"step", step}, {"best_value", best_value},
                         {"best_epoch", result.best_epoch}, {"best", dev_json(result.best, result.best_regression)},
                         {"train_seconds", elapsed}, {"history", hist}};
    nlohmann::json summary = {{"train_data", o.train_data}, {"dev_data", o.dev_data}, {"best_epoch", result.best_epoch},
                              {"best_dev", dev_json(result.best, result.best_regression)}, {"train_seconds", elapsed},
                              {"select_metric", o.select_metric}, {"seed", o.seed}, {"history", hist}};
    if (dist::is_root()) {
      // The epoch's weights, optimizer and state, swapped in whole (a crash keeps the previous set).
      StagedDir staged(ckpt_dir);
      save_classifier(clf, staged.path());
      save_optimizer(optimizer, staged.path());
      write_file_atomic(join_path(staged.path(), "trainer_state.json"), st.dump(2) + "\n");
      staged.commit();
      write_file_atomic(join_path(o.output_dir, "training.json"), summary.dump(2) + "\n");
    }
    dist::barrier();  // a rank that goes on never outruns the checkpoint a resume would read
    if (o.stop_after_epoch > 0 && epoch + 1 >= o.stop_after_epoch) break;
  }
  if (result.history.empty())
    fail("--max-minutes: {} minute(s) ended before the first training step; no model written", o.max_minutes);
  result.train_seconds = trained_seconds + seconds_since(train_start);
  return result;
}

}  // namespace salient

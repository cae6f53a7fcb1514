#include "expnet/expnet.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <sstream>

#include "eval/plausibility.h"
#include "model/checkpoint.h"
#include "util/error.h"
#include "util/io.h"
#include "salient/error.h"
#include "util/progress.h"
#include "util/stats.h"

namespace salient {

namespace {

std::vector<std::string> split_on(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}


}  // namespace

// ---------------------------------------------------------------- features

nlohmann::json FeatureOptions::to_json() const {
  return {{"layers", layers}, {"cls_to_token", cls_to_token}, {"token_to_cls", token_to_cls}, {"stats", stats},
          {"scale", scale}, {"head_pool", head_pool}};
}

FeatureOptions FeatureOptions::from_json(const nlohmann::json& j, const std::string& where) {
  FeatureOptions o;
  try {
    o.layers = j.at("layers").get<std::string>();
    o.cls_to_token = j.at("cls_to_token").get<bool>();
    o.token_to_cls = j.at("token_to_cls").get<bool>();
    o.stats = j.at("stats").get<bool>();
    o.scale = j.at("scale").get<std::string>();
    o.head_pool = j.at("head_pool").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    fail("{}: bad 'features' entry ({})", where, e.what());
  }
  o.validate(where);
  return o;
}

void FeatureOptions::validate(const std::string& where) const {
  if (!cls_to_token && !token_to_cls && !stats) fail("{}: no attention features selected", where);
  if (scale != "raw" && scale != "length") fail("{}: feature scale must be 'raw' or 'length' (got '{}')", where, scale);
  if (head_pool != "none" && head_pool != "sorted" && head_pool != "mean_max")
    fail("{}: head pooling must be 'none', 'sorted' or 'mean_max' (got '{}')", where, head_pool);
  if (layers.empty()) fail("{}: feature layers must be 'last', 'all' or a list of indices", where);
}

std::vector<int64_t> FeatureOptions::layer_indices(int64_t num_layers, const std::string& where) const {
  if (layers == "last") return {num_layers - 1};
  std::vector<int64_t> out;
  if (layers == "all") {
    for (int64_t l = 0; l < num_layers; ++l) out.push_back(l);
    return out;
  }
  for (const auto& part : split_on(layers, ',')) {
    int64_t l = 0;
    try {
      size_t used = 0;
      l = std::stoll(part, &used);
      if (used != part.size()) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      fail("{}: feature layer '{}' is not 'last', 'all' or an integer", where, part);
    }
    if (l < 0) l += num_layers;
    if (l < 0 || l >= num_layers) fail("{}: feature layer {} is outside 0..{}", where, part, num_layers - 1);
    out.push_back(l);
  }
  return out;
}

int64_t FeatureOptions::dim(int64_t num_layers, int64_t num_heads) const {
  const int64_t per_head = (cls_to_token ? 1 : 0) + (token_to_cls ? 1 : 0) + (stats ? 3 : 0);
  const int64_t head_slots = head_pool == "mean_max" ? 2 : num_heads;
  return static_cast<int64_t>(layer_indices(num_layers, "features").size()) * head_slots * per_head;
}

std::vector<RawFeatures> extract_raw_features(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                              int64_t batch_size) {
  std::vector<RawFeatures> out(inputs.size());
  // Length-sorted batches keep padding small; results are put back in input order.
  std::vector<size_t> order(inputs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return inputs[a]->ids.size() < inputs[b]->ids.size(); });
  torch::NoGradGuard no_grad;
  // A batch's attention maps (layers x H x L x L floats per input) are kept whole by the forward
  // pass; long inputs therefore go in smaller batches (at 512 tokens on 6 x 12 heads a batch of 32
  // would hold 2.4 GB of them).
  const auto& config = clf.model.config();
  const double map_bytes = 4.0 * config.num_hidden_layers * config.num_attention_heads;
  constexpr double kMaxBatchAttentionBytes = 256.0 * (1 << 20);
  for (size_t s = 0, next = 0; s < order.size(); s = next) {
    std::vector<const Encoding*> chunk;
    for (next = s; next < order.size() && chunk.size() < static_cast<size_t>(batch_size); ++next) {
      const double len = static_cast<double>(inputs[order[next]]->ids.size());  // the longest so far: sorted
      if (!chunk.empty() && (chunk.size() + 1) * map_bytes * len * len > kMaxBatchAttentionBytes) break;
      chunk.push_back(inputs[order[next]]);
    }
    Batch b = make_batch(chunk, clf.tokenizer.pad_id(), clf.model.device());
    ForwardRequest req;
    req.input_ids = b.input_ids;
    req.token_type_ids = b.token_type_ids;
    req.attention_mask = b.attention_mask;
    req.want_attentions = true;
    ForwardResult r = clf.model.forward(req);
    torch::Tensor pred = r.logits.argmax(-1).cpu();
    for (size_t i = 0; i < chunk.size(); ++i) {
      const int64_t n = static_cast<int64_t>(chunk[i]->ids.size());
      std::vector<torch::Tensor> layers;  // each [H, n, n]: real tokens only
      for (const torch::Tensor& layer : r.attentions) layers.push_back(layer[i].slice(1, 0, n).slice(2, 0, n));
      torch::Tensor a = torch::stack(layers).to(torch::kCPU, torch::kFloat32);  // [layers, H, n, n]
      // Renormalise rows: padding keys got exp(-10000) ≈ 0 already; this removes the rounding rest.
      a = a / a.sum(-1, true);
      torch::Tensor cls_to_tok = a.select(2, 0);                     // [layers, H, n] (query 0)
      torch::Tensor tok_to_cls = a.select(3, 0);                     // [layers, H, n] (key 0)
      torch::Tensor recv_mean = a.mean(2);                           // over queries
      torch::Tensor recv_max = std::get<0>(a.max(2));
      torch::Tensor entropy = -(a * torch::log(a.clamp_min(1e-12))).sum(3);  // per query row
      torch::Tensor st = torch::stack({cls_to_tok, tok_to_cls, recv_mean, recv_max, entropy}, -1);  // [layers, H, n, 5]
      out[order[s + i]].stats = st.permute({2, 0, 1, 3}).contiguous();  // [n, layers, H, 5]
      out[order[s + i]].predicted = pred[i].item<int64_t>();
    }
  }
  return out;
}

torch::Tensor select_features(const torch::Tensor& raw, const FeatureOptions& o, const std::string& where) {
  const int64_t n = raw.size(0), num_layers = raw.size(1);
  torch::Tensor x = raw;
  if (o.scale == "length") {
    // Probabilities × n (uniform → 1); entropy / log n (uniform → 1).
    const double log_n = std::log(std::max<int64_t>(n, 2));
    torch::Tensor factor = torch::tensor({double(n), double(n), double(n), double(n), 1.0 / log_n}, torch::kFloat32);
    x = x * factor;
  }
  std::vector<int64_t> parts;
  if (o.cls_to_token) parts.push_back(kClsToToken);
  if (o.token_to_cls) parts.push_back(kTokenToCls);
  if (o.stats) {
    parts.push_back(kReceivedMean);
    parts.push_back(kReceivedMax);
    parts.push_back(kRowEntropy);
  }
  auto layers = o.layer_indices(num_layers, where);
  x = x.index_select(1, torch::tensor(layers, torch::kLong)).index_select(3, torch::tensor(parts, torch::kLong));
  if (o.head_pool == "sorted") x = std::get<0>(x.sort(2, /*descending=*/true));
  else if (o.head_pool == "mean_max") x = torch::stack({x.mean(2), std::get<0>(x.max(2))}, 2);
  return x.reshape({n, -1});
}

// ---------------------------------------------------------------- labels

std::vector<int> scored_tokens(const Classifier& clf, const Encoding& enc) {
  std::vector<int> out(enc.ids.size(), 0);
  for (size_t t = 0; t < enc.ids.size(); ++t) {
    const int64_t type = t < enc.type_ids.size() ? enc.type_ids[t] : 0;
    out[t] = (type == 0 && !clf.tokenizer.is_structural(enc.ids[t])) ? 1 : 0;  // ids-only inputs too
  }
  return out;
}

// ---------------------------------------------------------------- loss

torch::Tensor focal_loss(const torch::Tensor& logits, const torch::Tensor& targets, double alpha, double gamma) {
  // log p_t computed stably from logits: log σ(z) for positives, log σ(−z) for negatives.
  torch::Tensor y = targets.to(logits.dtype());
  torch::Tensor log_p = torch::log_sigmoid(logits), log_not_p = torch::log_sigmoid(-logits);
  torch::Tensor log_pt = y * log_p + (1 - y) * log_not_p;
  torch::Tensor alpha_t = y * alpha + (1 - y) * (1 - alpha);
  torch::Tensor loss = -alpha_t * log_pt;
  if (gamma != 0) loss = loss * torch::pow(1 - torch::exp(log_pt), gamma);
  return loss.mean();
}

// ---------------------------------------------------------------- model

nlohmann::json ExpNetConfig::to_json() const {
  return {{"format", "salient-expnet-1"}, {"features", features.to_json()}, {"hidden", hidden}, {"activation", activation},
          {"dropout", dropout}, {"num_layers", num_layers}, {"num_heads", num_heads}, {"input_dim", input_dim},
          {"training", training}};
}

ExpNetConfig ExpNetConfig::from_json(const nlohmann::json& j, const std::string& where) {
  ExpNetConfig c;
  try {
    if (j.at("format").get<std::string>() != "salient-expnet-1") fail("{}: unknown format '{}'", where, j.at("format").get<std::string>());
    c.features = FeatureOptions::from_json(j.at("features"), where);
    c.hidden = j.at("hidden").get<std::vector<int64_t>>();
    c.activation = j.at("activation").get<std::string>();
    c.dropout = j.at("dropout").get<double>();
    c.num_layers = j.at("num_layers").get<int64_t>();
    c.num_heads = j.at("num_heads").get<int64_t>();
    c.input_dim = j.at("input_dim").get<int64_t>();
    if (j.contains("training")) c.training = j["training"];
  } catch (const nlohmann::json::exception& e) {
    fail("{}: bad ExpNet config ({})", where, e.what());
  }
  if (c.input_dim != c.features.dim(c.num_layers, c.num_heads))
    fail("{}: input_dim {} does not match the feature options ({})", where, c.input_dim, c.features.dim(c.num_layers, c.num_heads));
  return c;
}

ExpNet::ExpNet(ExpNetConfig config, uint64_t seed) : config_(std::move(config)) {
  if (config_.activation != "relu" && config_.activation != "gelu" && config_.activation != "tanh")
    fail("--activation: must be relu, gelu or tanh (got '{}')", config_.activation);
  require_fraction_below_one("--dropout", config_.dropout);
  for (int64_t h : config_.hidden)
    if (h <= 0) fail("--hidden: layer sizes must be positive (got {})", h);
  if (config_.input_dim <= 0) config_.input_dim = config_.features.dim(config_.num_layers, config_.num_heads);
  torch::manual_seed(seed);
  int64_t in = config_.input_dim;
  std::vector<int64_t> sizes = config_.hidden;
  sizes.push_back(1);
  for (int64_t out : sizes) {
    // PyTorch's nn.Linear default: U(−1/√in, 1/√in) for weights and biases.
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));
    weights_.push_back(torch::empty({out, in}, torch::kFloat32).uniform_(-bound, bound));
    biases_.push_back(torch::empty({out}, torch::kFloat32).uniform_(-bound, bound));
    in = out;
  }
  mean_ = torch::zeros({config_.input_dim}, torch::kFloat32);
  std_ = torch::ones({config_.input_dim}, torch::kFloat32);
}

torch::Tensor ExpNet::logits(const torch::Tensor& features) const {
  torch::Tensor x = (features.to(torch::kFloat32) - mean_) / std_;
  for (size_t i = 0; i < weights_.size(); ++i) {
    x = torch::nn::functional::linear(x, weights_[i], biases_[i]);
    if (i + 1 == weights_.size()) break;
    if (config_.activation == "relu") x = torch::relu(x);
    else if (config_.activation == "gelu") x = torch::gelu(x);
    else x = torch::tanh(x);
    if (config_.dropout > 0) x = torch::dropout(x, config_.dropout, training_);
  }
  return x.squeeze(-1);
}

std::vector<double> ExpNet::explain(const Classifier& clf, const Encoding& enc, const RawFeatures& raw) const {
  torch::NoGradGuard no_grad;
  torch::Tensor p = torch::sigmoid(logits(select_features(raw.stats, config_.features))).to(torch::kFloat64).contiguous();
  std::vector<double> scores(p.data_ptr<double>(), p.data_ptr<double>() + p.numel());
  std::vector<int> scored = scored_tokens(clf, enc);
  for (size_t t = 0; t < scores.size(); ++t)
    if (!scored[t]) scores[t] = 0.0;
  return scores;
}

std::vector<std::vector<double>> ExpNet::explain(const Classifier& clf, const std::vector<const Encoding*>& inputs,
                                                 int64_t batch_size) const {
  check_compatible(clf, clf.dir);
  std::vector<RawFeatures> raw = extract_raw_features(clf, inputs, batch_size);
  std::vector<std::vector<double>> out;
  out.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) out.push_back(explain(clf, *inputs[i], raw[i]));
  return out;
}

void ExpNet::check_compatible(const Classifier& clf, const std::string& where) const {
  const auto& c = clf.model.config();
  if (c.num_attention_heads != config_.num_heads || c.num_hidden_layers != config_.num_layers)
    fail("{}: classifier has {} layers x {} heads but this ExpNet was trained on {} layers x {} heads", where,
         c.num_hidden_layers, c.num_attention_heads, config_.num_layers, config_.num_heads);
}

void ExpNet::set_normalisation(const torch::Tensor& mean, const torch::Tensor& std) {
  mean_ = mean.detach().to(torch::kFloat32).clone();
  std_ = std.detach().to(torch::kFloat32).clamp_min(1e-6).clone();
}

std::vector<torch::Tensor> ExpNet::parameters() const {
  std::vector<torch::Tensor> p;
  for (size_t i = 0; i < weights_.size(); ++i) {
    p.push_back(weights_[i]);
    p.push_back(biases_[i]);
  }
  return p;
}

ExpNet ExpNet::clone() const {
  ExpNet e;
  e.config_ = config_;
  for (size_t i = 0; i < weights_.size(); ++i) {
    e.weights_.push_back(weights_[i].detach().clone());
    e.biases_.push_back(biases_[i].detach().clone());
  }
  e.mean_ = mean_.clone();
  e.std_ = std_.clone();
  return e;
}

void ExpNet::save(const std::string& dir) const {
  make_dirs(dir);
  SafetensorsFile f;
  for (size_t i = 0; i < weights_.size(); ++i) {
    f.tensors[fmt::format("mlp.{}.weight", i)] = tensor_to_data(weights_[i]);
    f.tensors[fmt::format("mlp.{}.bias", i)] = tensor_to_data(biases_[i]);
  }
  f.tensors["feature_mean"] = tensor_to_data(mean_);
  f.tensors["feature_std"] = tensor_to_data(std_);
  f.metadata["format"] = "salient-expnet-1";
  write_safetensors(join_path(dir, "expnet.safetensors"), f);
  write_file_atomic(join_path(dir, "expnet.json"), config_.to_json().dump(2) + "\n");
}

ExpNet ExpNet::load(const std::string& dir) {
  const std::string cfg_path = join_path(dir, "expnet.json"), st_path = join_path(dir, "expnet.safetensors");
  if (!dir_exists(dir)) fail_not_found("{}: no such ExpNet directory", dir);
  if (!file_exists(cfg_path)) fail("{}: not an ExpNet directory (no expnet.json)", dir);
  ExpNet e;
  e.config_ = ExpNetConfig::from_json(parse_json_file(cfg_path), cfg_path);
  SafetensorsFile f = read_safetensors(st_path);
  int64_t in = e.config_.input_dim;
  std::vector<int64_t> sizes = e.config_.hidden;
  sizes.push_back(1);
  auto take = [&](const std::string& name, std::vector<int64_t> shape) {
    auto it = f.tensors.find(name);
    if (it == f.tensors.end()) fail("{}: missing tensor '{}'", st_path, name);
    if (it->second.shape != shape) fail("{}: tensor '{}' has the wrong shape for expnet.json", st_path, name);
    return tensor_from_data(it->second, name, st_path);
  };
  for (size_t i = 0; i < sizes.size(); ++i) {
    e.weights_.push_back(take(fmt::format("mlp.{}.weight", i), {sizes[i], in}));
    e.biases_.push_back(take(fmt::format("mlp.{}.bias", i), {sizes[i]}));
    in = sizes[i];
  }
  e.mean_ = take("feature_mean", {e.config_.input_dim});
  e.std_ = take("feature_std", {e.config_.input_dim});
  if (f.tensors.size() != 2 * sizes.size() + 2) fail("{}: unexpected extra tensors", st_path);
  return e;
}

// ---------------------------------------------------------------- tasks

TaskSpec parse_task_spec(const std::string& arg) {
  auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
    fail("--task: expected NAME=MODEL_DIR[,train=SPEC,val=SPEC,test=SPEC] (got '{}')", arg);
  TaskSpec t;
  t.name = arg.substr(0, eq);
  auto parts = split_on(arg.substr(eq + 1), ',');
  t.model_dir = parts[0];
  if (t.name == "sst2") {
    t.train = "sst-trees:train", t.val = "sst-trees:dev", t.test = "sst-trees:test";
  } else if (t.name == "hatexplain") {
    // The train split has no rationales: a source task trains on validation (85/15 split for
    // early stopping); the held-out task is evaluated on test.
    t.train = "hatexplain:val", t.val = "", t.test = "hatexplain:test";
  } else if (t.name == "eraser") {
    t.train = "eraser:train", t.val = "eraser:val", t.test = "eraser:test";
  } else if (t.name == "cola") {
    fail("--task cola: CoLA has no human rationales in shared/data, so ExpNet can neither train nor be evaluated on it");
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    auto kv = parts[i].find('=');
    std::string key = parts[i].substr(0, kv), value = kv == std::string::npos ? "" : parts[i].substr(kv + 1);
    if (key == "train") t.train = value;
    else if (key == "val") t.val = value;
    else if (key == "test") t.test = value;
    else fail("--task {}: unknown key '{}' (train, val, test)", t.name, key);
  }
  if (t.train.empty() && t.test.empty())
    fail("--task {}: not a built-in task (sst2, hatexplain, eraser); give train=SPEC and/or test=SPEC", t.name);
  return t;
}

TaskSplit load_task_split(const Classifier& clf, const std::string& spec, const std::string& data_dir, int64_t limit) {
  Dataset data = load_dataset(spec, data_dir);
  if (!data.has_rationales()) fail("{}: no human rationales (ExpNet needs word-level rationales)", spec);
  TaskSplit split;
  split.spec = spec;
  split.records = static_cast<int64_t>(data.records.size());
  for (const auto& r : data.records) {
    if (limit > 0 && static_cast<int64_t>(split.examples.size()) >= limit) break;
    const int64_t words_marked = std::count_if(r.rationale.begin(), r.rationale.end(), [](float v) { return v >= 0.5f; });
    if (r.rationale.empty() || words_marked == 0) {
      ++split.no_rationale;  // e.g. HateXplain normal posts: nothing to learn or score
      continue;
    }
    TaskExample ex;
    ex.id = r.id;
    ex.enc = clf.encode(r.text, r.text_pair);
    ex.labels = project_rationale(r.text, ex.enc, r.rationale, fmt::format("{}: example '{}'", spec, r.id));
    ex.gold_label = r.label;
    ex.positives = std::count(ex.labels.begin(), ex.labels.end(), 1);
    split.rationale_words_total += words_marked;
    if (ex.enc.truncated) {
      ++split.truncated;
      // Rationale words whose pieces all fell beyond the classifier's max length.
      std::vector<int64_t> words = whitespace_word_ids(r.text, ex.enc, 0);
      std::vector<char> kept(r.rationale.size(), 0);
      for (int64_t w : words)
        if (w >= 0) kept[w] = 1;
      for (size_t w = 0; w < r.rationale.size(); ++w)
        if (r.rationale[w] >= 0.5f && !kept[w]) ++split.rationale_lost;
    }
    if (ex.positives == 0) {
      ++split.no_rationale;  // all rationale words truncated away
      continue;
    }
    split.examples.push_back(std::move(ex));
  }
  std::vector<const Encoding*> encs;
  for (const auto& ex : split.examples) encs.push_back(&ex.enc);
  std::vector<RawFeatures> raw = extract_raw_features(clf, encs);
  for (size_t i = 0; i < raw.size(); ++i) split.examples[i].raw = std::move(raw[i]);
  if (split.examples.empty()) fail("{}: no example has a rationale token", spec);
  return split;
}

// ---------------------------------------------------------------- training

namespace {

struct TokenMatrix {
  torch::Tensor x, y;  // [T, F], [T]
  int64_t examples = 0, filtered_out = 0;
};

TokenMatrix gather_tokens(const std::vector<const TaskSplit*>& splits, const FeatureOptions& fo, bool filter_correct) {
  std::vector<torch::Tensor> xs;
  std::vector<float> ys;
  TokenMatrix m;
  for (const TaskSplit* s : splits)
    for (const auto& ex : s->examples) {
      if (filter_correct && ex.raw.predicted != ex.gold_label) {
        ++m.filtered_out;
        continue;
      }
      std::vector<int64_t> rows;
      for (size_t t = 0; t < ex.labels.size(); ++t)
        if (ex.labels[t] >= 0) {
          rows.push_back(static_cast<int64_t>(t));
          ys.push_back(static_cast<float>(ex.labels[t]));
        }
      xs.push_back(select_features(ex.raw.stats, fo, s->spec).index_select(0, torch::tensor(rows, torch::kLong)));
      ++m.examples;
    }
  if (xs.empty()) fail("ExpNet training: no usable examples (all filtered out?)");
  m.x = torch::cat(xs, 0);
  m.y = torch::tensor(ys, torch::kFloat32);
  return m;
}

double eval_loss(const ExpNet& net, const TokenMatrix& m, const ExpNetTrainOptions& o) {
  torch::NoGradGuard no_grad;
  torch::Tensor z = net.logits(m.x);
  return (o.loss == "bce" ? torch::binary_cross_entropy_with_logits(z, m.y) : focal_loss(z, m.y, o.alpha, o.gamma)).item<double>();
}

}  // namespace

ExpNetTrainResult train_expnet(const std::vector<const TaskSplit*>& train, const std::vector<const TaskSplit*>& val,
                               const ExpNetTrainOptions& o) {
  if (o.loss != "focal" && o.loss != "bce") fail("--loss: must be 'focal' or 'bce' (got '{}')", o.loss);
  if (o.alpha <= 0 || o.alpha >= 1) fail("--alpha: must be in (0, 1) (got {})", o.alpha);
  if (o.gamma < 0) fail("--gamma: must be >= 0 (got {})", o.gamma);
  if (o.batch_size <= 0) fail("--batch-size: must be positive (got {})", o.batch_size);
  if (o.max_epochs <= 0) fail("--epochs: must be positive (got {})", o.max_epochs);
  if (o.patience <= 0) fail("--patience: must be positive (got {})", o.patience);
  if (!(o.lr > 0)) fail("--lr: must be positive (got {})", o.lr);
  require_fraction_below_one("--dropout", o.model.dropout);
  if (train.empty()) fail("ExpNet training: no source task");
  o.model.features.validate("--features");
  const auto start = std::chrono::steady_clock::now();

  TokenMatrix tr = gather_tokens(train, o.model.features, o.filter_correct);
  // Validation uses every example (no filter): early stopping should reflect all inputs.
  TokenMatrix va = val.empty() ? TokenMatrix{} : gather_tokens(val, o.model.features, false);

  ExpNetConfig cfg = o.model;
  cfg.input_dim = tr.x.size(1);
  ExpNet net(cfg, o.seed);
  net.set_normalisation(tr.x.mean(0), tr.x.std(0));
  for (auto& p : net.parameters()) p.set_requires_grad(true);
  torch::optim::Adam opt(net.parameters(), torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));

  ExpNetTrainResult res;
  res.train_tokens = tr.x.size(0);
  res.train_positive = static_cast<int64_t>(tr.y.sum().item<double>());
  res.val_tokens = va.x.defined() ? va.x.size(0) : 0;
  res.train_examples = tr.examples;
  res.filtered_out = tr.filtered_out;
  res.best_val_loss = 1e300;
  res.model = net.clone();

  torch::manual_seed(o.seed);
  std::mt19937_64 rng(o.seed);
  const int64_t n = tr.x.size(0);
  int since_best = 0;
  for (int epoch = 1; epoch <= o.max_epochs; ++epoch) {
    net.train(true);
    std::vector<int64_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    torch::Tensor order = torch::tensor(perm, torch::kLong);
    const int64_t steps = (n + o.batch_size - 1) / o.batch_size;
    std::optional<Progress> bar;
    if (o.progress) bar.emplace(fmt::format("expnet epoch {}", epoch), steps, "step");
    double loss_sum = 0;
    for (int64_t s = 0; s < steps; ++s) {
      torch::Tensor idx = order.slice(0, s * o.batch_size, std::min(n, (s + 1) * o.batch_size));
      torch::Tensor z = net.logits(tr.x.index_select(0, idx));
      torch::Tensor yb = tr.y.index_select(0, idx);
      torch::Tensor loss = o.loss == "bce" ? torch::binary_cross_entropy_with_logits(z, yb) : focal_loss(z, yb, o.alpha, o.gamma);
      opt.zero_grad();
      loss.backward();
      opt.step();
      loss_sum += loss.item<double>();
      if (bar) bar->update(1, fmt::format("loss {:.4f}", loss_sum / (s + 1)));
    }
    net.train(false);
    const double vl = va.x.defined() ? eval_loss(net, va, o) : loss_sum / steps;
    if (bar) bar->finish(fmt::format("loss {:.4f} val {:.4f}", loss_sum / steps, vl));
    res.epochs_run = epoch;
    if (vl < res.best_val_loss - 1e-6) {
      res.best_val_loss = vl;
      res.best_epoch = epoch;
      res.model = net.clone();
      since_best = 0;
    } else if (++since_best >= o.patience) {
      break;
    }
  }
  res.model.train(false);
  for (auto& p : res.model.parameters()) p.set_requires_grad(false);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  res.model.config().training = {{"loss", o.loss}, {"alpha", o.alpha}, {"gamma", o.gamma}, {"filter_correct", o.filter_correct},
                                 {"lr", o.lr}, {"batch_size", o.batch_size}, {"seed", o.seed}, {"best_epoch", res.best_epoch},
                                 {"epochs_run", res.epochs_run}, {"best_val_loss", res.best_val_loss},
                                 {"train_tokens", res.train_tokens}, {"train_positive", res.train_positive},
                                 {"train_examples", res.train_examples}, {"filtered_out", res.filtered_out}};
  return res;
}

// ---------------------------------------------------------------- evaluation

PlausibilityRow plausibility(const std::vector<TaskExample>& examples, const std::vector<std::vector<double>>& scores,
                             double threshold) {
  if (examples.size() != scores.size()) fail("plausibility: {} examples but {} score lists", examples.size(), scores.size());
  std::vector<double> f1t, pt, rt, f1k, pk, rk, roc, prc;
  for (size_t i = 0; i < examples.size(); ++i) {
    const auto& labels = examples[i].labels;
    if (scores[i].size() != labels.size()) fail("plausibility: example '{}' has {} scores for {} tokens", examples[i].id, scores[i].size(), labels.size());
    std::vector<double> s;
    std::vector<int> g;
    for (size_t t = 0; t < labels.size(); ++t)
      if (labels[t] >= 0) {
        s.push_back(scores[i][t]);
        g.push_back(labels[t]);
      }
    const int64_t k = std::count(g.begin(), g.end(), 1);
    if (k == 0) continue;
    PrfScores a = token_prf_threshold(s, g, threshold), b = token_prf_top_k(s, g, k);
    f1t.push_back(a.f1), pt.push_back(a.precision), rt.push_back(a.recall);
    f1k.push_back(b.f1), pk.push_back(b.precision), rk.push_back(b.recall);
    double r = auroc(s, g), p = auprc(s, g);
    if (!std::isnan(r)) roc.push_back(r);
    if (!std::isnan(p)) prc.push_back(p);
  }
  PlausibilityRow row;
  row.f1_threshold = mean_of(f1t), row.precision_threshold = mean_of(pt), row.recall_threshold = mean_of(rt);
  row.f1_top_k = mean_of(f1k), row.precision_top_k = mean_of(pk), row.recall_top_k = mean_of(rk);
  row.auroc = mean_of(roc), row.auprc = mean_of(prc);
  row.examples = static_cast<int64_t>(f1t.size());
  row.auroc_examples = static_cast<int64_t>(roc.size());
  return row;
}

void set_feature_list(FeatureOptions& f, const std::string& list, const std::string& where) {
  f.cls_to_token = f.token_to_cls = f.stats = false;
  for (const std::string& item : split_on(list, ',')) {
    if (item == "cls_to_token") f.cls_to_token = true;
    else if (item == "token_to_cls") f.token_to_cls = true;
    else if (item == "stats") f.stats = true;
    else fail("{}: unknown feature '{}' (cls_to_token, token_to_cls, stats)", where, item);
  }
  f.validate(where);
}

ExpNetTrainResult train_expnet_on_tasks(const std::vector<std::string>& tasks, const std::string& data_dir,
                                        int64_t max_train, ExpNetTrainOptions o) {
  if (tasks.empty()) fail("--task: give at least one source task");
  if (max_train < 0) fail("--max-train: must be >= 0 (got {})", max_train);
  std::vector<TaskSplit> trains, vals;
  trains.reserve(tasks.size());
  vals.reserve(tasks.size());
  int64_t layers = -1, heads = -1;
  for (const auto& arg : tasks) {
    TaskSpec t = parse_task_spec(arg);
    if (t.train.empty()) fail("--task {}: needs a train= spec", t.name);
    Classifier clf = load_classifier(t.model_dir);
    const auto& mc = clf.model.config();
    if (layers >= 0 && (mc.num_hidden_layers != layers || mc.num_attention_heads != heads))
      fail("--task {}: classifier has {} layers x {} heads, the other tasks {} x {}", t.name, mc.num_hidden_layers,
           mc.num_attention_heads, layers, heads);
    layers = mc.num_hidden_layers, heads = mc.num_attention_heads;
    trains.push_back(load_task_split(clf, t.train, data_dir, max_train));
    if (trains.back().truncated > 0)
      std::fprintf(stderr, "salient: note: %s: %lld example(s) truncated to %lld tokens\n", t.train.c_str(),
                   (long long)trains.back().truncated, (long long)mc.max_tokens());
    if (!t.val.empty()) {
      vals.push_back(load_task_split(clf, t.val, data_dir, max_train > 0 ? std::max<int64_t>(1, max_train / 5) : 0));
    } else {
      // No validation spec: hold out every 7th example (deterministic) for early stopping.
      TaskSplit v, keep;
      v.spec = t.train + " (every 7th example)";
      keep.spec = t.train;
      for (size_t i = 0; i < trains.back().examples.size(); ++i)
        (i % 7 == 6 ? v : keep).examples.push_back(std::move(trains.back().examples[i]));
      trains.back() = std::move(keep);
      vals.push_back(std::move(v));
    }
  }
  o.model.num_layers = layers;
  o.model.num_heads = heads;
  std::vector<const TaskSplit*> tr, va;
  for (auto& s : trains) tr.push_back(&s);
  for (auto& s : vals) va.push_back(&s);
  ExpNetTrainResult r = train_expnet(tr, va, o);
  r.model.config().training["tasks"] = tasks;
  return r;
}

nlohmann::json train_result_json(const ExpNetTrainResult& r, const std::string& out) {
  return {{"out", out},
          {"best_epoch", r.best_epoch},
          {"epochs_run", r.epochs_run},
          {"best_val_loss", r.best_val_loss},
          {"train_tokens", r.train_tokens},
          {"train_positive", r.train_positive},
          {"train_examples", r.train_examples},
          {"filtered_out", r.filtered_out},
          {"seconds", r.seconds}};
}

nlohmann::json evaluate_expnet(const std::string& expnet_dir, const std::string& model_dir, const std::string& data,
                               const std::string& data_dir, int64_t max_test, double threshold) {
  if (max_test < 0) fail("--max-test: must be >= 0 (got {})", max_test);
  Classifier clf = load_classifier(model_dir);
  ExpNet net = ExpNet::load(expnet_dir);
  net.check_compatible(clf, model_dir);
  TaskSplit split = load_task_split(clf, data, data_dir, max_test);
  std::vector<std::vector<double>> scores;
  for (const auto& ex : split.examples) scores.push_back(net.explain(clf, ex.enc, ex.raw));
  PlausibilityRow r = plausibility(split.examples, scores, threshold);
  return {{"data", data},
          {"examples", r.examples},
          {"skipped_no_rationale", split.no_rationale},
          {"truncated", split.truncated},
          {"f1_threshold", r.f1_threshold},
          {"precision_threshold", r.precision_threshold},
          {"recall_threshold", r.recall_threshold},
          {"f1_top_k", r.f1_top_k},
          {"precision_top_k", r.precision_top_k},
          {"recall_top_k", r.recall_top_k},
          {"auroc", r.auroc},
          {"auprc", r.auprc},
          {"auroc_examples", r.auroc_examples}};
}

}  // namespace salient

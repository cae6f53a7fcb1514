#include "sst/model.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "model/checkpoint.h"
#include "model/windows.h"
#include "util/error.h"
#include "util/io.h"

namespace salient::sst {

namespace F = torch::nn::functional;

FeatureBatch FeatureBatch::rows(const torch::Tensor& index) const {
  FeatureBatch out;
  out.values = values.index_select(0, index);
  out.features = features.index_select(0, index);
  if (attention_mask.defined()) out.attention_mask = attention_mask.index_select(0, index);
  if (token_type_ids.defined()) out.token_type_ids = token_type_ids.index_select(0, index);
  return out;
}

FeatureBatch FeatureBatch::repeat(int64_t times) const {
  return rows(torch::zeros({times}, torch::kInt64));
}

torch::Tensor SstModel::logits(const FeatureBatch& x) const {
  return mixed_logits(x, x.values, torch::ones(x.values.sizes(), torch::kFloat32));
}

torch::Tensor subset_of(const torch::Tensor& selection, const torch::Tensor& features, double tau) {
  return selection.ge(tau).logical_and(features);
}

std::vector<int64_t> subset_positions(const torch::Tensor& subset) {
  torch::Tensor p = subset.nonzero().flatten().contiguous();
  return std::vector<int64_t>(p.data_ptr<int64_t>(), p.data_ptr<int64_t>() + p.numel());
}

// ---------------------------------------------------------------- image models

nlohmann::json ImageModelSpec::to_json() const {
  return {{"arch", arch}, {"channels", channels}, {"height", height}, {"width", width}, {"classes", classes},
          {"hidden", hidden}};
}

ImageModelSpec ImageModelSpec::from_json(const nlohmann::json& j, const std::string& where) {
  ImageModelSpec s;
  try {
    s.arch = j.at("arch").get<std::string>();
    s.channels = j.at("channels").get<int64_t>();
    s.height = j.at("height").get<int64_t>();
    s.width = j.at("width").get<int64_t>();
    s.classes = j.at("classes").get<int64_t>();
    s.hidden = j.value("hidden", std::vector<int64_t>{});
  } catch (const nlohmann::json::exception& e) {
    fail("{}: bad image model spec: {}", where, one_line(e.what()));
  }
  return s;
}

namespace {

// PyTorch's default initialisation of Linear and Conv2d (kaiming_uniform with a = √5, i.e.
// U(±1/√fan_in) for weights and biases), drawn from a seeded generator.
torch::Tensor uniform_init(std::vector<int64_t> shape, int64_t fan_in, at::Generator& gen) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return torch::rand(shape, gen, torch::kFloat32) * (2 * bound) - bound;
}

class ImageSstModel : public SstModel {
 public:
  ImageSstModel(ImageModelSpec spec, uint64_t seed) : spec_(std::move(spec)) {
    if (spec_.arch != "mlp" && spec_.arch != "resnet")
      fail("--arch: image models are mlp or resnet, got '{}'", spec_.arch);
    if (spec_.channels < 1 || spec_.height < 1 || spec_.width < 1 || spec_.classes < 2)
      fail("image model: bad shape {}x{}x{} with {} classes", spec_.channels, spec_.height, spec_.width, spec_.classes);
    if (spec_.hidden.empty())
      spec_.hidden = spec_.arch == "mlp" ? std::vector<int64_t>{128, 64} : std::vector<int64_t>{16, 32, 32};
    for (int64_t h : spec_.hidden)
      if (h < 1) fail("--hidden: sizes must be positive, got {}", h);
    if (spec_.arch == "resnet" && spec_.hidden.size() != 3) fail("--hidden: resnet takes three stage widths");
    auto gen = at::detail::createCPUGenerator(seed);
    const int64_t f = features();
    auto linear = [&](const std::string& name, int64_t in, int64_t out) {
      w_[name + ".weight"] = uniform_init({out, in}, in, gen);
      w_[name + ".bias"] = uniform_init({out}, in, gen);
    };
    auto conv = [&](const std::string& name, int64_t in, int64_t out) {
      w_[name + ".weight"] = uniform_init({out, in, 3, 3}, in * 9, gen);
      w_[name + ".bias"] = uniform_init({out}, in * 9, gen);
    };
    if (spec_.arch == "mlp") {
      int64_t in = f;
      for (size_t i = 0; i < spec_.hidden.size(); ++i) {
        linear("trunk." + std::to_string(i), in, spec_.hidden[i]);
        in = spec_.hidden[i];
      }
      linear("classifier", in, spec_.classes);
      linear("explainer", in, f);
    } else {
      const auto& c = spec_.hidden;
      conv("stem", spec_.channels, c[0]);
      for (int s = 0; s < 3; ++s) {
        const std::string st = "stage" + std::to_string(s);
        if (s > 0) conv(st + ".down", c[s - 1], c[s]);
        conv(st + ".conv1", c[s], c[s]);
        conv(st + ".conv2", c[s], c[s]);
      }
      linear("classifier", c[2], spec_.classes);
      linear("explainer", c[2] * last_map_size(), f);
    }
    for (auto& [name, t] : w_) t.set_requires_grad(true);
  }

  std::string modality() const override { return "image"; }
  std::string arch() const override { return spec_.arch; }
  int64_t num_classes() const override { return spec_.classes; }
  std::vector<int64_t> image_shape() const override { return {spec_.channels, spec_.height, spec_.width}; }
  const ImageModelSpec& spec() const { return spec_; }

  SstOutput forward(const FeatureBatch& x) const override {
    auto [features, explainer_in] = trunk(x.values);
    SstOutput out;
    out.logits = linear("classifier", features);
    out.selection = torch::sigmoid(linear("explainer", explainer_in)) * x.features.to(torch::kFloat32);
    return out;
  }

  torch::Tensor mixed_logits(const FeatureBatch& x, const torch::Tensor& fill, const torch::Tensor& keep) const override {
    torch::Tensor mixed = keep * x.values + (1 - keep) * fill;
    return linear("classifier", trunk(mixed).first);
  }

  std::vector<torch::Tensor> parameters() const override {
    std::vector<torch::Tensor> out;
    for (const auto& [name, t] : w_) out.push_back(t);
    return out;
  }
  void set_training(bool) override {}  // no dropout
  std::map<std::string, torch::Tensor> state() const override { return w_; }
  void load_state(const std::map<std::string, torch::Tensor>& state, const std::string& where) override {
    for (auto& [name, t] : w_) {
      auto it = state.find(name);
      if (it == state.end()) fail("{}: missing tensor '{}'", where, name);
      if (it->second.sizes() != t.sizes()) fail("{}: tensor '{}' has the wrong shape for sst.json", where, name);
      torch::NoGradGuard ng;
      t.copy_(it->second);
    }
    if (state.size() != w_.size()) fail("{}: {} tensors, the model has {}", where, state.size(), w_.size());
  }

 private:
  int64_t features() const { return spec_.channels * spec_.height * spec_.width; }
  int64_t last_map_size() const {
    int64_t h = spec_.height, w = spec_.width;
    for (int s = 0; s < 2; ++s) h = (h + 1) / 2, w = (w + 1) / 2;  // two stride-2 convs, padding 1
    return h * w;
  }
  torch::Tensor linear(const std::string& name, const torch::Tensor& x) const {
    return F::linear(x, w_.at(name + ".weight"), w_.at(name + ".bias"));
  }
  torch::Tensor conv(const std::string& name, const torch::Tensor& x, int64_t stride = 1) const {
    return F::conv2d(x, w_.at(name + ".weight"),
                     F::Conv2dFuncOptions().bias(w_.at(name + ".bias")).stride(stride).padding(1));
  }
  // (the classifier's input, the explanation head's input)
  std::pair<torch::Tensor, torch::Tensor> trunk(const torch::Tensor& values) const {
    if (spec_.arch == "mlp") {
      torch::Tensor h = values;
      for (size_t i = 0; i < spec_.hidden.size(); ++i) h = torch::relu(linear("trunk." + std::to_string(i), h));
      return {h, h};
    }
    torch::Tensor h = values.reshape({values.size(0), spec_.channels, spec_.height, spec_.width});
    h = torch::relu(conv("stem", h));
    for (int s = 0; s < 3; ++s) {
      const std::string st = "stage" + std::to_string(s);
      if (s > 0) h = torch::relu(conv(st + ".down", h, 2));
      h = torch::relu(h + conv(st + ".conv2", torch::relu(conv(st + ".conv1", h))));
    }
    return {h.mean({2, 3}), h.flatten(1)};
  }

  ImageModelSpec spec_;
  std::map<std::string, torch::Tensor> w_;
};

// ---------------------------------------------------------------- text model

class TextSstModel : public SstModel {
 public:
  TextSstModel(Classifier clf, uint64_t seed) : clf_(std::move(clf)) {
    const int64_t hidden = clf_.model.config().hidden_size;
    auto gen = at::detail::createCPUGenerator(seed);
    head_w_ = torch::randn({1, hidden}, gen, torch::kFloat32) * 0.02;  // HF's normal(0, 0.02) init
    head_b_ = torch::zeros({1});
    head_w_.set_requires_grad(true);
    head_b_.set_requires_grad(true);
    clf_.model.set_requires_grad(true);
    set_label_names(clf_.model.config().id2label);
  }

  std::string modality() const override { return "text"; }
  std::string arch() const override { return "transformer"; }
  int64_t num_classes() const override { return clf_.model.config().num_labels; }
  const Classifier& classifier() const { return clf_; }

  SstOutput forward(const FeatureBatch& x) const override {
    if (windowed(x)) return forward_windows(x);
    ForwardRequest req;
    req.input_ids = x.values;
    req.token_type_ids = x.token_type_ids;
    req.attention_mask = x.attention_mask;
    req.want_hidden_states = true;
    ForwardResult r = clf_.model.forward(req);
    SstOutput out;
    out.logits = r.logits;
    out.selection = selection_from_hidden(r.hidden_states.back(), head_w_, head_b_) * x.features.to(torch::kFloat32);
    return out;
  }

  torch::Tensor mixed_logits(const FeatureBatch& x, const torch::Tensor& fill, const torch::Tensor& keep) const override {
    torch::Tensor k = keep.unsqueeze(-1);
    return embedding_logits(x, k * clf_.model.word_embeddings(x.values) + (1 - k) * clf_.model.word_embeddings(fill));
  }

  // The logits with `embeds` [B, L, E] as the word embeddings of x's tokens.
  torch::Tensor embedding_logits(const FeatureBatch& x, const torch::Tensor& embeds) const {
    if (windowed(x)) return windowed_logits(x, embeds);
    ForwardRequest req;
    req.inputs_embeds = embeds;
    req.token_type_ids = x.token_type_ids;
    req.attention_mask = x.attention_mask;
    return clf_.model.forward(req).logits;
  }

  torch::Tensor logits(const FeatureBatch& x) const override {
    if (windowed(x)) return windowed_logits(x);
    return clf_.model.logits(x.values, x.token_type_ids, x.attention_mask);
  }

  std::vector<torch::Tensor> parameters() const override {
    std::vector<torch::Tensor> out = clf_.model.parameters();
    out.push_back(head_w_);
    out.push_back(head_b_);
    return out;
  }
  void set_training(bool on) override { clf_.model.train(on); }
  std::map<std::string, torch::Tensor> state() const override {
    std::map<std::string, torch::Tensor> s = clf_.model.weights();
    s["sst_head.weight"] = head_w_;
    s["sst_head.bias"] = head_b_;
    return s;
  }
  void load_state(const std::map<std::string, torch::Tensor>& state, const std::string& where) override {
    std::map<std::string, torch::Tensor> model_weights;
    for (const auto& [name, t] : state) {
      if (name == "sst_head.weight" || name == "sst_head.bias") continue;
      model_weights[name] = t.detach().clone();
    }
    for (const auto& [name, t] : clf_.model.weights())
      if (!model_weights.count(name) || model_weights[name].sizes() != t.sizes())
        fail("{}: tensor '{}' missing or of the wrong shape", where, name);
    clf_.model.set_weights(std::move(model_weights));
    clf_.model.set_requires_grad(true);
    set_head(state, where);
  }
  void set_head(const std::map<std::string, torch::Tensor>& state, const std::string& where) {
    auto take = [&](const std::string& name, torch::Tensor& dst) {
      auto it = state.find(name);
      if (it == state.end()) fail("{}: missing tensor '{}'", where, name);
      if (it->second.sizes() != dst.sizes()) fail("{}: tensor '{}' has the wrong shape for the model", where, name);
      dst = it->second.detach().clone().set_requires_grad(true);
    };
    take("sst_head.weight", head_w_);
    take("sst_head.bias", head_b_);
  }

  static torch::Tensor selection_from_hidden(const torch::Tensor& hidden, const torch::Tensor& w, const torch::Tensor& b) {
    return torch::sigmoid(F::linear(hidden, w, b).squeeze(-1));
  }

 private:
  // Rows longer than the encoder's positions (data read with `windows`) are read whole as windows
  // (model/windows.h: [CLS] + a slice of the pieces + [SEP], half a window apart), as `salient
  // predict --windows` reads them: a row's logits are its windows' mean, a token's s the mean over
  // the windows that hold it.
  struct WindowPlan {
    torch::Tensor source;  // [W, P] int64: the flat position (row · L + column) each window slot reads
    torch::Tensor slots;   // [W, P] bool: the real slots (the rest is padding)
    torch::Tensor row;     // [W] int64: the row each window belongs to
    int64_t pad_id = 0;
    int64_t count() const { return row.size(0); }
    // The windows of x as one batch: x's token ids, or `embeds` [B, L, E] as their word embeddings.
    ForwardRequest request(const FeatureBatch& x, const torch::Tensor& embeds = {}) const {
      ForwardRequest req;
      const torch::Tensor flat_source = source.flatten();
      if (embeds.defined()) {
        const int64_t e = embeds.size(2);
        req.inputs_embeds = embeds.reshape({-1, e}).index_select(0, flat_source).reshape({count(), -1, e});
      } else {
        req.input_ids = torch::where(slots, x.values.flatten().index_select(0, flat_source).view_as(source),
                                     torch::full_like(source, pad_id));
      }
      if (x.token_type_ids.defined())
        req.token_type_ids = x.token_type_ids.flatten().index_select(0, flat_source).view_as(source) * slots;
      req.attention_mask = slots.to(x.attention_mask.scalar_type());
      return req;
    }
    torch::Tensor row_mean(const torch::Tensor& per_window, int64_t rows) const {
      torch::Tensor n = torch::zeros({rows}, per_window.options()).index_add(0, row, torch::ones({count()}, per_window.options()));
      return torch::zeros({rows, per_window.size(1)}, per_window.options()).index_add(0, row, per_window) / n.unsqueeze(1);
    }
  };

  bool windowed(const FeatureBatch& x) const { return x.width() > clf_.model.config().max_tokens(); }

  WindowPlan plan_windows(const FeatureBatch& x) const {
    const int64_t positions = clf_.model.config().max_tokens(), width = x.width();
    const torch::Tensor lengths = x.attention_mask.sum(1).to(torch::kInt64).contiguous();
    std::vector<int64_t> source, row;
    std::vector<uint8_t> slots;
    for (int64_t b = 0; b < x.size(); ++b) {
      const int64_t length = lengths[b].item<int64_t>(), pieces = length - 2, base = b * width;
      for (int64_t start : window_starts(pieces, positions, 0, "windows")) {
        const int64_t n = std::min(positions - 2, pieces - start);
        std::vector<int64_t> w = {base};  // [CLS]
        for (int64_t k = 0; k < n; ++k) w.push_back(base + 1 + start + k);
        w.push_back(base + length - 1);  // [SEP]
        const auto real = static_cast<int64_t>(w.size());
        w.resize(positions, base);
        source.insert(source.end(), w.begin(), w.end());
        for (int64_t k = 0; k < positions; ++k) slots.push_back(k < real);
        row.push_back(b);
      }
    }
    WindowPlan p;
    const auto windows = static_cast<int64_t>(row.size());
    p.source = torch::tensor(source, torch::kInt64).reshape({windows, positions});
    p.slots = torch::tensor(slots, torch::kUInt8).to(torch::kBool).reshape({windows, positions});
    p.row = torch::tensor(row, torch::kInt64);
    p.pad_id = clf_.tokenizer.pad_id();
    return p;
  }

  // The encoder over the windows, a chunk at a time when no gradient is kept (memory).
  ForwardResult run_windows(const ForwardRequest& req) const {
    const int64_t windows = req.attention_mask.size(0), chunk = torch::GradMode::is_enabled() ? windows : 32;
    ForwardResult out;
    std::vector<torch::Tensor> logits, last;
    for (int64_t s = 0; s < windows; s += chunk) {
      auto part = [&](const torch::Tensor& t) { return t.defined() ? t.slice(0, s, std::min(windows, s + chunk)) : t; };
      ForwardRequest r = req;
      r.input_ids = part(req.input_ids), r.inputs_embeds = part(req.inputs_embeds);
      r.token_type_ids = part(req.token_type_ids), r.attention_mask = part(req.attention_mask);
      ForwardResult f = clf_.model.forward(r);
      logits.push_back(f.logits);
      if (req.want_hidden_states) last.push_back(f.hidden_states.back());
    }
    out.logits = torch::cat(logits);
    if (req.want_hidden_states) out.hidden_states = {torch::cat(last)};
    return out;
  }

  // The windows' mean logits of x, from its token ids or with `embeds` as their word embeddings
  // (no hidden states, no selection head).
  torch::Tensor windowed_logits(const FeatureBatch& x, const torch::Tensor& embeds = {}) const {
    const WindowPlan w = plan_windows(x);
    return w.row_mean(run_windows(w.request(x, embeds)).logits, x.size());
  }

  SstOutput forward_windows(const FeatureBatch& x) const {
    const WindowPlan w = plan_windows(x);
    ForwardRequest req = w.request(x);
    req.want_hidden_states = true;
    ForwardResult r = run_windows(req);
    SstOutput out;
    out.logits = w.row_mean(r.logits, x.size());
    const torch::Tensor s = selection_from_hidden(r.hidden_states.back(), head_w_, head_b_).masked_select(w.slots);
    const torch::Tensor at = w.source.masked_select(w.slots);
    const int64_t n = x.values.numel();
    torch::Tensor sum = torch::zeros({n}, s.options()).index_add(0, at, s);
    torch::Tensor held = torch::zeros({n}, s.options()).index_add(0, at, torch::ones_like(s));
    out.selection = (sum / held.clamp_min(1)).view({x.size(), x.width()}) * x.features.to(torch::kFloat32);
    return out;
  }

  Classifier clf_;
  torch::Tensor head_w_, head_b_;
};

}  // namespace

std::unique_ptr<SstModel> make_image_model(const ImageModelSpec& spec, uint64_t seed) {
  return std::make_unique<ImageSstModel>(spec, seed);
}

std::unique_ptr<SstModel> make_text_model(Classifier classifier, uint64_t seed) {
  return std::make_unique<TextSstModel>(std::move(classifier), seed);
}

torch::Tensor text_embedding_logits(const SstModel& model, const FeatureBatch& x, const torch::Tensor& embeds) {
  const auto* text = dynamic_cast<const TextSstModel*>(&model);
  if (!text) fail("SST: a {} model has no word embeddings", model.modality());
  return text->embedding_logits(x, embeds);
}

const Classifier& text_classifier(const SstModel& model) {
  const auto* text = dynamic_cast<const TextSstModel*>(&model);
  if (!text) fail("SST: a {} model has no text classifier", model.modality());
  return text->classifier();
}

torch::Tensor text_selection(const Classifier& clf, const torch::Tensor& head_weight, const torch::Tensor& head_bias,
                             const Batch& batch) {
  ForwardRequest req;
  req.input_ids = batch.input_ids;
  req.token_type_ids = batch.token_type_ids;
  req.attention_mask = batch.attention_mask;
  req.want_hidden_states = true;
  return TextSstModel::selection_from_hidden(clf.model.forward(req).hidden_states.back(), head_weight, head_bias);
}

// ---------------------------------------------------------------- directories

bool is_sst_model_dir(const std::string& dir) { return file_exists(join_path(dir, "sst.json")); }

void save_sst_model(const SstModel& model, const std::string& dir, const nlohmann::json& settings) {
  make_dirs(dir);
  nlohmann::json j = settings;
  j["modality"] = model.modality();
  j["arch"] = model.arch();
  j["labels"] = model.label_names();
  std::map<std::string, torch::Tensor> state = model.state();
  if (model.modality() == "image") {
    j["image_model"] = dynamic_cast<const ImageSstModel&>(model).spec().to_json();
    save_tensors(join_path(dir, "model.safetensors"), state);
  } else {
    save_classifier(text_classifier(model), dir);
    save_tensors(join_path(dir, "sst_head.safetensors"),
                 {{"sst_head.weight", state.at("sst_head.weight")}, {"sst_head.bias", state.at("sst_head.bias")}});
  }
  // sst.json last: a directory with it is complete.
  write_file_atomic(join_path(dir, "sst.json"), j.dump(2) + "\n");
}

LoadedSstModel load_sst_model(const std::string& dir) {
  const std::string cfg = join_path(dir, "sst.json");
  if (!file_exists(cfg)) fail("--model: '{}' is not an SST model directory (no sst.json; see salient sst train)", dir);
  LoadedSstModel out;
  out.settings = parse_json_file(cfg);
  const std::string modality = out.settings.value("modality", "");
  out.tau = out.settings.value("tau", 0.5);
  if (modality == "image") {
    if (!out.settings.contains("image_model")) fail("{}: missing 'image_model'", cfg);
    out.model = make_image_model(ImageModelSpec::from_json(out.settings["image_model"], cfg), 0);
    const std::string path = join_path(dir, "model.safetensors");
    out.model->load_state(load_tensors(path), path);
  } else if (modality == "text") {
    auto model = std::make_unique<TextSstModel>(load_classifier(dir), 0);
    const std::string path = join_path(dir, "sst_head.safetensors");
    model->set_head(load_tensors(path), path);
    out.model = std::move(model);
  } else {
    fail("{}: 'modality' must be image or text, got '{}'", cfg, modality);
  }
  if (out.settings.contains("labels")) out.model->set_label_names(out.settings["labels"].get<std::vector<std::string>>());
  return out;
}

}  // namespace salient::sst

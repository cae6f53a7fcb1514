#include "sst/train.h"

#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include "model/windows.h"
#include "train/trainer.h"
#include "util/error.h"
#include "util/atomic_file.h"
#include "util/io.h"
#include "util/progress.h"

namespace salient::sst {

namespace F = torch::nn::functional;

void SstObjective::validate() const {
  if (!std::isfinite(lambda) || lambda < 0) fail("--lambda: must be a finite number ≥ 0, got {}", lambda);
  if (!std::isfinite(xi) || xi < 0) fail("--xi: must be a finite number ≥ 0, got {}", xi);
  if (!(tau > 0 && tau < 1)) fail("--tau: must be in (0, 1), got {}", tau);
  if (kind == MaskKind::Robust || kind == MaskKind::Probabilistic) fill.validate("", kind == MaskKind::Robust);
}

nlohmann::json SstObjective::to_json() const {
  return {{"masking", mask_kind_name(kind)}, {"lambda", lambda}, {"xi", xi}, {"tau", tau},
          {"straight_through", straight_through}, {"fill", fill.to_json()}};
}

void SstTrainOptions::validate() const {
  objective.validate();
  if (epochs < 1) fail("--epochs: must be at least 1, got {}", epochs);
  if (patience < 1) fail("--patience: must be at least 1, got {}", patience);
  if (batch_size < 1) fail("--batch-size: must be at least 1, got {}", batch_size);
  if (!(lr > 0) || !std::isfinite(lr)) fail("--lr: must be positive, got {}", lr);
  if (weight_decay < 0) fail("--weight-decay: must be ≥ 0, got {}", weight_decay);
  if (limit < 0) fail("--limit: must be ≥ 0, got {}", limit);
  if (limit_random && limit == 0) fail("--limit-random: draws --limit N examples; give --limit");
  if (train_data.empty()) fail("--train: a dataset spec is needed");
  if (dev_data.empty()) fail("--dev: a dataset spec is needed");
  if (output_dir.empty()) fail("--out: an output directory is needed");
  if (windows && is_image_spec(train_data)) fail("--windows: only text is read as windows ('{}' is images)", train_data);
  if (max_windows < 0) fail("--max-windows: must be ≥ 0, got {}", max_windows);
  if (max_windows > 0 && !windows) fail("--max-windows: applies to texts read as windows (add --windows)");
}

nlohmann::json SstEpoch::to_json() const {
  return {{"epoch", epoch}, {"train_loss", train_loss}, {"seconds", seconds}, {"val_loss", val_loss},
          {"val_accuracy", val_accuracy}, {"val_faithfulness", val_faithfulness}, {"val_size", val_size}};
}

SstLoss sst_loss(SstModel& model, const FeatureBatch& x, const torch::Tensor& labels, const SstObjective& o,
                 at::Generator& gen, const torch::Tensor& vocabulary, bool training, const LossShare& share) {
  SstLoss out;
  SstOutput f = model.forward(x);
  out.logits = f.logits;
  out.selection = f.selection;
  out.task = F::cross_entropy(f.logits, labels);
  if (o.kind == MaskKind::None) {
    out.faithfulness = out.cardinality = torch::zeros({});
    out.total = out.task * share.rows;
    return out;
  }
  const torch::Tensor features = x.features.to(torch::kFloat32);
  const torch::Tensor predicted = f.logits.argmax(1).detach();
  const torch::Tensor hard = f.selection.ge(o.tau).to(torch::kFloat32) * features;
  torch::Tensor keep = o.straight_through ? hard + f.selection - f.selection.detach() : hard;
  keep = keep * features + (1 - features);  // non-features are always kept
  torch::Tensor fill;
  {
    const bool attack = o.kind == MaskKind::Robust;
    if (attack) model.set_training(false);
    fill = complement_fill(model, x, keep.detach().gt(0.5), o.kind, predicted, o.fill, gen, vocabulary).detach();
    if (attack) model.set_training(training);
  }
  out.masked_logits = model.mixed_logits(x, fill, keep);
  out.faithfulness = F::cross_entropy(out.masked_logits, predicted);
  out.cardinality = (f.selection * features).sum() / features.sum().clamp_min(1);
  out.total = (out.task + o.lambda * out.faithfulness) * share.rows + o.xi * out.cardinality * share.features;
  return out;
}

std::vector<std::vector<int64_t>> batch_parts(const SstData& data, const std::vector<int64_t>& rows, int64_t positions,
                                              int64_t max_windows) {
  if (max_windows <= 0 || data.modality != "text") return {rows};
  std::vector<std::vector<int64_t>> parts;
  int64_t used = 0;
  for (int64_t r : rows) {
    const auto pieces = static_cast<int64_t>(data.encodings.at(r).ids.size()) - 2;  // without [CLS] and [SEP]
    const auto windows = static_cast<int64_t>(window_starts(pieces, positions, 0, "--max-windows").size());
    if (parts.empty() || used + windows > max_windows) {
      parts.emplace_back();
      used = 0;
    }
    parts.back().push_back(r);
    used += windows;
  }
  return parts;
}

namespace {

int64_t feature_count(const SstData& data, const std::vector<int64_t>& rows) {
  int64_t n = 0;
  for (int64_t r : rows)
    for (bool f : data.is_feature.at(r)) n += f;
  return n;
}

// Each part of a batch with its share of the batch's loss (all of it when the batch is one part).
std::vector<std::pair<std::vector<int64_t>, LossShare>> shared_parts(const SstData& data, const std::vector<int64_t>& rows,
                                                                     int64_t positions, int64_t max_windows) {
  std::vector<std::vector<int64_t>> parts = batch_parts(data, rows, positions, max_windows);
  std::vector<std::pair<std::vector<int64_t>, LossShare>> out;
  if (parts.size() == 1) {
    out.push_back({std::move(parts[0]), LossShare{}});
    return out;
  }
  const double all_rows = static_cast<double>(rows.size());
  const double all_features = std::max<double>(1, static_cast<double>(feature_count(data, rows)));
  for (auto& part : parts) {
    LossShare share{static_cast<double>(part.size()) / all_rows, static_cast<double>(feature_count(data, part)) / all_features};
    out.push_back({std::move(part), share});
  }
  return out;
}

int64_t model_positions(const SstModel& model) {
  return model.modality() == "text" ? text_classifier(model).model.config().max_tokens() : 0;
}

}  // namespace

SstEpoch evaluate_objective(SstModel& model, const SstData& data, const SstObjective& o, uint64_t seed,
                            int64_t batch_size, const torch::Tensor& vocabulary, int64_t max_windows) {
  model.set_training(false);
  auto gen = at::detail::createCPUGenerator(seed);
  SstEpoch e;
  double loss = 0, correct = 0, faithful = 0, size = 0;
  const int64_t n = data.size();
  const int64_t positions = model_positions(model);
  for (int64_t b = 0; b < n; b += batch_size) {
    const int64_t end = std::min(n, b + batch_size);
    std::vector<int64_t> batch_rows(end - b);
    std::iota(batch_rows.begin(), batch_rows.end(), b);
    double batch_loss = 0;
    for (const auto& [rows, share] : shared_parts(data, batch_rows, positions, max_windows)) {
      FeatureBatch x = data.batch(rows);
      torch::Tensor y = data.labels.index_select(0, torch::tensor(rows, torch::kInt64));
      SstLoss l;
      if (o.kind == MaskKind::Robust) {
        l = sst_loss(model, x, y, o, gen, vocabulary, false, share);  // the attack needs gradients
      } else {
        torch::NoGradGuard ng;
        l = sst_loss(model, x, y, o, gen, vocabulary, false, share);
      }
      torch::NoGradGuard ng;
      batch_loss += l.total.item<double>();
      torch::Tensor pred = l.logits.argmax(1);
      correct += pred.eq(y).sum().item<double>();
      if (l.masked_logits.defined()) {
        faithful += l.masked_logits.argmax(1).eq(pred).sum().item<double>();
        torch::Tensor feats = x.features.to(torch::kFloat32);
        size += (subset_of(l.selection, x.features, o.tau).to(torch::kFloat32).sum(1) / feats.sum(1).clamp_min(1)).sum().item<double>();
      }
    }
    loss += batch_loss * static_cast<double>(end - b);
  }
  e.val_loss = loss / n;
  e.val_accuracy = correct / n;
  e.val_faithfulness = faithful / n;
  e.val_size = size / n;
  return e;
}

namespace {

using Clock = std::chrono::steady_clock;

std::unique_ptr<SstModel> initial_model(const SstTrainOptions& o, const SstData* image_train,
                                        const std::vector<std::string>& text_labels) {
  if (image_train && !o.init_model.empty()) {  // fine-tune a trained image model (e.g. the standard one)
    LoadedSstModel init = load_sst_model(o.init_model);
    if (init.model->modality() != "image" || init.model->arch() != o.arch)
      fail("--init: '{}' is a {} {} model, --arch is {}", o.init_model, init.model->modality(), init.model->arch(), o.arch);
    if (init.model->image_shape() != image_train->image_shape ||
        init.model->num_classes() != static_cast<int64_t>(image_train->label_names.size()))
      fail("--init: '{}' does not take the images and classes of --train", o.init_model);
    init.model->set_label_names(image_train->label_names);
    return std::move(init.model);
  }
  if (image_train) {
    ImageModelSpec spec;
    spec.arch = o.arch;
    spec.hidden = o.hidden;
    spec.channels = image_train->image_shape[0];
    spec.height = image_train->image_shape[1];
    spec.width = image_train->image_shape[2];
    spec.classes = static_cast<int64_t>(image_train->label_names.size());
    auto m = make_image_model(spec, o.seed);
    m->set_label_names(image_train->label_names);
    return m;
  }
  if (o.arch != "transformer") fail("--arch: text models are 'transformer', got '{}'", o.arch);
  TrainOptions t;
  t.init_model = o.init_model;
  t.vocab = o.vocab;
  t.hidden_size = o.hidden_size;
  t.num_layers = o.num_layers;
  t.num_heads = o.num_heads;
  t.intermediate_size = o.intermediate_size;
  t.max_length = o.max_length;
  if (o.init_model.empty()) t.dropout = t.attention_dropout = o.dropout;  // --init: the model's own
  t.seed = o.seed;
  return make_text_model(initial_classifier(t, text_labels), o.seed);
}

nlohmann::json settings_json(const SstTrainOptions& o, const SstTrainResult& r) {
  nlohmann::json history = nlohmann::json::array();
  for (const auto& e : r.history) history.push_back(e.to_json());
  return {{"tau", o.objective.tau}, {"objective", o.objective.to_json()},
          {"training", {{"train", o.train_data}, {"dev", o.dev_data}, {"epochs", o.epochs}, {"patience", o.patience},
                        {"batch_size", o.batch_size}, {"lr", o.lr}, {"weight_decay", o.weight_decay},
                        {"limit", o.limit}, {"seed", o.seed}, {"max_length", o.max_length}, {"windows", o.windows},
                        {"max_windows", o.max_windows}, {"limit_random", o.limit_random}, {"init_model", o.init_model}}},
          {"history", history}, {"best_epoch", r.best_epoch}, {"train_seconds", r.train_seconds}};
}

}  // namespace

SstTrainResult train_sst(const SstTrainOptions& o) {
  o.validate();
  const bool image = is_image_spec(o.train_data);
  if (image != is_image_spec(o.dev_data)) fail("--dev: '{}' and --train '{}' are of different modalities", o.dev_data, o.train_data);
  const std::string last_dir = join_path(o.output_dir, "last");
  const std::string state_path = join_path(last_dir, "trainer_state.json");
  if (o.resume) {
    recover_dir(last_dir);
    remove_stale_temporaries(o.output_dir);  // files a killed run was writing
  }
  const bool resuming = o.resume && file_exists(state_path);

  std::unique_ptr<SstModel> model;
  SstData train, dev;
  // --limit-random: every example read, then N drawn; else the first N read.
  const int64_t read_limit = o.limit_random ? 0 : o.limit;
  if (image) {
    train = load_image_data(o.train_data, o.data_dir, read_limit);
    dev = load_image_data(o.dev_data, o.data_dir);
    model = resuming ? load_sst_model(last_dir).model : initial_model(o, &train, {});
  } else {
    // The labels come from the dataset, so read it once for them before the tokenizer exists.
    std::vector<std::string> labels = load_dataset(o.train_data, o.data_dir).label_names;
    model = resuming ? load_sst_model(last_dir).model : initial_model(o, nullptr, labels);
    const Classifier& clf = text_classifier(*model);
    const int64_t max_len = std::min<int64_t>(o.max_length, clf.model.config().max_tokens());
    train = load_text_data(o.train_data, o.data_dir, clf, max_len, read_limit, o.windows);
    dev = load_text_data(o.dev_data, o.data_dir, clf, max_len, 0, o.windows);
  }
  if (o.limit_random) {
    std::vector<int64_t> rows = sample_first_order(train.size(), o.limit, o.seed);
    rows.resize(std::min(o.limit, train.size()));
    train = select_rows(train, rows);
  }
  if (train.label_names.size() != static_cast<size_t>(model->num_classes()))
    fail("--train: '{}' has {} labels, the model {}", o.train_data, train.label_names.size(), model->num_classes());
  torch::Tensor vocab;
  if (!image) vocab = ordinary_token_ids(text_classifier(*model).tokenizer);

  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  SstTrainResult result;
  int start_epoch = 1, bad_epochs = 0;
  double best_loss = std::numeric_limits<double>::infinity();
  if (resuming) {
    // The objective must be the one the run started with (e.g. --noise's default changed once).
    const std::string saved_path = join_path(last_dir, "sst.json");
    if (file_exists(saved_path)) {
      const nlohmann::json saved = parse_json_file(saved_path).value("objective", nlohmann::json::object());
      if (saved != o.objective.to_json())
        fail("--resume: '{}' was trained with another objective ({}; {}); use another --out", o.output_dir,
             differing_keys(saved, o.objective.to_json()), saved_path);
    }
    nlohmann::json st = parse_json_file(state_path);
    start_epoch = st.at("epoch").get<int>() + 1;
    bad_epochs = st.at("bad_epochs").get<int>();
    best_loss = st.at("best_loss").get<double>();
    result.best_epoch = st.at("best_epoch").get<int>();
    result.train_seconds = st.at("train_seconds").get<double>();
    for (const auto& e : st.at("history")) {
      SstEpoch r;
      r.epoch = e.at("epoch");
      r.train_loss = e.at("train_loss");
      r.seconds = e.at("seconds");
      r.val_loss = e.at("val_loss");
      r.val_accuracy = e.at("val_accuracy");
      r.val_faithfulness = e.at("val_faithfulness");
      r.val_size = e.at("val_size");
      result.history.push_back(r);
    }
    load_optimizer(optimizer, last_dir, torch::kCPU);  // SST runs on the CPU
    std::fprintf(stderr, "salient: resuming SST training after epoch %d\n", start_epoch - 1);
  }
  const auto started = Clock::now();
  const int64_t n = train.size(), positions = model_positions(*model);
  for (int epoch = start_epoch; epoch <= o.epochs && bad_epochs < o.patience; ++epoch) {
    const auto t0 = Clock::now();
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(o.seed * 1000003ULL + epoch);
    std::shuffle(order.begin(), order.end(), rng);
    auto gen = at::detail::createCPUGenerator(o.seed * 7919ULL + epoch);
    torch::manual_seed(o.seed * 7919ULL + epoch);  // dropout
    model->set_training(true);
    Progress bar(fmt::format("sst epoch {}/{}", epoch, o.epochs), n, "ex");
    double loss_sum = 0;
    for (int64_t b = 0; b < n; b += o.batch_size) {
      const int64_t end = std::min(n, b + o.batch_size);
      std::vector<int64_t> batch_rows(order.begin() + b, order.begin() + end);
      optimizer.zero_grad();  // the attacks take their gradients with autograd::grad, not into .grad
      double batch_loss = 0;
      for (const auto& [rows, share] : shared_parts(train, batch_rows, positions, o.max_windows)) {
        FeatureBatch x = train.batch(rows);
        torch::Tensor y = train.labels.index_select(0, torch::tensor(rows, torch::kInt64));
        SstLoss l = sst_loss(*model, x, y, o.objective, gen, vocab, true, share);
        l.total.backward();  // a batch in parts sums its parts' gradients
        batch_loss += l.total.item<double>();
      }
      if (!image) torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      optimizer.step();
      loss_sum += batch_loss * static_cast<double>(end - b);
      bar.update(end - b, fmt::format("loss {:.3f}", loss_sum / static_cast<double>(end)));
    }
    bar.finish();
    SstEpoch e = evaluate_objective(*model, dev, o.objective, o.seed + 17, std::max<int64_t>(o.batch_size, 64), vocab,
                                    o.max_windows);
    e.epoch = epoch;
    e.train_loss = loss_sum / static_cast<double>(n);
    e.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    result.train_seconds += e.seconds;
    result.history.push_back(e);
    if (Progress::enabled())
      std::fprintf(stderr, "salient: epoch %d: train loss %.4f, val loss %.4f, val accuracy %.4f, faithful %.4f, size %.4f (%.0fs)\n",
                   epoch, e.train_loss, e.val_loss, e.val_accuracy, e.val_faithfulness, e.val_size, e.seconds);
    if (e.val_loss <= best_loss) {  // the reference code's rule: save when the validation loss is ≤ the best
      best_loss = e.val_loss;
      result.best_epoch = epoch;
      bad_epochs = 0;
      save_sst_model(*model, o.output_dir, settings_json(o, result));
    } else {
      ++bad_epochs;
    }
    // The state to resume from: this epoch's model, optimizer and trainer state, swapped in whole.
    StagedDir staged(last_dir);
    save_sst_model(*model, staged.path(), settings_json(o, result));
    save_optimizer(optimizer, staged.path());
    nlohmann::json history = nlohmann::json::array();
    for (const auto& h : result.history) history.push_back(h.to_json());
    write_file_atomic(join_path(staged.path(), "trainer_state.json"),
                      nlohmann::json{{"epoch", epoch}, {"bad_epochs", bad_epochs}, {"best_loss", best_loss},
                                     {"best_epoch", result.best_epoch}, {"train_seconds", result.train_seconds},
                                     {"history", history}}.dump(2));
    staged.commit();
    if (o.max_minutes > 0 && std::chrono::duration<double>(Clock::now() - started).count() > o.max_minutes * 60) break;
  }
  // The best directory's sst.json gets the whole history.
  if (result.best_epoch > 0) {
    LoadedSstModel best = load_sst_model(o.output_dir);
    save_sst_model(*best.model, o.output_dir, settings_json(o, result));
  }
  return result;
}

}  // namespace salient::sst

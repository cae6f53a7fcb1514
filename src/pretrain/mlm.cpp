#include "pretrain/mlm.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>

#include "model/checkpoint.h"
#include "salient/distributed.h"
#include "model/classifier.h"
#include "train/trainer.h"
#include "util/error.h"
#include "util/atomic_file.h"
#include "util/io.h"
#include "util/progress.h"
#include "util/runtime.h"

namespace salient::pretrain {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kIgnore = -100;  // label of positions that are not predicted (PyTorch's ignore_index)


}  // namespace

std::vector<std::pair<std::string, torch::Tensor>> MlmHead::named() const {
  return {{"cls.predictions.transform.dense.weight", dense_w}, {"cls.predictions.transform.dense.bias", dense_b},
          {"cls.predictions.transform.LayerNorm.weight", ln_w}, {"cls.predictions.transform.LayerNorm.bias", ln_b},
          {"cls.predictions.bias", bias}};
}

MlmHead init_mlm_head(const Transformer& model, uint64_t seed) {
  const ModelConfig& c = model.config();
  auto gen = at::detail::createCPUGenerator(seed);
  const auto opts = torch::TensorOptions().dtype(model.dtype()).device(model.device());
  MlmHead h;
  h.dense_w = (torch::randn({c.hidden_size, c.hidden_size}, gen, torch::kFloat32) * 0.02).to(opts);
  h.dense_b = torch::zeros({c.hidden_size}, opts);
  h.ln_w = torch::ones({c.hidden_size}, opts);
  h.ln_b = torch::zeros({c.hidden_size}, opts);
  h.bias = torch::zeros({c.vocab_size}, opts);
  for (auto& [name, t] : h.named()) t.set_requires_grad(true);
  return h;
}

torch::Tensor mlm_logits(const Transformer& model, const MlmHead& head, const torch::Tensor& hidden) {
  const ModelConfig& c = model.config();
  if (c.embed_dim() != c.hidden_size) fail("mlm: embedding size {} differs from hidden size {}", c.embed_dim(), c.hidden_size);
  torch::Tensor h = model.activation(torch::linear(hidden, head.dense_w, head.dense_b));
  h = torch::layer_norm(h, {c.hidden_size}, head.ln_w, head.ln_b, c.layer_norm_eps);
  return torch::linear(h, model.embedding_weights().word, head.bias);
}

MaskedBatch mask_batch(const std::vector<std::vector<int64_t>>& seqs, const Tokenizer& tok,
                       const std::vector<int64_t>& ordinary, const MaskingOptions& o, std::mt19937_64& rng) {
  if (ordinary.empty()) fail("mlm: the tokenizer has no ordinary tokens to draw replacements from");
  const int64_t B = static_cast<int64_t>(seqs.size());
  int64_t L = 1;
  for (const auto& s : seqs) L = std::max<int64_t>(L, s.size());
  MaskedBatch out;
  out.input_ids = torch::full({B, L}, tok.pad_id(), torch::kLong);
  out.labels = torch::full({B, L}, kIgnore, torch::kLong);
  out.attention_mask = torch::zeros({B, L}, torch::kLong);
  auto ids = out.input_ids.accessor<int64_t, 2>(), labels = out.labels.accessor<int64_t, 2>(),
       mask = out.attention_mask.accessor<int64_t, 2>();
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::uniform_int_distribution<size_t> pick(0, ordinary.size() - 1);
  for (int64_t b = 0; b < B; ++b) {
    const auto& s = seqs[b];
    std::vector<int64_t> candidates;
    for (size_t j = 0; j < s.size(); ++j) {
      ids[b][j] = s[j];
      mask[b][j] = 1;
      if (!tok.is_structural(s[j])) candidates.push_back(static_cast<int64_t>(j));
    }
    std::vector<int64_t> chosen;
    if (!o.whole_word) {
      for (int64_t j : candidates)
        if (uniform(rng) < o.rate) chosen.push_back(j);
    } else {
      std::vector<std::vector<int64_t>> words;
      for (int64_t j : candidates) {
        const bool joins = !words.empty() && words.back().back() == j - 1 && tok.continues_word(tok.id_to_token(s[j]));
        if (joins) words.back().push_back(j);
        else words.push_back({j});
      }
      std::shuffle(words.begin(), words.end(), rng);
      const size_t target = std::max<size_t>(1, static_cast<size_t>(std::lround(o.rate * candidates.size())));
      for (const auto& w : words) {
        if (chosen.size() >= target) break;
        if (chosen.size() + w.size() > target) continue;  // a word is never split
        chosen.insert(chosen.end(), w.begin(), w.end());
      }
    }
    for (int64_t j : chosen) {
      labels[b][j] = s[j];
      const double r = uniform(rng);
      if (r < o.mask_share) ids[b][j] = tok.mask_id();
      else if (r < o.mask_share + o.random_share) ids[b][j] = ordinary[pick(rng)];
    }
  }
  return out;
}

std::vector<std::vector<int64_t>> pack_texts(const std::vector<std::string>& texts, const Tokenizer& tok,
                                             int64_t max_length) {
  if (max_length < 8) fail("--max-length: must be at least 8 (got {})", max_length);
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> current{tok.cls_id()};
  for (const auto& text : texts) {
    Encoding e = tok.tokenize(text);
    e.ids.push_back(tok.sep_id());
    for (int64_t id : e.ids) {
      current.push_back(id);
      if (static_cast<int64_t>(current.size()) == max_length) {
        out.push_back(std::move(current));
        current = {tok.cls_id()};
      }
    }
  }
  return out;
}

std::vector<std::string> read_corpus(const std::vector<std::string>& paths) {
  if (paths.empty()) fail("--corpus: at least one file or directory is required");
  std::vector<std::string> files;
  for (const auto& p : paths) {
    if (dir_exists(p)) {
      const std::vector<std::string> in_dir = list_files(p);
      if (in_dir.empty()) fail("--corpus: directory '{}' has no files", p);
      for (const auto& name : in_dir) files.push_back(join_path(p, name));
    } else if (file_exists(p)) {
      files.push_back(p);
    } else {
      fail("--corpus: '{}' not found", p);
    }
  }
  std::vector<std::string> lines;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) fail("--corpus: cannot read '{}'", f);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") != std::string::npos) lines.push_back(line);
    }
  }
  if (lines.empty()) fail("--corpus: no text in {} file(s) (all empty)", files.size());
  return lines;
}

void save_mlm_model(const Transformer& model, const MlmHead& head, const Tokenizer& tok, const std::string& dir) {
  const ModelConfig& c = model.config();
  if (c.model_type != "bert") fail("mlm: saving a BertForMaskedLM needs a bert model (got '{}')", c.model_type);
  make_dirs(dir);
  SafetensorsFile file;
  file.metadata["format"] = "pt";
  for (const auto& [name, t] : model.weights())
    if (!is_head_weight(name)) file.tensors[c.family().hf_weight_name(name)] = tensor_to_data(t);
  for (const auto& [name, t] : head.named()) file.tensors[name] = tensor_to_data(t);
  write_safetensors(join_path(dir, "model.safetensors"), file);
  nlohmann::json cfg = c.to_json();
  cfg["architectures"] = {"BertForMaskedLM"};
  cfg.erase("id2label");
  cfg.erase("label2id");
  write_file_atomic(join_path(dir, "config.json"), cfg.dump(2) + "\n");
  tok.save(dir);
}

MlmModel load_mlm_model(const std::string& dir, LoadOptions lo) {
  lo.allow_new_head = true;  // a BertForMaskedLM has no pooler or classifier
  LoadReport report;
  MlmModel m;
  const ModelFolder folder = resolve_model_folder(dir);
  m.model = load_model(folder, lo, &report);
  m.tokenizer = Tokenizer::from_folder(folder);
  const std::string& path = report.weights;
  std::map<std::string, torch::Tensor> all = load_tensors(path);
  auto take = [&](const std::string& name) {
    auto it = all.find(name);
    if (it == all.end()) fail("{}: missing {} (not a BertForMaskedLM checkpoint)", path, name);
    return it->second.to(m.model.device(), m.model.dtype()).requires_grad_(true);
  };
  m.head = {take("cls.predictions.transform.dense.weight"), take("cls.predictions.transform.dense.bias"),
            take("cls.predictions.transform.LayerNorm.weight"), take("cls.predictions.transform.LayerNorm.bias"),
            take("cls.predictions.bias")};
  if (m.head.bias.size(0) != m.model.config().vocab_size)
    fail("{}: cls.predictions.bias has {} entries, vocab_size is {}", path, m.head.bias.size(0), m.model.config().vocab_size);
  return m;
}

nlohmann::json PretrainResult::to_json() const {
  nlohmann::json h = nlohmann::json::array();
  for (const auto& e : history) h.push_back({{"step", e.step}, {"heldout_loss", e.loss}, {"heldout_accuracy", e.accuracy}});
  return {{"steps", steps}, {"tokens", tokens}, {"seconds", seconds}, {"train_sequences", train_sequences},
          {"heldout_sequences", heldout_sequences}, {"heldout_fingerprint", heldout_fingerprint}, {"history", h}};
}

namespace {

// [B, L] → the last hidden states at the predicted positions and the MLM loss (mean) there.
struct MlmStep {
  torch::Tensor loss, logits, labels;
};
MlmStep mlm_step(const Transformer& model, const MlmHead& head, const MaskedBatch& mb) {
  const torch::Device dev = model.device();
  torch::Tensor ids = mb.input_ids.to(dev), mask = mb.attention_mask.to(dev), labels = mb.labels.to(dev);
  torch::Tensor h = model.embed(ids, {}, mask);
  h = model.run_layers(0, h, model.extended_mask(mask, ids.size(0), ids.size(1)));
  torch::Tensor predicted = labels.ne(kIgnore);
  MlmStep s;
  s.labels = labels.masked_select(predicted);
  s.logits = mlm_logits(model, head, h.index({predicted}));
  s.loss = s.labels.numel() > 0 ? torch::cross_entropy_loss(s.logits, s.labels) : h.sum() * 0.0;
  return s;
}

nlohmann::json settings_json(const PretrainOptions& o) {
  return {{"layers", o.layers}, {"hidden", o.hidden}, {"heads", o.heads}, {"intermediate", o.intermediate},
          {"max_length", o.max_length}, {"batch_size", o.batch_size}, {"lr", o.lr}, {"weight_decay", o.weight_decay},
          {"warmup_ratio", o.warmup_ratio}, {"clip_norm", o.clip_norm}, {"dropout", o.dropout}, {"max_steps", o.max_steps},
          {"heldout_share", o.heldout_share}, {"seed", o.seed}, {"mask_rate", o.masking.rate},
          {"whole_word", o.masking.whole_word}, {"corpus", o.corpus}};
}

// The run's settings as recorded in its checkpoint and pretrain.json; an --init run also records
// the encoder it started from and the seed of the held-out split it inherited.
nlohmann::json settings_json(const PretrainOptions& o, uint64_t split_seed) {
  nlohmann::json s = settings_json(o);
  if (!o.init_dir.empty()) {
    s["init"] = o.init_dir;
    s["split_seed"] = split_seed;
  }
  return s;
}

// An order-sensitive hash (FNV-1a) of the held-out pieces: a continuation checks that the
// corpus behind the same path still packs into the slice its encoder was evaluated on.
std::string fingerprint(const std::vector<std::vector<int64_t>>& seqs) {
  uint64_t h = 1469598103934665603ULL;
  for (const auto& seq : seqs)
    for (int64_t id : seq) {
      h ^= static_cast<uint64_t>(id);
      h *= 1099511628211ULL;
    }
  return fmt::format("{:016x}", h);
}

struct InitEncoder {
  MlmModel saved;
  nlohmann::json record;    // its pretrain.json; null when it has none (e.g. a Hugging Face download)
  uint64_t split_seed = 0;  // the held-out split it was evaluated on (its own seed when no record)
};

// --init: the saved encoder and head with the options' dropout, checked against the options.
InitEncoder open_init(const PretrainOptions& o, const Tokenizer& tok) {
  namespace fs = std::filesystem;
  if (!dir_exists(o.init_dir)) fail("--init: '{}' is not a directory", o.init_dir);
  if (dir_exists(o.output_dir) && fs::equivalent(o.init_dir, o.output_dir))
    fail("--init: '{}' is also --out; continue into another directory", o.init_dir);
  InitEncoder in;
  try {
    LoadOptions lo;
    lo.hidden_dropout = lo.attention_dropout = o.dropout;
    in.saved = load_mlm_model(o.init_dir, lo);
  } catch (const Error& e) {
    fail("--init: {}", e.what());
  }
  const ModelConfig& c = in.saved.model.config();
  if (c.model_type != "bert") fail("--init: {} is a {} model; pre-training continues a bert encoder", o.init_dir, c.model_type);
  for (const auto& f : kEncoderShapeFields)
    if (c.*f.config != o.*f.option)
      fail("--init: {} has {} {}, but the options say {}", o.init_dir, f.flag, c.*f.config, o.*f.option);
  if (in.saved.tokenizer.vocab() != tok.vocab()) fail("--init: {} has another vocabulary than --vocab '{}'", o.init_dir, o.vocab);
  in.split_seed = o.seed;
  const std::string path = join_path(o.init_dir, "pretrain.json");
  if (!file_exists(path)) return in;
  in.record = parse_json_file(path);
  const nlohmann::json& s = in.record.contains("settings") ? in.record["settings"] : nlohmann::json::object();
  for (const char* key : {"corpus", "max_length", "heldout_share", "mask_rate", "whole_word", "seed"})
    if (!s.contains(key)) fail("--init: {} has no settings.{} (not a salient pretrain.json)", path, key);
  // The same split and evaluation masks: step 0 reports what the encoder ended with.
  const nlohmann::json want = {{"corpus", s["corpus"]}, {"max_length", s["max_length"]}, {"heldout_share", s["heldout_share"]},
                               {"mask_rate", s["mask_rate"]}, {"whole_word", s["whole_word"]}};
  const nlohmann::json ours = {{"corpus", o.corpus}, {"max_length", o.max_length}, {"heldout_share", o.heldout_share},
                               {"mask_rate", o.masking.rate}, {"whole_word", o.masking.whole_word}};
  if (want != ours)
    fail("--init: {} records another held-out split or masking ({}); step 0 would not be its number, or it would be "
         "evaluated on text it trained on", path, differing_keys(want, ours));
  if (s["seed"].get<uint64_t>() == o.seed)
    fail("--seed: {} is the seed {} was pre-trained with; its batches and masks would repeat (give another)", o.seed, o.init_dir);
  in.split_seed = s.value("split_seed", s["seed"].get<uint64_t>());
  return in;
}

void check_options(const PretrainOptions& o) {
  if (o.output_dir.empty()) fail("--out: an output directory is required");
  if (o.vocab.empty()) fail("--vocab: a vocab.txt, tokenizer.json or tokenizer directory is required");
  if (o.layers < 1) fail("--layers: must be at least 1 (got {})", o.layers);
  if (o.heads < 1 || o.hidden < 1 || o.hidden % o.heads != 0)
    fail("--hidden/--heads: hidden size {} must be a positive multiple of the {} heads", o.hidden, o.heads);
  if (o.intermediate < 1) fail("--intermediate: must be positive (got {})", o.intermediate);
  if (o.batch_size < 1) fail("--batch-size: must be positive (got {})", o.batch_size);
  if (!(o.lr > 0)) fail("--lr: must be positive (got {})", o.lr);
  if (o.max_steps < 1) fail("--max-steps: must be at least 1 (got {})", o.max_steps);
  if (o.max_minutes < 0) fail("--max-minutes: must be >= 0 (got {})", o.max_minutes);
  if (!(o.masking.rate > 0 && o.masking.rate < 1)) fail("--mask-rate: must be in (0, 1) (got {})", o.masking.rate);
  if (!(o.heldout_share > 0 && o.heldout_share < 0.5)) fail("--heldout: must be in (0, 0.5) (got {})", o.heldout_share);
  if (o.eval_every < 1 || o.save_every < 1) fail("--eval-every/--save-every: must be positive");
  require_fraction_below_one("--dropout", o.dropout);
  require_fraction_below_one("--warmup", o.warmup_ratio);
}

}  // namespace

HeldoutEval evaluate_mlm(const Transformer& model, const MlmHead& head, const Tokenizer& tok,
                         const std::vector<std::vector<int64_t>>& seqs, const MaskingOptions& masking, uint64_t seed,
                         int64_t batch_size) {
  torch::NoGradGuard ng;
  std::mt19937_64 rng(seed);
  const std::vector<int64_t> ordinary = tok.ordinary_ids();
  double loss_sum = 0, correct = 0, count = 0;
  for (size_t s = 0; s < seqs.size(); s += batch_size) {
    std::vector<std::vector<int64_t>> part(seqs.begin() + s, seqs.begin() + std::min(seqs.size(), s + batch_size));
    MlmStep st = mlm_step(model, head, mask_batch(part, tok, ordinary, masking, rng));
    const double n = static_cast<double>(st.labels.numel());
    if (n == 0) continue;
    loss_sum += st.loss.item<double>() * n;
    correct += st.logits.argmax(-1).eq(st.labels).sum().item<double>();
    count += n;
  }
  HeldoutEval e;
  e.loss = count > 0 ? loss_sum / count : 0;
  e.accuracy = count > 0 ? correct / count : 0;
  return e;
}

PretrainResult pretrain_mlm(const PretrainOptions& o) {
  check_options(o);
  Tokenizer tok = Tokenizer::from_path(o.vocab);
  std::vector<std::string> texts = read_corpus(o.corpus);
  const std::string ckpt = join_path(o.output_dir, "checkpoint"), state_path = join_path(ckpt, "state.json");
  if (o.resume && dist::is_root()) {
    recover_dir(ckpt);
    remove_stale_temporaries(o.output_dir);  // files a killed run was writing
  }
  dist::barrier();
  const bool resuming = o.resume && file_exists(state_path);
  nlohmann::json state;
  if (resuming) state = parse_json_file(state_path);
  // The held-out split's seed: an --init run inherits its encoder's (a resumed one reads it back;
  // the settings comparison below checks that the same --init was given).
  std::optional<InitEncoder> init;
  uint64_t split_seed = o.seed;
  if (!o.init_dir.empty() && resuming) {
    split_seed = state.at("settings").value("split_seed", o.seed);
  } else if (!o.init_dir.empty()) {
    init = open_init(o, tok);
    split_seed = init->split_seed;
  }
  std::mt19937_64 shuffle_rng(split_seed ^ 0x636f72707573ULL);
  std::shuffle(texts.begin(), texts.end(), shuffle_rng);  // the held-out slice mixes every source
  std::vector<std::vector<int64_t>> seqs = pack_texts(texts, tok, o.max_length);
  if (seqs.size() < 16)
    fail("--corpus: {} text(s) make only {} sequence(s) of {} tokens; at least 16 are needed", texts.size(), seqs.size(),
         o.max_length);
  const size_t n_held = std::max<size_t>(8, static_cast<size_t>(std::lround(o.heldout_share * seqs.size())));
  const std::vector<std::vector<int64_t>> heldout(seqs.end() - n_held, seqs.end());
  seqs.resize(seqs.size() - n_held);
  const std::string heldout_fingerprint = fingerprint(heldout);
  if (init && !init->record.is_null()) {
    // The same path may hold another text now (a rebuilt corpus): then the slice is another one.
    const nlohmann::json& r = init->record;
    const bool same = r.value("train_sequences", int64_t{-1}) == static_cast<int64_t>(seqs.size()) &&
                      r.value("heldout_sequences", int64_t{-1}) == static_cast<int64_t>(heldout.size()) &&
                      (!r.contains("heldout_fingerprint") || r["heldout_fingerprint"] == heldout_fingerprint);
    if (!same)
      fail("--init: the corpus now packs into another split than {}/pretrain.json records ({} + {} sequences, held-out "
           "fingerprint {}); it would be evaluated on text it trained on", o.init_dir, seqs.size(), heldout.size(),
           heldout_fingerprint);
  }

  Transformer model;
  MlmHead head;
  PretrainResult result;
  result.train_sequences = static_cast<int64_t>(seqs.size());
  result.heldout_sequences = static_cast<int64_t>(heldout.size());
  result.heldout_fingerprint = heldout_fingerprint;
  if (resuming) {
    const nlohmann::json settings = settings_json(o, split_seed);
    if (state.at("settings") != settings)
      fail("{}: a pre-training run with other settings ({}) is there; resume it with its own options or use another --out",
           ckpt, differing_keys(state.at("settings"), settings));
    MlmModel m = load_mlm_model(ckpt);
    model = std::move(m.model);
    head = m.head;
    result.steps = state.at("step");
    result.tokens = state.at("tokens");
    result.seconds = state.at("seconds");
    for (const auto& h : state.at("history")) result.history.push_back({h.at("step"), h.at("heldout_loss"), h.at("heldout_accuracy")});
  } else if (init) {
    model = std::move(init->saved.model);
    head = init->saved.head;
  } else {
    nlohmann::json cfg = {{"model_type", "bert"}, {"architectures", {"BertForMaskedLM"}}, {"vocab_size", tok.vocab_size()},
                          {"hidden_size", o.hidden}, {"num_hidden_layers", o.layers}, {"num_attention_heads", o.heads},
                          {"intermediate_size", o.intermediate}, {"hidden_act", "gelu"}, {"hidden_dropout_prob", o.dropout},
                          {"attention_probs_dropout_prob", o.dropout}, {"max_position_embeddings", o.max_length},
                          {"type_vocab_size", 2}, {"layer_norm_eps", 1e-12}, {"pad_token_id", tok.pad_id()}};
    model = Transformer(ModelConfig::from_json(cfg, "<pretrain options>"), o.seed);
    model.to(default_device(), model.dtype());  // drawn on the CPU: the same weights on every device
    head = init_mlm_head(model, o.seed + 1);
  }
  model.set_requires_grad(true);
  std::vector<std::pair<std::string, torch::Tensor>> named;
  for (const auto& [name, t] : model.weights())
    if (!is_head_weight(name)) named.emplace_back(name, t);  // the unused classification head stays out
  for (const auto& nt : head.named()) named.push_back(nt);
  std::vector<torch::Tensor> params;
  for (const auto& nt : named) params.push_back(nt.second);
  std::unique_ptr<torch::optim::AdamW> optimizer = make_adamw(named, o.lr, o.weight_decay);
  if (resuming) {
    load_optimizer(*optimizer, ckpt, model.device());
    std::fprintf(stderr, "salient: resuming pre-training from %s at step %lld\n", ckpt.c_str(), (long long)result.steps);
  }
  const uint64_t eval_seed = split_seed ^ 0x6576616cULL;  // an --init run's curve continues its encoder's
  auto evaluate_now = [&] {
    if (!dist::is_root()) return;  // rank 0 alone reports and writes
    model.eval();
    HeldoutEval e = evaluate_mlm(model, head, tok, heldout, o.masking, eval_seed, o.batch_size);
    e.step = result.steps;
    result.history.push_back(e);
    if (Progress::enabled())
      std::fprintf(stderr, "step %lld: held-out MLM loss %.4f, accuracy %.4f\n", (long long)e.step, e.loss, e.accuracy);
  };
  auto save_checkpoint = [&] {
    if (!dist::is_root()) return;
    // One step's weights, optimizer and state, swapped in whole (a crash keeps the previous set).
    StagedDir staged(ckpt);
    save_mlm_model(model, head, tok, staged.path());
    save_optimizer(*optimizer, staged.path());
    nlohmann::json st = result.to_json();
    st["step"] = result.steps;
    st["settings"] = settings_json(o, split_seed);
    write_file_atomic(join_path(staged.path(), "state.json"), st.dump(2) + "\n");
    staged.commit();
  };
  if (!resuming) evaluate_now();

  const std::vector<int64_t> ordinary = tok.ordinary_ids();
  const int64_t per_epoch = std::max<int64_t>(1, static_cast<int64_t>(seqs.size()) / o.batch_size);
  const int64_t warmup = static_cast<int64_t>(o.warmup_ratio * o.max_steps);
  std::vector<int64_t> order;
  int64_t order_epoch = -1;
  const auto started = Clock::now();
  const double seconds_before = result.seconds;
  const int64_t tokens_before = result.tokens, steps_before = result.steps;
  Progress bar("pretrain", o.max_steps - result.steps, "step");
  double loss_avg = 0;
  bool interrupted = false;  // by --stop-after-steps: only the checkpoint is written
  while (result.steps < o.max_steps) {
    if (o.stop_after_steps > 0 && result.steps >= o.stop_after_steps) {
      interrupted = true;
      break;
    }
    bool out_of_time = o.max_minutes > 0 && seconds_before + seconds_since(started) > o.max_minutes * 60;
    if (dist::sharded()) out_of_time = dist::broadcast_from_root(out_of_time ? 1 : 0) != 0;  // rank 0's clock decides
    if (out_of_time) break;
    // Batch order depends on (seed, epoch), masking and dropout on (seed, step): a resumed run
    // takes exactly the steps an uninterrupted one would.
    const int64_t epoch = result.steps / per_epoch, pos = result.steps % per_epoch;
    if (epoch != order_epoch) {
      order.resize(seqs.size());
      std::iota(order.begin(), order.end(), 0);
      std::mt19937_64 epoch_rng(o.seed * 1000003ULL + static_cast<uint64_t>(epoch));
      std::shuffle(order.begin(), order.end(), epoch_rng);
      order_epoch = epoch;
    }
    std::vector<std::vector<int64_t>> batch;
    for (int64_t i = pos * o.batch_size; i < std::min<int64_t>((pos + 1) * o.batch_size, order.size()); ++i)
      batch.push_back(seqs[order[i]]);
    std::mt19937_64 rng(o.seed * 2654435761ULL + static_cast<uint64_t>(result.steps));
    seed_dropout(o.seed, static_cast<uint64_t>(result.steps));
    MaskedBatch mb = mask_batch(batch, tok, ordinary, o.masking, rng);
    model.train(true);
    set_learning_rate(*optimizer, o.lr * warmup_linear_decay(result.steps, o.max_steps, warmup));
    optimizer->zero_grad();
    double loss = 0;
    if (dist::sharded()) {
      // Data-parallel: every rank masks the whole global batch alike and takes its rows; the loss is
      // the mean over the batch's masked pieces, so a rank's gradient counts by its share of them.
      const int64_t rows = mb.input_ids.size(0), r = dist::rank(), n = dist::size();
      const int64_t from = rows * r / n, to = rows * (r + 1) / n;
      MaskedBatch mine{mb.input_ids.slice(0, from, to), mb.labels.slice(0, from, to), mb.attention_mask.slice(0, from, to)};
      const double masked = mb.labels.ne(kIgnore).sum().item<double>();
      const double share = masked > 0 ? mine.labels.ne(kIgnore).sum().item<double>() / masked : 0.0;
      if (to > from) {
        MlmStep st = mlm_step(model, head, mine);
        st.loss.backward();
        loss = st.loss.item<double>() * share;
      }
      average_gradients(params, share);
      dist::allreduce_sum(&loss, 1);
    } else {
      MlmStep st = mlm_step(model, head, mb);
      st.loss.backward();
      loss = st.loss.item<double>();
    }
    if (o.clip_norm > 0) torch::nn::utils::clip_grad_norm_(params, o.clip_norm);
    optimizer->step();
    ++result.steps;
    result.tokens += mb.attention_mask.sum().item<int64_t>();
    // Shown smoothed; started at this run's first loss (a resumed run too).
    loss_avg = result.steps == steps_before + 1 ? loss : 0.98 * loss_avg + 0.02 * loss;
    const double elapsed = seconds_since(started);
    bar.update(1, fmt::format("loss {:.3f} | {:.0f} tok/s", loss_avg, (result.tokens - tokens_before) / std::max(1e-9, elapsed)));
    result.seconds = seconds_before + elapsed;
    if (result.steps % o.eval_every == 0 || result.steps == o.max_steps) evaluate_now();
    if (result.steps % o.save_every == 0) save_checkpoint();
  }
  bar.finish(fmt::format("loss {:.3f}", loss_avg));
  model.eval();
  if (result.history.empty() || result.history.back().step != result.steps) evaluate_now();
  save_checkpoint();
  if (!interrupted && dist::is_root()) {  // finished, or out of --max-minutes: the model users fine-tune from
    model.set_requires_grad(false);
    save_mlm_model(model, head, tok, o.output_dir);
    nlohmann::json report = result.to_json();
    report["settings"] = settings_json(o, split_seed);
    report["complete"] = result.steps >= o.max_steps;  // false: stopped by time; --resume continues
    report["tokens_per_second"] = result.seconds > 0 ? result.tokens / result.seconds : 0.0;
    write_file_atomic(join_path(o.output_dir, "pretrain.json"), report.dump(2) + "\n");
  }
  return result;
}

}  // namespace salient::pretrain

// The runs of salient/runs.h (`salient tokenize | predict | info | train | explain`) and the
// benchmark of salient/studies.h: inputs read block by block, outputs written whole, the
// shared-out forms under mpirun.
#include "salient/runs.h"

#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/ranges.h>

#include "data/dataset.h"
#include "dist/shards.h"
#include "eval/faithfulness.h"
#include "explain/explainer.h"
#include "explain/memory.h"
#include "model/checkpoint.h"
#include "model/classifier.h"
#include "salient/distributed.h"
#include "salient/error.h"
#include "salient/files.h"
#include "salient/inputs.h"
#include "api/method_settings.h"
#include "train/trainer.h"
#include "util/io.h"
#include "util/progress.h"
#include "util/runtime.h"

namespace salient {

namespace {

// Streaming commands read their inputs in blocks of about this many lines (input_block rounds
// it to whole batches).
constexpr size_t kInputBlock = 1024;
// --windows and --stride of predict, evaluate and explain, checked against --max-length.
void check_window_flags(const LongInputs& l, int64_t max_length) {
  if (l.windows && max_length > 0) fail("--max-length: --windows reads whole inputs (give one or the other)");
  if (l.stride != 0 && !l.windows) fail("--stride: only with --windows");
}

size_t input_block(int64_t batch_size) {
  const size_t b = static_cast<size_t>(std::max<int64_t>(batch_size, 1));
  return std::max<size_t>(1, kInputBlock / b) * b;
}

// The number of inputs in a file (its non-blank lines), for a progress total; -1 for stdin.
int64_t count_input_lines(const std::string& path) {
  if (path.empty() || path == "-") return -1;
  std::ifstream in(path);
  int64_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find_first_not_of(" \t\r") != std::string::npos;
  return n;
}

// A token coloured by a score in [-1, 1] for a 256-colour terminal (red raises the explained
// output, blue lowers it), or bracketed with the score when there is no colour.
std::string colored_token(const std::string& token, double v, bool color) {
  if (!color) return v == 0 ? token : token + "[" + fmt::format("{:+.2f}", v) + "]";
  static const int reds[] = {231, 224, 217, 210, 203, 196}, blues[] = {231, 189, 147, 105, 63, 21};
  const int level = std::min(5, static_cast<int>(std::abs(v) * 5.0 + 0.5));
  return fmt::format("\033[48;5;{}m\033[38;5;16m{}\033[0m", v >= 0 ? reds[level] : blues[level], token);
}

nlohmann::json encoding_json(const Encoding& e) {
  nlohmann::json offsets = nlohmann::json::array();
  for (const auto& [b, en] : e.offsets) offsets.push_back({b, en});
  return {{"ids", e.ids}, {"tokens", e.tokens}, {"type_ids", e.type_ids}, {"offsets", offsets}, {"word_ids", e.word_ids}};
}

// The text view of one explanation: the prediction with its probability, the explained class, and
// the tokens coloured (or bracketed) by score scaled by the largest |score| among content tokens.
std::string explanation_text(const Classifier& clf, const nlohmann::json& j, const torch::Tensor& probs, bool color) {
  const int64_t pred = probs.argmax().item<int64_t>();
  std::string out = fmt::format("{} (p = {:.3f}); {} explains {}:", clf.label_name(pred), probs[pred].item<double>(),
                                j["method"].get<std::string>(), j["target_label"].get<std::string>());
  const auto tokens = j["tokens"].get<std::vector<std::string>>();
  const auto scores = j["token_scores"].get<std::vector<double>>();
  double mx = 0;
  for (size_t t = 0; t < tokens.size(); ++t)
    if (!clf.tokenizer.is_structural(clf.tokenizer.token_to_id(tokens[t]))) mx = std::max(mx, std::abs(scores[t]));
  for (size_t t = 0; t < tokens.size(); ++t) {
    if (clf.tokenizer.is_structural(clf.tokenizer.token_to_id(tokens[t]))) continue;
    out += " " + colored_token(tokens[t], mx > 0 ? scores[t] / mx : 0.0, color);
  }
  return out + "\n";
}

// The class to explain for one input: pred (the prediction), gold (the input's "label" field, a
// class index or a label name), a class index, or a label name.
int64_t resolve_target(const std::string& target, const Classifier& clf, const InputItem& item, const std::string& where) {
  const ModelConfig& c = clf.model.config();
  if (target != "gold") return c.label_id(target);  // errors name the labels
  if (!item.fields.is_object() || !item.fields.contains("label") || item.fields["label"].is_null())
    fail("--target gold: {} has no \"label\" field", where);
  const nlohmann::json& v = item.fields["label"];
  if (v.is_number_integer()) {
    const int64_t id = v.get<int64_t>();
    if (id < 0 || id >= c.num_labels) fail("{}: label {} out of range for a model with {} labels", where, id, c.num_labels);
    return id;
  }
  if (!v.is_string()) fail("{}: label must be a class index or a label name, got {}", where, v.dump());
  try {
    return c.label_id(v.get<std::string>());
  } catch (const Error& e) {
    fail("{}: {}", where, e.what());
  }
}

}  // namespace

// A parameter given as text (MethodSettings::params) must be one that some of `methods` takes.
void check_params_taken(const std::map<std::string, std::string>& params, const std::vector<std::string>& methods) {
  for (const auto& [name, text] : params) {
    bool taken = false;
    for (const auto& m : methods)
      for (const auto& p : explainer_info(m).params) taken |= p.name == name;
    if (!taken)
      fail("{}: not a parameter of {} (salient explain --list shows each method's parameters{})", param_flag(name),
           fmt::join(methods, ", "),
           name == "removal" ? "; the faithfulness metrics' removal is --metric-removal" : "");
  }
}

// The options of one method: the settings' output, seed and batch, and each given parameter it
// declares, parsed by its declared type; ranges and choices checked before any work.
ExplainOptions method_options(const std::string& method, const MethodSettings& s) {
  if (s.internal_batch <= 0) fail("--internal-batch: must be positive (got {})", s.internal_batch);
  if (s.max_batch_tokens <= 0) fail("--max-batch-tokens: must be positive (got {})", s.max_batch_tokens);
  ExplainOptions o;
  if (!s.score.empty()) o.output = parse_model_output(s.score);
  o.seed = s.seed;
  o.internal_batch = s.internal_batch;
  o.max_batch_tokens = s.max_batch_tokens;
  for (const auto& p : explainer_info(method).params) {
    const auto given = s.params.find(p.name);
    if (given == s.params.end()) continue;
    const std::string& text = given->second;
    size_t used = 0;
    try {
      if (p.names(text)) o.params[p.name] = text, used = text.size();  // "auto"
      else if (p.type == ParamSpec::Type::Int) o.params[p.name] = static_cast<int64_t>(std::stoll(text, &used));
      else if (p.type == ParamSpec::Type::Number) o.params[p.name] = std::stod(text, &used);
      else o.params[p.name] = text, used = text.size();
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || text.empty())
      fail("{}: expected {} {}{}, got '{}'", p.flag(), p.type == ParamSpec::Type::Int ? "an" : "a",
           p.type == ParamSpec::Type::Int ? "integer" : "number",
           p.choices.empty() ? "" : fmt::format(" or {}", fmt::join(p.choices, ", ")), text);
  }
  return with_declared_params(explainer_info(method), o);
}

void run_tokenize(const TokenizeRun& a) {
  if (a.model.empty() == a.tokenizer.empty()) fail("tokenize: give exactly one of --model DIR or --tokenizer PATH");
  const Tokenizer tok =
      a.model.empty() ? Tokenizer::from_path(a.tokenizer) : Tokenizer::from_dir(a.model);
  Truncation trunc = parse_truncation(a.truncation);
  if (a.max_length < 0) fail("--max-length: must be >= 0 (got {})", a.max_length);
  InputReader reader(a.input);
  Output out(a.output);
  for (auto items = reader.next(kInputBlock); !items.empty(); items = reader.next(kInputBlock))
    for (const auto& item : items) {
      if (!item.text) fail("line {}: tokenize needs 'text', not 'input_ids'", item.line_no);
      Encoding e = tok.encode(*item.text, item.text_pair, a.max_length, trunc);
      nlohmann::json j = encoding_json(e);
      if (e.truncated) j["truncated"] = true;
      out.line(j);
    }
  out.commit();
}

void run_predict(const PredictRun& a) {
  if (a.batch_size <= 0) fail("--batch-size: must be positive (got {})", a.batch_size);
  const Model model = Model::load(a.model);
  const Classifier& clf = model.classifier();
  const bool text = a.text;
  check_window_flags(a.long_inputs, a.max_length);
  // Block by block (whole batches each: the batches one process would run), so memory stays
  // bounded whatever the input's length.
  InputReader reader(a.input);
  Output out(a.output);
  const size_t block = input_block(a.batch_size);
  for (auto items = reader.next(block); !items.empty(); items = reader.next(block)) {
    std::vector<Encoding> encs;
    std::vector<TextInput> whole;  // --windows
    for (const auto& item : items) {
      std::string where = fmt::format("{}:{}", reader.source(), item.line_no);
      if (a.long_inputs.windows) {
        if (!item.text) fail("{}: --windows reads 'text', not 'input_ids'", where);
        whole.push_back({*item.text, item.text_pair});
        continue;
      }
      if (item.text) encs.push_back(clf.encode(*item.text, item.text_pair, a.max_length));
      else encs.push_back(clf.encode_ids(item.input_ids, item.token_type_ids, where));
      if (encs.back().truncated)
        std::fprintf(stderr, "salient: warning: %s: input truncated to %zu tokens\n", where.c_str(), encs.back().ids.size());
    }
    const std::vector<Prediction> preds =
        a.long_inputs.windows ? model.predict(whole, a.batch_size, a.long_inputs) : model.predict(encs, a.batch_size);
    for (size_t i = 0; i < preds.size(); ++i) {
      const Prediction& p = preds[i];
      const InputItem& item = items[i];
      if (!text) {
        nlohmann::json j = p.to_json();
        if (item.fields.is_object() && item.fields.contains("id")) j["id"] = item.fields["id"];
        out.line(j);
      } else if (p.value) {
        out.text(fmt::format("{:.4f}\t{}\n", *p.value, item.text ? *item.text : "(ids)"));
      } else {
        out.text(fmt::format("{} (p = {:.3f})\t{}\n", p.label, p.probs[p.label_id],
                             item.text ? *item.text + (item.text_pair ? " | " + *item.text_pair : "") : "(ids)"));
      }
    }
  }
  out.commit();
}

nlohmann::json evaluate(const EvaluateRun& a) {
  if (a.batch_size <= 0) fail("--batch-size: must be positive (got {})", a.batch_size);
  if (a.max_length < 0) fail("--max-length: must be >= 0 (got {})", a.max_length);
  const std::string data_dir = a.data_dir.empty() ? shared_data_dir() : a.data_dir;
  check_window_flags(a.long_inputs, a.max_length);
  const Dataset data = load_dataset(a.data, data_dir);  // a bad spec fails before the model loads
  nlohmann::json j = Model::load(a.model).evaluate(data, a.batch_size, a.max_length, a.long_inputs);
  j["model"] = a.model;
  j["data"] = a.data;
  return j;
}

nlohmann::json runtime_info(const std::string& model_dir, int64_t tokens, int64_t max_batch_tokens) {
  if (tokens < 0) fail("--tokens: must be >= 0 (got {})", tokens);
  if (max_batch_tokens <= 0) fail("--max-batch-tokens: must be positive (got {})", max_batch_tokens);
  BlasInfo blas = blas_info();
  nlohmann::json j;
  j["torch"] = TORCH_VERSION;
  j["threads"] = current_threads();
  j["device"] = default_device().str();
  j["cuda_devices"] = torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  j["blas"] = {{"library", blas.library}, {"openblas", blas.is_openblas}, {"config", blas.config},
               {"reference_blas", blas.is_reference}, {"kernels", openblas_core()}};
  j["distributed"] = {{"engine", dist::engine()}, {"rank", dist::rank()}, {"ranks", dist::size()}};
  if (!model_dir.empty()) {
    LoadReport report;
    LoadOptions base_ok;  // a base encoder (no classification head) is shown too
    base_ok.allow_new_head = true;
    Transformer m = load_model(model_dir, base_ok, &report);
    const auto& c = m.config();
    const bool has_head = report.initialised.empty();
    j["model"] = {{"dir", model_dir}, {"model_type", c.model_type}, {"layers", c.num_hidden_layers},
                  {"heads", c.num_attention_heads}, {"hidden_size", c.hidden_size},
                  {"intermediate_size", c.intermediate_size}, {"activation", activation_name(c.hidden_act)},
                  {"pooling", c.pooling},
                  {"max_tokens", c.max_tokens()}, {"vocab_size", c.vocab_size}, {"parameters", m.parameter_count()},
                  {"labels", c.id2label}, {"unexpected_weights", report.unexpected},
                  {"task_head", has_head}, {"missing_head_weights", report.initialised}};
    if (!has_head) {  // the placeholder head's parameters are not the checkpoint's
      int64_t head = 0;
      for (const auto& [name, t] : m.weights())
        for (const auto& hf : report.initialised)
          if (c.family().hf_weight_name(name) == hf) head += t.numel();
      j["model"]["parameters"] = m.parameter_count() - head;
      j["model"]["labels"] = nlohmann::json::array();
    } else {
      const int64_t L = tokens > 0 ? pass_length(c, tokens) : c.max_tokens();
      j["model"]["memory"] = {{"weight_bytes", weight_bytes(m)}, {"tokens", L}, {"max_batch_tokens", max_batch_tokens},
                              {"explain_bytes", explain_bytes_per_method(c, L, BatchLimits{64, max_batch_tokens})}};
    }
  }
  return j;
}

void run_explain(const ExplainRun& a) {
  if (a.model.empty()) fail("--model: required");
  if (a.method.empty()) fail("--method: required (salient explain --list shows the methods)");
  // --output once named the explained output; a file called "prob" or "logit" is that old habit.
  if (a.out == "prob" || a.out == "logit")
    fail("--output: '{}' would be the output file's name; the explained output is --score {}", a.out, a.out);
  if (a.batch_size <= 0) fail("--batch-size: must be positive (got {})", a.batch_size);
  if (a.word_agg != "sum" && a.word_agg != "max") fail("--word-agg: expected sum or max, got '{}'", a.word_agg);
  auto explainer = make_explainer(a.method);  // unknown names fail before the model loads
  check_params_taken(a.settings.params, {a.method});
  const ExplainOptions opts = method_options(a.method, a.settings);
  Classifier clf = load_classifier(a.model);
  if (a.target != "pred" && a.target != "gold") {
    try {
      resolve_target(a.target, clf, InputItem{}, "--target");
    } catch (const Error& e) {
      fail("--target: {}", e.what());
    }
  }
  const std::string source = a.input == "-" ? "<stdin>" : a.input;
  std::vector<InputItem> items;
  std::vector<Encoding> encs;
  auto encode_items = [&] {
    encs.clear();
    for (const auto& item : items) {
      std::string where = fmt::format("{}:{}", source, item.line_no);
      encs.push_back(item.text ? clf.encode(*item.text, item.text_pair, a.max_length)
                               : clf.encode_ids(item.input_ids, item.token_type_ids, where));
    }
  };
  const bool text = a.text, color = a.color;
  check_window_flags(a.long_inputs, a.max_length);
  // --windows: each input whole, through the public API's windows (model/windows.h).
  const Model windowed(clf);
  auto explain_windows = [&](size_t s, size_t e) {
    std::string lines;
    for (size_t i = s; i < e; ++i) {
      const InputItem& item = items[i];
      const std::string where = fmt::format("{}:{}", source, item.line_no);
      if (!item.text) fail("{}: --windows reads 'text', not 'input_ids'", where);
      const TextInput input{*item.text, item.text_pair};
      const std::string target =
          a.target == "pred" ? "pred" : std::to_string(resolve_target(a.target, clf, item, where));
      nlohmann::json j = windowed.explain({input}, a.method, opts.params, target,
                                          opts.output ? model_output_name(*opts.output) : "", a.batch_size, opts.seed,
                                          a.long_inputs)[0].to_json();
      if (item.fields.is_object() && item.fields.contains("id")) j["id"] = item.fields["id"];
      if (text) {
        const Prediction p = windowed.predict({input}, a.batch_size, a.long_inputs)[0];
        lines += explanation_text(clf, j, torch::tensor(p.probs, torch::kFloat64), color);
      } else {
        lines += j.dump() + "\n";
      }
    }
    return lines;
  };
  // The lines of inputs [s, e) of `items`: one batch, explained and formatted.
  auto explain_batch = [&](size_t s, size_t e) {
    if (a.long_inputs.windows) return explain_windows(s, e);
    std::vector<const Encoding*> chunk;
    for (size_t i = s; i < e; ++i) chunk.push_back(&encs[i]);
    std::vector<int64_t> targets;
    if (a.target == "pred") {
      targets = predicted_classes(clf, chunk);
    } else {
      for (size_t i = s; i < e; ++i)
        targets.push_back(resolve_target(a.target, clf, items[i], fmt::format("{}:{}", source, items[i].line_no)));
    }
    std::vector<Explanation> ex = explainer->explain(clf, chunk, targets, opts);
    torch::Tensor probs;
    if (text) {
      torch::NoGradGuard no_grad;
      Batch b = make_batch(chunk, clf.tokenizer.pad_id(), clf.model.device());
      probs = torch::softmax(clf.model.logits(b.input_ids, b.token_type_ids, b.attention_mask), -1).to(torch::kCPU);
    }
    std::string lines;
    for (size_t i = 0; i < chunk.size(); ++i) {
      const InputItem& item = items[s + i];
      const nlohmann::json id = item.fields.is_object() && item.fields.contains("id") ? item.fields["id"] : nlohmann::json();
      const nlohmann::json j = explanation_json(clf, *chunk[i], ex[i], item.text, a.word_agg == "max", id);
      lines += text ? explanation_text(clf, j, probs[i], color) : j.dump() + "\n";
    }
    return lines;
  };
  if (dist::sharded()) {
    // Under mpirun: chunks of one batch each, balanced over the ranks by cost; each finished chunk
    // is a file, and rank 0 joins them into the output one process writes (docs/distributed.md).
    // The plan needs every input's length, so the inputs are read whole.
    dist::require_sharded_files("-i", a.input, "-o", a.out);
    items = InputReader(a.input).next(SIZE_MAX);
    encode_items();
    std::vector<double> costs;
    const std::string family = explainer_info(a.method).family;
    for (const auto& e : encs) costs.push_back(dist::explain_cost(family, e.ids.size()));
    const nlohmann::json settings = {{"command", "explain"}, {"model", a.model}, {"method", a.method},
                                     {"params", opts.params},
                                     {"output", opts.output ? model_output_name(*opts.output) : ""}, {"seed", opts.seed},
                                     {"target", a.target}, {"word_agg", a.word_agg}, {"max_length", a.max_length},
                                     {"format", text ? "text" : "json"}, {"input", a.input}, {"inputs", encs.size()},
                                     {"input_bytes", read_file(a.input).size()}, {"batch_size", a.batch_size}};
    dist::run_sharded(costs, static_cast<size_t>(a.batch_size), a.out, settings, "explain " + a.method, explain_batch);
    return;
  }
  // One process: block by block (whole batches each, the batches of reading everything first),
  // so memory stays bounded whatever the input's length.
  InputReader reader(a.input);
  Output out(a.out);
  Progress progress("explain " + a.method, count_input_lines(a.input), "ex");
  const size_t block = input_block(a.batch_size);
  for (items = reader.next(block); !items.empty(); items = reader.next(block)) {
    encode_items();
    for (size_t s = 0; s < encs.size(); s += a.batch_size) {
      const size_t e = std::min(encs.size(), s + static_cast<size_t>(a.batch_size));
      out.text(explain_batch(s, e));
      progress.update(static_cast<int64_t>(e - s));
    }
  }
  progress.finish();
  out.commit();
}

// Every registered method with its family, summary, default output and parameters.
std::string method_list() {
  std::ostringstream out;
  for (const auto& info : explainer_registry()) {
    auto e = info.make();
    const std::string output =
        e->uses_model_output() ? "; explains the target " + model_output_name(e->default_output()) : "";
    // LRP's rules follow BERT's modules (its pooler and classifier, its attention): other families refuse them.
    std::string models;
    if (info.family == "lrp") {
      models = "; BERT models only";
      for (const ModelFamily& f : model_families())
        if (!f.lrp_refusal.empty()) models += " (" + f.lrp_refusal + ")";
    }
    out << info.name << "  [" << info.family << output << models << "]\n  " << info.summary << "\n";
    for (const auto& p : info.params) out << "    " << p.describe() << "\n";
  }
  return out.str();
}

nlohmann::json train(const TrainRun& run) {
  TrainOptions o;
  static_cast<TrainRun&>(o) = run;
  if (o.data_dir.empty()) o.data_dir = shared_data_dir();
  const TrainResult r = train_classifier(o);
  nlohmann::json j = {{"best_epoch", r.best_epoch}, {"train_seconds", r.train_seconds}, {"model", o.output_dir}};
  if (o.regression) {
    j["pearson"] = r.best_regression.pearson;
    j["mse"] = r.best_regression.mse;
  } else {
    j["accuracy"] = r.best.accuracy;
    j["macro_f1"] = r.best.macro_f1;
    j["mcc"] = r.best.mcc;
  }
  return j;
}

}  // namespace salient

// Core subcommands: train, predict, tokenize, info.
#include <torch/torch.h>

#include "commands.h"
#include "dist/world.h"
#include "salient/salient.h"
#include "data/dataset.h"
#include "eval/classification.h"
#include "model/classifier.h"
#include "train/trainer.h"
#include "util/progress.h"
#include "util/runtime.h"

namespace salient::cli {

namespace {

nlohmann::json encoding_json(const Encoding& e) {
  nlohmann::json offsets = nlohmann::json::array();
  for (const auto& [b, en] : e.offsets) offsets.push_back({b, en});
  return {{"ids", e.ids}, {"tokens", e.tokens}, {"type_ids", e.type_ids}, {"offsets", offsets}, {"word_ids", e.word_ids}};
}

// ---- tokenize ----
struct TokenizeArgs {
  std::string model, tokenizer, input = "-", output = "-", truncation = "longest_first";
  int max_length = 0;
};

void run_tokenize(const TokenizeArgs& a) {
  if (a.model.empty() == a.tokenizer.empty()) fail("tokenize: give exactly one of --model DIR or --tokenizer PATH");
  const WordPieceTokenizer tok =
      a.model.empty() ? WordPieceTokenizer::from_path(a.tokenizer) : WordPieceTokenizer::from_dir(a.model);
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

// ---- predict ----
struct PredictArgs {
  std::string model, input = "-", output = "-", format = "auto";
  int64_t batch_size = 32;
  int max_length = 0;
  LongInputs long_inputs;  // --windows, --stride
};

void run_predict(const PredictArgs& a) {
  if (a.batch_size <= 0) fail("--batch-size: must be positive (got {})", a.batch_size);
  const Model model = Model::load(a.model);
  const Classifier& clf = model.classifier();
  const bool text = text_format(a.format, a.output);
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

// ---- evaluate ----
struct EvaluateArgs {
  std::string model, data, data_dir;
  int64_t batch_size = 64, max_length = 0;
  LongInputs long_inputs;  // --windows, --stride
};

// Accuracy, macro-F1 and MCC of a model on a labelled dataset, e.g. a held-out test split; Pearson
// and MSE for a regression model.
void run_evaluate(const EvaluateArgs& a) {
  if (a.batch_size <= 0) fail("--batch-size: must be positive (got {})", a.batch_size);
  if (a.max_length < 0) fail("--max-length: must be >= 0 (got {})", a.max_length);
  const std::string data_dir = a.data_dir.empty() ? shared_data_dir() : a.data_dir;
  check_window_flags(a.long_inputs, a.max_length);
  const Dataset data = load_dataset(a.data, data_dir);  // a bad spec fails before the model loads
  nlohmann::json j = Model::load(a.model).evaluate(data, a.batch_size, a.max_length, a.long_inputs);
  j["model"] = a.model;
  j["data"] = a.data;
  std::cout << j.dump() << "\n";
}

// ---- info ----
void run_info(const std::string& model_dir, bool json_out) {
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
          if (hf_weight_name(name, c.model_type) == hf) head += t.numel();
      j["model"]["parameters"] = m.parameter_count() - head;
      j["model"]["labels"] = nlohmann::json::array();
    }
  }
  if (json_out) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "torch     " << TORCH_VERSION << "\n"
            << "threads   " << j["threads"].get<int>() << "\n"
            << "device    " << j["device"].get<std::string>() << " (CUDA devices: " << j["cuda_devices"].get<int>() << ")\n"
            << "blas      " << (blas.library.empty() ? "unknown" : blas.library)
            << (blas.is_openblas ? " (OpenBLAS: " + blas.config + ")" : blas.is_reference ? " (reference BLAS: slow!)" : "") << "\n";
  std::cout << "parallel  " << dist::engine() << ", rank " << dist::rank() << " of " << dist::size() << "\n";
  if (j.contains("model")) {
    const auto& mj = j["model"];
    std::cout << "model     " << model_dir << "\n"
              << "type      " << mj["model_type"].get<std::string>() << ": " << mj["layers"] << " layers, "
              << mj["heads"] << " heads, hidden " << mj["hidden_size"] << ", intermediate " << mj["intermediate_size"]
              << ", " << mj["activation"].get<std::string>() << ", max " << mj["max_tokens"] << " tokens, head on "
              << mj["pooling"].get<std::string>() << "\n"
              << "params    " << mj["parameters"] << "\n";
    if (!mj["task_head"].get<bool>()) {
      std::cout << "head      none: a base encoder (lacks " << mj["missing_head_weights"].size()
                << " head weights); salient train --init " << model_dir << " adds one\n";
      return;
    }
    std::cout << "labels    ";
    for (size_t i = 0; i < mj["labels"].size(); ++i) std::cout << (i ? ", " : "") << i << "=" << mj["labels"][i].get<std::string>();
    std::cout << "\n";
  }
}

}  // namespace

void add_core_commands(CLI::App& app, std::vector<Command>& commands) {
  static TokenizeArgs tk;
  auto* tok_cmd = app.add_subcommand("tokenize", "tokenize text lines or JSON lines → ids, tokens, type_ids, offsets, word_ids");
  tok_cmd->add_option("--model", tk.model, "model directory (uses its tokenizer)");
  tok_cmd->add_option("--tokenizer", tk.tokenizer, "tokenizer.json, vocab.txt or a directory");
  tok_cmd->add_option("--input,-i", tk.input, "input file (default stdin)");
  tok_cmd->add_option("--out,-o,--output", tk.output, "output file (default stdout)");
  tok_cmd->add_option("--max-length", tk.max_length, "truncate to this many tokens incl. specials (0 = none)");
  tok_cmd->add_option("--truncation", tk.truncation, "longest_first | only_first | only_second");

  static PredictArgs pr;
  auto* pred_cmd = app.add_subcommand("predict", "classify text/JSON lines → label, label_id, logits, probs");
  pred_cmd->add_option("--model", pr.model, "model directory (config.json + model.safetensors + vocab)")->required();
  pred_cmd->add_option("--input,-i", pr.input, "input file (default stdin)");
  pred_cmd->add_option("--out,-o,--output", pr.output, "output file (default stdout)");
  pred_cmd->add_option("--batch-size", pr.batch_size, "examples per forward pass");
  pred_cmd->add_option("--max-length", pr.max_length, "truncate inputs to this many tokens (default: the model's limit)");
  pred_cmd->add_flag("--windows", pr.long_inputs.windows, "read inputs longer than the model's positions whole, as overlapping windows (logits averaged)");
  pred_cmd->add_option("--stride", pr.long_inputs.stride, "with --windows: word pieces between window starts (default: half a window)");
  pred_cmd->add_option("--format", pr.format, "auto (default: text on a terminal, JSON lines to a file or pipe) | json | text");

  static EvaluateArgs ev;
  auto* eval_cmd = app.add_subcommand("evaluate", "accuracy, macro-F1 and MCC on a labelled dataset (e.g. a held-out test split)");
  eval_cmd->add_option("--model", ev.model, "model directory")->required();
  eval_cmd->add_option("--data", ev.data, "labelled data: sst2:test, cola:ood, hatexplain:test, eraser:test, ... or a file")->required();
  eval_cmd->add_option("--data-dir", ev.data_dir, "directory of the shared datasets (default: ../shared/data or $SALIENT_SHARED/data)");
  eval_cmd->add_option("--batch-size", ev.batch_size, "examples per forward pass");
  eval_cmd->add_option("--max-length", ev.max_length, "truncate inputs to this many tokens (default: the model's limit)");
  eval_cmd->add_flag("--windows", ev.long_inputs.windows, "read inputs longer than the model's positions whole, as overlapping windows (logits averaged)");
  eval_cmd->add_option("--stride", ev.long_inputs.stride, "with --windows: word pieces between window starts (default: half a window)");

  static std::string info_model;
  static bool info_json = false;
  auto* info_cmd = app.add_subcommand("info", "architecture, parameters, labels, BLAS and threads");
  info_cmd->add_option("--model", info_model, "model directory");
  info_cmd->add_flag("--json", info_json, "print JSON");

  static TrainOptions tr;
  tr.data_dir = shared_data_dir();
  auto* train_cmd = app.add_subcommand("train", "train a classifier from scratch or fine-tune a checkpoint");
  train_cmd->add_option("--train", tr.train_data, "training data: sst2:train, cola:train, hatexplain:train, eraser:train, sst-trees:train or a CSV/JSONL file")->required();
  train_cmd->add_option("--dev", tr.dev_data, "evaluation data (same forms)")->required();
  train_cmd->add_option("--out", tr.output_dir, "output model directory")->required();
  train_cmd->add_option("--data-dir", tr.data_dir, "directory of the shared datasets (default: ../shared/data or $SALIENT_SHARED/data)");
  train_cmd->add_option("--init", tr.init_model, "fine-tune this model directory instead of training from scratch");
  train_cmd->add_flag("--extend-positions", tr.extend_positions, "with --init: grow the position table to --max-length (learned rows repeated)");
  // A from-scratch model's vocabulary and shape; an --init checkpoint brings its own, so giving one is an error.
  const std::vector<CLI::Option*> scratch_only = {
      train_cmd->add_option("--vocab", tr.vocab, "vocabulary for from-scratch training (vocab.txt, tokenizer.json or directory)"),
      train_cmd->add_option("--hidden", tr.hidden_size, "hidden size (from scratch)"),
      train_cmd->add_option("--layers", tr.num_layers, "encoder layers (from scratch)"),
      train_cmd->add_option("--heads", tr.num_heads, "attention heads (from scratch)"),
      train_cmd->add_option("--intermediate", tr.intermediate_size, "feed-forward size (from scratch)"),
      train_cmd->add_option("--activation", tr.activation, "gelu | gelu_new | relu (from scratch)")};
  train_cmd->add_option("--pooling", tr.pooling,
                        "what the head reads: first_token (the last layer's [CLS], default from scratch), scalar_mix "
                        "(a learned mix of every layer's token mean, as the SMaT authors' models) or scalar_mix_cls "
                        "(of every layer's [CLS]); default with --init: that model's");
  static double train_dropout = 0.1, train_attention_dropout = 0.1;
  CLI::Option* dropout_opt = train_cmd->add_option(
      "--dropout", train_dropout, "hidden dropout (default 0.1 from scratch; with --init: the model's own unless given)");
  CLI::Option* attention_dropout_opt = train_cmd->add_option(
      "--attention-dropout", train_attention_dropout,
      "attention dropout (default 0.1 from scratch; with --init: the model's own unless given)");
  train_cmd->add_option("--max-length", tr.max_length, "tokens per example incl. [CLS]/[SEP]");
  train_cmd->add_option("--epochs", tr.epochs, "epochs");
  train_cmd->add_option("--batch-size", tr.batch_size, "batch size");
  train_cmd->add_option("--lr", tr.lr, "peak learning rate");
  train_cmd->add_option("--weight-decay", tr.weight_decay, "AdamW weight decay");
  train_cmd->add_option("--warmup", tr.warmup_ratio, "warmup fraction of all steps");
  train_cmd->add_option("--clip", tr.clip_norm, "gradient-norm clip (0 = off)");
  train_cmd->add_option("--max-minutes", tr.max_minutes, "stop training after this many minutes");
  train_cmd->add_option("--max-train", tr.max_train_examples, "use only N training examples (seeded sample)");
  static std::string train_labels;
  train_cmd->add_option("--labels", train_labels, "names of integer labels 0, 1, ... (comma-separated) for a data file that has ids only");
  train_cmd->add_option("--select-metric", tr.select_metric,
                        "accuracy | macro_f1 | mcc (regression: pearson | neg_mse): which dev metric picks the best epoch");
  static std::string train_task = "classification";
  train_cmd->add_option("--task", train_task,
                        "classification (default) or regression (one output, MSE, on the data's targets, e.g. sst-trees-score)");
  train_cmd->add_option("--seed", tr.seed, "random seed");
  train_cmd->add_flag("--resume", tr.resume, "continue from OUT/checkpoint if present");
  train_cmd->add_option("--stop-after-epoch", tr.stop_after_epoch, "end this run after epoch N (continue later with --resume)");

  commands.push_back({tok_cmd, [] { run_tokenize(tk); }});
  commands.push_back({pred_cmd, [] { run_predict(pr); }});
  commands.push_back({info_cmd, [] { run_info(info_model, info_json); }});
  commands.push_back({eval_cmd, [] { run_evaluate(ev); }});
  commands.push_back({train_cmd, [scratch_only, dropout_opt, attention_dropout_opt] {
    if (!train_labels.empty()) tr.label_names = split_list(train_labels);
    if (!tr.init_model.empty())
      for (const CLI::Option* opt : scratch_only)
        if (opt->count() > 0) fail("{}: is for a model trained from scratch; --init {} brings its own", opt->get_name(), tr.init_model);
    if (dropout_opt->count() > 0) tr.dropout = train_dropout;
    if (attention_dropout_opt->count() > 0) tr.attention_dropout = train_attention_dropout;
    if (train_task != "classification" && train_task != "regression")
      fail("--task: must be classification or regression, got '{}'", train_task);
    tr.regression = train_task == "regression";
    TrainResult r = train_classifier(tr);
    nlohmann::json j = {{"best_epoch", r.best_epoch}, {"train_seconds", r.train_seconds}, {"model", tr.output_dir}};
    if (tr.regression) {
      j["pearson"] = r.best_regression.pearson;
      j["mse"] = r.best_regression.mse;
    } else {
      j["accuracy"] = r.best.accuracy;
      j["macro_f1"] = r.best.macro_f1;
      j["mcc"] = r.best.mcc;
    }
    if (dist::is_root()) std::cout << j.dump() << "\n";
  }});
}

}  // namespace salient::cli

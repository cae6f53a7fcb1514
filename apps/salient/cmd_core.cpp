// Core subcommands: train, predict, evaluate, tokenize, info, over salient/runs.h.
#include "commands.h"
#include "salient/distributed.h"
#include "salient/runs.h"

namespace salient::cli {

namespace {

// `salient info`: runtime_info's JSON, or a few readable lines.
void print_info(const std::string& model_dir, bool json_out, int64_t tokens, int64_t max_batch_tokens) {
  const nlohmann::json j = runtime_info(model_dir, tokens, max_batch_tokens);
  if (json_out) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  const nlohmann::json& blas = j["blas"];
  const std::string library = blas["library"].get<std::string>(), config = blas["config"].get<std::string>();
  std::cout << "torch     " << j["torch"].get<std::string>() << "\n"
            << "threads   " << j["threads"].get<int>() << "\n"
            << "device    " << j["device"].get<std::string>() << " (CUDA devices: " << j["cuda_devices"].get<int>() << ")\n"
            << "blas      " << (library.empty() ? "unknown" : library)
            << (blas["openblas"].get<bool>() ? " (OpenBLAS: " + config + ")"
                : blas["reference_blas"].get<bool>() ? " (reference BLAS: slow!)" : "") << "\n";
  const nlohmann::json& d = j["distributed"];
  std::cout << "parallel  " << d["engine"].get<std::string>() << ", rank " << d["rank"] << " of " << d["ranks"] << "\n";
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
    // Estimates made before running (upper bounds; docs/PERFORMANCE.md, "Memory known in advance").
    const nlohmann::json& mem = mj["memory"];
    std::cout << fmt::format("memory    weights {:.0f} MB; one explain call on {} tokens (--max-batch-tokens {}), MB:\n",
                             mem["weight_bytes"].get<double>() / 1e6, mem["tokens"].get<int64_t>(),
                             mem["max_batch_tokens"].get<int64_t>());
    std::string line = "         ";
    for (const auto& [method, bytes] : mem["explain_bytes"].items()) {
      const std::string item = fmt::format(" {} {:.0f}", method, bytes.get<double>() / 1e6);
      if (line.size() + item.size() > 100) {
        std::cout << line << "\n";
        line = "         ";
      }
      line += item;
    }
    std::cout << line << "\n";
  }
}

}  // namespace

void add_core_commands(CLI::App& app, std::vector<Command>& commands) {
  static TokenizeRun tk;
  auto* tok_cmd = app.add_subcommand("tokenize", "tokenize text lines or JSON lines → ids, tokens, type_ids, offsets, word_ids");
  tok_cmd->add_option("--model", tk.model, "model directory (uses its tokenizer)");
  tok_cmd->add_option("--tokenizer", tk.tokenizer, "tokenizer.json, vocab.txt or a directory");
  tok_cmd->add_option("--input,-i", tk.input, "input file (default stdin)");
  tok_cmd->add_option("--out,-o,--output", tk.output, "output file (default stdout)");
  tok_cmd->add_option("--max-length", tk.max_length, "truncate to this many tokens incl. specials (0 = none)");
  tok_cmd->add_option("--truncation", tk.truncation, "longest_first | only_first | only_second");

  static PredictRun pr;
  static std::string pr_format = "auto";
  auto* pred_cmd = app.add_subcommand("predict", "classify text/JSON lines → label, label_id, logits, probs");
  pred_cmd->add_option("--model", pr.model, "model directory (config.json + model.safetensors + vocab)")->required();
  pred_cmd->add_option("--input,-i", pr.input, "input file (default stdin)");
  pred_cmd->add_option("--out,-o,--output", pr.output, "output file (default stdout)");
  pred_cmd->add_option("--batch-size", pr.batch_size, "examples per forward pass");
  pred_cmd->add_option("--max-length", pr.max_length, "truncate inputs to this many tokens (default: the model's limit)");
  pred_cmd->add_flag("--windows", pr.long_inputs.windows, "read inputs longer than the model's positions whole, as overlapping windows (logits averaged)");
  pred_cmd->add_option("--stride", pr.long_inputs.stride, "with --windows: word pieces between window starts (default: half a window)");
  pred_cmd->add_option("--format", pr_format, "auto (default: text on a terminal, JSON lines to a file or pipe) | json | text");

  static EvaluateRun ev;
  auto* eval_cmd = app.add_subcommand("evaluate", "accuracy, macro-F1 and MCC on a labelled dataset (e.g. a held-out test split)");
  eval_cmd->add_option("--model", ev.model, "model directory")->required();
  eval_cmd->add_option("--data", ev.data, "labelled data: sst2:test, cola:ood, hatexplain:test, eraser:test, ... or a file")->required();
  add_data_dir(eval_cmd, ev.data_dir);
  eval_cmd->add_option("--batch-size", ev.batch_size, "examples per forward pass");
  eval_cmd->add_option("--max-length", ev.max_length, "truncate inputs to this many tokens (default: the model's limit)");
  eval_cmd->add_flag("--windows", ev.long_inputs.windows, "read inputs longer than the model's positions whole, as overlapping windows (logits averaged)");
  eval_cmd->add_option("--stride", ev.long_inputs.stride, "with --windows: word pieces between window starts (default: half a window)");

  static std::string info_model;
  static bool info_json = false;
  auto* info_cmd = app.add_subcommand("info", "architecture, parameters, labels, BLAS and threads");
  info_cmd->add_option("--model", info_model, "model directory");
  info_cmd->add_flag("--json", info_json, "print JSON");
  static int64_t info_tokens = 0, info_batch_tokens = 4096;
  info_cmd->add_option("--tokens", info_tokens, "memory estimates for an input of this many word pieces (default: the model's longest)");
  info_cmd->add_option("--max-batch-tokens", info_batch_tokens, "memory estimates under this token budget per pass");

  static TrainRun tr;
  auto* train_cmd = app.add_subcommand("train", "train a classifier from scratch or fine-tune a checkpoint");
  train_cmd->add_option("--train", tr.train_data, "training data: sst2:train, cola:train, hatexplain:train, eraser:train, sst-trees:train or a CSV/JSONL file")->required();
  train_cmd->add_option("--dev", tr.dev_data, "evaluation data (same forms)")->required();
  train_cmd->add_option("--out", tr.output_dir, "output model directory")->required();
  add_data_dir(train_cmd, tr.data_dir);
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
  commands.push_back({pred_cmd, [] {
                        pr.text = text_format(pr_format, pr.output);
                        run_predict(pr);
                      }});
  commands.push_back({info_cmd, [] { print_info(info_model, info_json, info_tokens, info_batch_tokens); }});
  commands.push_back({eval_cmd, [] { std::cout << evaluate(ev).dump() << "\n"; }});
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
    const nlohmann::json j = train(tr);
    if (dist::is_root()) std::cout << j.dump() << "\n";
  }});
}

}  // namespace salient::cli

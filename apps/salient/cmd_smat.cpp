// Learning to Scaffold subcommands (docs/smat.md): smat split | train | evaluate | study |
// plausibility | report, over salient/studies.h: each flag given becomes the option of the same
// name (underscores for dashes); the library holds the defaults.
#include "commands.h"
#include "salient/studies.h"

namespace salient::cli {

namespace {

using nlohmann::json;

// Options every simulation command shares: the teacher, the students' start and the pool split.
void add_setup_options(CLI::App* cmd, json& o) {
  add_named_option<std::string>(cmd, "--teacher", o, "teacher", "trained teacher classifier directory (never changes)")->required();
  add_named_option<std::string>(cmd, "--student-init", o, "student_init",
                                "encoder directory the students start from, e.g. models/pretrained (default: from scratch, the teacher's shape)");
  add_named_option<double>(cmd, "--student-dropout", o, "student_dropout",
                           "students' hidden and attention dropout, in [0, 1) (default: what they start from has)");
  add_named_option<std::string>(cmd, "--pool", o, "pool",
                                "dataset spec or file of student inputs, texts or (for a ViT teacher) images like fashion-mnist:train; labels unused: the teacher labels them")
      ->required();
  add_named_option<std::string>(cmd, "--test-pool", o, "test_pool", "draw the test set from this dataset instead of the pool (e.g. fashion-mnist:test)");
  add_named_option<std::string>(cmd, "--valid-pool", o, "valid_pool", "draw the validation set from this dataset instead of the pool (e.g. fashion-mnist:val)");
  add_data_dir(cmd, o);
  add_named_option<int64_t>(cmd, "--test-size", o, "test_size", "pool texts held out to measure simulability (default 2000)");
  add_named_option<int64_t>(cmd, "--valid-size", o, "valid_size", "pool texts for early stopping and SMaT's meta loss (default 500)");
  add_named_option<int64_t>(cmd, "--max-length", o, "max_length", "tokens per text, specials included (default 64)");
  add_named_option<uint64_t>(cmd, "--split-seed", o, "split_seed", "seed of the pool split (the same for every run; default 2022)");
}

void add_student_options(CLI::App* cmd, json& o) {
  add_named_option<std::string>(cmd, "--normalizer", o, "normalizer",
                                "normalisation of the head coefficients: sparsemax (default), entmax15, softmax or none");
  add_named_option<std::string>(cmd, "--optimizer", o, "optimizer",
                                "student optimiser, also the pilot step's rule: sgd (the paper's, default) or adamw (for students from scratch)");
  add_named_option<double>(cmd, "--beta", o, "beta", "weight of the explanation loss (default: 5 attention explainers, 0.2 gradient ones)");
  add_named_option<double>(cmd, "--lr", o, "lr", "student learning rate (also the pilot step's; default 5e-3)");
  add_named_option<double>(cmd, "--clip", o, "clip", "student gradient-norm clip (0 = off; default 5)");
  add_named_option<double>(cmd, "--weight-decay", o, "weight_decay", "student weight decay (default 0.01)");
  add_named_option<int64_t>(cmd, "--batch-size", o, "batch_size", "student batch size (also the meta step's validation batch; default 32)");
  add_named_option<int>(cmd, "--patience", o, "patience",
                        "stop once more than this many epochs passed without a better validation score (default 0: the authors' "
                        "10 for text, 5 for image and regression)");
  add_named_option<std::string>(cmd, "--early-stopping", o, "early_stopping",
                                "validation score that keeps an epoch: accuracy (simulability; Pearson r for regression: the authors' "
                                "code, default) or loss (simulation cross-entropy, salient's earlier rule)");
  add_named_option<int>(cmd, "--max-epochs", o, "max_epochs", "student epochs at most (default 100)");
  add_named_option<double>(cmd, "--meta-lr", o, "meta_lr",
                           "learning rate of the teacher's coefficients (SMaT; Adam without decay, gradients clipped to --clip, "
                           "as the authors' code; default 0: the paper's 5e-4, 2e-4 for regression)");
}

void add_static_options(CLI::App* cmd, json& o) {
  add_named_option<int64_t>(cmd, "--ig-steps", o, "ig_steps", "integration points of the ig teacher explainer (default 10)");
  add_named_option<std::string>(cmd, "--gradient-layer", o, "gradient_layer",
                                "where text teachers' saliency, grad_x_input and ig take the gradient: embeddings (the embedding "
                                "layer's output, hidden_states[0], as the authors' code; default) or word_embeddings");
  add_named_option<double>(cmd, "--saliency-temperature", o, "saliency_temperature", "softmax temperature of the saliency teacher explainer (default 1)");
  add_named_option<double>(cmd, "--grad-x-input-temperature", o, "grad_x_input_temperature", "softmax temperature of grad_x_input (default 0.1)");
  add_named_option<double>(cmd, "--ig-temperature", o, "ig_temperature", "softmax temperature of ig (default 0.5)");
  add_named_option<double>(cmd, "--registered-temperature", o, "registered_temperature",
                           "softmax temperature over score / max|score| of any other registered explainer (default 0.1)");
}

// The arguments of smat_train / smat_evaluate beside their options.
struct RunArgs {
  json options = json::object();
  std::string explainer = "smat", smat_file, out;
  int64_t size = 500;
  uint64_t seed = 0;
};

}  // namespace

void add_smat_commands(CLI::App& app, std::vector<Command>& commands) {
  auto* smat_cmd = app.add_subcommand("smat", "Learning to Scaffold (Fernandes et al. 2022): simulability and SMaT");
  smat_cmd->require_subcommand(1);

  static json split_options = json::object();
  static std::string split_out;
  auto* split = smat_cmd->add_subcommand("split", "split a dataset into the teacher's training texts and a disjoint student pool");
  add_named_option<std::string>(split, "--data", split_options, "data", "dataset spec or file to split (default sst2:train)");
  add_named_option<int64_t>(split, "--pool-size", split_options, "pool_size", "texts in the student pool (default 6000)");
  add_named_option<int64_t>(split, "--min-words", split_options, "min_words", "pool texts have at least this many words (default 6)");
  add_named_option<uint64_t>(split, "--seed", split_options, "seed", "seed of the draw (default 2022)");
  add_data_dir(split, split_options);
  split->add_option("--out,-o,--output", split_out, "directory for teacher.jsonl, pool.jsonl and split.json")->required();
  commands.push_back({split, [] { std::cout << smat_split(split_out, split_options).dump() << "\n"; }});

  static RunArgs ta;
  auto* train = smat_cmd->add_subcommand("train", "meta-train SMaT's head coefficients for a teacher (writes smat_explainer.json)");
  add_setup_options(train, ta.options);
  add_student_options(train, ta.options);
  train->add_option("--size", ta.size, "student training examples");
  train->add_option("--seed", ta.seed, "student initialisation, batch order and dropout");
  train->add_option("--out,-o,--output", ta.out, "smat_explainer.json to write, or a directory for it")->required();
  commands.push_back({train, [] { std::cout << smat_train(ta.options, ta.size, ta.seed, ta.out).dump() << "\n"; }});

  static RunArgs ea;
  auto* evaluate = smat_cmd->add_subcommand("evaluate", "train one student with a teacher explainer; report its simulability");
  add_setup_options(evaluate, ea.options);
  add_student_options(evaluate, ea.options);
  add_static_options(evaluate, ea.options);
  evaluate->add_option("--explainer", ea.explainer,
                       "none, saliency, grad_x_input, ig, attention_all, attention_last, smat, or any registered method (salient explain --list)");
  evaluate->add_option("--smat", ea.smat_file, "with --explainer smat: the trained explainer (smat_explainer.json or its directory)");
  evaluate->add_option("--size", ea.size, "student training examples");
  evaluate->add_option("--seed", ea.seed, "student initialisation, batch order and dropout");
  evaluate->add_option("--out,-o,--output", ea.out, "output JSON file (default: stdout)");
  commands.push_back({evaluate, [] {
                        Output out(ea.out);
                        out.line(smat_evaluate(ea.options, ea.explainer, ea.smat_file, ea.size, ea.seed));
                        out.commit();
                      }});

  static json study_options = json::object();
  static std::string study_out;
  auto* study = smat_cmd->add_subcommand("study", "every explainer × size × seed (resumable); report with median and IQR");
  add_setup_options(study, study_options);
  add_student_options(study, study_options);
  add_static_options(study, study_options);
  add_named_option<std::string>(study, "--sizes", study_options, "sizes", "student sizes, comma-separated (default 500,1000,2000)");
  add_named_option<std::string>(study, "--seeds", study_options, "seeds", "seeds, comma-separated (default 0,9,11,30,69)");
  add_named_option<std::string>(study, "--explainers", study_options, "explainers",
                                "teacher explainers, comma-separated: the paper's seven (default: none, saliency, grad_x_input, ig, "
                                "attention_all, attention_last, smat) or any registered method (salient explain --list)");
  study->add_option("--out,-o,--output", study_out, "study directory (runs/, explainers/, report.md, summary.json)")->required();
  commands.push_back({study, [] { std::cout << smat_study(study_out, study_options); }});

  static json plausibility_options = json::object();
  static std::string pl_teacher, pl_data, pl_out;
  auto* plaus = smat_cmd->add_subcommand("plausibility",
                                         "AUROC/AUPRC of each teacher explainer against human rationales, with the oracle rows (Table 2)");
  plaus->add_option("--teacher", pl_teacher, "trained teacher classifier directory")->required();
  plaus->add_option("--data", pl_data, "dataset with rationales: eraser:test, hatexplain:test, sst-trees:test or a file")->required();
  add_data_dir(plaus, plausibility_options);
  add_named_option<std::vector<std::string>>(plaus, "--smat", plausibility_options, "smat",
                                             "learned explainers (smat_explainer.json), each a row; repeatable");
  add_named_option<int64_t>(plaus, "--limit", plausibility_options, "limit", "the first N records with a rationale (0: all, default)");
  add_named_option<int64_t>(plaus, "--max-length", plausibility_options, "max_length", "tokens per text (0: the teacher's position table, default)");
  add_named_option<std::string>(plaus, "--unit", plausibility_options, "unit",
                                "what is ranked: word (word pieces summed, the authors' Appendix A; default) or token");
  add_static_options(plaus, plausibility_options);
  plaus->add_option("--out,-o,--output", pl_out, "directory for plausibility.{md,csv,json}")->required();
  commands.push_back({plaus, [] { std::cout << smat_plausibility(pl_teacher, pl_data, pl_out, plausibility_options); }});

  static std::string report_dir;
  auto* report = smat_cmd->add_subcommand("report", "rewrite a study's report (report.md, report.csv, summary.json, heatmaps)");
  report->add_option("--study", report_dir, "study directory")->required();
  commands.push_back({report, [] { std::cout << smat_report(report_dir); }});
}

}  // namespace salient::cli

// Learning to Scaffold subcommands (docs/smat.md): smat split | train | evaluate | study | plausibility | report.
#include <torch/torch.h>

#include <random>
#include <set>

#include "commands.h"
#include "dist/world.h"
#include "data/dataset.h"
#include "smat/plausibility.h"
#include "smat/study.h"

namespace salient::cli {

namespace {

// Options every simulation command shares: the teacher, the students' start and the pool split.
void add_setup_options(CLI::App* cmd, smat::SimulationSetup& s) {
  cmd->add_option("--teacher", s.teacher, "trained teacher classifier directory (never changes)")->required();
  cmd->add_option("--student-init", s.student_init,
                  "encoder directory the students start from, e.g. models/pretrained (default: from scratch, the teacher's shape)");
  cmd->add_option_function<double>(
      "--student-dropout", [&s](const double& p) { s.student_dropout = p; },
      "students' hidden and attention dropout, in [0, 1) (default: what they start from has)");
  cmd->add_option("--pool", s.pool, "dataset spec or file of student inputs, texts or (for a ViT teacher) images like fashion-mnist:train; labels unused: the teacher labels them")->required();
  cmd->add_option("--test-pool", s.test_pool, "draw the test set from this dataset instead of the pool (e.g. fashion-mnist:test)");
  cmd->add_option("--valid-pool", s.valid_pool, "draw the validation set from this dataset instead of the pool (e.g. fashion-mnist:val)");
  cmd->add_option("--data-dir", s.data_dir, "directory of the shared datasets (default: ../shared/data or $SALIENT_SHARED/data)");
  cmd->add_option("--test-size", s.test_size, "pool texts held out to measure simulability");
  cmd->add_option("--valid-size", s.valid_size, "pool texts for early stopping and SMaT's meta loss");
  cmd->add_option("--max-length", s.max_length, "tokens per text, specials included");
  cmd->add_option("--split-seed", s.split_seed, "seed of the pool split (the same for every run)");
}

void add_student_options(CLI::App* cmd, smat::StudentOptions& o, std::string& normalizer, std::string& optimizer,
                         std::string& early_stopping) {
  cmd->add_option("--normalizer", normalizer, "normalisation of the head coefficients: sparsemax, entmax15, softmax or none");
  cmd->add_option("--optimizer", optimizer,
                  "student optimiser, also the pilot step's rule: sgd (the paper's) or adamw (for students from scratch)");
  cmd->add_option("--beta", o.beta, "weight of the explanation loss (default: 5 attention explainers, 0.2 gradient ones)");
  cmd->add_option("--lr", o.lr, "student learning rate (also the pilot step's)");
  cmd->add_option("--clip", o.clip_norm, "student gradient-norm clip (0 = off)");
  cmd->add_option("--weight-decay", o.weight_decay, "student weight decay");
  cmd->add_option("--batch-size", o.batch_size, "student batch size (also the meta step's validation batch)");
  cmd->add_option("--patience", o.patience,
                  "stop once more than this many epochs passed without a better validation score (default 0: the authors' "
                  "10 for text, 5 for image and regression)");
  cmd->add_option("--early-stopping", early_stopping,
                  "validation score that keeps an epoch: accuracy (simulability; Pearson r for regression: the authors' "
                  "code, default) or loss (simulation cross-entropy, salient's earlier rule)");
  cmd->add_option("--max-epochs", o.max_epochs, "student epochs at most");
  cmd->add_option("--meta-lr", o.meta_lr,
                  "learning rate of the teacher's coefficients (SMaT; Adam without decay, gradients clipped to --clip, "
                  "as the authors' code; default 0: the paper's 5e-4, 2e-4 for regression)");
}

void add_static_options(CLI::App* cmd, smat::StaticExplainerOptions& s) {
  cmd->add_option("--ig-steps", s.ig_steps, "integration points of the ig teacher explainer");
  cmd->add_option("--gradient-layer", s.gradient_layer,
                  "where text teachers' saliency, grad_x_input and ig take the gradient: embeddings (the embedding "
                  "layer's output, hidden_states[0], as the authors' code; default) or word_embeddings");
  cmd->add_option("--saliency-temperature", s.saliency_temperature, "softmax temperature of the saliency teacher explainer");
  cmd->add_option("--grad-x-input-temperature", s.grad_x_input_temperature, "softmax temperature of grad_x_input");
  cmd->add_option("--ig-temperature", s.ig_temperature, "softmax temperature of ig");
  cmd->add_option("--registered-temperature", s.registered_temperature,
                  "softmax temperature over score / max|score| of any other registered explainer");
}

void resolve(smat::SimulationSetup& s, smat::StudentOptions& o, const std::string& normalizer, const std::string& optimizer,
             const std::string& early_stopping) {
  if (early_stopping != "loss" && early_stopping != "accuracy")
    fail("--early-stopping: must be loss or accuracy, got '{}'", early_stopping);
  o.select_by_accuracy = early_stopping == "accuracy";
  if (s.data_dir.empty()) s.data_dir = shared_data_dir();
  o.normalizer = smat::parse_normalizer(normalizer, "--normalizer");
  o.optimizer = smat::parse_optimizer(optimizer, "--optimizer");
}

struct SplitArgs {
  std::string data = "sst2:train", out, data_dir;
  int64_t pool_size = 6000, min_words = 6;
  uint64_t seed = 2022;
};

// The teacher's data and the students' pool, disjoint: pool = `pool_size` texts of at least
// `min_words` words drawn at random; the teacher trains on every other text.
void run_split(SplitArgs& a) {
  if (a.pool_size < 1) fail("--pool-size: must be ≥ 1, got {}", a.pool_size);
  if (a.min_words < 1) fail("--min-words: must be ≥ 1, got {}", a.min_words);
  if (a.out.empty()) fail("--out: an output directory is required");
  const Dataset d = load_dataset(a.data, a.data_dir.empty() ? shared_data_dir() : a.data_dir);
  std::vector<size_t> eligible;
  for (size_t i = 0; i < d.records.size(); ++i)
    if (static_cast<int64_t>(split_whitespace(d.records[i].text).size()) >= a.min_words) eligible.push_back(i);
  if (static_cast<int64_t>(eligible.size()) < a.pool_size)
    fail("--pool-size: '{}' has {} texts of ≥ {} words, fewer than {}", a.data, eligible.size(), a.min_words, a.pool_size);
  std::mt19937_64 rng(a.seed);
  std::shuffle(eligible.begin(), eligible.end(), rng);
  std::set<size_t> pool(eligible.begin(), eligible.begin() + a.pool_size);
  std::ostringstream teacher, students;
  int64_t teacher_count = 0;
  for (size_t i = 0; i < d.records.size(); ++i) {
    const Record& r = d.records[i];
    nlohmann::json j = {{"id", r.id}, {"text", r.text}, {"label", r.label}};
    if (r.target) j["target"] = *r.target;  // a regression dataset's number
    if (r.text_pair) j["text_pair"] = *r.text_pair;
    (pool.count(i) ? students : teacher) << j.dump() << "\n";
    teacher_count += !pool.count(i);
  }
  make_dirs(a.out);
  write_file_atomic(join_path(a.out, "teacher.jsonl"), teacher.str());
  write_file_atomic(join_path(a.out, "pool.jsonl"), students.str());
  const nlohmann::json report = {{"data", a.data},         {"seed", a.seed},          {"min_words", a.min_words},
                                 {"teacher", teacher_count}, {"pool", a.pool_size},   {"label_names", d.label_names}};
  write_file_atomic(join_path(a.out, "split.json"), report.dump(2) + "\n");
  std::cout << report.dump() << "\n";
}

struct RunArgs {
  smat::SimulationSetup setup;
  smat::StudentOptions student;
  smat::StaticExplainerOptions statics;
  std::string normalizer = "sparsemax", optimizer = "sgd", early_stopping = "accuracy", explainer = "smat", smat_file, out;
  int64_t size = 500;
  uint64_t seed = 0;
};

// `smat train`: meta-trains the teacher's coefficients with a student of `size` examples in the loop.
void run_train(RunArgs& a) {
  resolve(a.setup, a.student, a.normalizer, a.optimizer, a.early_stopping);
  std::cout << smat::train_smat_explainer(a.setup, a.student, a.size, a.seed, a.out).dump() << "\n";
}

// `smat evaluate`: one student trained with one teacher explainer; its simulability on the test split.
void run_evaluate(RunArgs& a) {
  resolve(a.setup, a.student, a.normalizer, a.optimizer, a.early_stopping);
  const nlohmann::json j =
      smat::evaluate_simulability(a.setup, a.student, a.statics, a.explainer, a.smat_file, a.size, a.seed);
  Output out(a.out);
  out.line(j);
  out.commit();
}

struct StudyArgs {
  smat::StudyOptions o;
  std::string normalizer = "sparsemax", optimizer = "sgd", early_stopping = "accuracy", sizes = "500,1000,2000", seeds = "0,9,11,30,69",
              explainers = "none,saliency,grad_x_input,ig,attention_all,attention_last,smat";
};

void run_study(StudyArgs& a) {
  resolve(a.o.setup, a.o.student, a.normalizer, a.optimizer, a.early_stopping);
  a.o.sizes = parse_int_list(a.sizes, "--sizes");
  a.o.seeds.clear();
  for (int64_t s : parse_int_list(a.seeds, "--seeds", 0)) a.o.seeds.push_back(static_cast<uint64_t>(s));
  a.o.explainers = split_list(a.explainers);
  smat::run_study(a.o);
  if (dist::is_root()) std::cout << read_file(join_path(a.o.out_dir, "report.md"));
}

}  // namespace

void add_smat_commands(CLI::App& app, std::vector<Command>& commands) {
  auto* smat_cmd = app.add_subcommand("smat", "Learning to Scaffold (Fernandes et al. 2022): simulability and SMaT");
  smat_cmd->require_subcommand(1);

  static SplitArgs sa;
  auto* split = smat_cmd->add_subcommand("split", "split a dataset into the teacher's training texts and a disjoint student pool");
  split->add_option("--data", sa.data, "dataset spec or file to split");
  split->add_option("--pool-size", sa.pool_size, "texts in the student pool");
  split->add_option("--min-words", sa.min_words, "pool texts have at least this many words");
  split->add_option("--seed", sa.seed, "seed of the draw");
  split->add_option("--data-dir", sa.data_dir, "directory of the shared datasets");
  split->add_option("--out,-o,--output", sa.out, "directory for teacher.jsonl, pool.jsonl and split.json")->required();
  commands.push_back({split, [] { run_split(sa); }});

  static RunArgs ta;
  auto* train = smat_cmd->add_subcommand("train", "meta-train SMaT's head coefficients for a teacher (writes smat_explainer.json)");
  add_setup_options(train, ta.setup);
  add_student_options(train, ta.student, ta.normalizer, ta.optimizer, ta.early_stopping);
  train->add_option("--size", ta.size, "student training examples");
  train->add_option("--seed", ta.seed, "student initialisation, batch order and dropout");
  train->add_option("--out,-o,--output", ta.out, "smat_explainer.json to write, or a directory for it")->required();
  commands.push_back({train, [] { run_train(ta); }});

  static RunArgs ea;
  auto* evaluate = smat_cmd->add_subcommand("evaluate", "train one student with a teacher explainer; report its simulability");
  add_setup_options(evaluate, ea.setup);
  add_student_options(evaluate, ea.student, ea.normalizer, ea.optimizer, ea.early_stopping);
  add_static_options(evaluate, ea.statics);
  evaluate->add_option("--explainer", ea.explainer,
                       "none, saliency, grad_x_input, ig, attention_all, attention_last, smat, or any registered method (salient explain --list)");
  evaluate->add_option("--smat", ea.smat_file, "with --explainer smat: the trained explainer (smat_explainer.json or its directory)");
  evaluate->add_option("--size", ea.size, "student training examples");
  evaluate->add_option("--seed", ea.seed, "student initialisation, batch order and dropout");
  evaluate->add_option("--out,-o,--output", ea.out, "output JSON file (default: stdout)");
  commands.push_back({evaluate, [] { run_evaluate(ea); }});

  static StudyArgs st;
  auto* study = smat_cmd->add_subcommand("study", "every explainer × size × seed (resumable); report with median and IQR");
  add_setup_options(study, st.o.setup);
  add_student_options(study, st.o.student, st.normalizer, st.optimizer, st.early_stopping);
  add_static_options(study, st.o.static_explainers);
  study->add_option("--sizes", st.sizes, "student sizes, comma-separated");
  study->add_option("--seeds", st.seeds, "seeds, comma-separated");
  study->add_option("--explainers", st.explainers,
                    "teacher explainers, comma-separated: the paper's seven or any registered method (salient explain --list)");
  study->add_option("--out,-o,--output", st.o.out_dir, "study directory (runs/, explainers/, report.md, summary.json)")->required();
  commands.push_back({study, [] { run_study(st); }});

  static smat::PlausibilityOptions pl;
  auto* plaus = smat_cmd->add_subcommand("plausibility",
                                         "AUROC/AUPRC of each teacher explainer against human rationales, with the oracle rows (Table 2)");
  plaus->add_option("--teacher", pl.teacher, "trained teacher classifier directory")->required();
  plaus->add_option("--data", pl.data, "dataset with rationales: eraser:test, hatexplain:test, sst-trees:test or a file")->required();
  plaus->add_option("--data-dir", pl.data_dir, "directory of the shared datasets");
  plaus->add_option("--smat", pl.smat_files, "learned explainers (smat_explainer.json), each a row; repeatable");
  plaus->add_option("--limit", pl.limit, "the first N records with a rationale (0: all)");
  plaus->add_option("--max-length", pl.max_length, "tokens per text (0: the teacher's position table)");
  plaus->add_option("--unit", pl.unit, "what is ranked: word (word pieces summed, the authors' Appendix A) or token")
      ->capture_default_str();
  add_static_options(plaus, pl.statics);
  plaus->add_option("--out,-o,--output", pl.out_dir, "directory for plausibility.{md,csv,json}")->required();
  commands.push_back({plaus, [] {
                        smat::run_plausibility(pl);
                        std::cout << read_file(join_path(pl.out_dir, "plausibility.md"));
                      }});

  static std::string report_dir;
  auto* report = smat_cmd->add_subcommand("report", "rewrite a study's report (report.md, report.csv, summary.json, heatmaps)");
  report->add_option("--study", report_dir, "study directory")->required();
  commands.push_back({report, [] {
                        smat::report_study(report_dir);
                        std::cout << read_file(join_path(report_dir, "report.md"));
                      }});
}

}  // namespace salient::cli

#include "smat/study.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "data/dataset.h"
#include "dist/shards.h"
#include "salient/distributed.h"
#include "model/checkpoint.h"
#include "util/error.h"
#include "util/io.h"
#include "util/progress.h"
#include "util/stats.h"
#include "util/tensor_values.h"
#include "vision/vit.h"

namespace salient::smat {

namespace {

// The report's row of a fresh student taught by SMaT's frozen coefficients (salient's earlier SMaT row).
const char* const kFreshStudentRow = "smat_fresh_student";

std::string run_name(const std::string& explainer, int64_t size, uint64_t seed) {
  return fmt::format("{}_n{}_s{}", explainer, size, seed);
}

nlohmann::json setup_json(const SimulationSetup& s) {
  nlohmann::json j = {{"teacher", s.teacher},       {"teacher_weights", weights_fingerprint(s.teacher)},
                      {"student_init", s.student_init}, {"pool", s.pool},     {"data_dir", s.data_dir},
                      {"test_pool", s.test_pool},   {"valid_pool", s.valid_pool},
                      {"test_size", s.test_size},   {"valid_size", s.valid_size},     {"max_length", s.max_length},
                      {"split_seed", s.split_seed}};
  // Only when given, so that the studies written before the option resume unchanged.
  if (s.student_dropout) j["student_dropout"] = *s.student_dropout;
  return j;
}

nlohmann::json student_json(const StudentOptions& o) {
  return {{"normalizer", normalizer_name(o.normalizer)},
          {"optimizer", optimizer_name(o.optimizer)},
          {"beta", o.beta < 0 ? nlohmann::json("paper default (5 attention, 0.2 gradient)") : nlohmann::json(o.beta)},
          {"lr", o.lr},
          {"clip_norm", o.clip_norm},
          {"weight_decay", o.weight_decay},
          {"batch_size", o.batch_size},
          {"patience", o.patience > 0 ? nlohmann::json(o.patience) : nlohmann::json("paper default (10 text, 5 image/regression)")},
          {"early_stopping", o.select_by_accuracy ? "accuracy" : "loss"},
          {"max_epochs", o.max_epochs},
          {"meta_lr", o.meta_lr > 0 ? nlohmann::json(o.meta_lr) : nlohmann::json("paper default (5e-4, 2e-4 regression)")}};
}

// What turns explanations into the students' targets: a study resumed with other values would mix runs.
nlohmann::json static_json(const StaticExplainerOptions& o) {
  nlohmann::json registered = nlohmann::json::object();
  for (const auto& [method, eo] : o.registered)
    registered[method] = {{"params", eo.params}, {"output", eo.output ? model_output_name(*eo.output) : "default"}};
  return {{"saliency_temperature", o.saliency_temperature}, {"grad_x_input_temperature", o.grad_x_input_temperature},
          {"ig_temperature", o.ig_temperature},             {"ig_steps", o.ig_steps}, {"gradient_layer", o.gradient_layer},
          {"registered_temperature", o.registered_temperature}, {"registered", registered}};
}

std::vector<SimulationExample> take(const std::vector<SimulationExample>& v, int64_t n) {
  return {v.begin(), v.begin() + std::min<int64_t>(n, static_cast<int64_t>(v.size()))};
}

}  // namespace

void SimulationSetup::validate() const {
  if (teacher.empty()) fail("--teacher: a trained teacher model directory is required");
  if (!dir_exists(teacher)) fail("--teacher: '{}' is not a directory", teacher);
  if (!student_init.empty() && !dir_exists(student_init)) fail("--student-init: '{}' is not a directory", student_init);
  if (student_dropout) require_fraction_below_one("--student-dropout", *student_dropout);
  if (pool.empty()) fail("--pool: a dataset spec or file of student texts is required");
  if (test_size < 1) fail("--test-size: must be ≥ 1, got {}", test_size);
  if (valid_size < 1) fail("--valid-size: must be ≥ 1, got {}", valid_size);
  if (max_length < 3) fail("--max-length: must be ≥ 3, got {}", max_length);
  // Separate sources are shuffled independently: the same source twice would overlap.
  if (!test_pool.empty() && test_pool == pool) fail("--test-pool: '{}' is the pool itself (leave it out to split the pool)", pool);
  if (!valid_pool.empty() && valid_pool == pool) fail("--valid-pool: '{}' is the pool itself (leave it out to split the pool)", pool);
  if (!test_pool.empty() && test_pool == valid_pool) fail("--valid-pool: '{}' is also the --test-pool", valid_pool);
}

nlohmann::json SimulationData::describe() const {
  if (!train.empty() && train[0].teacher_value) {  // a regression teacher: its outputs' mean and spread
    auto stats = [](const std::vector<SimulationExample>& v) {
      std::vector<double> x;
      for (const auto& e : v) x.push_back(*e.teacher_value);
      return nlohmann::json{{"mean", mean_of(x)}, {"std", sample_std(x)}};
    };
    return {{"train", train.size()},
            {"valid", valid.size()},
            {"test", test.size()},
            {"task", "regression"},
            {"teacher_output", {{"train", stats(train)}, {"valid", stats(valid)}, {"test", stats(test)}}}};
  }
  auto share = [](const std::vector<SimulationExample>& v) {
    int64_t positive = 0;
    for (const auto& e : v) positive += e.teacher_label == 1;
    return v.empty() ? 0.0 : static_cast<double>(positive) / static_cast<double>(v.size());
  };
  return {{"train", train.size()},
          {"valid", valid.size()},
          {"test", test.size()},
          {"teacher_label_1_share", {{"train", share(train)}, {"valid", share(valid)}, {"test", share(test)}}}};
}

namespace {

// Where each part comes from: ranges [from, from + count) of a seeded shuffle of one source. Test,
// valid and train share the pool's shuffle unless test_pool / valid_pool give their own source.
struct PartPlan {
  std::string spec, flag;
  int64_t from = 0, count = 0;
};

std::vector<PartPlan> plan_parts(const SimulationSetup& s, int64_t needed_train) {
  std::vector<PartPlan> parts;
  int64_t used = 0;
  auto place = [&](const std::string& own, const char* own_flag, int64_t count) {
    if (!own.empty()) {
      parts.push_back({own, own_flag, 0, count});
    } else {
      parts.push_back({s.pool, "--pool", used, count});
      used += count;
    }
  };
  place(s.test_pool, "--test-pool", s.test_size);
  place(s.valid_pool, "--valid-pool", s.valid_size);
  parts.push_back({s.pool, "--pool", used, needed_train});
  return parts;
}

// The shuffled order of `n` items of one source (the same split seed for every source).
std::vector<size_t> shuffled(size_t n, uint64_t seed) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

// The last part planned from each source says how many items that source must hold.
void check_sizes(const std::vector<PartPlan>& parts, const std::string& spec, size_t available, const char* unit) {
  int64_t need = 0;
  std::string flag;
  for (const auto& p : parts)
    if (p.spec == spec) {
      need = std::max(need, p.from + p.count);
      flag = p.flag;
    }
  if (static_cast<int64_t>(available) < need)
    fail("{}: '{}' has {} {}; the test, valid and largest student sets drawn from it need {}", flag, spec, available, unit,
         need);
}

}  // namespace

SimulationData load_simulation_data(const SimulationSetup& setup, int64_t needed_train) {
  setup.validate();
  SimulationData d;
  d.images = load_model_config(setup.teacher).is_vision();
  const std::vector<PartPlan> parts = plan_parts(setup, needed_train);
  std::vector<std::vector<SimulationExample>> annotated;
  if (d.images) {
    if (!setup.student_init.empty())
      fail("--student-init: image students start from scratch (there is no pre-trained vision encoder here)");
    d.teacher.model = vision::load_vit(setup.teacher);
    d.teacher.dir = setup.teacher;
    std::map<std::string, ImageData> sources;
    for (const auto& p : parts) {
      if (!is_image_spec(p.spec)) fail("{}: '{}' is not an image dataset (an image teacher needs one)", p.flag, p.spec);
      if (!sources.count(p.spec)) sources[p.spec] = vision::load_vit_data(d.teacher.model, p.spec, setup.data_dir);
    }
    for (const auto& [spec, data] : sources) check_sizes(parts, spec, static_cast<size_t>(data.images.size(0)), "images");
    for (const auto& p : parts) {
      const std::vector<size_t> order = shuffled(static_cast<size_t>(sources[p.spec].images.size(0)), setup.split_seed);
      std::vector<int64_t> rows(order.begin() + p.from, order.begin() + p.from + p.count);
      annotated.push_back(annotate_images(d.teacher.model, sources[p.spec].images.index_select(0, torch::tensor(rows))));
    }
  } else {
    d.teacher = load_classifier(setup.teacher);
    std::map<std::string, Dataset> sources;
    for (const auto& p : parts)
      if (!sources.count(p.spec)) sources[p.spec] = load_dataset(p.spec, setup.data_dir);
    for (const auto& [spec, data] : sources) check_sizes(parts, spec, data.records.size(), "texts");
    for (const auto& p : parts) {
      const Dataset& source = sources[p.spec];
      const std::vector<size_t> order = shuffled(source.records.size(), setup.split_seed);
      std::vector<Encoding> encodings;
      for (int64_t i = p.from; i < p.from + p.count; ++i) {
        const Record& r = source.records[order[static_cast<size_t>(i)]];
        encodings.push_back(d.teacher.encode(r.text, r.text_pair, static_cast<int>(setup.max_length)));
      }
      annotated.push_back(annotate(d.teacher, encodings));
    }
  }
  d.test = std::move(annotated[0]);
  d.valid = std::move(annotated[1]);
  d.train = std::move(annotated[2]);
  return d;
}

Transformer make_student(const SimulationSetup& setup, const Classifier& teacher, uint64_t seed) {
  if (setup.student_init.empty() || teacher.model.config().is_vision()) {
    ModelConfig config = teacher.model.config();
    if (setup.student_dropout)
      config.hidden_dropout_prob = config.attention_probs_dropout_prob = *setup.student_dropout;
    Transformer t(config, seed * 7919ULL + 17);
    t.to(teacher.model.device(), torch::kFloat32);
    return t;
  }
  LoadOptions lo;
  lo.allow_new_head = true;
  lo.seed = seed * 7919ULL + 17;
  lo.labels = teacher.model.config().id2label;
  lo.pooling = teacher.model.config().pooling;  // the student reads its encoder as the teacher does
  lo.hidden_dropout = lo.attention_dropout = setup.student_dropout;
  Classifier c = load_classifier(setup.student_init, lo);
  if (c.tokenizer.vocab_size() != teacher.tokenizer.vocab_size())
    fail("--student-init: '{}' has a vocabulary of {} pieces, the teacher's has {}", setup.student_init,
         c.tokenizer.vocab_size(), teacher.tokenizer.vocab_size());
  return c.model;
}

void StudyOptions::validate() const {
  setup.validate();
  student.validate();
  if (out_dir.empty()) fail("--out: an output directory is required");
  if (sizes.empty()) fail("--sizes: give at least one student size");
  for (int64_t n : sizes)
    if (n < 1) fail("--sizes: every size must be ≥ 1, got {}", n);
  if (seeds.empty()) fail("--seeds: give at least one seed");
  if (explainers.empty()) fail("--explainers: give at least one explainer");
  for (const auto& e : explainers) parse_teacher_explainer(e, "--explainers");
  // A repeated value would train the same run twice (the list of pending runs is made once).
  auto once = [](auto values, const char* flag) {
    std::sort(values.begin(), values.end());
    auto twice = std::adjacent_find(values.begin(), values.end());
    if (twice != values.end()) fail("{}: '{}' is given twice", flag, fmt::format("{}", *twice));
  };
  once(sizes, "--sizes");
  once(seeds, "--seeds");
  once(explainers, "--explainers");
}

nlohmann::json run_study(const StudyOptions& o) {
  o.validate();
  make_dirs(join_path(o.out_dir, "runs"));
  make_dirs(join_path(o.out_dir, "explainers"));
  if (dist::is_root()) remove_stale_temporaries(o.out_dir);  // the other ranks write only after the barrier below
  // A study directory holds one configuration: resuming with other settings would mix results.
  const nlohmann::json settings = {{"setup", setup_json(o.setup)},
                                   {"student", student_json(o.student)},
                                   {"static_explainers", static_json(o.static_explainers)}};
  const std::string settings_path = join_path(o.out_dir, "study.json");
  if (file_exists(settings_path)) {
    const nlohmann::json before = parse_json_file(settings_path);
    if (before != settings)
      fail("--out: '{}' holds a study with other settings ({}; study.json); use another directory", o.out_dir,
           differing_keys(before, settings));
  } else if (dist::is_root()) {
    write_file_atomic(settings_path, settings.dump(2) + "\n");
  }

  struct Pending {
    std::string explainer;
    int64_t size;
    uint64_t seed;
  };
  std::vector<Pending> pending;
  for (const auto& e : o.explainers)
    for (int64_t n : o.sizes)
      for (uint64_t seed : o.seeds)
        if (!file_exists(join_path(o.out_dir, "runs/" + run_name(e, n, seed) + ".json"))) pending.push_back({e, n, seed});
  if (dist::sharded()) {
    // Under mpirun (docs/distributed.md): the student runs are shared out by cost (students'
    // examples; a SMaT run also meta-trains, about three times the work), each rank writing its
    // own run files; rank 0 writes the report once all are done. Every rank has listed the
    // pending runs before any writes one.
    dist::barrier();
    std::vector<double> costs;
    for (const Pending& p : pending)
      costs.push_back(static_cast<double>(p.size) * (parse_teacher_explainer(p.explainer, "--explainers") ==
                                                             TeacherExplainer::Smat ? 3.0 : 1.0));
    const dist::ShardPlan plan = dist::plan_shards(costs, 1, dist::size());
    std::vector<Pending> mine;
    for (size_t i = 0; i < pending.size(); ++i)
      if (plan.owner[i] == dist::rank()) mine.push_back(pending[i]);
    pending = std::move(mine);
  }
  if (!pending.empty()) {
    const int64_t largest = *std::max_element(o.sizes.begin(), o.sizes.end());
    SimulationData data = load_simulation_data(o.setup, largest);
    if (dist::is_root()) write_file_atomic(join_path(o.out_dir, "data.json"), data.describe().dump(2) + "\n");
    const int64_t pad = data.pad_id();
    const int64_t teacher_heads = data.teacher.model.num_layers() * data.teacher.model.num_heads();
    Progress bar("smat study", static_cast<int64_t>(pending.size()), "run", 30.0);
    std::string explained_for;
    std::vector<SimulationExample> train;
    for (const Pending& p : pending) {
      const TeacherExplainer kind = parse_teacher_explainer(p.explainer, "--explainers");
      if (explained_for != p.explainer) {
        train = with_explanations(data.teacher, data.train, p.explainer, o.static_explainers);
        explained_for = p.explainer;
      }
      StudentOptions so = o.student;
      so.explainer = kind;
      so.seed = p.seed;
      if (so.beta < 0) so.beta = default_beta(p.explainer);
      const std::vector<SimulationExample> subset = take(train, p.size);
      const Transformer student = make_student(o.setup, data.teacher, p.seed);
      nlohmann::json record = {{"explainer", p.explainer}, {"size", p.size}, {"seed", p.seed},
                               {"beta", so.beta}};
      torch::Tensor coefficients;
      if (kind == TeacherExplainer::Smat) {
        const std::string path = join_path(o.out_dir, "explainers/" + run_name("smat", p.size, p.seed) + ".json");
        if (!file_exists(path)) {
          StudentRun meta = run_student(student, pad, subset, data.valid, data.test, so,
                                        uniform_coefficient_logits(teacher_heads), /*meta_train=*/true);
          const LearnedHeadExplainer learned =
              all_heads_explainer(data.teacher.model, so.normalizer, meta.teacher_coefficient_logits);
          nlohmann::json provenance = meta.to_json();
          provenance.erase("teacher_coefficient_logits");
          save_head_explainer(learned, path,
                              {{"teacher", o.setup.teacher}, {"size", p.size}, {"seed", p.seed}, {"meta_run", provenance}});
        }
        const LearnedHeadExplainer learned = load_head_explainer(path);
        coefficients = learned.coefficient_logits;
        record["explainer_file"] = "explainers/" + run_name("smat", p.size, p.seed) + ".json";
        record["meta_run"] = parse_json_file(path).at("provenance").at("meta_run");
      }
      StudentRun run = run_student(student, pad, subset, data.valid, data.test, so, coefficients);
      record["run"] = run.to_json();
      write_file_atomic(join_path(o.out_dir, "runs/" + run_name(p.explainer, p.size, p.seed) + ".json"),
                        record.dump(2) + "\n");
      bar.update(1, fmt::format("{} n={} seed={}: {:.3f}", p.explainer, p.size, p.seed, run.simulability));
    }
    bar.finish();
  }
  if (dist::sharded()) {
    dist::barrier();
    if (!dist::is_root()) return nlohmann::json();
  }
  return report_study(o.out_dir);
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) fail("quantile of no values");
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::string head_heatmap_svg(const std::vector<double>& values, int64_t layers, int64_t heads, const std::string& title) {
  if (static_cast<int64_t>(values.size()) != layers * heads) fail("heatmap: {} values for {} × {}", values.size(), layers, heads);
  const int cell = 44, left = 70, top = 50;
  const double top_value = std::max(1e-12, *std::max_element(values.begin(), values.end()));
  std::ostringstream s;
  const int64_t width = left + heads * cell + 20, height = top + layers * cell + 40;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s << "<text x=\"" << left << "\" y=\"20\" font-size=\"13\">" << html_escape(title) << "</text>\n";
  for (int64_t h = 0; h < heads; ++h)
    s << "<text x=\"" << left + h * cell + cell / 2 << "\" y=\"" << top - 6 << "\" text-anchor=\"middle\">head " << h << "</text>\n";
  for (int64_t l = 0; l < layers; ++l) {
    s << "<text x=\"" << left - 8 << "\" y=\"" << top + l * cell + cell / 2 + 4 << "\" text-anchor=\"end\">layer " << l
      << "</text>\n";
    for (int64_t h = 0; h < heads; ++h) {
      const double v = values[static_cast<size_t>(l * heads + h)];
      const double t = std::clamp(v / top_value, 0.0, 1.0);
      const int shade = static_cast<int>(std::lround(255 * (1 - t)));
      s << fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"rgb({},{},255)\" stroke=\"#888\"/>\n",
                       left + h * cell, top + l * cell, cell, cell, shade, shade);
      s << fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">{:.2f}</text>\n", left + h * cell + cell / 2,
                       top + l * cell + cell / 2 + 4, t > 0.6 ? "white" : "black", v);
    }
  }
  s << "<text x=\"" << left << "\" y=\"" << height - 12 << "\">λ (normalised coefficients), mean over seeds</text>\n";
  s << "</svg>\n";
  return s.str();
}

nlohmann::json report_study(const std::string& out_dir) {
  const std::string runs_dir = join_path(out_dir, "runs");
  if (!dir_exists(runs_dir)) fail("--study: '{}' has no runs/ (salient smat study writes it)", out_dir);
  std::map<std::string, std::map<int64_t, std::vector<double>>> sims;
  std::map<int64_t, std::vector<std::vector<double>>> coefficients;  // size → per seed λ
  std::vector<double> student_steps, meta_steps, meta_run_student_steps;
  int64_t coefficient_layers = 0, coefficient_heads = 0;
  std::vector<std::string> order;
  for (const auto& name : list_files(runs_dir)) {
    if (name.size() < 5 || name.substr(name.size() - 5) != ".json") continue;
    const nlohmann::json r = parse_json_file(join_path(runs_dir, name));
    const std::string e = r.at("explainer").get<std::string>();
    const int64_t size = r.at("size").get<int64_t>();
    auto add = [&](const std::string& row, double value) {
      if (std::find(order.begin(), order.end(), row) == order.end()) order.push_back(row);
      sims[row][size].push_back(value);
    };
    if (r.contains("meta_run")) {
      // SMaT's row is the student co-trained with the coefficients during meta-training (the
      // authors' reported number); a fresh student taught by the frozen coefficients is its own row.
      add(e, r.at("meta_run").at("simulability").get<double>());
      add(kFreshStudentRow, r.at("run").at("simulability").get<double>());
    } else {
      add(e, r.at("run").at("simulability").get<double>());
    }
    student_steps.push_back(r.at("run").at("student_step_seconds").get<double>());
    if (r.contains("meta_run")) {
      meta_steps.push_back(r.at("meta_run").at("meta_step_seconds").get<double>());
      meta_run_student_steps.push_back(r.at("meta_run").at("student_step_seconds").get<double>());
      const LearnedHeadExplainer learned = load_head_explainer(join_path(out_dir, r.at("explainer_file").get<std::string>()));
      coefficients[r.at("size").get<int64_t>()].push_back(tensor_values(learned.coefficients()));
      coefficient_layers = static_cast<int64_t>(learned.layers.size());
      coefficient_heads = learned.num_heads;
    }
  }
  if (sims.empty()) fail("--study: '{}' has no finished runs", out_dir);
  // Explainers in the study's order (none first, the fresh-student row after smat), not the directory's.
  std::vector<std::string> canonical = teacher_explainer_names();
  canonical.insert(std::find(canonical.begin(), canonical.end(), "smat") + 1, kFreshStudentRow);
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return std::find(canonical.begin(), canonical.end(), a) < std::find(canonical.begin(), canonical.end(), b);
  });
  std::set<int64_t> sizes;
  for (const auto& [e, by_size] : sims)
    for (const auto& kv : by_size) sizes.insert(kv.first);

  nlohmann::json rows = nlohmann::json::array();
  std::ostringstream md, csv;
  md << "| explainer |";
  for (int64_t n : sizes) md << " n = " << n << " |";
  md << "\n|---|";
  for (size_t i = 0; i < sizes.size(); ++i) md << "---|";
  md << "\n";
  csv << "explainer,size,seeds,median,q25,q75,vs_none\n";
  for (const auto& e : order) {
    md << "| " << e << " |";
    for (int64_t n : sizes) {
      auto it = sims[e].find(n);
      if (it == sims[e].end()) {
        md << " – |";
        continue;
      }
      const auto& v = it->second;
      const double med = quantile(v, 0.5), q25 = quantile(v, 0.25), q75 = quantile(v, 0.75);
      std::string versus = "baseline";
      if (e != "none") {
        versus = "no baseline";
        auto base = sims.count("none") ? sims["none"].find(n) : sims["none"].end();
        if (sims.count("none") && base != sims["none"].end()) {
          const double b25 = quantile(base->second, 0.25), b75 = quantile(base->second, 0.75);
          versus = q25 > b75 ? "better" : q75 < b25 ? "worse" : "overlap";
        }
      }
      rows.push_back({{"explainer", e}, {"size", n}, {"seeds", v.size()}, {"median", med}, {"q25", q25}, {"q75", q75},
                      {"vs_none", versus}, {"values", v}});
      md << fmt::format(" {:.3f} [{:.3f}, {:.3f}]{} |", med, q25, q75,
                        versus == "better" ? " ▲" : versus == "worse" ? " ▼" : "");
      csv << fmt::format("{},{},{},{:.6f},{:.6f},{:.6f},{}\n", e, n, v.size(), med, q25, q75, versus);
    }
    md << "\n";
  }
  md << "\nSimulability on the test split (agreement with the teacher's labels; for a regression teacher, "
        "Pearson's r of student and teacher outputs): median [25%, 75%] over seeds; ▲ / ▼: "
        "the 25–75% range lies above / below the no-explainer student's.\n";
  if (sims.count(kFreshStudentRow))
    md << "smat: the student co-trained with the coefficients during meta-training (the authors' number); "
       << kFreshStudentRow << ": a new student taught by the learnt coefficients, frozen.\n";
  nlohmann::json cost = {{"student_step_seconds", mean_of(student_steps)}, {"meta_step_seconds", mean_of(meta_steps)}};
  // The ratio within the meta runs: their own student steps, timed under the same load.
  if (!meta_steps.empty() && mean_of(meta_run_student_steps) > 0) {
    const double ratio = mean_of(meta_steps) / mean_of(meta_run_student_steps);
    cost["meta_step_over_student_step"] = ratio;
    md << fmt::format("\nCost: {:.1f} ms per student step (all runs); in the meta runs {:.1f} ms per student step and "
                      "{:.1f} ms per meta step ({:.2f} student steps).\n",
                      1e3 * mean_of(student_steps), 1e3 * mean_of(meta_run_student_steps), 1e3 * mean_of(meta_steps), ratio);
  }
  nlohmann::json heatmaps = nlohmann::json::array();
  for (const auto& [n, per_seed] : coefficients) {
    std::vector<double> avg(per_seed[0].size(), 0.0);
    for (const auto& v : per_seed)
      for (size_t i = 0; i < v.size() && i < avg.size(); ++i) avg[i] += v[i] / static_cast<double>(per_seed.size());
    const std::string file = fmt::format("heads_n{}.svg", n);
    write_file_atomic(join_path(out_dir, file),
                      head_heatmap_svg(avg, coefficient_layers, coefficient_heads,
                                       fmt::format("SMaT head coefficients, n = {} ({} seeds)", n, per_seed.size())));
    heatmaps.push_back({{"size", n}, {"file", file}, {"mean_coefficients", avg}});
  }
  nlohmann::json summary = {{"rows", rows}, {"cost", cost}, {"heatmaps", heatmaps}};
  if (file_exists(join_path(out_dir, "study.json"))) summary["settings"] = parse_json_file(join_path(out_dir, "study.json"));
  write_file_atomic(join_path(out_dir, "summary.json"), summary.dump(2) + "\n");
  write_file_atomic(join_path(out_dir, "report.md"), md.str());
  write_file_atomic(join_path(out_dir, "report.csv"), csv.str());
  return summary;
}

nlohmann::json train_smat_explainer(const SimulationSetup& setup, StudentOptions student, int64_t size, uint64_t seed,
                                    const std::string& out) {
  if (size < 1) fail("--size: must be ≥ 1, got {}", size);
  if (out.empty()) fail("--out: an output file or directory is required");
  SimulationData data = load_simulation_data(setup, size);
  student.explainer = TeacherExplainer::Smat;
  student.seed = seed;
  const std::vector<SimulationExample> train(data.train.begin(), data.train.begin() + size);
  const int64_t heads = data.teacher.model.num_layers() * data.teacher.model.num_heads();
  StudentRun run = run_student(make_student(setup, data.teacher, seed), data.pad_id(), train, data.valid, data.test,
                               student, uniform_coefficient_logits(heads), /*meta_train=*/true);
  const LearnedHeadExplainer learned = all_heads_explainer(data.teacher.model, student.normalizer, run.teacher_coefficient_logits);
  const bool is_dir = dir_exists(out) || out.back() == '/' || out.find(".json") == std::string::npos;
  if (is_dir) make_dirs(out);
  const std::string path = is_dir ? join_path(out, "smat_explainer.json") : out;
  nlohmann::json meta = run.to_json();
  meta.erase("teacher_coefficient_logits");
  save_head_explainer(learned, path, {{"teacher", setup.teacher}, {"size", size}, {"seed", seed}, {"meta_run", meta}});
  return {{"explainer", path},
          {"coefficients", learned.to_json()["coefficients"]},
          {"meta_student_simulability", run.simulability},
          {"meta_steps", run.meta_steps},
          {"meta_step_seconds", run.meta_step_seconds},
          {"student_step_seconds", run.student_step_seconds}};
}

nlohmann::json evaluate_simulability(const SimulationSetup& setup, StudentOptions student,
                                     const StaticExplainerOptions& statics, const std::string& explainer,
                                     const std::string& smat_file, int64_t size, uint64_t seed) {
  if (size < 1) fail("--size: must be ≥ 1, got {}", size);
  const TeacherExplainer kind = parse_teacher_explainer(explainer, "--explainer");
  torch::Tensor coefficients;
  if (kind == TeacherExplainer::Smat) {
    if (smat_file.empty()) fail("--smat: explainer 'smat' needs a trained explainer (salient smat train)");
    const LearnedHeadExplainer learned = load_head_explainer(smat_file);
    if (learned.normalizer != student.normalizer)
      fail("--normalizer: the explainer in '{}' was trained with {}, not {}", smat_file, normalizer_name(learned.normalizer),
           normalizer_name(student.normalizer));
    coefficients = learned.coefficient_logits;
  } else if (!smat_file.empty()) {
    fail("--smat: only for --explainer smat (got '{}')", explainer);
  }
  SimulationData data = load_simulation_data(setup, size);
  student.explainer = kind;
  student.seed = seed;
  std::vector<SimulationExample> train(data.train.begin(), data.train.begin() + size);
  train = with_explanations(data.teacher, std::move(train), explainer, statics);
  if (student.beta < 0) student.beta = default_beta(explainer);
  StudentRun run = run_student(make_student(setup, data.teacher, seed), data.pad_id(), train, data.valid, data.test,
                               student, coefficients);
  return {{"explainer", explainer}, {"size", size},         {"seed", seed},
          {"beta", student.beta},   {"data", data.describe()}, {"run", run.to_json()}};
}

}  // namespace salient::smat

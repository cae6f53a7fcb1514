// The public entry points of salient/studies.h over the papers' modules: options by name (JSON
// values) onto their option structs, the shared data directory filled in, the results as JSON.
#include "salient/studies.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/method_settings.h"
#include "eval/benchmark.h"
#include "eval/faithfulness.h"
#include "data/dataset.h"
#include "explain/explainer.h"
#include "expnet/crosstask.h"
#include "expnet/expnet.h"
#include "model/classifier.h"
#include "salient/inputs.h"
#include "salient/distributed.h"
#include "smat/plausibility.h"
#include "smat/study.h"
#include "sst/data.h"
#include "sst/evaluate.h"
#include "sst/model.h"
#include "sst/render.h"
#include "sst/train.h"
#include "util/io.h"

namespace salient {

namespace {

using nlohmann::json;

// A value of the wrong JSON type for an option (turned into an OptionError naming it).
struct WrongType {};

// The option's value as V, of the JSON type V needs: integers for integers (not 2.5), numbers for
// doubles, booleans, strings, arrays of them.
template <class V>
V option_value(const json& v);
template <>
bool option_value<bool>(const json& v) {
  if (!v.is_boolean()) throw WrongType{};
  return v.get<bool>();
}
template <>
int64_t option_value<int64_t>(const json& v) {
  if (!v.is_number_integer()) throw WrongType{};
  return v.get<int64_t>();
}
template <>
int option_value<int>(const json& v) {
  const int64_t x = option_value<int64_t>(v);
  if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) throw WrongType{};
  return static_cast<int>(x);
}
template <>
uint64_t option_value<uint64_t>(const json& v) {
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0)) throw WrongType{};
  return v.get<uint64_t>();
}
template <>
double option_value<double>(const json& v) {
  if (!v.is_number()) throw WrongType{};
  return v.get<double>();
}
template <>
std::string option_value<std::string>(const json& v) {
  if (!v.is_string()) throw WrongType{};
  return v.get<std::string>();
}
template <>
std::vector<int64_t> option_value<std::vector<int64_t>>(const json& v) {
  if (!v.is_array()) throw WrongType{};
  std::vector<int64_t> out;
  for (const auto& x : v) out.push_back(option_value<int64_t>(x));
  return out;
}
template <>
std::vector<std::string> option_value<std::vector<std::string>>(const json& v) {
  if (!v.is_array()) throw WrongType{};
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(option_value<std::string>(x));
  return out;
}

template <class T>
using Setters = std::map<std::string, std::function<void(T&, const json&)>>;

template <class T, class V>
std::function<void(T&, const json&)> field(V T::*member) {
  return [member](T& o, const json& v) { o.*member = option_value<V>(v); };
}

template <class T>
std::vector<std::string> names_of(const Setters<T>& setters) {
  std::vector<std::string> out;
  for (const auto& s : setters) out.push_back(s.first);
  return out;
}

// `options` (an object of name → value) onto `target`; `where` names the call in errors.
template <class T>
void apply_options(T& target, const Setters<T>& setters, const json& options, const std::string& where) {
  if (options.is_null()) return;
  if (!options.is_object()) throw OptionError(where + ": options must be an object of names to values");
  for (auto it = options.begin(); it != options.end(); ++it) {
    const auto setter = setters.find(it.key());
    if (setter == setters.end())
      throw OptionError(fmt::format("{}: unknown option '{}' (valid: {})", where, it.key(),
                                    fmt::join(names_of(setters), ", ")));
    try {
      setter->second(target, it.value());
    } catch (const WrongType&) {
      throw OptionError(where + ": option '" + it.key() + "' has the wrong type (" + it.value().type_name() + ")");
    }
  }
}


std::string data_dir_or_shared(const std::string& dir) { return dir.empty() ? shared_data_dir() : dir; }

// How a value error names an option: by its name and by the CLI flag that sets it, for the callers
// of both ("early_stopping (--early-stopping)").
std::string option_label(const std::string& name) {
  const bool keyword = !name.empty() && name.back() == '_';  // lambda_ (a Python keyword) → --lambda
  return name + " (" + param_flag(keyword ? name.substr(0, name.size() - 1) : name) + ")";
}

// The static teacher explainers' settings (smat train | evaluate | study | plausibility).
const Setters<smat::StaticExplainerOptions>& static_explainer_setters() {
  using O = smat::StaticExplainerOptions;
  static const Setters<O> s = {
      {"ig_steps", field(&O::ig_steps)},
      {"gradient_layer", field(&O::gradient_layer)},
      {"saliency_temperature", field(&O::saliency_temperature)},
      {"grad_x_input_temperature", field(&O::grad_x_input_temperature)},
      {"ig_temperature", field(&O::ig_temperature)},
      {"registered_temperature", field(&O::registered_temperature)},
  };
  return s;
}

// `salient smat train | evaluate`'s options: the simulation setup, the student, the static
// explainers' settings.
struct SmatOptions {
  smat::SimulationSetup setup;
  smat::StudentOptions student;
  smat::StaticExplainerOptions statics;
};

const Setters<SmatOptions>& smat_setters() {
  using O = SmatOptions;
  static const Setters<O> s = {
      {"teacher", [](O& o, const json& v) { o.setup.teacher = option_value<std::string>(v); }},
      {"student_init", [](O& o, const json& v) { o.setup.student_init = option_value<std::string>(v); }},
      {"student_dropout", [](O& o, const json& v) { o.setup.student_dropout = option_value<double>(v); }},
      {"pool", [](O& o, const json& v) { o.setup.pool = option_value<std::string>(v); }},
      {"test_pool", [](O& o, const json& v) { o.setup.test_pool = option_value<std::string>(v); }},
      {"valid_pool", [](O& o, const json& v) { o.setup.valid_pool = option_value<std::string>(v); }},
      {"data_dir", [](O& o, const json& v) { o.setup.data_dir = option_value<std::string>(v); }},
      {"test_size", [](O& o, const json& v) { o.setup.test_size = option_value<int64_t>(v); }},
      {"valid_size", [](O& o, const json& v) { o.setup.valid_size = option_value<int64_t>(v); }},
      {"max_length", [](O& o, const json& v) { o.setup.max_length = option_value<int64_t>(v); }},
      {"split_seed", [](O& o, const json& v) { o.setup.split_seed = option_value<uint64_t>(v); }},
      {"normalizer",
       [](O& o, const json& v) {
         o.student.normalizer = smat::parse_normalizer(option_value<std::string>(v), option_label("normalizer"));
       }},
      {"optimizer",
       [](O& o, const json& v) {
         o.student.optimizer = smat::parse_optimizer(option_value<std::string>(v), option_label("optimizer"));
       }},
      {"early_stopping",
       [](O& o, const json& v) {
         const std::string e = option_value<std::string>(v);
         if (e != "loss" && e != "accuracy") fail("{}: must be loss or accuracy, got '{}'", option_label("early_stopping"), e);
         o.student.select_by_accuracy = e == "accuracy";
       }},
      {"beta", [](O& o, const json& v) { o.student.beta = option_value<double>(v); }},
      {"lr", [](O& o, const json& v) { o.student.lr = option_value<double>(v); }},
      {"clip", [](O& o, const json& v) { o.student.clip_norm = option_value<double>(v); }},
      {"weight_decay", [](O& o, const json& v) { o.student.weight_decay = option_value<double>(v); }},
      {"batch_size", [](O& o, const json& v) { o.student.batch_size = option_value<int64_t>(v); }},
      {"patience", [](O& o, const json& v) { o.student.patience = option_value<int>(v); }},
      {"max_epochs", [](O& o, const json& v) { o.student.max_epochs = option_value<int>(v); }},
      {"meta_lr", [](O& o, const json& v) { o.student.meta_lr = option_value<double>(v); }},
  };
  static const Setters<O> with_statics = [] {
    Setters<O> all = s;
    for (const auto& [name, set] : static_explainer_setters())
      all[name] = [set = set](O& o, const json& v) { set(o.statics, v); };
    return all;
  }();
  return with_statics;
}

// A list option: a JSON array, or the CLI's form, a string of comma-separated items.
std::vector<std::string> string_list(const json& v) {
  if (v.is_string()) return split_list(v.get<std::string>());
  return option_value<std::vector<std::string>>(v);
}
std::vector<int64_t> int_list(const json& v, const std::string& name, int64_t min) {
  std::vector<int64_t> out;
  if (v.is_array()) {
    out = option_value<std::vector<int64_t>>(v);
  } else {
    for (const std::string& item : string_list(v)) {
      size_t used = 0;
      int64_t x = 0;
      try {
        x = std::stoll(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != item.size()) fail("{}: expected integers ≥ {} separated by commas, got '{}'", name, min, v.get<std::string>());
      out.push_back(x);
    }
  }
  for (int64_t x : out)
    if (x < min) fail("{}: expected integers ≥ {}, got {}", name, min, x);
  return out;
}

// `smat study`: the options of smat train | evaluate (each onto the study's setup, student and
// static explainers) and the grid: sizes, seeds, explainers.
const Setters<smat::StudyOptions>& smat_study_setters() {
  using O = smat::StudyOptions;
  static const Setters<O> s = [] {
    Setters<O> all;
    for (const auto& [name, set] : smat_setters())
      all[name] = [set = set](O& o, const json& v) {
        SmatOptions parts{o.setup, o.student, o.static_explainers};
        set(parts, v);
        o.setup = parts.setup;
        o.student = parts.student;
        o.static_explainers = parts.statics;
      };
    all["sizes"] = [](O& o, const json& v) { o.sizes = int_list(v, option_label("sizes"), 1); };
    all["seeds"] = [](O& o, const json& v) {
      o.seeds.clear();
      for (int64_t x : int_list(v, option_label("seeds"), 0)) o.seeds.push_back(static_cast<uint64_t>(x));
    };
    all["explainers"] = [](O& o, const json& v) { o.explainers = string_list(v); };
    return all;
  }();
  return s;
}

const Setters<smat::PlausibilityOptions>& smat_plausibility_setters() {
  using O = smat::PlausibilityOptions;
  static const Setters<O> s = [] {
    Setters<O> all = {
        {"data_dir", field(&O::data_dir)},
        {"smat", [](O& o, const json& v) { o.smat_files = string_list(v); }},
        {"limit", field(&O::limit)},
        {"max_length", field(&O::max_length)},
        {"unit", field(&O::unit)},
    };
    for (const auto& [name, set] : static_explainer_setters())
      all[name] = [set = set](O& o, const json& v) { set(o.statics, v); };
    return all;
  }();
  return s;
}

struct SmatSplitCall {
  std::string data = "sst2:train", data_dir;
  int64_t pool_size = 6000, min_words = 6;
  uint64_t seed = 2022;
};
const Setters<SmatSplitCall>& smat_split_setters() {
  using O = SmatSplitCall;
  static const Setters<O> s = {{"data", field(&O::data)},
                               {"data_dir", field(&O::data_dir)},
                               {"pool_size", field(&O::pool_size)},
                               {"min_words", field(&O::min_words)},
                               {"seed", field(&O::seed)}};
  return s;
}

// The benchmark's simulability settings (BenchmarkSpec::simulability).
const Setters<SimulabilityOptions>& simulability_setters() {
  using O = SimulabilityOptions;
  static const Setters<O> s = {
      {"sizes", [](O& o, const json& v) { o.sizes = int_list(v, "--sim-sizes", 1); }},
      {"seeds",
       [](O& o, const json& v) {
         o.seeds.clear();
         for (int64_t x : int_list(v, "--sim-seeds", 0)) o.seeds.push_back(static_cast<uint64_t>(x));
       }},
      {"test_size", field(&O::test_size)},
      {"valid_size", field(&O::valid_size)},
      {"max_length", field(&O::max_length)},
      {"student_init", field(&O::student_init)},
      {"optimizer",
       [](O& o, const json& v) { o.student.optimizer = smat::parse_optimizer(option_value<std::string>(v), "--sim-optimizer"); }},
      {"lr", [](O& o, const json& v) { o.student.lr = option_value<double>(v); }},
      {"max_epochs", [](O& o, const json& v) { o.student.max_epochs = option_value<int>(v); }},
      {"patience", [](O& o, const json& v) { o.student.patience = option_value<int>(v); }},
      {"early_stopping",
       [](O& o, const json& v) {
         const std::string e = option_value<std::string>(v);
         if (e != "loss" && e != "accuracy") fail("--sim-early-stopping: must be loss or accuracy, got '{}'", e);
         o.student.select_by_accuracy = e == "accuracy";
       }},
      {"temperature", field(&O::temperature)},
      {"beta",
       [](O& o, const json& v) {  // the library reads -1 as "the family's default": a given β is ≥ 0
         const double beta = option_value<double>(v);
         if (!(beta >= 0) || !std::isfinite(beta)) fail("--sim-beta: must be ≥ 0, got {}", beta);
         o.student.beta = beta;
       }},
  };
  return s;
}

SmatOptions smat_options(const json& options) {
  SmatOptions o;
  apply_options(o, smat_setters(), options, "smat");
  o.setup.data_dir = data_dir_or_shared(o.setup.data_dir);
  return o;
}

const Setters<sst::SstTrainOptions>& sst_train_setters() {
  using O = sst::SstTrainOptions;
  static const Setters<O> s = {
      {"data_dir", field(&O::data_dir)},
      {"arch", field(&O::arch)},
      {"hidden", [](O& o, const json& v) { o.hidden = int_list(v, option_label("hidden"), 1); }},
      {"init", field(&O::init_model)},
      {"vocab", field(&O::vocab)},
      {"hidden_size", field(&O::hidden_size)},
      {"layers", field(&O::num_layers)},
      {"heads", field(&O::num_heads)},
      {"intermediate_size", field(&O::intermediate_size)},
      {"max_length", field(&O::max_length)},
      {"windows", field(&O::windows)},
      {"max_windows", field(&O::max_windows)},
      {"dropout", field(&O::dropout)},
      {"masking",
       [](O& o, const json& v) {
         o.objective.kind = sst::parse_mask_kind(option_value<std::string>(v), option_label("masking"));
       }},
      {"lambda_", [](O& o, const json& v) { o.objective.lambda = option_value<double>(v); }},
      {"xi", [](O& o, const json& v) { o.objective.xi = option_value<double>(v); }},
      {"tau", [](O& o, const json& v) { o.objective.tau = option_value<double>(v); }},
      {"straight_through", [](O& o, const json& v) { o.objective.straight_through = option_value<bool>(v); }},
      {"epsilon", [](O& o, const json& v) { o.objective.fill.epsilon = option_value<double>(v); }},
      {"pgd_step", [](O& o, const json& v) { o.objective.fill.step = option_value<double>(v); }},
      {"pgd_steps", [](O& o, const json& v) { o.objective.fill.steps = option_value<int>(v); }},
      {"noise",
       [](O& o, const json& v) {
         o.objective.fill.noise = sst::parse_noise_fill(option_value<std::string>(v), option_label("noise"));
       }},
      {"epochs", field(&O::epochs)},
      {"patience", field(&O::patience)},
      {"batch_size", field(&O::batch_size)},
      {"lr", field(&O::lr)},
      {"weight_decay", field(&O::weight_decay)},
      {"limit", field(&O::limit)},
      {"limit_random", field(&O::limit_random)},
      {"seed", field(&O::seed)},
      {"max_minutes", field(&O::max_minutes)},
      {"resume", field(&O::resume)},
  };
  return s;
}

const Setters<sst::SstEvalOptions>& sst_eval_setters() {
  using O = sst::SstEvalOptions;
  static const Setters<O> s = {
      {"model", field(&O::sst_model)},
      {"standard", field(&O::standard_model)},
      {"data_dir", field(&O::data_dir)},
      {"methods", [](O& o, const json& v) { o.methods = string_list(v); }},
      {"limit", field(&O::limit)},
      {"limit_random", field(&O::limit_random)},
      {"accuracy_limit", field(&O::accuracy_limit)},
      {"time_limit", [](O& o, const json& v) { o.search.time_limit = option_value<double>(v); }},
      {"search_batch", [](O& o, const json& v) { o.search.batch = option_value<int64_t>(v); }},
      {"search_tokens", [](O& o, const json& v) { o.search.batch_tokens = option_value<int64_t>(v); }},
      {"samples", field(&O::samples)},
      {"ranking", [](O& o, const json& v) { o.search.ranking = option_value<std::string>(v); }},
      {"ig_steps", [](O& o, const json& v) { o.search.ig_steps = option_value<int64_t>(v); }},
      {"precision", [](O& o, const json& v) { o.search.precision = option_value<double>(v); }},
      {"beam", [](O& o, const json& v) { o.search.beam = option_value<int>(v); }},
      {"max_length", field(&O::max_length)},
      {"windows", field(&O::windows)},
      {"views", field(&O::views)},
      {"seed", field(&O::seed)},
      {"epsilon", [](O& o, const json& v) { o.fill.epsilon = option_value<double>(v); }},
      {"pgd_step", [](O& o, const json& v) { o.fill.step = option_value<double>(v); }},
      {"pgd_steps", [](O& o, const json& v) { o.fill.steps = option_value<int>(v); }},
      {"noise",
       [](O& o, const json& v) { o.fill.noise = sst::parse_noise_fill(option_value<std::string>(v), option_label("noise")); }},
      {"sis_criterion", [](O& o, const json& v) { o.search.sis_criterion = option_value<std::string>(v); }},
      {"sis_threshold", [](O& o, const json& v) { o.search.sis_threshold = option_value<double>(v); }},
  };
  return s;
}

// `salient expnet train`'s options, and the two that are not the trainer's.
struct ExpNetTrainCall {
  ExpNetTrainOptions train;
  int64_t max_train = 0;
  std::string data_dir;
};

const Setters<ExpNetTrainCall>& expnet_train_setters() {
  using O = ExpNetTrainCall;
  static const Setters<O> s = {
      {"features",
       [](O& o, const json& v) {
         set_feature_list(o.train.model.features, option_value<std::string>(v), option_label("features"));
       }},
      {"layers", [](O& o, const json& v) { o.train.model.features.layers = option_value<std::string>(v); }},
      {"scale", [](O& o, const json& v) { o.train.model.features.scale = option_value<std::string>(v); }},
      {"head_pool", [](O& o, const json& v) { o.train.model.features.head_pool = option_value<std::string>(v); }},
      {"hidden", [](O& o, const json& v) { o.train.model.hidden = int_list(v, option_label("hidden"), 1); }},
      {"activation", [](O& o, const json& v) { o.train.model.activation = option_value<std::string>(v); }},
      {"dropout", [](O& o, const json& v) { o.train.model.dropout = option_value<double>(v); }},
      {"loss", [](O& o, const json& v) { o.train.loss = option_value<std::string>(v); }},
      {"alpha", [](O& o, const json& v) { o.train.alpha = option_value<double>(v); }},
      {"gamma", [](O& o, const json& v) { o.train.gamma = option_value<double>(v); }},
      {"filter_correct", [](O& o, const json& v) { o.train.filter_correct = option_value<bool>(v); }},
      {"lr", [](O& o, const json& v) { o.train.lr = option_value<double>(v); }},
      {"batch_size", [](O& o, const json& v) { o.train.batch_size = option_value<int64_t>(v); }},
      {"epochs", [](O& o, const json& v) { o.train.max_epochs = option_value<int>(v); }},
      {"patience", [](O& o, const json& v) { o.train.patience = option_value<int>(v); }},
      {"seed", [](O& o, const json& v) { o.train.seed = option_value<uint64_t>(v); }},
      {"max_train", [](O& o, const json& v) { o.max_train = option_value<int64_t>(v); }},
      {"data_dir", [](O& o, const json& v) { o.data_dir = option_value<std::string>(v); }},
  };
  return s;
}

// `salient expnet evaluate --task ...`: the training options of expnet.train (its seed aside: each
// of `seeds` trains one) and the leave-one-task-out run's own.
struct ExpNetCrossTaskCall {
  ExpNetTrainCall train;
  std::vector<uint64_t> seeds = {0, 1, 2};
  std::vector<std::string> baselines = {"all"};
  int64_t max_test = 0, tune_examples = 100;
  double baseline_budget = 300;
  bool ablation = false;
};

const Setters<ExpNetCrossTaskCall>& expnet_cross_task_setters() {
  using O = ExpNetCrossTaskCall;
  static const Setters<O> s = [] {
    Setters<O> all;
    for (const auto& [name, set] : expnet_train_setters())
      if (name != "seed") all[name] = [set = set](O& o, const json& v) { set(o.train, v); };
    all["seeds"] = [](O& o, const json& v) {
      o.seeds.clear();
      for (int64_t x : int_list(v, option_label("seeds"), 0)) o.seeds.push_back(static_cast<uint64_t>(x));
    };
    all["baselines"] = [](O& o, const json& v) {
      o.baselines = string_list(v);  // "all": every registered explainer
      if (o.baselines == std::vector<std::string>{"none"}) o.baselines.clear();
    };
    all["max_test"] = field(&O::max_test);
    all["tune_examples"] = field(&O::tune_examples);
    all["baseline_budget"] = field(&O::baseline_budget);
    all["ablation"] = field(&O::ablation);
    return all;
  }();
  return s;
}

}  // namespace

std::vector<std::string> option_names(const std::string& command) {
  if (command == "smat") return names_of(smat_setters());
  if (command == "smat.study") return names_of(smat_study_setters());
  if (command == "smat.plausibility") return names_of(smat_plausibility_setters());
  if (command == "smat.split") return names_of(smat_split_setters());
  if (command == "sst.train") return names_of(sst_train_setters());
  if (command == "sst.evaluate") return names_of(sst_eval_setters());
  if (command == "expnet.train") return names_of(expnet_train_setters());
  if (command == "expnet.evaluate") return names_of(expnet_cross_task_setters());
  fail("option_names: unknown command '{}' (smat, smat.study, smat.plausibility, smat.split, sst.train, sst.evaluate, "
       "expnet.train, expnet.evaluate)", command);
}

std::string run_benchmark(const BenchmarkSpec& spec) {
  BenchmarkOptions o;
  o.model_dir = spec.model_dir;
  o.data_spec = spec.data_spec;
  o.data_dir = spec.data_dir;
  o.out_dir = spec.out_dir;
  o.methods = spec.methods;
  o.metrics = spec.metrics;
  for (const auto& m : o.methods) explainer_info(m);  // unknown names fail first
  for (const auto& m : o.metrics) metric_info(m);
  for (const auto& [name, params] : spec.method_params)
    if (std::find(o.methods.begin(), o.methods.end(), name) == o.methods.end())
      fail("method_params: '{}' is not one of the methods ({})", name, fmt::join(o.methods, ", "));
  check_params_taken(spec.shared_params, o.methods);
  const MethodSettings settings{spec.shared_params, spec.score, spec.internal_batch, spec.max_batch_tokens, spec.seed};
  for (const auto& m : o.methods) {
    ExplainOptions eo = method_options(m, settings);
    const auto own = spec.method_params.find(m);
    if (own != spec.method_params.end()) {
      for (const auto& [name, value] : own->second.items()) eo.params[name] = value;
      eo = with_declared_params(explainer_info(m), eo);
    }
    o.method_options[m] = eo;
  }
  if (spec.metric_removal != "mask" && spec.metric_removal != "delete")
    fail("--metric-removal: unknown value '{}' (expected mask or delete)", one_line(spec.metric_removal));
  o.faithfulness.removal = parse_removal(spec.metric_removal);
  o.faithfulness.tie_seed = spec.seed;
  o.faithfulness.positive_only = spec.positive_only;
  o.faithfulness.aopc_distinct = spec.aopc_distinct;
  // Faithfulness measures the probability (ERASER) unless an output is asked for explicitly.
  o.metric_output = spec.score.empty() ? ModelOutput::Probability : parse_model_output(spec.score);
  o.internal_batch = spec.internal_batch;
  o.max_batch_tokens = spec.max_batch_tokens;
  o.seed = spec.seed;
  o.limit = spec.limit;
  o.batch_size = spec.batch_size;
  o.bootstrap = spec.bootstrap;
  o.heatmaps = spec.heatmaps;
  o.windows = spec.windows;
  o.stride = spec.stride;
  apply_options(o.simulability, simulability_setters(), spec.simulability, "simulability");
  if (!spec.simulability.empty() && std::find(o.metrics.begin(), o.metrics.end(), "simulability") == o.metrics.end())
    fail("--sim-*: simulability options given but --metrics has no 'simulability'");
  return run_benchmark(o);
}


json expnet_train(const std::vector<std::string>& tasks, const std::string& out, const json& options) {
  ExpNetTrainCall call;
  apply_options(call, expnet_train_setters(), options, "expnet.train");
  const ExpNetTrainResult result = train_expnet_on_tasks(tasks, data_dir_or_shared(call.data_dir), call.max_train, call.train);
  result.model.save(out);
  return train_result_json(result, out);
}

json expnet_evaluate(const std::string& expnet_dir, const std::string& model_dir, const std::string& data,
                     const std::string& data_dir, int64_t max_test, double threshold) {
  return evaluate_expnet(expnet_dir, model_dir, data, data_dir_or_shared(data_dir), max_test, threshold);
}

json expnet_cross_task(const std::vector<std::string>& tasks, const std::string& out, const json& options) {
  ExpNetCrossTaskCall call;
  apply_options(call, expnet_cross_task_setters(), options, "expnet.evaluate");
  CrossTaskOptions o;
  for (const auto& t : tasks) o.tasks.push_back(parse_task_spec(t));
  o.data_dir = data_dir_or_shared(call.train.data_dir);
  o.seeds = call.seeds;
  o.train = call.train.train;
  o.baselines = call.baselines;
  o.max_train = call.train.max_train;
  o.max_test = call.max_test;
  o.tune_examples = call.tune_examples;
  o.baseline_budget_s = call.baseline_budget;
  o.ablation = call.ablation;
  o.out_dir = out;
  // Layout: from the first task's classifier (run_cross_task checks that all agree).
  if (!o.tasks.empty()) {
    const ModelConfig mc = load_model_config(o.tasks[0].model_dir);
    o.train.model.num_layers = mc.num_hidden_layers;
    o.train.model.num_heads = mc.num_attention_heads;
  }
  return run_cross_task(o);
}

std::vector<json> expnet_explain(const std::string& model_dir, const std::string& expnet_dir, const std::string& input,
                                 int64_t batch_size, std::string* html) {
  if (batch_size <= 0) fail("--batch-size: must be positive (got {})", batch_size);
  const Classifier clf = load_classifier(model_dir);
  auto explainer = make_explainer("expnet");
  ExplainOptions opts;
  opts.params["expnet"] = expnet_dir;
  opts.internal_batch = batch_size;
  const std::vector<InputItem> items = InputReader(input).next(SIZE_MAX);
  std::vector<Encoding> encs;
  for (const auto& item : items) {
    const std::string where = fmt::format("{}:{}", input == "-" ? "<stdin>" : input, item.line_no);
    if (!item.text) fail("{}: expnet explain needs 'text' (word scores come from the text)", where);
    encs.push_back(clf.encode(*item.text, item.text_pair));
    if (encs.back().truncated)
      std::fprintf(stderr, "salient: warning: %s: input truncated to %zu tokens\n", where.c_str(), encs.back().ids.size());
  }
  std::vector<const Encoding*> ptrs;
  for (const auto& e : encs) ptrs.push_back(&e);
  // ExpNet does not depend on the class: the explanations name the predicted one.
  const std::vector<Explanation> ex = explainer->explain(clf, ptrs, predicted_classes(clf, ptrs), opts);
  std::vector<json> lines;
  std::ostringstream page;
  page << "<!doctype html><meta charset=\"utf-8\"><title>ExpNet explanations</title>\n"
       << "<style>body{font-family:sans-serif;max-width:60em}span.t{padding:1px 2px;margin:1px;border-radius:3px}"
          "div.ex{margin:1em 0;line-height:1.9}</style>\n<h1>ExpNet token importance</h1>\n"
       << "<p>classifier " << html_escape(model_dir) << ", ExpNet " << html_escape(expnet_dir)
       << ". Red intensity = importance (sigmoid output, 0..1).</p>\n";
  for (size_t i = 0; i < items.size(); ++i) {
    const json& fields = items[i].fields;
    const json id = fields.is_object() && fields.contains("id") ? fields["id"] : json();
    json j = explanation_json(clf, encs[i], ex[i], items[i].text, /*word_max=*/true, id);
    page << "<div class=\"ex\"><b>" << html_escape(j["target_label"].get<std::string>()) << "</b>: ";
    const auto words = j["words"].get<std::vector<std::string>>();
    const auto scores = j["word_scores"].get<std::vector<double>>();
    for (size_t w = 0; w < words.size(); ++w)
      page << fmt::format("<span class=\"t\" title=\"{:.3f}\" style=\"background:rgba(220,30,30,{:.3f})\">", scores[w], scores[w])
           << html_escape(words[w]) << "</span> ";
    page << "</div>\n";
    lines.push_back(std::move(j));
  }
  if (html) *html = page.str();
  return lines;
}

json smat_train(const json& options, int64_t size, uint64_t seed, const std::string& out) {
  const SmatOptions o = smat_options(options);
  return smat::train_smat_explainer(o.setup, o.student, size, seed, out);
}

json smat_evaluate(const json& options, const std::string& explainer, const std::string& smat_file, int64_t size,
                   uint64_t seed) {
  const SmatOptions o = smat_options(options);
  return smat::evaluate_simulability(o.setup, o.student, o.statics, explainer, smat_file, size, seed);
}

std::string smat_study(const std::string& out, const json& options) {
  smat::StudyOptions o;
  o.out_dir = out;
  apply_options(o, smat_study_setters(), options, "smat.study");
  o.setup.data_dir = data_dir_or_shared(o.setup.data_dir);
  smat::run_study(o);
  return dist::is_root() ? read_file(join_path(out, "report.md")) : std::string();
}

std::string smat_report(const std::string& study_dir) {
  smat::report_study(study_dir);
  return read_file(join_path(study_dir, "report.md"));
}

std::string smat_plausibility(const std::string& teacher, const std::string& data, const std::string& out,
                              const json& options) {
  smat::PlausibilityOptions o;
  o.teacher = teacher;
  o.data = data;
  o.out_dir = out;
  apply_options(o, smat_plausibility_setters(), options, "smat.plausibility");
  smat::run_plausibility(o);
  return read_file(join_path(out, "plausibility.md"));
}

// The teacher's data and the students' pool, disjoint: pool = `pool_size` texts of at least
// `min_words` words drawn at random; the teacher trains on every other text.
json smat_split(const std::string& out, const json& options) {
  SmatSplitCall a;
  apply_options(a, smat_split_setters(), options, "smat.split");
  if (a.pool_size < 1) fail("--pool-size: must be ≥ 1, got {}", a.pool_size);
  if (a.min_words < 1) fail("--min-words: must be ≥ 1, got {}", a.min_words);
  if (out.empty()) fail("--out: an output directory is required");
  const Dataset d = load_dataset(a.data, data_dir_or_shared(a.data_dir));
  std::vector<size_t> eligible;
  for (size_t i = 0; i < d.records.size(); ++i)
    if (static_cast<int64_t>(split_whitespace(d.records[i].text).size()) >= a.min_words) eligible.push_back(i);
  if (static_cast<int64_t>(eligible.size()) < a.pool_size)
    fail("--pool-size: '{}' has {} texts of ≥ {} words, fewer than {}", a.data, eligible.size(), a.min_words, a.pool_size);
  std::mt19937_64 rng(a.seed);
  std::shuffle(eligible.begin(), eligible.end(), rng);
  const std::set<size_t> pool(eligible.begin(), eligible.begin() + a.pool_size);
  std::ostringstream teacher, students;
  int64_t teacher_count = 0;
  for (size_t i = 0; i < d.records.size(); ++i) {
    const Record& r = d.records[i];
    json j = {{"id", r.id}, {"text", r.text}};
    if (r.label >= 0) j["label"] = r.label;  // an unlabelled text stays unlabelled (the teacher labels the pool)
    if (r.target) j["target"] = *r.target;   // a regression dataset's number
    if (r.text_pair) j["text_pair"] = *r.text_pair;
    (pool.count(i) ? students : teacher) << j.dump() << "\n";
    teacher_count += !pool.count(i);
  }
  make_dirs(out);
  write_file_atomic(join_path(out, "teacher.jsonl"), teacher.str());
  write_file_atomic(join_path(out, "pool.jsonl"), students.str());
  const json report = {{"data", a.data},         {"seed", a.seed},        {"min_words", a.min_words},
                       {"teacher", teacher_count}, {"pool", a.pool_size}, {"label_names", d.label_names}};
  write_file_atomic(join_path(out, "split.json"), report.dump(2) + "\n");
  return report;
}

json sst_train(const std::string& train, const std::string& dev, const std::string& out, const json& options) {
  sst::SstTrainOptions o;
  o.train_data = train;
  o.dev_data = dev;
  o.output_dir = out;
  apply_options(o, sst_train_setters(), options, "sst.train");
  if (o.windows && options.contains("max_length")) fail("--max-length: --windows reads whole inputs (give one or the other)");
  o.data_dir = data_dir_or_shared(o.data_dir);
  const sst::SstTrainResult result = sst::train_sst(o);
  json history = json::array();
  for (const auto& e : result.history) history.push_back(e.to_json());
  return {{"out", out}, {"best_epoch", result.best_epoch}, {"train_seconds", result.train_seconds}, {"history", history}};
}

json sst_evaluate(const std::string& data, const std::string& out, const json& options, std::string* markdown) {
  sst::SstEvalOptions o;
  o.data = data;
  o.out_dir = out;
  apply_options(o, sst_eval_setters(), options, "sst.evaluate");
  o.data_dir = data_dir_or_shared(o.data_dir);
  const std::vector<sst::SstEvalRow> table = sst::evaluate_sst(o);
  json rows = json::array();
  for (const auto& row : table) rows.push_back(row.to_json());
  if (markdown) *markdown = sst::sst_table_markdown(table);
  return rows;
}

std::vector<json> sst_explain(const std::string& model_dir, const SstExplainOptions& a) {
  if (model_dir.empty()) fail("--model: required (an SST model directory)");
  if (a.scores != "subset" && a.scores != "selection") fail("--sst-scores: expected subset or selection, got '{}'", a.scores);
  if (a.limit < 1) fail("--limit: must be at least 1, got {}", a.limit);
  const sst::LoadedSstModel loaded = sst::load_sst_model(model_dir);
  std::vector<json> lines;
  if (loaded.model->modality() == "text") {
    if (!a.data.empty()) fail("--data: a text SST model explains the inputs of -i/--input (text or JSON lines)");
    if (!a.png_dir.empty()) fail("--png-dir: only image models draw PNG overlays");
    const Classifier& clf = sst::text_classifier(*loaded.model);
    auto explainer = make_explainer("sst");
    ExplainOptions o;
    o.params = {{"sst", model_dir}, {"sst_scores", a.scores}};
    for (const auto& item : InputReader(a.input).next(SIZE_MAX)) {
      const std::string where = fmt::format("{}:{}", a.input == "-" ? "<stdin>" : a.input, item.line_no);
      const Encoding enc = item.text ? clf.encode(*item.text, item.text_pair, a.max_length)
                                     : clf.encode_ids(item.input_ids, item.token_type_ids, where);
      const std::vector<int64_t> target = predicted_classes(clf, {&enc});
      const Explanation e = explainer->explain(clf, {&enc}, target, o)[0];
      const json id = item.fields.is_object() && item.fields.contains("id") ? item.fields["id"] : json();
      lines.push_back(explanation_json(clf, enc, e, item.text, false, id));
    }
    return lines;
  }
  if (a.data.empty()) fail("--data: an image SST model explains a dataset split, e.g. --data mnist:test");
  if (a.input != "-") fail("--input: image models read --data, not -i");
  const sst::SstData data = sst::load_sst_data(a.data, data_dir_or_shared(a.data_dir), *loaded.model, 0, a.limit);
  if (!a.png_dir.empty()) make_dirs(a.png_dir);
  torch::NoGradGuard ng;
  for (int64_t i = 0; i < data.size(); ++i) {
    sst::FeatureBatch x = data.batch(std::vector<int64_t>{i});
    sst::SstOutput f = loaded.model->forward(x);
    const torch::Tensor probs = torch::softmax(f.logits[0], 0);
    const int64_t target = probs.argmax().item<int64_t>();
    const torch::Tensor subset = sst::subset_of(f.selection, x.features, loaded.tau)[0];
    const torch::Tensor sel_t = f.selection[0].to(torch::kFloat64).contiguous();
    const std::vector<double> sel(sel_t.data_ptr<double>(), sel_t.data_ptr<double>() + sel_t.numel());
    std::vector<uint8_t> flags(subset.size(0));
    std::vector<double> scores(subset.size(0));
    for (int64_t j = 0; j < subset.size(0); ++j) {
      flags[j] = subset[j].item<bool>();
      scores[j] = a.scores == "subset" ? flags[j] : sel[j];
    }
    json j = {{"method", "sst"}, {"id", fmt::format("{}#{}", a.data, i)}, {"target", target},
              {"target_label", loaded.model->label_names().at(target)}, {"probability", probs[target].item<double>()},
              {"gold_label", data.label_names.at(data.labels[i].item<int64_t>())},
              {"image_shape", data.image_shape}, {"pixel_scores", scores},
              {"extras", {{"tau", loaded.tau}, {"selection", sel}, {"subset_size", subset.sum().item<int64_t>()},
                          {"features", subset.size(0)}}}};
    if (!a.png_dir.empty()) {
      const torch::Tensor px = data.images[i].contiguous();
      const std::vector<float> pixels(px.data_ptr<float>(), px.data_ptr<float>() + px.numel());
      const std::string path = join_path(a.png_dir, fmt::format("{}.png", i));
      write_file_atomic(path, sst::subset_overlay_png(pixels, data.image_shape[1], data.image_shape[2], flags));
      j["png"] = path;
    }
    lines.push_back(std::move(j));
  }
  return lines;
}

}  // namespace salient

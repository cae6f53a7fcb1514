// The public entry points of salient/studies.h over the papers' modules: options by name (JSON
// values) onto their option structs, the shared data directory filled in, the results as JSON.
#include "salient/studies.h"

#include <functional>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/benchmark.h"
#include "expnet/expnet.h"
#include "smat/study.h"
#include "sst/evaluate.h"
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
       [](O& o, const json& v) { o.student.normalizer = smat::parse_normalizer(option_value<std::string>(v), "normalizer"); }},
      {"optimizer",
       [](O& o, const json& v) { o.student.optimizer = smat::parse_optimizer(option_value<std::string>(v), "optimizer"); }},
      {"early_stopping",
       [](O& o, const json& v) {
         const std::string e = option_value<std::string>(v);
         if (e != "loss" && e != "accuracy") fail("early_stopping: must be loss or accuracy, got '{}'", e);
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
      {"ig_steps", [](O& o, const json& v) { o.statics.ig_steps = option_value<int64_t>(v); }},
      {"gradient_layer", [](O& o, const json& v) { o.statics.gradient_layer = option_value<std::string>(v); }},
      {"saliency_temperature", [](O& o, const json& v) { o.statics.saliency_temperature = option_value<double>(v); }},
      {"grad_x_input_temperature", [](O& o, const json& v) { o.statics.grad_x_input_temperature = option_value<double>(v); }},
      {"ig_temperature", [](O& o, const json& v) { o.statics.ig_temperature = option_value<double>(v); }},
      {"registered_temperature", [](O& o, const json& v) { o.statics.registered_temperature = option_value<double>(v); }},
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
      {"hidden", field(&O::hidden)},
      {"init", field(&O::init_model)},
      {"vocab", field(&O::vocab)},
      {"hidden_size", field(&O::hidden_size)},
      {"layers", field(&O::num_layers)},
      {"heads", field(&O::num_heads)},
      {"intermediate_size", field(&O::intermediate_size)},
      {"max_length", field(&O::max_length)},
      {"dropout", field(&O::dropout)},
      {"masking", [](O& o, const json& v) { o.objective.kind = sst::parse_mask_kind(option_value<std::string>(v), "masking"); }},
      {"lambda_", [](O& o, const json& v) { o.objective.lambda = option_value<double>(v); }},
      {"xi", [](O& o, const json& v) { o.objective.xi = option_value<double>(v); }},
      {"tau", [](O& o, const json& v) { o.objective.tau = option_value<double>(v); }},
      {"straight_through", [](O& o, const json& v) { o.objective.straight_through = option_value<bool>(v); }},
      {"epsilon", [](O& o, const json& v) { o.objective.fill.epsilon = option_value<double>(v); }},
      {"pgd_step", [](O& o, const json& v) { o.objective.fill.step = option_value<double>(v); }},
      {"pgd_steps", [](O& o, const json& v) { o.objective.fill.steps = option_value<int>(v); }},
      {"noise", [](O& o, const json& v) { o.objective.fill.noise = sst::parse_noise_fill(option_value<std::string>(v), "noise"); }},
      {"epochs", field(&O::epochs)},
      {"patience", field(&O::patience)},
      {"batch_size", field(&O::batch_size)},
      {"lr", field(&O::lr)},
      {"weight_decay", field(&O::weight_decay)},
      {"limit", field(&O::limit)},
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
      {"methods", field(&O::methods)},
      {"limit", field(&O::limit)},
      {"accuracy_limit", field(&O::accuracy_limit)},
      {"time_limit", [](O& o, const json& v) { o.search.time_limit = option_value<double>(v); }},
      {"samples", field(&O::samples)},
      {"ranking", [](O& o, const json& v) { o.search.ranking = option_value<std::string>(v); }},
      {"ig_steps", [](O& o, const json& v) { o.search.ig_steps = option_value<int64_t>(v); }},
      {"precision", [](O& o, const json& v) { o.search.precision = option_value<double>(v); }},
      {"beam", [](O& o, const json& v) { o.search.beam = option_value<int>(v); }},
      {"max_length", field(&O::max_length)},
      {"views", field(&O::views)},
      {"seed", field(&O::seed)},
      {"epsilon", [](O& o, const json& v) { o.fill.epsilon = option_value<double>(v); }},
      {"pgd_step", [](O& o, const json& v) { o.fill.step = option_value<double>(v); }},
      {"pgd_steps", [](O& o, const json& v) { o.fill.steps = option_value<int>(v); }},
      {"noise", [](O& o, const json& v) { o.fill.noise = sst::parse_noise_fill(option_value<std::string>(v), "noise"); }},
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
      {"features", [](O& o, const json& v) { set_feature_list(o.train.model.features, option_value<std::string>(v), "features"); }},
      {"layers", [](O& o, const json& v) { o.train.model.features.layers = option_value<std::string>(v); }},
      {"scale", [](O& o, const json& v) { o.train.model.features.scale = option_value<std::string>(v); }},
      {"head_pool", [](O& o, const json& v) { o.train.model.features.head_pool = option_value<std::string>(v); }},
      {"hidden", [](O& o, const json& v) { o.train.model.hidden = option_value<std::vector<int64_t>>(v); }},
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

}  // namespace

std::vector<std::string> option_names(const std::string& command) {
  if (command == "smat") return names_of(smat_setters());
  if (command == "sst.train") return names_of(sst_train_setters());
  if (command == "sst.evaluate") return names_of(sst_eval_setters());
  if (command == "expnet.train") return names_of(expnet_train_setters());
  fail("option_names: unknown command '{}' (smat, sst.train, sst.evaluate, expnet.train)", command);
}

std::string run_benchmark(const BenchmarkSpec& spec) {
  BenchmarkOptions o;
  o.model_dir = spec.model_dir;
  o.data_spec = spec.data_spec;
  o.data_dir = spec.data_dir;
  o.out_dir = spec.out_dir;
  o.methods = spec.methods;
  o.metrics = spec.metrics;
  o.limit = spec.limit;
  o.batch_size = spec.batch_size;
  o.bootstrap = spec.bootstrap;
  o.seed = spec.seed;
  o.windows = spec.windows;
  o.stride = spec.stride;
  for (const auto& [name, params] : spec.method_params) {
    ExplainOptions eo;
    eo.params = params;
    o.method_options[name] = eo;
  }
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

json smat_train(const json& options, int64_t size, uint64_t seed, const std::string& out) {
  const SmatOptions o = smat_options(options);
  return smat::train_smat_explainer(o.setup, o.student, size, seed, out);
}

json smat_evaluate(const json& options, const std::string& explainer, const std::string& smat_file, int64_t size,
                   uint64_t seed) {
  const SmatOptions o = smat_options(options);
  return smat::evaluate_simulability(o.setup, o.student, o.statics, explainer, smat_file, size, seed);
}

json sst_train(const std::string& train, const std::string& dev, const std::string& out, const json& options) {
  sst::SstTrainOptions o;
  o.train_data = train;
  o.dev_data = dev;
  o.output_dir = out;
  apply_options(o, sst_train_setters(), options, "sst.train");
  o.data_dir = data_dir_or_shared(o.data_dir);
  const sst::SstTrainResult result = sst::train_sst(o);
  json history = json::array();
  for (const auto& e : result.history) history.push_back(e.to_json());
  return {{"out", out}, {"best_epoch", result.best_epoch}, {"train_seconds", result.train_seconds}, {"history", history}};
}

json sst_evaluate(const std::string& data, const std::string& out, const json& options) {
  sst::SstEvalOptions o;
  o.data = data;
  o.out_dir = out;
  apply_options(o, sst_eval_setters(), options, "sst.evaluate");
  o.data_dir = data_dir_or_shared(o.data_dir);
  json rows = json::array();
  for (const auto& row : sst::evaluate_sst(o)) rows.push_back(row.to_json());
  return rows;
}

}  // namespace salient

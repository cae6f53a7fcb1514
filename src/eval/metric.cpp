// The metric registry: the families of src/eval/metrics/ (registry.inc), and what they share.
#include "eval/metric.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/plausibility.h"
#include "util/error.h"

namespace salient {

bool MetricSettings::wants(const std::string& metric) const {
  return std::find(metrics.begin(), metrics.end(), metric) != metrics.end();
}

const std::vector<MetricFamily>& metric_families() {
  static const std::vector<MetricFamily> families = {
#define SALIENT_METRIC_FAMILY(fn) fn(),
#include "eval/metrics/registry.inc"
#undef SALIENT_METRIC_FAMILY
  };
  return families;
}

const std::vector<MetricInfo>& metric_registry() {
  static const std::vector<MetricInfo> metrics = [] {
    std::vector<MetricInfo> all;
    for (const MetricFamily& f : metric_families()) all.insert(all.end(), f.metrics.begin(), f.metrics.end());
    return all;
  }();
  return metrics;
}

const MetricFamily& metric_family_of(const std::string& metric) {
  for (const MetricFamily& f : metric_families())
    for (const MetricInfo& m : f.metrics)
      if (m.name == metric) return f;
  std::vector<std::string> valid;
  for (const auto& m : metric_registry()) valid.push_back(m.name);
  fail("--metrics: unknown metric '{}' (valid: {})", metric, fmt::join(valid, ", "));
}

const MetricInfo& metric_info(const std::string& name) {
  for (const MetricInfo& m : metric_family_of(name).metrics)
    if (m.name == name) return m;
  fail("--metrics: unknown metric '{}'", name);  // not reached: metric_family_of found it
}

nlohmann::json metric_value(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

std::vector<int> token_gold(const Record& r, const Encoding& enc) {
  std::vector<int> g;
  if (r.rationale.empty()) {
    for (int64_t w : whitespace_word_ids(r.text, enc, 0))
      if (w >= 0) g.push_back(0);
    return g;
  }
  for (int label : project_rationale(r.text, enc, r.rationale, "record '" + r.id + "'"))
    if (label >= 0) g.push_back(label);
  return g;
}

}  // namespace salient

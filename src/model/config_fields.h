#pragma once
// Reading config.json's fields one by one (model/config.cpp, and the families' own fields in
// model/family.cpp).
#include <cstdint>
#include <string>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/io.h"

namespace salient {

// Takes fields out of a copy of config.json; what is left at the end becomes `extra`.
class FieldReader {
 public:
  FieldReader(const nlohmann::json& j, const std::string& path) : rest_(j), path_(path) {}

  // The raw value, removed from the leftovers; null json when absent.
  nlohmann::json take(const std::string& key) {
    auto it = rest_.find(key);
    if (it == rest_.end()) return nlohmann::json();
    nlohmann::json v = *it;
    rest_.erase(it);
    return v;
  }

  int64_t get_int(const std::string& key, int64_t fallback, bool null_means_default = false) {
    if (!rest_.contains(key)) return fallback;
    nlohmann::json v = take(key);
    if (v.is_null() && null_means_default) return fallback;
    if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX)) return v.get<int64_t>();
    fail("{}: field '{}' must be an integer (got {})", path_, key, show_json(v));
  }

  double get_double(const std::string& key, double fallback) {
    if (!rest_.contains(key)) return fallback;
    nlohmann::json v = take(key);
    if (v.is_number()) return v.get<double>();
    fail("{}: field '{}' must be a number (got {})", path_, key, show_json(v));
  }

  bool get_bool(const std::string& key, bool fallback) {
    if (!rest_.contains(key)) return fallback;
    nlohmann::json v = take(key);
    if (v.is_boolean()) return v.get<bool>();
    fail("{}: field '{}' must be true or false (got {})", path_, key, show_json(v));
  }

  std::string get_string(const std::string& key, const std::string& fallback) {
    if (!rest_.contains(key)) return fallback;
    nlohmann::json v = take(key);
    if (v.is_string()) return v.get<std::string>();
    fail("{}: field '{}' must be a string (got {})", path_, key, show_json(v));
  }

  const nlohmann::json& rest() const { return rest_; }

 private:
  nlohmann::json rest_;
  std::string path_;
};

}  // namespace salient

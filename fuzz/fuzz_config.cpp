// libFuzzer harness: config.json. Any JSON either gives a valid ModelConfig or a salient::Error; a
// config that loads must load again from what it writes.
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "model/config.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  salient::ModelConfig c;
  try {
    c = salient::ModelConfig::from_json(j, "config.json");
  } catch (const salient::Error&) {
    return 0;
  }
  const salient::ModelConfig again = salient::ModelConfig::from_json(c.to_json(), "again");
  if (again.to_json() != c.to_json()) std::abort();
  return 0;
}

// libFuzzer harness: safetensors files (header JSON, dtypes, shapes, offsets, data). Any input either
// parses or fails with salient::Error; what parses must survive serialize → parse unchanged.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "model/safetensors.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  salient::SafetensorsFile file;
  try {
    file = salient::parse_safetensors(bytes, "fuzz.safetensors");
  } catch (const salient::Error&) {
    return 0;
  }
  const salient::SafetensorsFile again = salient::parse_safetensors(salient::serialize_safetensors(file), "again");
  if (again.tensors.size() != file.tensors.size() || again.metadata != file.metadata) std::abort();
  for (const auto& [name, t] : file.tensors) {
    const auto it = again.tensors.find(name);
    if (it == again.tensors.end() || it->second.shape != t.shape || it->second.dtype != t.dtype ||
        it->second.bytes != t.bytes)
      std::abort();
  }
  return 0;
}

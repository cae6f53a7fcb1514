#pragma once
// safetensors reader/writer without LibTorch. The header is validated, never trusted: size,
// JSON, dtypes, shapes vs byte lengths, offsets inside the file, and no overlaps or gaps.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace salient {

enum class DType { F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL };
size_t dtype_size(DType d);
const char* dtype_name(DType d);          // "F32", ...
DType parse_dtype(const std::string& s);  // throws salient::Error

struct TensorData {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string bytes;  // raw little-endian data, numel * dtype_size bytes
  int64_t numel() const;
};

struct SafetensorsFile {
  std::map<std::string, TensorData> tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__"
};

// `path` is used in error messages.
SafetensorsFile read_safetensors(const std::string& path);
SafetensorsFile parse_safetensors(const std::string& bytes, const std::string& path_for_errors);
std::string serialize_safetensors(const SafetensorsFile& file);
void write_safetensors(const std::string& path, const SafetensorsFile& file);  // atomic

// Float conversions used by loaders (F16/BF16 <-> F32).
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);  // round to nearest even

}  // namespace salient

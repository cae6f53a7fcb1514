#include "model/safetensors.h"
#include "util/error.h"
#include "util/io.h"
#include "util/memory.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <tuple>
#include <nlohmann/json.hpp>

namespace salient {

namespace {

// The reference implementation refuses headers above this size; so do we, before allocating.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "F32", 4}, {DType::F16, "F16", 2}, {DType::BF16, "BF16", 2}, {DType::F64, "F64", 8},
    {DType::I64, "I64", 8}, {DType::I32, "I32", 4}, {DType::I16, "I16", 2},   {DType::I8, "I8", 1},
    {DType::U8, "U8", 1},   {DType::BOOL, "BOOL", 1},
};

const DTypeInfo& dtype_info(DType d) {
  for (const auto& info : kDTypes)
    if (info.dtype == d) return info;
  fail("invalid DType value {}", static_cast<int>(d));
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// numel * dtype_size without overflow; false if it does not fit in 63 bits.
bool checked_byte_size(const std::vector<int64_t>& shape, DType dtype, uint64_t& bytes) {
  uint64_t n = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(dim), &n)) return false;
  }
  if (__builtin_mul_overflow(n, static_cast<uint64_t>(dtype_size(dtype)), &n)) return false;
  if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  bytes = n;
  return true;
}

struct Entry {
  std::string name;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Reads a non-negative JSON integer; `what` describes it for the error.
uint64_t json_to_u64(const nlohmann::json& v, const std::string& where, const std::string& what) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) fail("{}: {} is negative ({})", where, what, v.get<int64_t>());
  fail("{}: {} must be a non-negative integer (got {})", where, what, show_json(v));
}

TensorData parse_tensor_entry(const std::string& name, const nlohmann::json& entry, const std::string& buffer,
                              const std::string& path, Entry& range) {
  const std::string where = fmt::format("{}: tensor '{}'", path, one_line(name));
  if (!entry.is_object()) fail("{}: entry must be an object (got {})", where, show_json(entry));
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!entry.contains(field)) fail("{}: missing field '{}'", where, field);

  TensorData t;
  const auto& dtype = entry["dtype"];
  if (!dtype.is_string()) fail("{}: field 'dtype' must be a string (got {})", where, show_json(dtype));
  try {
    t.dtype = parse_dtype(dtype.get<std::string>());
  } catch (const Error& e) {
    fail("{}: {}", where, e.what());
  }

  const auto& shape = entry["shape"];
  if (!shape.is_array()) fail("{}: field 'shape' must be an array (got {})", where, show_json(shape));
  for (size_t i = 0; i < shape.size(); ++i) {
    uint64_t dim = json_to_u64(shape[i], where, fmt::format("shape[{}]", i));
    if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail("{}: shape[{}] = {} is too large", where, i, dim);
    t.shape.push_back(static_cast<int64_t>(dim));
  }

  const auto& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    fail("{}: field 'data_offsets' must be an array [begin, end] (got {})", where, show_json(offsets));
  uint64_t begin = json_to_u64(offsets[0], where, "data_offsets begin");
  uint64_t end = json_to_u64(offsets[1], where, "data_offsets end");
  if (begin > end) fail("{}: data_offsets begin {} is after end {}", where, begin, end);
  if (end > buffer.size())
    fail("{}: data_offsets end {} past end of data ({} bytes)", where, end, buffer.size());

  uint64_t expected = 0;
  if (!checked_byte_size(t.shape, t.dtype, expected))
    fail("{}: shape {} of {} is too large (byte size overflows)", where, shape_str(t.shape), dtype_name(t.dtype));
  if (end - begin != expected)
    fail("{}: data_offsets [{}, {}] hold {} bytes but shape {} of {} needs {}", where, begin, end, end - begin,
         shape_str(t.shape), dtype_name(t.dtype), expected);

  t.bytes = buffer.substr(begin, end - begin);
  range = {name, begin, end};
  return t;
}

// Sorted by position, each tensor must start where the previous one ended and the last must end at
// the buffer's end: no overlaps (aliasing) and no unused bytes (hidden data).
void check_coverage(std::vector<Entry>& ranges, uint64_t buffer_size, const std::string& path) {
  std::sort(ranges.begin(), ranges.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  uint64_t covered_until = 0;
  const Entry* previous = nullptr;
  for (const Entry& r : ranges) {
    if (r.begin < covered_until)
      fail("{}: tensor '{}': data_offsets [{}, {}] overlap tensor '{}' [{}, {}]", path, one_line(r.name), r.begin,
           r.end, one_line(previous->name), previous->begin, previous->end);
    if (r.begin > covered_until)
      fail("{}: data bytes [{}, {}) are not covered by any tensor (before tensor '{}')", path, covered_until,
           r.begin, one_line(r.name));
    covered_until = r.end;
    previous = &r;
  }
  if (covered_until != buffer_size)
    fail("{}: data bytes [{}, {}) at the end are not covered by any tensor", path, covered_until, buffer_size);
}

std::string serialize_impl(const SafetensorsFile& file, const std::string& where) {
  nlohmann::json header = nlohmann::json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : file.tensors) {
    if (name == "__metadata__") fail("{}: tensor name '__metadata__' is reserved", where);
    uint64_t expected = 0;
    if (!checked_byte_size(t.shape, t.dtype, expected))
      fail("{}: tensor '{}': invalid shape {}", where, one_line(name), shape_str(t.shape));
    if (t.bytes.size() != expected)
      fail("{}: tensor '{}': has {} bytes but shape {} of {} needs {}", where, one_line(name), t.bytes.size(),
           shape_str(t.shape), dtype_name(t.dtype), expected);
    header[name] = {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + expected}}};
    offset += expected;
  }

  std::string header_text;
  try {
    header_text = header.dump();
  } catch (const nlohmann::json::exception&) {
    fail("{}: tensor names and metadata must be valid UTF-8", where);
  }
  // Pad with spaces so the data starts 8-byte aligned, as the reference writer does.
  header_text.append((8 - header_text.size() % 8) % 8, ' ');

  std::string out;
  out.reserve(8 + header_text.size() + offset);
  uint64_t n = header_text.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  out += header_text;
  for (const auto& entry : file.tensors) out += entry.second.bytes;
  return out;
}

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

size_t dtype_size(DType d) { return dtype_info(d).size; }

const char* dtype_name(DType d) { return dtype_info(d).name; }

DType parse_dtype(const std::string& s) {
  for (const auto& info : kDTypes)
    if (s == info.name) return info.dtype;
  fail("unknown dtype '{}' (supported: F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL)", one_line(s));
}

int64_t TensorData::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

SafetensorsFile parse_safetensors(const std::string& bytes, const std::string& path) {
  if (bytes.size() < 8)
    fail("{}: file too short for a safetensors header ({} bytes, need at least 8)", path, bytes.size());
  uint64_t header_len = 0;
  for (int i = 0; i < 8; ++i) header_len |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  if (header_len > kMaxHeaderBytes)
    fail("{}: header length {} is absurd (limit {} bytes); not a safetensors file?", path, header_len, kMaxHeaderBytes);
  if (header_len > bytes.size() - 8)
    fail("{}: header length {} exceeds the file ({} bytes after the length prefix)", path, header_len,
         bytes.size() - 8);

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(header_len));
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann reports end-of-input as length + 1.
    fail("{}: header is not valid JSON (error at byte {} of {})", path, std::min<uint64_t>(e.byte, header_len),
         header_len);
  } catch (const nlohmann::json::exception&) {  // e.g. a number beyond double's range
    fail("{}: header is not valid JSON (a number out of range)", path);
  }
  if (!header.is_object()) fail("{}: header must be a JSON object (got {})", path, show_json(header));

  const std::string buffer = bytes.substr(8 + header_len);
  SafetensorsFile file;
  std::vector<Entry> ranges;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (value.is_null()) continue;
      if (!value.is_object()) fail("{}: '__metadata__' must be an object (got {})", path, show_json(value));
      for (const auto& [key, text] : value.items()) {
        if (!text.is_string())
          fail("{}: '__metadata__' value '{}' must be a string (got {})", path, one_line(key), show_json(text));
        file.metadata[key] = text.get<std::string>();
      }
      continue;
    }
    Entry range;
    file.tensors[name] = parse_tensor_entry(name, value, buffer, path, range);
    ranges.push_back(range);
  }
  check_coverage(ranges, buffer.size(), path);
  return file;
}

SafetensorsFile read_safetensors(const std::string& path) {
  // The file is read whole, then each tensor copied out of it: twice its size at the peak.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
    require_memory(path, 2 * static_cast<uint64_t>(st.st_size), "loading it");
  return parse_safetensors(read_file(path), path);
}

std::string serialize_safetensors(const SafetensorsFile& file) { return serialize_impl(file, "safetensors"); }

void write_safetensors(const std::string& path, const SafetensorsFile& file) {
  write_file_atomic(path, serialize_impl(file, path));
}

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1F;
  uint32_t mantissa = h & 0x3FF;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return bits_float(sign | 0x7F800000u | (mantissa << 13));  // inf, or NaN keeping payload
  return bits_float(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

uint16_t float_to_half(float f) {
  uint32_t x = float_bits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t magnitude = x & 0x7FFFFFFFu;

  if (magnitude > 0x7F800000u)  // NaN: keep the top payload bits, force quiet so it stays NaN
    return sign | 0x7E00 | static_cast<uint16_t>((magnitude >> 13) & 0x3FF);
  // 65520 is halfway between 65504 (max half, odd mantissa) and 65536; ties-to-even goes to inf.
  if (magnitude >= 0x477FF000u) return sign | 0x7C00;

  if (magnitude >= 0x38800000u) {  // normal half (>= 2^-14)
    uint32_t round_bias = 0xFFF + ((magnitude >> 13) & 1);  // ties to even
    magnitude += round_bias;
    // A mantissa carry rolls into the exponent, which is the correct rounding.
    return sign | static_cast<uint16_t>((magnitude - ((127u - 15u) << 23)) >> 13);
  }

  // Subnormal half (or zero): value = significand * 2^(exponent - 150), in units of 2^-24.
  uint32_t exponent = magnitude >> 23;
  uint32_t significand = magnitude & 0x7FFFFF;
  if (exponent == 0) exponent = 1;  // float subnormal: no implicit bit
  else significand |= 0x800000;
  uint32_t shift = 126 - exponent;  // >= 14 here
  if (shift >= 25) return sign;     // below half of the smallest subnormal (significand < 2^24)
  uint32_t quotient = significand >> shift;
  uint32_t remainder = significand & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (quotient & 1))) ++quotient;  // may become 0x400: min normal
  return sign | static_cast<uint16_t>(quotient);
}

float bf16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

uint16_t float_to_bf16(float f) {
  uint32_t x = float_bits(f);
  // NaN: truncating could clear all payload bits and turn it into inf; force a quiet NaN.
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x0040);
  uint32_t round_bias = 0x7FFF + ((x >> 16) & 1);  // ties to even; overflow to inf is correct
  return static_cast<uint16_t>((x + round_bias) >> 16);
}

}  // namespace salient

// safetensors reader/writer, F16/BF16 conversions, and config.json parsing.
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/config.h"
#include "salient/inputs.h"
#include "model/safetensors.h"
#include "util/atomic_file.h"
#include "test_util.h"
#include "util/error.h"
#include "util/io.h"
#include "util/memory.h"

using nlohmann::json;
using salient::DType;
using salient::ModelConfig;
using salient::SafetensorsFile;
using salient::TensorData;

namespace {

// Runs `fn`, expects a salient::Error whose single-line message contains every piece of `parts`.
template <typename Fn>
void expect_error(Fn fn, std::initializer_list<std::string> parts) {
  try {
    fn();
  } catch (const salient::Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    for (const auto& part : parts) EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' not in: " << msg;
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected salient::Error, got other exception: " << e.what();
    return;
  }
  ADD_FAILURE() << "expected salient::Error";
}

std::string u64_le(uint64_t n) {
  std::string s;
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  return s;
}

// A safetensors file from a raw header text and `data_bytes` bytes of data.
std::string make_file(const std::string& header, size_t data_bytes) {
  return u64_le(header.size()) + header + std::string(data_bytes, '\x01');
}

void expect_bad(const std::string& header, size_t data_bytes, std::initializer_list<std::string> parts) {
  expect_error([&] { salient::parse_safetensors(make_file(header, data_bytes), "bad.safetensors"); }, parts);
}

template <typename T>
TensorData make_tensor(DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  TensorData t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  return t;
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::string temp_dir() {
  std::string dir = "/tmp/salient_test_safetensors_" + std::to_string(::getpid());
  salient::make_dirs(dir);
  return dir;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Reading a real Hugging Face checkpoint

TEST(Safetensors, ReadsReferenceBertCheckpoint) {
  std::string model_dir = salient::test::shared_path("fixtures/reference-bert/model");
  SALIENT_REQUIRE_SHARED(model_dir);
  ModelConfig config = ModelConfig::from_file(salient::join_path(model_dir, "config.json"));
  SafetensorsFile file = salient::read_safetensors(salient::join_path(model_dir, "model.safetensors"));

  EXPECT_EQ(file.metadata.at("format"), "pt");
  const int64_t H = config.hidden_size;
  std::map<std::string, std::vector<int64_t>> expected = {
      {"bert.embeddings.word_embeddings.weight", {config.vocab_size, H}},
      {"bert.embeddings.position_embeddings.weight", {config.max_position_embeddings, H}},
      {"bert.embeddings.token_type_embeddings.weight", {config.type_vocab_size, H}},
      {"bert.embeddings.LayerNorm.weight", {H}},
      {"bert.pooler.dense.weight", {H, H}},
      {"classifier.weight", {config.num_labels, H}},
      {"classifier.bias", {config.num_labels}},
  };
  for (int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
    std::string p = "bert.encoder.layer." + std::to_string(layer) + ".";
    expected[p + "attention.self.query.weight"] = {H, H};
    expected[p + "attention.output.LayerNorm.bias"] = {H};
    expected[p + "intermediate.dense.weight"] = {config.intermediate_size, H};
    expected[p + "output.dense.weight"] = {H, config.intermediate_size};
  }
  for (const auto& [name, shape] : expected) {
    ASSERT_TRUE(file.tensors.count(name)) << name;
    const TensorData& t = file.tensors.at(name);
    EXPECT_EQ(t.dtype, DType::F32) << name;
    EXPECT_EQ(t.shape, shape) << name;
    EXPECT_EQ(t.bytes.size(), static_cast<size_t>(t.numel()) * 4) << name;
  }
  EXPECT_EQ(file.tensors.size(), 5u + 16u * config.num_hidden_layers + 4u);

  // Values checked independently with Python's struct module.
  const TensorData& bias = file.tensors.at("classifier.bias");
  float values[2];
  std::memcpy(values, bias.bytes.data(), 8);
  EXPECT_FLOAT_EQ(values[0], -0.09199286997318268f);
  EXPECT_FLOAT_EQ(values[1], -0.02722894214093685f);
}

TEST(Safetensors, ReserializingReferenceCheckpointKeepsEveryTensor) {
  std::string path = salient::test::shared_path("fixtures/reference-bert/model/model.safetensors");
  SALIENT_REQUIRE_SHARED(path);
  SafetensorsFile file = salient::read_safetensors(path);
  SafetensorsFile again = salient::parse_safetensors(salient::serialize_safetensors(file), "again");
  ASSERT_EQ(again.tensors.size(), file.tensors.size());
  for (const auto& [name, t] : file.tensors) {
    EXPECT_EQ(again.tensors.at(name).shape, t.shape) << name;
    EXPECT_TRUE(again.tensors.at(name).bytes == t.bytes) << name;
  }
  EXPECT_EQ(again.metadata, file.metadata);
}

// ---------------------------------------------------------------------------------------------
// Writing

TEST(Safetensors, RoundTripAllCommonDtypesWithMetadata) {
  SafetensorsFile file;
  file.tensors["weights.f32"] = make_tensor<float>(DType::F32, {2, 3}, {1.5f, -2.f, 0.f, 3.25f, 1e-30f, -7.f});
  file.tensors["weights.f16"] = make_tensor<uint16_t>(DType::F16, {3}, {0x3C00, 0xC000, 0x0001});
  file.tensors["weights.bf16"] = make_tensor<uint16_t>(DType::BF16, {1, 2}, {0x3F80, 0xFF80});
  file.tensors["ids.i64"] = make_tensor<int64_t>(DType::I64, {4}, {0, -1, INT64_MAX, INT64_MIN});
  file.tensors["scalar"] = make_tensor<float>(DType::F32, {}, {42.f});
  file.tensors["empty"] = make_tensor<float>(DType::F32, {0, 5}, {});
  file.metadata = {{"format", "pt"}, {"note", "héllo \"quoted\"\nnewline"}};

  std::string bytes = salient::serialize_safetensors(file);
  SafetensorsFile back = salient::parse_safetensors(bytes, "mem");
  ASSERT_EQ(back.tensors.size(), file.tensors.size());
  for (const auto& [name, t] : file.tensors) {
    const TensorData& b = back.tensors.at(name);
    EXPECT_EQ(b.dtype, t.dtype) << name;
    EXPECT_EQ(b.shape, t.shape) << name;
    EXPECT_TRUE(b.bytes == t.bytes) << name;
  }
  EXPECT_EQ(back.metadata, file.metadata);
  EXPECT_EQ(back.tensors.at("scalar").numel(), 1);
  EXPECT_EQ(back.tensors.at("empty").numel(), 0);
}

TEST(Safetensors, HeaderIsSpacePaddedToEightAndOffsetsAreContiguousInNameOrder) {
  // Try several name lengths so every padding amount 0..7 occurs.
  for (int extra = 0; extra < 8; ++extra) {
    SafetensorsFile file;
    file.tensors["b" + std::string(extra, 'x')] = make_tensor<float>(DType::F32, {2}, {1.f, 2.f});
    file.tensors["a"] = make_tensor<int32_t>(DType::I32, {3}, {7, 8, 9});
    std::string bytes = salient::serialize_safetensors(file);

    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    EXPECT_EQ(n % 8, 0u);
    ASSERT_EQ(bytes.size(), 8 + n + 12 + 8);
    std::string header = bytes.substr(8, n);
    EXPECT_EQ(header[0], '{');
    size_t last = header.find_last_not_of(' ');
    EXPECT_EQ(header[last], '}');
    EXPECT_LT(header.size() - last - 1, 8u);

    json j = json::parse(header);
    EXPECT_EQ(j["a"]["data_offsets"], json({0, 12}));
    EXPECT_EQ(j["b" + std::string(extra, 'x')]["data_offsets"], json({12, 20}));
    EXPECT_EQ(j["a"]["dtype"], "I32");
    EXPECT_FALSE(j.contains("__metadata__"));  // only written when there is metadata
    // Data follows in name order: "a" first.
    int32_t first;
    std::memcpy(&first, bytes.data() + 8 + n, 4);
    EXPECT_EQ(first, 7);
  }
}

TEST(Safetensors, WriteIsAtomicAndReadable) {
  std::string path = temp_dir() + "/out.safetensors";
  SafetensorsFile file;
  file.tensors["x"] = make_tensor<float>(DType::F32, {2, 2}, {1, 2, 3, 4});
  salient::write_safetensors(path, file);
  SafetensorsFile back = salient::read_safetensors(path);
  EXPECT_TRUE(back.tensors.at("x").bytes == file.tensors.at("x").bytes);
  EXPECT_FALSE(salient::file_exists(salient::temporary_path(path)));
  std::remove(path.c_str());
  ::rmdir(temp_dir().c_str());
}

TEST(Safetensors, SerializeRejectsInconsistentTensors) {
  SafetensorsFile file;
  file.tensors["short"] = make_tensor<float>(DType::F32, {3}, {1.f, 2.f});
  expect_error([&] { salient::serialize_safetensors(file); }, {"'short'", "8 bytes", "needs 12"});

  SafetensorsFile reserved;
  reserved.tensors["__metadata__"] = make_tensor<float>(DType::F32, {1}, {1.f});
  expect_error([&] { salient::serialize_safetensors(reserved); }, {"__metadata__", "reserved"});

  SafetensorsFile negative;
  negative.tensors["neg"] = make_tensor<float>(DType::F32, {-1}, {});
  expect_error([&] { salient::serialize_safetensors(negative); }, {"'neg'", "shape [-1]"});
}

TEST(Safetensors, DtypeNamesAndSizes) {
  const std::pair<DType, size_t> all[] = {{DType::F32, 4}, {DType::F16, 2}, {DType::BF16, 2}, {DType::F64, 8},
                                          {DType::I64, 8}, {DType::I32, 4}, {DType::I16, 2},  {DType::I8, 1},
                                          {DType::U8, 1},  {DType::BOOL, 1}};
  for (const auto& [dtype, size] : all) {
    EXPECT_EQ(salient::dtype_size(dtype), size);
    EXPECT_EQ(salient::parse_dtype(salient::dtype_name(dtype)), dtype);
  }
  expect_error([] { salient::parse_dtype("F8_E4M3"); }, {"unknown dtype 'F8_E4M3'"});
  expect_error([] { salient::parse_dtype("f32"); }, {"unknown dtype 'f32'"});
}

// ---------------------------------------------------------------------------------------------
// Malformed files: one test per check

TEST(SafetensorsMalformed, FileShorterThanEightBytes) {
  expect_error([] { salient::parse_safetensors("", "bad.safetensors"); }, {"bad.safetensors", "too short", "0 bytes"});
  expect_error([] { salient::parse_safetensors(std::string(7, '\0'), "bad.safetensors"); }, {"too short", "7 bytes"});
}

TEST(SafetensorsMalformed, MissingFileNamesPath) {
  expect_error([] { salient::read_safetensors("/nonexistent/dir/model.safetensors"); },
               {"/nonexistent/dir/model.safetensors"});
}

TEST(SafetensorsMalformed, HeaderLengthBeyondFile) {
  std::string bytes = u64_le(100) + "{}";
  expect_error([&] { salient::parse_safetensors(bytes, "bad.safetensors"); },
               {"bad.safetensors", "header length 100 exceeds the file"});
}

TEST(SafetensorsMalformed, AbsurdHeaderLength) {
  // Checked before any allocation, so a huge length in a tiny file is reported as absurd.
  std::string bytes = u64_le(0xFFFFFFFFFFFFFFFFull) + "{}";
  expect_error([&] { salient::parse_safetensors(bytes, "bad.safetensors"); }, {"absurd"});
  bytes = u64_le(100'000'001) + "{}";
  expect_error([&] { salient::parse_safetensors(bytes, "bad.safetensors"); }, {"100000001", "absurd"});
}

TEST(SafetensorsMalformed, HeaderNotJson) {
  expect_bad("{\"a\": ", 0, {"bad.safetensors", "not valid JSON"});
  expect_bad("", 0, {"not valid JSON"});
  expect_bad("{} trailing", 0, {"not valid JSON"});
}

TEST(SafetensorsMalformed, HeaderNotObject) {
  expect_bad("[1, 2]", 0, {"bad.safetensors", "must be a JSON object"});
  expect_bad("42      ", 0, {"must be a JSON object"});
}

TEST(SafetensorsMalformed, EntryNotObject) {
  expect_bad(R"({"w": [1, 2]})", 0, {"tensor 'w'", "entry must be an object"});
}

TEST(SafetensorsMalformed, MissingFields) {
  expect_bad(R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", 4, {"tensor 'w'", "missing field 'dtype'"});
  expect_bad(R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})", 4, {"tensor 'w'", "missing field 'shape'"});
  expect_bad(R"({"w": {"dtype": "F32", "shape": [1]}})", 4, {"tensor 'w'", "missing field 'data_offsets'"});
}

TEST(SafetensorsMalformed, WrongFieldTypes) {
  expect_bad(R"({"w": {"dtype": 32, "shape": [1], "data_offsets": [0, 4]}})", 4, {"'w'", "'dtype' must be a string"});
  expect_bad(R"({"w": {"dtype": "F32", "shape": 1, "data_offsets": [0, 4]}})", 4, {"'w'", "'shape' must be an array"});
  expect_bad(R"({"w": {"dtype": "F32", "shape": ["1"], "data_offsets": [0, 4]}})", 4,
             {"'w'", "shape[0] must be a non-negative integer"});
  expect_bad(R"({"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})", 4,
             {"'w'", "shape[0] must be a non-negative integer"});
  expect_bad(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0]}})", 4,
             {"'w'", "'data_offsets' must be an array [begin, end]"});
  expect_bad(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": "0-4"}})", 4, {"'w'", "'data_offsets'"});
  expect_bad(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4.0]}})", 4,
             {"'w'", "data_offsets end must be a non-negative integer"});
}

TEST(SafetensorsMalformed, UnknownDtype) {
  expect_bad(R"({"w": {"dtype": "F128", "shape": [1], "data_offsets": [0, 16]}})", 16,
             {"bad.safetensors: tensor 'w'", "unknown dtype 'F128'"});
}

TEST(SafetensorsMalformed, NegativeDimension) {
  expect_bad(R"({"w": {"dtype": "F32", "shape": [2, -3], "data_offsets": [0, 4]}})", 4,
             {"tensor 'w'", "shape[1] is negative (-3)"});
}

TEST(SafetensorsMalformed, NegativeOffset) {
  expect_bad(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}})", 4,
             {"tensor 'w'", "data_offsets begin is negative"});
}

TEST(SafetensorsMalformed, BeginAfterEnd) {
  expect_bad(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})", 8,
             {"tensor 'w'", "begin 8 is after end 4"});
}

TEST(SafetensorsMalformed, EndPastData) {
  expect_bad(R"({"bert.pooler.dense.weight": {"dtype": "F32", "shape": [1024], "data_offsets": [0, 4096]}})", 2048,
             {"bad.safetensors: tensor 'bert.pooler.dense.weight': data_offsets end 4096 past end of data (2048 bytes)"});
}

TEST(SafetensorsMalformed, ByteLengthDoesNotMatchShape) {
  expect_bad(R"({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 8]}})", 8,
             {"tensor 'w'", "hold 8 bytes", "[2, 2] of F32 needs 16"});
  expect_bad(R"({"w": {"dtype": "BF16", "shape": [3], "data_offsets": [0, 12]}})", 12,
             {"tensor 'w'", "of BF16 needs 6"});
}

TEST(SafetensorsMalformed, ShapeProductOverflows) {
  // 2^32 * 2^32 wraps to 0 in 64-bit arithmetic; a naive check would accept an empty range.
  expect_bad(R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})", 0,
             {"tensor 'w'", "overflows"});
  // numel fits but numel * 8 does not.
  expect_bad(R"({"w": {"dtype": "F64", "shape": [4611686018427387904], "data_offsets": [0, 0]}})", 0,
             {"tensor 'w'", "overflows"});
  expect_bad(R"({"w": {"dtype": "F32", "shape": [18446744073709551615], "data_offsets": [0, 0]}})", 0,
             {"tensor 'w'", "too large"});
}

TEST(SafetensorsMalformed, OverlappingTensors) {
  expect_bad(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                 "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
             12, {"tensor 'b'", "overlap tensor 'a'"});
  // Two names for the same bytes (aliasing) is an overlap too.
  expect_bad(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                 "b": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
             8, {"tensor 'b'", "overlap tensor 'a'"});
}

TEST(SafetensorsMalformed, GapBetweenTensors) {
  expect_bad(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                 "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})",
             12, {"bad.safetensors", "data bytes [4, 8) are not covered", "'b'"});
  expect_bad(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", 8, {"data bytes [0, 4) are not covered"});
}

TEST(SafetensorsMalformed, TrailingUnusedBytes) {
  expect_bad(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", 7,
             {"bad.safetensors", "data bytes [4, 7) at the end are not covered"});
  expect_bad("{}", 1, {"data bytes [0, 1) at the end are not covered"});
}

TEST(SafetensorsMalformed, MetadataValuesMustBeStrings) {
  expect_bad(R"({"__metadata__": {"format": "pt", "epoch": 3}})", 0,
             {"bad.safetensors", "'__metadata__' value 'epoch' must be a string"});
  expect_bad(R"({"__metadata__": ["pt"]})", 0, {"'__metadata__' must be an object"});
}

TEST(SafetensorsMalformed, AcceptsValidEdgeCases) {
  // Empty header, null metadata, zero-size tensors and unpadded headers are all valid.
  EXPECT_TRUE(salient::parse_safetensors(make_file("{}", 0), "ok").tensors.empty());
  EXPECT_TRUE(salient::parse_safetensors(make_file(R"({"__metadata__": null})", 0), "ok").metadata.empty());
  auto file = salient::parse_safetensors(
      make_file(R"({"z": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]},
                    "a": {"dtype": "U8", "shape": [3], "data_offsets": [0, 3]}})",
                3),
      "ok");
  EXPECT_EQ(file.tensors.at("z").numel(), 0);
  EXPECT_EQ(file.tensors.at("a").bytes, std::string(3, '\x01'));
}

TEST(SafetensorsMalformed, NewlineInTensorNameStaysOneLine) {
  expect_bad("{\"bad\\nname\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 8]}}", 8,
             {"tensor 'bad name'"});
}

// ---------------------------------------------------------------------------------------------
// F16 / BF16 conversions

TEST(HalfConversion, KnownBitPatternsToFloat) {
  EXPECT_EQ(salient::half_to_float(0x3C00), 1.0f);
  EXPECT_EQ(salient::half_to_float(0xC000), -2.0f);
  EXPECT_EQ(salient::half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(salient::half_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(salient::half_to_float(0x0400), std::ldexp(1.0f, -14));           // smallest normal
  EXPECT_EQ(salient::half_to_float(0x0001), std::ldexp(1.0f, -24));           // smallest subnormal
  EXPECT_EQ(salient::half_to_float(0x03FF), std::ldexp(1023.0f, -24));        // largest subnormal
  EXPECT_EQ(salient::half_to_float(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(bits_of(salient::half_to_float(0x8000)), 0x80000000u);            // -0
  EXPECT_EQ(salient::half_to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(salient::half_to_float(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(salient::half_to_float(0x7E00)));
  EXPECT_TRUE(std::isnan(salient::half_to_float(0x7C01)));  // signalling NaN stays NaN
}

TEST(HalfConversion, KnownBitPatternsFromFloat) {
  EXPECT_EQ(salient::float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(salient::float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(salient::float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(salient::float_to_half(0.0f), 0x0000);
  EXPECT_EQ(salient::float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(salient::float_to_half(1e-10f), 0x0000);  // underflows to zero
  EXPECT_EQ(salient::float_to_half(-1e-10f), 0x8000);
  EXPECT_EQ(salient::float_to_half(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(salient::float_to_half(1e6f), 0x7C00);  // overflows to inf
  EXPECT_EQ(salient::float_to_half(-1e6f), 0xFC00);
  EXPECT_EQ(salient::float_to_half(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(salient::float_to_half(-std::numeric_limits<float>::infinity()), 0xFC00);
  uint16_t nan = salient::float_to_half(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  // A NaN whose payload sits only in bits that get dropped must not become inf.
  EXPECT_TRUE(std::isnan(salient::half_to_float(salient::float_to_half(float_of(0x7F800001u)))));
  EXPECT_TRUE(std::isnan(salient::half_to_float(salient::float_to_half(float_of(0xFF800001u)))));
}

TEST(HalfConversion, RoundsToNearestEven) {
  const float ulp_at_one = std::ldexp(1.0f, -10);
  // Exactly halfway: to the even mantissa.
  EXPECT_EQ(salient::float_to_half(1.0f + ulp_at_one / 2), 0x3C00);
  EXPECT_EQ(salient::float_to_half(1.0f + 3 * ulp_at_one / 2), 0x3C02);
  // Just above / below halfway.
  EXPECT_EQ(salient::float_to_half(std::nextafter(1.0f + ulp_at_one / 2, 2.0f)), 0x3C01);
  EXPECT_EQ(salient::float_to_half(std::nextafter(1.0f + 3 * ulp_at_one / 2, 0.0f)), 0x3C01);
  // Mantissa carry into the exponent: 2 - 2^-12 rounds up to 2.
  EXPECT_EQ(salient::float_to_half(2.0f - std::ldexp(1.0f, -12)), 0x4000);
  // 65520 is halfway between 65504 (odd) and 65536: ties-to-even overflows to inf.
  EXPECT_EQ(salient::float_to_half(65520.0f), 0x7C00);
  EXPECT_EQ(salient::float_to_half(std::nextafter(65520.0f, 0.0f)), 0x7BFF);
  // Subnormal ties.
  const float unit = std::ldexp(1.0f, -24);
  EXPECT_EQ(salient::float_to_half(unit / 2), 0x0000);
  EXPECT_EQ(salient::float_to_half(std::nextafter(unit / 2, 1.0f)), 0x0001);
  EXPECT_EQ(salient::float_to_half(3 * unit / 2), 0x0002);
  EXPECT_EQ(salient::float_to_half(5 * unit / 2), 0x0002);
  EXPECT_EQ(salient::float_to_half(7 * unit / 2), 0x0004);
  // Largest subnormal + half a unit rounds to the smallest normal.
  EXPECT_EQ(salient::float_to_half(1023.5f * unit), 0x0400);
}

TEST(HalfConversion, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    float f = salient::half_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(salient::half_to_float(salient::float_to_half(f)))) << h;
      continue;
    }
    ASSERT_EQ(salient::float_to_half(f), h) << "half 0x" << std::hex << h;
  }
}

#if defined(__FLT16_MAX__)
// The compiler's own float -> _Float16 conversion is IEEE round-to-nearest-even.
TEST(HalfConversion, MatchesCompilerFloat16OnManyFloats) {
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 4093) {  // prime stride hits all exponents
    float f = float_of(static_cast<uint32_t>(bits));
    if (std::isnan(f)) continue;
    _Float16 reference = static_cast<_Float16>(f);
    uint16_t expected;
    std::memcpy(&expected, &reference, 2);
    ASSERT_EQ(salient::float_to_half(f), expected) << "float bits 0x" << std::hex << bits;
  }
}
#endif

TEST(Bf16Conversion, KnownBitPatterns) {
  EXPECT_EQ(salient::bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(salient::bf16_to_float(0xC040), -3.0f);
  EXPECT_EQ(salient::bf16_to_float(0x0001), float_of(0x00010000u));  // subnormal
  EXPECT_EQ(salient::bf16_to_float(0x7F80), std::numeric_limits<float>::infinity());
  EXPECT_EQ(salient::bf16_to_float(0xFF80), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(salient::bf16_to_float(0x7FC0)));
  EXPECT_TRUE(std::isnan(salient::bf16_to_float(0x7F81)));

  EXPECT_EQ(salient::float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(salient::float_to_bf16(-3.0f), 0xC040);
  EXPECT_EQ(salient::float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(salient::float_to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(salient::float_to_bf16(-std::numeric_limits<float>::infinity()), 0xFF80);
  EXPECT_EQ(salient::float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds past max bf16
  EXPECT_EQ(salient::float_to_bf16(float_of(0x7F7F7FFFu)), 0x7F7F);
  EXPECT_TRUE(std::isnan(salient::bf16_to_float(salient::float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  // Payload only in the low 16 bits: plain truncation would yield inf.
  EXPECT_TRUE(std::isnan(salient::bf16_to_float(salient::float_to_bf16(float_of(0x7F800001u)))));
  EXPECT_TRUE(std::isnan(salient::bf16_to_float(salient::float_to_bf16(float_of(0xFF800001u)))));
}

TEST(Bf16Conversion, RoundsToNearestEven) {
  EXPECT_EQ(salient::float_to_bf16(float_of(0x3F808000u)), 0x3F80);  // tie, even stays
  EXPECT_EQ(salient::float_to_bf16(float_of(0x3F818000u)), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(salient::float_to_bf16(float_of(0x3F808001u)), 0x3F81);  // above tie
  EXPECT_EQ(salient::float_to_bf16(float_of(0x3F807FFFu)), 0x3F80);  // below tie
  EXPECT_EQ(salient::float_to_bf16(float_of(0x3FFF8000u)), 0x4000);  // carry into exponent
  // Subnormals.
  EXPECT_EQ(salient::float_to_bf16(float_of(0x00008000u)), 0x0000);
  EXPECT_EQ(salient::float_to_bf16(float_of(0x00018000u)), 0x0002);
  EXPECT_EQ(salient::float_to_bf16(float_of(0x00010001u)), 0x0001);
  EXPECT_EQ(salient::float_to_bf16(float_of(0x80018000u)), 0x8002);
}

TEST(Bf16Conversion, EveryBf16RoundTrips) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    float f = salient::bf16_to_float(static_cast<uint16_t>(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(salient::float_to_bf16(f), b) << b;
  }
}

// ---------------------------------------------------------------------------------------------
// config.json

TEST(Config, ParsesBertTinyImdbConfig) {
  std::string path = salient::test::shared_path("data/bert_tiny_imdb_config_noweights/config.json");
  SALIENT_REQUIRE_SHARED(path);
  ModelConfig c = ModelConfig::from_file(path);
  EXPECT_EQ(c.model_type, "bert");
  EXPECT_EQ(c.vocab_size, 30522);
  EXPECT_EQ(c.hidden_size, 128);
  EXPECT_EQ(c.num_hidden_layers, 2);
  EXPECT_EQ(c.num_attention_heads, 2);
  EXPECT_EQ(c.head_dim(), 64);
  EXPECT_EQ(c.intermediate_size, 512);
  EXPECT_EQ(c.hidden_act, salient::Activation::GeluExact);
  EXPECT_DOUBLE_EQ(c.classifier_dropout, -1);  // null
  EXPECT_DOUBLE_EQ(c.classifier_dropout_prob(), 0.1);
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-12);
  EXPECT_EQ(c.max_position_embeddings, 512);
  EXPECT_EQ(c.max_tokens(), 512);
  EXPECT_EQ(c.type_vocab_size, 2);
  EXPECT_EQ(c.pad_token_id, 0);
  EXPECT_EQ(c.position_offset, 0);
  EXPECT_EQ(c.num_labels, 2);  // no id2label: HF default
  EXPECT_EQ(c.id2label, (std::vector<std::string>{"LABEL_0", "LABEL_1"}));
  EXPECT_EQ(c.problem_type, "single_label_classification");
  EXPECT_EQ(c.architectures, (std::vector<std::string>{"BertForSequenceClassification"}));
  // Unknown fields are kept.
  EXPECT_EQ(c.extra["transformers_version"], "4.57.0");
  EXPECT_EQ(c.extra["initializer_range"], 0.02);
  EXPECT_EQ(c.extra["use_cache"], true);
  EXPECT_FALSE(c.extra.contains("hidden_size"));
}

TEST(Config, ParsesReferenceBertConfigWithLabels) {
  std::string path = salient::test::shared_path("fixtures/reference-bert/model/config.json");
  SALIENT_REQUIRE_SHARED(path);
  ModelConfig c = ModelConfig::from_file(path);
  EXPECT_EQ(c.hidden_size, 32);
  EXPECT_EQ(c.num_attention_heads, 4);
  EXPECT_EQ(c.intermediate_size, 64);
  EXPECT_EQ(c.max_position_embeddings, 128);
  EXPECT_EQ(c.id2label, (std::vector<std::string>{"negative", "positive"}));
  EXPECT_EQ(c.num_labels, 2);
  EXPECT_EQ(c.label_id("positive"), 1);
  EXPECT_EQ(c.label_id("negative"), 0);
  EXPECT_EQ(c.label_id("1"), 1);  // index as text
  expect_error([&] { c.label_id("neutral"); }, {"unknown label 'neutral' (labels: negative, positive)"});
  expect_error([&] { c.label_id("2"); }, {"unknown label '2'"});
  expect_error([&] { c.label_id("-1"); }, {"unknown label '-1'"});
}

TEST(Config, RobertaPositionsStartAfterPadding) {
  json j = {{"model_type", "roberta"},        {"vocab_size", 50265},
            {"hidden_size", 64},              {"num_hidden_layers", 2},
            {"num_attention_heads", 4},       {"intermediate_size", 128},
            {"max_position_embeddings", 514}, {"type_vocab_size", 1},
            {"pad_token_id", 1},              {"bos_token_id", 0},
            {"hidden_act", "gelu"},           {"layer_norm_eps", 1e-5},
            {"id2label", {{"0", "NEGATIVE"}, {"1", "POSITIVE"}}}};
  ModelConfig c = ModelConfig::from_json(j, "roberta.json");
  EXPECT_EQ(c.model_type, "roberta");
  EXPECT_EQ(c.position_offset, 2);
  EXPECT_EQ(c.max_tokens(), 512);
  EXPECT_EQ(c.type_vocab_size, 1);
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-5);
  EXPECT_EQ(c.extra["bos_token_id"], 0);
  EXPECT_EQ(c.label_id("POSITIVE"), 1);

  // HF default pad_token_id for RoBERTa is 1.
  ModelConfig d = ModelConfig::from_json({{"model_type", "roberta"}}, "roberta.json");
  EXPECT_EQ(d.pad_token_id, 1);
  EXPECT_EQ(d.position_offset, 2);
  EXPECT_EQ(d.vocab_size, 50265);
}

TEST(Config, ElectraWithEmbeddingProjection) {
  json j = {{"architectures", {"ElectraForSequenceClassification"}},
            {"model_type", "electra"},
            {"embedding_size", 128},
            {"hidden_size", 256},
            {"num_hidden_layers", 12},
            {"num_attention_heads", 4},
            {"intermediate_size", 1024},
            {"hidden_act", "gelu_new"},
            {"summary_type", "first"},
            {"classifier_dropout", 0.3},
            {"num_labels", 3}};
  ModelConfig c = ModelConfig::from_json(j, "electra.json");
  EXPECT_EQ(c.model_type, "electra");
  EXPECT_EQ(c.embedding_size, 128);
  EXPECT_EQ(c.embed_dim(), 128);
  EXPECT_EQ(c.hidden_size, 256);
  EXPECT_EQ(c.hidden_act, salient::Activation::GeluTanh);
  EXPECT_DOUBLE_EQ(c.classifier_dropout_prob(), 0.3);
  EXPECT_EQ(c.num_labels, 3);
  EXPECT_EQ(c.id2label, (std::vector<std::string>{"LABEL_0", "LABEL_1", "LABEL_2"}));
  EXPECT_EQ(c.extra["summary_type"], "first");

  // HF ElectraConfig defaults when fields are left out.
  ModelConfig d = ModelConfig::from_json({{"model_type", "electra"}}, "electra.json");
  EXPECT_EQ(d.embedding_size, 128);
  EXPECT_EQ(d.hidden_size, 256);
  EXPECT_EQ(d.num_attention_heads, 4);
  EXPECT_EQ(d.intermediate_size, 1024);
}

TEST(Config, DistilbertUsesItsOwnFieldNames) {
  json j = {{"architectures", {"DistilBertForSequenceClassification"}},
            {"model_type", "distilbert"},
            {"vocab_size", 30522},
            {"dim", 64},
            {"n_layers", 3},
            {"n_heads", 4},
            {"hidden_dim", 256},
            {"activation", "relu"},
            {"dropout", 0.15},
            {"attention_dropout", 0.05},
            {"seq_classif_dropout", 0.25},
            {"qa_dropout", 0.1},
            {"max_position_embeddings", 512},
            {"sinusoidal_pos_embds", true},
            {"pad_token_id", 0},
            {"id2label", {{"0", "NEGATIVE"}, {"1", "POSITIVE"}}},
            {"label2id", {{"NEGATIVE", 0}, {"POSITIVE", 1}}}};
  ModelConfig c = ModelConfig::from_json(j, "distil.json");
  EXPECT_EQ(c.model_type, "distilbert");
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.num_hidden_layers, 3);
  EXPECT_EQ(c.num_attention_heads, 4);
  EXPECT_EQ(c.intermediate_size, 256);
  EXPECT_EQ(c.hidden_act, salient::Activation::Relu);
  EXPECT_DOUBLE_EQ(c.hidden_dropout_prob, 0.15);
  EXPECT_DOUBLE_EQ(c.attention_probs_dropout_prob, 0.05);
  EXPECT_DOUBLE_EQ(c.classifier_dropout_prob(), 0.25);
  EXPECT_TRUE(c.sinusoidal_pos_embds);
  EXPECT_EQ(c.type_vocab_size, 0);
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-12);
  EXPECT_EQ(c.position_offset, 0);
  EXPECT_EQ(c.extra["qa_dropout"], 0.1);
  EXPECT_FALSE(c.extra.contains("dim"));

  json out = c.to_json();
  EXPECT_EQ(out["dim"], 64);
  EXPECT_EQ(out["n_layers"], 3);
  EXPECT_EQ(out["n_heads"], 4);
  EXPECT_EQ(out["hidden_dim"], 256);
  EXPECT_EQ(out["activation"], "relu");
  EXPECT_EQ(out["seq_classif_dropout"], 0.25);
  EXPECT_FALSE(out.contains("hidden_size"));
  EXPECT_FALSE(out.contains("type_vocab_size"));
  EXPECT_FALSE(out.contains("layer_norm_eps"));

  // DistilBertConfig defaults.
  ModelConfig d = ModelConfig::from_json({{"model_type", "distilbert"}}, "distil.json");
  EXPECT_EQ(d.num_hidden_layers, 6);
  EXPECT_EQ(d.hidden_size, 768);
  EXPECT_DOUBLE_EQ(d.classifier_dropout_prob(), 0.2);
}

TEST(Config, InfersModelTypeFromArchitectures) {
  auto type_of = [](const std::string& arch) {
    return ModelConfig::from_json({{"architectures", {arch}}}, "config.json").model_type;
  };
  EXPECT_EQ(type_of("BertForSequenceClassification"), "bert");
  EXPECT_EQ(type_of("RobertaForSequenceClassification"), "roberta");
  EXPECT_EQ(type_of("ElectraForSequenceClassification"), "electra");
  EXPECT_EQ(type_of("DistilBertForSequenceClassification"), "distilbert");
  EXPECT_EQ(type_of("BertModel"), "bert");
  expect_error([] { ModelConfig::from_json(json::object(), "config.json"); },
               {"config.json: missing field 'model_type'"});
  expect_error([] { ModelConfig::from_json({{"architectures", {"GPT2LMHeadModel"}}}, "config.json"); },
               {"config.json: missing field 'model_type'"});
  expect_error(
      [] { ModelConfig::from_json({{"architectures", {"RobertaPreLayerNormForMaskedLM"}}}, "config.json"); },
      {"missing field 'model_type'"});
}

TEST(Config, ToJsonFromJsonRoundTrip) {
  for (const char* type : {"bert", "roberta", "electra", "distilbert"}) {
    bool distil = std::string(type) == "distilbert";
    json j = {{"model_type", type},
              {distil ? "dim" : "hidden_size", 48},
              {distil ? "n_heads" : "num_attention_heads", 6},
              {distil ? "activation" : "hidden_act", "gelu_pytorch_tanh"},
              {distil ? "seq_classif_dropout" : "classifier_dropout", 0.4},
              {"id2label", {{"0", "a"}, {"1", "b"}, {"2", "c"}}},
              {"problem_type", "multi_label_classification"},
              {"architectures", {"SomethingForSequenceClassification"}},
              {"custom_field", {{"nested", {1, 2, 3}}}}};
    ModelConfig a = ModelConfig::from_json(j, "in.json");
    json out = a.to_json();
    ModelConfig b = ModelConfig::from_json(out, "out.json");
    EXPECT_EQ(b.to_json(), out) << type;

    EXPECT_EQ(b.model_type, a.model_type);
    EXPECT_EQ(b.vocab_size, a.vocab_size);
    EXPECT_EQ(b.hidden_size, a.hidden_size);
    EXPECT_EQ(b.embedding_size, a.embedding_size);
    EXPECT_EQ(b.num_hidden_layers, a.num_hidden_layers);
    EXPECT_EQ(b.num_attention_heads, a.num_attention_heads);
    EXPECT_EQ(b.intermediate_size, a.intermediate_size);
    EXPECT_EQ(b.hidden_act, salient::Activation::GeluTanh);
    EXPECT_DOUBLE_EQ(b.hidden_dropout_prob, a.hidden_dropout_prob);
    EXPECT_DOUBLE_EQ(b.attention_probs_dropout_prob, a.attention_probs_dropout_prob);
    EXPECT_DOUBLE_EQ(b.classifier_dropout_prob(), 0.4);
    EXPECT_DOUBLE_EQ(b.layer_norm_eps, a.layer_norm_eps);
    EXPECT_EQ(b.max_position_embeddings, a.max_position_embeddings);
    EXPECT_EQ(b.type_vocab_size, a.type_vocab_size);
    EXPECT_EQ(b.pad_token_id, a.pad_token_id);
    EXPECT_EQ(b.position_offset, a.position_offset);
    EXPECT_EQ(b.num_labels, 3);
    EXPECT_EQ(b.id2label, a.id2label);
    EXPECT_EQ(b.problem_type, "multi_label_classification");
    EXPECT_EQ(b.architectures, a.architectures);
    EXPECT_EQ(b.extra["custom_field"], j["custom_field"]) << type;

    // HF-loadable label maps: string keys in id2label, integer values in label2id.
    EXPECT_EQ(out["id2label"], json({{"0", "a"}, {"1", "b"}, {"2", "c"}}));
    EXPECT_EQ(out["label2id"], json({{"a", 0}, {"b", 1}, {"c", 2}}));
    EXPECT_EQ(out["num_labels"], 3);
  }
}

TEST(Config, ToJsonWritesNullClassifierDropoutAndDefaultLabels) {
  ModelConfig c;  // built in code: no id2label
  json out = c.to_json();
  EXPECT_TRUE(out["classifier_dropout"].is_null());
  EXPECT_EQ(out["id2label"], json({{"0", "LABEL_0"}, {"1", "LABEL_1"}}));
  EXPECT_EQ(c.label_id("LABEL_1"), 1);
  EXPECT_EQ(ModelConfig::from_json(out, "x").classifier_dropout, -1);
}

TEST(Config, ProblemTypeDefaults) {
  EXPECT_EQ(ModelConfig::from_json({{"model_type", "bert"}, {"num_labels", 1}}, "c").problem_type, "regression");
  EXPECT_EQ(ModelConfig::from_json({{"model_type", "bert"}, {"problem_type", nullptr}}, "c").problem_type,
            "single_label_classification");
}

TEST(Config, LabelsFromLabel2idOnly) {
  ModelConfig c = ModelConfig::from_json({{"model_type", "bert"}, {"label2id", {{"pos", 1}, {"neg", 0}}}}, "c");
  EXPECT_EQ(c.id2label, (std::vector<std::string>{"neg", "pos"}));
}

// Bad configs: each error is one line naming the file and the field.
TEST(ConfigMalformed, UnsupportedModelType) {
  expect_error([] { ModelConfig::from_json({{"model_type", "gpt2"}}, "config.json"); },
               {"config.json: unsupported model_type 'gpt2' (supported: bert, roberta, xlm-roberta, electra, "
                "distilbert, deberta-v2, vit)"});
}

TEST(Config, DebertaFieldsAreReadAndWrittenBackUnchanged) {
  const json j = {{"model_type", "deberta-v2"}, {"hidden_size", 64}, {"num_hidden_layers", 2},
                  {"num_attention_heads", 4}, {"intermediate_size", 128}, {"vocab_size", 100},
                  {"relative_attention", true}, {"pos_att_type", "p2c|c2p"}, {"position_buckets", 256},
                  {"share_att_key", true}, {"norm_rel_ebd", "layer_norm"}, {"position_biased_input", false},
                  {"pooler_hidden_act", "gelu"}, {"cls_dropout", 0.2}};
  const ModelConfig c = ModelConfig::from_json(j, "config.json");
  EXPECT_EQ(c.family().architecture, "deberta");
  EXPECT_TRUE(c.deberta.relative_attention && c.deberta.c2p && c.deberta.p2c && c.deberta.share_att_key &&
              c.deberta.norm_rel_ebd && !c.deberta.position_biased_input);
  EXPECT_EQ(c.deberta.span(c.max_position_embeddings), 256);
  EXPECT_EQ(c.layer_norm_eps, 1e-7);   // DebertaV2Config's default
  EXPECT_EQ(c.type_vocab_size, 0);
  EXPECT_EQ(c.classifier_dropout_prob(), 0.2);
  const json back = c.to_json();
  for (const char* key : {"relative_attention", "pos_att_type", "position_buckets", "share_att_key", "norm_rel_ebd",
                          "position_biased_input", "cls_dropout"})
    EXPECT_EQ(back.at(key), j.at(key)) << key;
  // a list works as the string; what salient does not compute is a one-line error naming the field
  json list = j;
  list["pos_att_type"] = {"c2p"};
  EXPECT_FALSE(ModelConfig::from_json(list, "config.json").deberta.p2c);
  for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{
           {"conv_kernel_size", 3}, {"pos_att_type", "p2p"}, {"pos_att_type", 5}, {"attention_head_size", 7},
           {"share_att_key", "yes"}}) {
    json bad = j;
    bad[key] = value;
    expect_error([&] { ModelConfig::from_json(bad, "config.json"); }, {"config.json", key});
  }
  // XLM-RoBERTa is RoBERTa's architecture: positions after the padding index, its weights' prefix
  const ModelConfig x = ModelConfig::from_json({{"architectures", {"XLMRobertaForSequenceClassification"}}}, "config.json");
  EXPECT_EQ(x.model_type, "xlm-roberta");
  EXPECT_EQ(x.family().architecture, "roberta");
  EXPECT_EQ(x.position_offset, 2);
}

TEST(ConfigMalformed, NotAnObject) {
  expect_error([] { ModelConfig::from_json(json::array(), "config.json"); }, {"config.json", "JSON object"});
}

TEST(ConfigMalformed, WrongTypes) {
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"hidden_size", "abc"}}, "config.json"); },
               {"config.json: field 'hidden_size' must be an integer (got \"abc\")"});
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"hidden_size", 76.8}}, "config.json"); },
               {"field 'hidden_size' must be an integer"});
  expect_error(
      [] { ModelConfig::from_json({{"model_type", "bert"}, {"hidden_dropout_prob", "0.1"}}, "config.json"); },
      {"config.json: field 'hidden_dropout_prob' must be a number"});
  expect_error([] { ModelConfig::from_json({{"model_type", 3}}, "config.json"); },
               {"field 'model_type' must be a string"});
  expect_error([] { ModelConfig::from_json({{"model_type", "distilbert"}, {"n_heads", true}}, "config.json"); },
               {"field 'n_heads' must be an integer"});
  expect_error(
      [] { ModelConfig::from_json({{"model_type", "distilbert"}, {"sinusoidal_pos_embds", 1}}, "config.json"); },
      {"field 'sinusoidal_pos_embds' must be true or false"});
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"architectures", "Bert"}}, "config.json"); },
               {"field 'architectures' must be a list of strings"});
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"problem_type", 1}}, "config.json"); },
               {"field 'problem_type' must be a string"});
}

TEST(ConfigMalformed, NonPositiveSizes) {
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"num_hidden_layers", 0}}, "config.json"); },
               {"config.json: field 'num_hidden_layers' must be positive (got 0)"});
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"vocab_size", -5}}, "config.json"); },
               {"field 'vocab_size' must be positive"});
  expect_error([] { ModelConfig::from_json({{"model_type", "distilbert"}, {"dim", 0}}, "config.json"); },
               {"field 'dim' must be positive"});
  expect_error([] { ModelConfig::from_json({{"model_type", "electra"}, {"embedding_size", 0}}, "config.json"); },
               {"field 'embedding_size' must be positive"});
}

TEST(ConfigMalformed, HiddenSizeNotDivisibleByHeads) {
  expect_error(
      [] { ModelConfig::from_json({{"model_type", "bert"}, {"hidden_size", 30}, {"num_attention_heads", 4}}, "c.json"); },
      {"c.json: field 'hidden_size' (30) is not divisible by 'num_attention_heads' (4)"});
  expect_error([] { ModelConfig::from_json({{"model_type", "distilbert"}, {"dim", 30}, {"n_heads", 4}}, "c.json"); },
               {"field 'dim' (30) is not divisible by 'n_heads' (4)"});
}

TEST(ConfigMalformed, BadValues) {
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"hidden_act", "swish"}}, "c.json"); },
               {"c.json: field 'hidden_act': unsupported activation 'swish'"});
  expect_error([] { ModelConfig::from_json({{"model_type", "distilbert"}, {"activation", "tanh"}}, "c.json"); },
               {"c.json: field 'activation': unsupported activation 'tanh'"});
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"hidden_dropout_prob", 1.5}}, "c.json"); },
               {"field 'hidden_dropout_prob' must be in [0, 1]"});
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"layer_norm_eps", 0}}, "c.json"); },
               {"field 'layer_norm_eps' must be positive"});
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"pad_token_id", 40000}}, "c.json"); },
               {"field 'pad_token_id' (40000)"});
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"problem_type", "ranking"}}, "c.json"); },
               {"field 'problem_type': unsupported value 'ranking'"});
  expect_error(
      [] { ModelConfig::from_json({{"model_type", "bert"}, {"position_embedding_type", "relative_key"}}, "c.json"); },
      {"unsupported position_embedding_type \"relative_key\""});
  expect_error(
      [] {
        ModelConfig::from_json({{"model_type", "roberta"}, {"max_position_embeddings", 2}, {"pad_token_id", 1}},
                               "c.json");
      },
      {"field 'max_position_embeddings' (2)"});
}

TEST(ConfigMalformed, Id2labelKeysNotZeroToNMinusOne) {
  expect_error(
      [] { ModelConfig::from_json({{"model_type", "bert"}, {"id2label", {{"0", "a"}, {"2", "b"}}}}, "c.json"); },
      {"c.json: field 'id2label': key '2' is not a label index 0..1"});
  expect_error(
      [] { ModelConfig::from_json({{"model_type", "bert"}, {"id2label", {{"0", "a"}, {"x", "b"}}}}, "c.json"); },
      {"field 'id2label': key 'x'"});
  expect_error(
      [] { ModelConfig::from_json({{"model_type", "bert"}, {"id2label", {{"0", "a"}, {"01", "b"}}}}, "c.json"); },
      {"field 'id2label': key '01'"});
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"id2label", {{"0", 5}}}}, "c.json"); },
               {"field 'id2label': label 0 must be a string"});
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"id2label", json::object()}}, "c.json"); },
               {"field 'id2label' must be a non-empty object"});
  expect_error(
      [] { ModelConfig::from_json({{"model_type", "bert"}, {"id2label", {{"0", "a"}, {"1", "a"}}}}, "c.json"); },
      {"label 'a' appears twice"});
}

TEST(ConfigMalformed, NumLabelsInconsistent) {
  expect_error(
      [] {
        ModelConfig::from_json({{"model_type", "bert"}, {"num_labels", 3}, {"id2label", {{"0", "a"}, {"1", "b"}}}},
                               "c.json");
      },
      {"c.json: field 'num_labels' is 3 but id2label has 2 labels"});
  expect_error([] { ModelConfig::from_json({{"model_type", "bert"}, {"num_labels", 0}}, "c.json"); },
               {"field 'num_labels' must be at least 1"});
  expect_error(
      [] {
        ModelConfig::from_json(
            {{"model_type", "bert"}, {"id2label", {{"0", "a"}, {"1", "b"}}}, {"label2id", {{"a", 1}, {"b", 0}}}},
            "c.json");
      },
      {"field 'label2id' does not match id2label"});
}

TEST(ConfigMalformed, FromFileNamesThePath) {
  std::string path = temp_dir() + "/config.json";
  salient::write_file_atomic(path, "{\"model_type\": \"bert\", \"hidden_size\": ");
  expect_error([&] { ModelConfig::from_file(path); }, {path, "invalid JSON"});
  salient::write_file_atomic(path, "{\"model_type\": \"bert\", \"hidden_size\": \"abc\"}");
  expect_error([&] { ModelConfig::from_file(path); }, {path + ": field 'hidden_size'"});
  std::remove(path.c_str());
  ::rmdir(temp_dir().c_str());
}

// Inputs libFuzzer found (scripts/fuzz.sh, docs/RELIABILITY.md): each was an exception other than
// salient::Error (a JSON number beyond double's range) or undefined behaviour (patch_size 0).
TEST(FuzzFindings, OutOfRangeNumbersAndZeroPatchSizeAreOneLineErrors) {
  expect_error([&] { salient::parse_safetensors(make_file("{\"x\": 1e999999}", 0), "big.safetensors"); },
               {"big.safetensors", "header is not valid JSON", "out of range"});
  std::istringstream in("ok line\n{\"text\": 44444444444444444444.44E445}\n");
  expect_error([&] { salient::read_inputs(in, "in.jsonl"); }, {"in.jsonl:2", "out of range"});
  expect_error([&] { salient::ModelConfig::from_json({{"model_type", "vit"}, {"patch_size", 0}}, "v/config.json"); },
               {"v/config.json", "'patch_size' must be positive"});
}

// A checkpoint larger than the memory left is refused before it is read: a one-line error naming
// the file, not the kernel's OOM kill. The file is sparse, so it takes no disk.
TEST(ResourceBounds, ACheckpointLargerThanMemoryIsRefused) {
  const int64_t available = salient::available_memory_bytes();
  if (available <= 0) GTEST_SKIP() << "no MemAvailable here";
  const std::string path = temp_dir() + "/huge.safetensors";
  salient::write_file_atomic(path, make_file("{\"w\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}}", 16));
  if (::truncate(path.c_str(), available) != 0) GTEST_SKIP() << "cannot make a sparse file here";
  expect_error([&] { salient::read_safetensors(path); }, {path, "loading it needs about", "GiB of memory"});
  std::remove(path.c_str());
  ::rmdir(temp_dir().c_str());
}

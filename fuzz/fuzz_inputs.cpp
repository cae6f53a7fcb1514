// libFuzzer harness: the CLI's input lines (plain text or JSON objects with text / text_pair /
// input_ids / token_type_ids).
#include <cstdint>
#include <sstream>
#include <string>

#include "salient/inputs.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    salient::read_inputs(in, "<fuzz>");
  } catch (const salient::Error&) {
  }
  return 0;
}

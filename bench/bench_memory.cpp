// Peak bytes held by tensors while one request runs, measured exactly (a counting allocator,
// util/tensor_memory.h), beside the estimate salient reports in advance (Model::memory_estimate:
// `salient info`, the server's admission). Issue #88; docs/PERFORMANCE.md, "Memory known in advance".
//   bench_memory MODEL_DIR [LENGTHS=32,128,256,510] [METHODS=all] [MAX_BATCH_TOKENS=4096]
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.h"
#include "salient/salient.h"
#include "util/tensor_memory.h"

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

// A text of about `pieces` word pieces (one piece per common word).
std::string text_of(const salient::Model& m, int64_t pieces) {
  const std::vector<std::string> words = {"the", "film", "is", "a", "charming", "and", "moving", "journey",
                                          "through", "memory", "loss", "of", "life", "that", "we", "notice"};
  std::string t;
  for (size_t i = 0;; ++i) {
    const std::string next = t + (t.empty() ? "" : " ") + words[i % words.size()];
    if (static_cast<int64_t>(m.tokenize({next}).ids.size()) > pieces) return t;
    t = next;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (salient::bench::help_requested(argc, argv,
                                     "bench_memory MODEL_DIR [LENGTHS=32,128,256,510] [METHODS=all] [MAX_BATCH_TOKENS=4096]\n"))
    return 0;
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_memory MODEL_DIR [LENGTHS] [METHODS] [MAX_BATCH_TOKENS]\n");
    return 2;
  }
  const salient::Model model = salient::Model::load(argv[1]);
  const std::vector<std::string> lengths = split(argc > 2 ? argv[2] : "32,128,256,510");
  std::vector<std::string> methods = split(argc > 3 ? argv[3] : "all");
  const int64_t budget = argc > 4 ? std::stoll(argv[4]) : 4096;
  if (methods == std::vector<std::string>{"all"}) {
    methods.clear();
    for (const auto& info : salient::methods())
      if (info.family != "learned") methods.push_back(info.name);
  }
  salient::tensor_memory::install();
  std::printf("| method | tokens | measured peak (MB) | estimate (MB) | estimate / measured |\n|---|---|---|---|---|\n");
  for (const std::string& method : methods)
    for (const std::string& l : lengths) {
      const std::string text = text_of(model, std::stoll(l));
      const int64_t tokens = static_cast<int64_t>(model.tokenize({text}).ids.size());
      const int64_t before = salient::tensor_memory::current();
      salient::tensor_memory::reset_peak();
      try {
        model.explain({{text}}, method, nlohmann::json::object(), "pred", "", 8, 0, {}, budget);
      } catch (const std::exception& e) {  // e.g. LRP on a head it does not cover
        std::printf("| %s | %lld | refused: %s | | |\n", method.c_str(), static_cast<long long>(tokens), e.what());
        break;
      }
      const double measured = static_cast<double>(salient::tensor_memory::peak() - before) / 1e6;
      const double estimate = static_cast<double>(model.memory_estimate(tokens, method, nlohmann::json::object(), budget).request_bytes) / 1e6;
      std::printf("| %s | %lld | %.1f | %.1f | %.2f |\n", method.c_str(), static_cast<long long>(tokens), measured, estimate,
                  estimate / measured);
      std::fflush(stdout);
    }
}

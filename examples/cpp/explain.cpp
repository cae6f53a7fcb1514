// Predict and explain one text with salient's public API.
//   explain MODEL_DIR TEXT [METHOD]    (METHOD: any registered explainer, default ig)
#include <iostream>
#include <vector>

#include "salient/salient.h"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::cerr << "usage: explain MODEL_DIR TEXT [METHOD]\n";
    return 2;
  }
  try {
    const salient::Model model = salient::Model::load(argv[1]);
    const std::vector<salient::TextInput> inputs = {{argv[2], std::nullopt}};
    const salient::Prediction p = model.predict(inputs)[0];
    std::cout << "prediction: " << p.label << " (p = " << p.probs[p.label_id] << ")\n";
    // One explanation per input (to_json(): the explanation schema, docs/explanation-schema.md).
    const salient::Explanation e = model.explain(inputs, argc == 4 ? argv[3] : "ig")[0];
    std::cout << "method: " << e.method << ", explaining " << e.target_label << "\n";
    for (size_t w = 0; w < e.words->size(); ++w) std::cout << (*e.words)[w] << "\t" << (*e.word_scores)[w] << "\n";
  } catch (const std::exception& err) {
    std::cerr << "explain: " << err.what() << "\n";
    return 1;
  }
  return 0;
}

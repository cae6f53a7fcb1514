#pragma once
// SMaT's plausibility table (Fernandes et al., NeurIPS 2022, Table 2): how well each teacher
// explainer's token scores rank the tokens of human rationales, as the mean per-example AUROC (and
// AUPRC), for the static explainers of the study, learned SMaT explainers and the paper's oracle
// rows — the single layer and the single head with the best AUROC, chosen on the very labels they
// are scored against (an upper bound no explainer without the labels can claim).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "smat/simulation.h"

namespace salient::smat {

struct PlausibilityOptions {
  std::string teacher;                 // classifier directory
  std::string data, data_dir;          // dataset spec with rationales (eraser:test, hatexplain:test, sst-trees:test, a file)
  std::string out_dir;
  std::vector<std::string> smat_files; // learned explainers (smat_explainer.json), each a row
  int64_t limit = 0;                   // first N records with a rationale; 0: all
  int64_t max_length = 0;              // 0: the teacher's position table
  // What is ranked: "word" (the authors' Appendix A: a word's score is the sum of its word pieces',
  // a word is marked when the rationale marks it; words as HF word_ids split them) or "token".
  std::string unit = "word";
  StaticExplainerOptions statics;      // the gradient explainers as in the study
  void validate() const;
};

// Scores every explainer, writes OUT/plausibility.{md,csv,json} and returns the JSON: rows with
// explainer, kind (static | learned | oracle), auroc, auprc, examples.
nlohmann::json run_plausibility(const PlausibilityOptions& options);

}  // namespace salient::smat

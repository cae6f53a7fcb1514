#pragma once
// SMaT's text study (Fernandes et al., NeurIPS 2022, Table 1): for every student size and seed, a
// student per teacher explainer (none, the static ones, SMaT); SMaT's coefficients are first
// meta-trained with a student in the loop, then frozen for a fresh student. Every finished run is a
// file, so an interrupted study resumes without redoing one; the report gives the median and the
// 25–75% range of simulability and marks the settings whose range does not overlap the no-explainer
// student's, as the paper does.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "smat/simulation.h"

namespace salient::smat {

struct SimulationSetup {
  std::string teacher;       // trained teacher classifier directory
  std::string student_init;  // encoder the students start from (a pretrained dir); empty: from scratch, teacher's shape
  // The students' hidden and attention dropout; unset: what they start from has (a pre-trained
  // encoder's own, e.g. 0 in models/pretrained-len64-cont; the teacher's config from scratch).
  // ELECTRA-small's is 0.1.
  std::optional<double> student_dropout;
  std::string pool;          // dataset spec or file whose texts (labels unused) are split into test / valid / train
  // When given, test / valid are drawn from these (a seeded shuffle) instead of the pool, e.g. an
  // image study's fashion-mnist:test and fashion-mnist:val beside the pool fashion-mnist:train.
  std::string test_pool, valid_pool;
  std::string data_dir;
  int64_t test_size = 2000, valid_size = 500;
  int64_t max_length = 64;
  uint64_t split_seed = 2022;  // the pool split, the same for every run
  void validate() const;
};

// The pool split and annotated by the teacher: test and valid are fixed; students of size N train
// on the first N of `train` (the same examples for every seed, as the authors' --num-examples).
// A vision transformer teacher (config model_type "vit") reads image specs (data/images.h) and its
// examples carry images; `teacher.tokenizer` is then empty.
struct SimulationData {
  Classifier teacher;
  bool images = false;
  int64_t pad_id() const { return images ? 0 : teacher.tokenizer.pad_id(); }
  std::vector<SimulationExample> train, valid, test;
  nlohmann::json describe() const;  // sizes, teacher agreement stats
};
// `needed_train`: the largest student size (a smaller pool is an error naming --pool).
SimulationData load_simulation_data(const SimulationSetup& setup, int64_t needed_train);

// A student for `seed`: the encoder of setup.student_init with a fresh seeded head (the teacher's
// labels), or a seeded from-scratch model of the teacher's shape (always, for an image teacher).
Transformer make_student(const SimulationSetup& setup, const Classifier& teacher, uint64_t seed);

// `smat train`: meta-trains SMaT's head coefficients for the teacher with a student of `size`
// examples in the loop (seed: its initialisation, batch order and dropout) and writes the learned
// explainer to `out`: a .json path, or a directory for smat_explainer.json. Returns what the
// command prints: the file, the coefficients, the meta-student's simulability and step costs.
nlohmann::json train_smat_explainer(const SimulationSetup& setup, StudentOptions student, int64_t size, uint64_t seed,
                                    const std::string& out);
// `smat evaluate`: one student of `size` examples trained with one teacher explainer (none, a
// static one, smat with the learned explainer file `smat_file`, or any registered method); its
// simulability on the test split and its run (epochs, losses, seconds).
nlohmann::json evaluate_simulability(const SimulationSetup& setup, StudentOptions student,
                                     const StaticExplainerOptions& statics, const std::string& explainer,
                                     const std::string& smat_file, int64_t size, uint64_t seed);

struct StudyOptions {
  SimulationSetup setup;
  std::string out_dir;
  std::vector<int64_t> sizes = {500, 1000, 2000};
  std::vector<uint64_t> seeds = {0, 9, 11, 30, 69};
  std::vector<std::string> explainers = {"none", "saliency", "grad_x_input", "ig", "attention_all", "attention_last", "smat"};
  StudentOptions student;  // explainer and seed are set per run
  StaticExplainerOptions static_explainers;
  void validate() const;
};

// Runs every (explainer, size, seed) not already in out_dir/runs, then writes the report
// (out_dir/summary.json, report.md, report.csv, heads_n<size>.svg). Returns the summary.
nlohmann::json run_study(const StudyOptions& options);
// The summary and report files from the run files of out_dir (no training).
nlohmann::json report_study(const std::string& out_dir);

// Linear-interpolation quantile (numpy's default) of values, q in [0, 1].
double quantile(std::vector<double> values, double q);
// SVG heatmap of a layers × heads matrix (row-major), darker = larger, values printed in the cells.
std::string head_heatmap_svg(const std::vector<double>& values, int64_t layers, int64_t heads, const std::string& title);

}  // namespace salient::smat

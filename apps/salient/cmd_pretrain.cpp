// Pre-training subcommands: corpus build, pretrain.
#include "commands.h"
#include "pretrain/corpus.h"
#include "pretrain/dictionaries.h"
#include "dist/world.h"
#include "model/checkpoint.h"
#include "pretrain/mlm.h"
#include "util/io.h"

namespace salient::cli {

namespace {

struct CorpusArgs {
  std::string out, data_dir, vocab, gcide = "auto", wordnet = "auto";
};

void run_corpus_build(const CorpusArgs& a) {
  const std::string data_dir = a.data_dir.empty() ? shared_data_dir() : a.data_dir;
  if (data_dir.empty() || !dir_exists(data_dir)) fail("--data-dir: '{}' is not a directory", data_dir);
  // Resolved before the (slow) task texts are read, so a missing dictionary fails at once.
  const pretrain::CorpusOptions opts{pretrain::resolve_gcide(a.gcide), pretrain::resolve_wordnet(a.wordnet)};
  const std::string vocab = a.vocab.empty() ? join_path(data_dir, "bert_base_uncased_tokenizer") : a.vocab;
  const auto report = pretrain::build_task_corpus(data_dir, WordPieceTokenizer::from_path(vocab), a.out, opts);
  std::cout << report.to_json().dump(2) << "\n";
}

// With --init, the shape and dropout flags not given take the encoder's own values (one that is
// given must agree on the shape, which pretrain_mlm checks), as `salient train --init` does.
void adopt_init_settings(const CLI::App& pt, pretrain::PretrainOptions& o) {
  ModelConfig c;
  try {
    c = load_model_config(o.init_dir);
  } catch (const Error& e) {
    fail("--init: {}", e.what());
  }
  for (const auto& f : pretrain::kEncoderShapeFields)
    if (pt.count(f.flag) == 0) o.*f.option = c.*f.config;
  if (pt.count("--dropout") == 0) o.dropout = c.hidden_dropout_prob;
}

}  // namespace

void add_pretrain_commands(CLI::App& app, std::vector<Command>& commands) {
  auto* corpus = app.add_subcommand("corpus", "assemble a pre-training corpus");
  corpus->require_subcommand(1);
  static CorpusArgs ca;
  auto* build = corpus->add_subcommand("build", "the text of every task's train split, GCIDE and WordNet glosses (dev/test texts removed) → one text per line, with a report");
  build->add_option("--out,-o,--output", ca.out, "corpus file to write (its report goes to FILE.json)")->required();
  build->add_option("--data-dir", ca.data_dir, "directory of the shared datasets (default: ../shared/data or $SALIENT_SHARED/data)");
  build->add_option("--vocab", ca.vocab, "tokenizer for the word-piece counts (default: data/bert_base_uncased_tokenizer)");
  build->add_option("--gcide", ca.gcide, "GCIDE dictionary: PATH (dictd .dict.dz), auto (/usr/share/dictd/gcide.dict.dz, Debian dict-gcide) or none (default: auto)");
  build->add_option("--wordnet", ca.wordnet, "WordNet glosses: DIR (with data.noun/verb/adj/adv), auto (/usr/share/wordnet, Debian wordnet-base) or none (default: auto)");
  commands.push_back({build, [] { run_corpus_build(ca); }});

  static pretrain::PretrainOptions po;
  auto* pt = app.add_subcommand("pretrain", "masked-language-model pre-training of a BERT encoder (BertForMaskedLM layout)");
  pt->add_option("--corpus", po.corpus, "plain-text file (one text per line) or directory of them; repeatable")->required();
  pt->add_option("--vocab", po.vocab, "vocab.txt, tokenizer.json or tokenizer directory")->required();
  pt->add_option("--out,-o,--output", po.output_dir, "output directory (checkpoint/ inside for resuming)")->required();
  pt->add_option("--layers", po.layers, "encoder layers");
  pt->add_option("--hidden", po.hidden, "hidden size");
  pt->add_option("--heads", po.heads, "attention heads");
  pt->add_option("--intermediate", po.intermediate, "feed-forward size");
  pt->add_option("--max-length", po.max_length, "tokens per packed sequence (also the position table)");
  pt->add_option("--batch-size", po.batch_size, "sequences per step");
  pt->add_option("--lr", po.lr, "peak learning rate (AdamW, linear warmup then linear decay)");
  pt->add_option("--weight-decay", po.weight_decay, "AdamW weight decay (not on biases and LayerNorm)");
  pt->add_option("--warmup", po.warmup_ratio, "share of --max-steps spent warming up");
  pt->add_option("--clip", po.clip_norm, "gradient norm clip (0 = off)");
  pt->add_option("--dropout", po.dropout, "hidden and attention dropout");
  pt->add_option("--max-steps", po.max_steps, "optimizer steps");
  pt->add_option("--max-minutes", po.max_minutes, "stop and save once the run's training time, summed over --resume invocations, passes this (0 = no limit)");
  pt->add_option("--heldout", po.heldout_share, "share of the packed sequences held out for MLM loss and accuracy");
  pt->add_option("--eval-every", po.eval_every, "steps between held-out evaluations");
  pt->add_option("--save-every", po.save_every, "steps between checkpoints");
  pt->add_option("--mask-rate", po.masking.rate, "share of word pieces predicted (80% [MASK], 10% random, 10% kept)");
  pt->add_flag("--whole-word", po.masking.whole_word, "mask whole words (a piece and its ## continuations) together");
  pt->add_option("--seed", po.seed, "seed of initialisation, batch order, masking and dropout");
  pt->add_flag("--resume", po.resume, "continue from OUT/checkpoint (exactly: the same steps as an uninterrupted run)");
  pt->add_option("--stop-after-steps", po.stop_after_steps, "end this invocation after this many steps in all (a later --resume continues)");
  pt->add_option("--init", po.init_dir, "continue from a saved BertForMaskedLM directory: its weights, a fresh optimizer and schedule, its held-out slice (shape and dropout default to its own)");
  commands.push_back({pt, [pt] {
                        if (!po.init_dir.empty()) adopt_init_settings(*pt, po);
                        const auto r = pretrain::pretrain_mlm(po);
                        if (dist::is_root()) std::cout << r.to_json().dump() << "\n";
                      }});
}

}  // namespace salient::cli

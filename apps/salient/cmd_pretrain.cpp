// Pre-training subcommands: corpus build, pretrain.
#include "commands.h"
#include "salient/distributed.h"
#include "salient/pretrain.h"

namespace salient::cli {

void add_pretrain_commands(CLI::App& app, std::vector<Command>& commands) {
  auto* corpus = app.add_subcommand("corpus", "assemble a pre-training corpus");
  corpus->require_subcommand(1);
  static CorpusBuildOptions ca;
  auto* build = corpus->add_subcommand("build", "the text of every task's train split, GCIDE and WordNet glosses (dev/test texts removed) → one text per line, with a report");
  build->add_option("--out,-o,--output", ca.out, "corpus file to write (its report goes to FILE.json)")->required();
  add_data_dir(build, ca.data_dir);
  build->add_option("--vocab", ca.vocab, "tokenizer for the word-piece counts (default: data/bert_base_uncased_tokenizer)");
  build->add_option("--gcide", ca.gcide, "GCIDE dictionary: PATH (dictd .dict.dz), auto (/usr/share/dictd/gcide.dict.dz, Debian dict-gcide) or none (default: auto)");
  build->add_option("--wordnet", ca.wordnet, "WordNet glosses: DIR (with data.noun/verb/adj/adv), auto (/usr/share/wordnet, Debian wordnet-base) or none (default: auto)");
  commands.push_back({build, [] { std::cout << build_corpus(ca).dump(2) << "\n"; }});

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
                        // With --init, the shape and dropout flags not given take the encoder's own values.
                        static const std::pair<const char*, const char*> init_flags[] = {
                            {"--layers", "layers"}, {"--hidden", "hidden"},         {"--heads", "heads"},
                            {"--intermediate", "intermediate"}, {"--max-length", "max_length"}, {"--dropout", "dropout"}};
                        std::vector<std::string> given;
                        for (const auto& [flag, name] : init_flags)
                          if (pt->count(flag) > 0) given.push_back(name);
                        const auto r = pretrain_encoder(po, given);
                        if (dist::is_root()) std::cout << r.dump() << "\n";
                      }});
}

}  // namespace salient::cli

#pragma once
// Sharded jobs (docs/distributed.md): N items in contiguous chunks, each chunk computed by one rank
// and written atomically as its own file next to the output, so an interrupted run resumes without
// recomputing a finished chunk and a rank that dies loses only its unfinished chunk; rank 0 then
// joins the chunks in input order into exactly the file one process writes.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace salient::dist {

struct ShardPlan {
  std::vector<std::pair<size_t, size_t>> chunks;  // [begin, end) of the items, in input order
  std::vector<int> owner;                         // the rank that computes each chunk
  std::vector<double> load;                       // per rank: the summed cost of its chunks
};

// Contiguous chunks of `chunk_items` items (so a chunk is batched exactly as one process batches
// it), given to ranks by cost: the costliest chunk first, each to the least loaded rank (ties: the
// lowest rank). Deterministic; the chunks do not depend on the number of ranks.
ShardPlan plan_shards(const std::vector<double>& item_costs, size_t chunk_items, int ranks);

// The cost of explaining one input of `tokens` tokens with a method of `family`: perturbation
// methods run a number of forward passes that grows with the input, each as long as the input
// (tokens²); the others a fixed number of passes (tokens).
double explain_cost(const std::string& family, size_t tokens);

// What rank 0 writes from the chunks' texts, in chunk order (for outputs that are not the chunks
// one after the other, e.g. sums over the items).
using JoinChunks = std::function<std::string(const std::vector<std::string>&)>;

// The chunk files of one sharded output: OUTPUT.shards/ holding settings.json (what the run
// computes: a directory left by a run with other settings is refused, naming them) and
// chunk-NNNNNN.txt per finished chunk.
class ShardDir {
 public:
  // Every rank constructs it (collective: rank 0 creates or checks the directory first).
  ShardDir(const std::string& output, const nlohmann::json& settings);
  const std::string& path() const { return dir_; }
  bool done(size_t chunk) const;
  void write(size_t chunk, const std::string& text) const;  // atomic
  // Rank 0, once every rank has finished (call after barrier()): the chunks' texts in order,
  // given to `join` (none: concatenated), into the output (atomic); then the directory is removed.
  void merge(size_t chunks, const std::string& output, const JoinChunks& join = nullptr) const;

 private:
  std::string chunk_path(size_t chunk) const;
  std::string dir_;
};

// A whole sharded job, on every rank: plans the chunks (plan_shards), computes this rank's unfinished
// ones with `compute(begin, end)` (the chunk's text, exactly what one process writes for those
// items), and rank 0 joins them into `output` once every rank is done. `label` names the progress
// display; `settings` is what ShardDir checks on resume; `join`, when given, makes the output
// from the chunks' texts instead of concatenating them.
void run_sharded(const std::vector<double>& item_costs, size_t chunk_items, const std::string& output,
                 const nlohmann::json& settings, const std::string& label,
                 const std::function<std::string(size_t, size_t)>& compute, const JoinChunks& join = nullptr);

// Independent units of work, each written as its own result file, shared out while they run: every
// rank walks `results` in order and takes the next unit that is neither done (its file exists) nor
// taken, by creating RESULT.claim exclusively; `compute(i)` computes unit i and writes results[i].
// Ranks that drew quick units go on to the rest instead of waiting: a plan made beforehand from
// estimated costs left one rank idle for most of an ExpNet run when the estimates were off.
// Collective (every rank, the same list); claims an interrupted run left are removed by rank 0
// before any rank claims. One process: every unit not done, in order, no claim files. Returns when
// this rank finds no unit left; call barrier() before reading the other ranks' results.
void run_claimed_units(const std::vector<std::string>& results, const std::function<void(size_t)>& compute);

// The arguments of a sharded run: under mpirun rank 0 writes the output to a file (the chunks live
// beside it), and every rank reads the same input file. "-" or "" is refused, naming the flag.
void require_sharded_files(const std::string& input_flag, const std::string& input, const std::string& output_flag,
                           const std::string& output);

}  // namespace salient::dist

#include "dist/shards.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>

#include <fmt/format.h>

#include "salient/distributed.h"
#include "util/error.h"
#include "util/io.h"
#include "util/progress.h"

namespace salient::dist {

ShardPlan plan_shards(const std::vector<double>& item_costs, size_t chunk_items, int ranks) {
  if (chunk_items == 0) fail("shards: chunk size must be positive");
  if (ranks < 1) fail("shards: need at least one rank");
  ShardPlan plan;
  std::vector<double> cost;
  for (size_t b = 0; b < item_costs.size(); b += chunk_items) {
    const size_t e = std::min(item_costs.size(), b + chunk_items);
    plan.chunks.emplace_back(b, e);
    cost.push_back(std::accumulate(item_costs.begin() + b, item_costs.begin() + e, 0.0));
  }
  std::vector<size_t> order(plan.chunks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  plan.owner.assign(plan.chunks.size(), 0);
  plan.load.assign(ranks, 0.0);
  for (size_t c : order) {
    const int r = static_cast<int>(std::min_element(plan.load.begin(), plan.load.end()) - plan.load.begin());
    plan.owner[c] = r;
    plan.load[r] += cost[c];
  }
  return plan;
}

double explain_cost(const std::string& family, size_t tokens) {
  const double n = static_cast<double>(std::max<size_t>(tokens, 1));
  return family == "perturbation" ? n * n : n;
}

ShardDir::ShardDir(const std::string& output, const nlohmann::json& settings) : dir_(output + ".shards") {
  const std::string settings_path = join_path(dir_, "settings.json");
  long long ok = 1;
  std::string error;
  if (is_root()) {
    try {
      if (dir_exists(dir_) && file_exists(settings_path)) {
        const nlohmann::json before = parse_json_file(settings_path);
        if (before != settings)
          fail("{}: holds the chunks of a run with other settings ({}); remove it or use another output", dir_,
               differing_keys(before, settings));
      } else {
        make_dirs(dir_);
        write_file_atomic(settings_path, settings.dump(2) + "\n");
      }
    } catch (const Error& e) {
      ok = 0;
      error = e.what();
    }
  }
  // Every rank learns whether rank 0 could set the directory up, so none starts work without it.
  if (broadcast_from_root(ok) == 0) {
    if (is_root()) throw Error(error);
    fail("{}: rank 0 could not prepare the chunk directory", dir_);
  }
}

std::string ShardDir::chunk_path(size_t chunk) const { return join_path(dir_, fmt::format("chunk-{:06d}.txt", chunk)); }

bool ShardDir::done(size_t chunk) const { return file_exists(chunk_path(chunk)); }

void ShardDir::write(size_t chunk, const std::string& text) const { write_file_atomic(chunk_path(chunk), text); }

void ShardDir::merge(size_t chunks, const std::string& output, const JoinChunks& join) const {
  std::vector<std::string> texts;
  for (size_t c = 0; c < chunks; ++c) {
    if (!done(c)) fail("{}: chunk {} is missing (a rank did not finish); run the command again to resume", dir_, c);
    texts.push_back(read_file(chunk_path(c)));
  }
  std::string all;
  if (join) {
    all = join(texts);
  } else {
    for (const std::string& t : texts) all += t;
  }
  write_file_atomic(output, all);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);  // the output is complete; a leftover directory is harmless
}

void run_sharded(const std::vector<double>& item_costs, size_t chunk_items, const std::string& output,
                 const nlohmann::json& settings, const std::string& label,
                 const std::function<std::string(size_t, size_t)>& compute, const JoinChunks& join) {
  const ShardPlan plan = plan_shards(item_costs, chunk_items, size());
  const ShardDir shards(output, settings);
  if (is_root()) {
    size_t done = 0;
    for (size_t c = 0; c < plan.chunks.size(); ++c) done += shards.done(c) ? 1 : 0;
    if (done > 0)
      std::fprintf(stderr, "salient: resuming: %zu of %zu chunks already done (%s)\n", done, plan.chunks.size(),
                   shards.path().c_str());
  }
  barrier();  // counted before any rank writes a new chunk
  int64_t mine = 0;
  for (size_t c = 0; c < plan.chunks.size(); ++c)
    if (plan.owner[c] == rank()) mine += static_cast<int64_t>(plan.chunks[c].second - plan.chunks[c].first);
  Progress progress(fmt::format("{} [rank {}/{}]", label, rank(), size()), mine, "ex");
  for (size_t c = 0; c < plan.chunks.size(); ++c) {
    if (plan.owner[c] != rank()) continue;
    const auto [b, e] = plan.chunks[c];
    if (!shards.done(c)) shards.write(c, compute(b, e));
    progress.update(static_cast<int64_t>(e - b));
  }
  progress.finish();
  barrier();
  if (is_root()) shards.merge(plan.chunks.size(), output, join);
}

void require_sharded_files(const std::string& input_flag, const std::string& input, const std::string& output_flag,
                           const std::string& output) {
  if (output.empty() || output == "-")
    fail("{}: a sharded run (mpirun -np {}) writes to an output file, not stdout", output_flag, size());
  if (!input_flag.empty() && (input.empty() || input == "-"))
    fail("{}: a sharded run (mpirun -np {}) reads an input file, not stdin", input_flag, size());
}

void run_claimed_units(const std::vector<std::string>& results, const std::function<void(size_t)>& compute) {
  if (!sharded()) {
    for (size_t i = 0; i < results.size(); ++i)
      if (!file_exists(results[i])) compute(i);
    return;
  }
  if (is_root())
    for (const std::string& r : results) std::remove((r + ".claim").c_str());  // an interrupted run's
  barrier();
  for (size_t i = 0; i < results.size(); ++i) {
    if (file_exists(results[i])) continue;
    const std::string claim = results[i] + ".claim";
    const int fd = ::open(claim.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0) {
      if (errno == EEXIST) continue;  // another rank has it
      fail("{}: cannot create the claim file ({})", claim, std::strerror(errno));
    }
    ::close(fd);
    // Another rank may have finished it between the check above and the claim.
    if (!file_exists(results[i])) compute(i);
    std::remove(claim.c_str());
  }
}

}  // namespace salient::dist

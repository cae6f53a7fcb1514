// salient command-line interface.
#include <algorithm>

#include <fmt/ranges.h>

#include "commands.h"
#include "salient/distributed.h"
#include "salient/runtime.h"
#include "salient/version.h"

namespace salient::cli {

namespace {

// CLI11 reads a word it does not know as an extra argument, and `--help` after a subcommand then
// prints that subcommand's help (`salient smat train --help` showed train's). Walk the words
// first: until a command without subcommands is reached, each word that is not an option (or an
// option's value) must name a subcommand of the group it stands in.
void check_command_words(CLI::App& app, int argc, char** argv) {
  CLI::App* at = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (at->get_subcommands({}).empty()) return;  // a leaf command parses the rest itself
    if (word.rfind("-", 0) == 0) {
      const std::string name = word.substr(0, word.find('='));
      const CLI::Option* opt = at->get_option_no_throw(name);
      if (opt && opt->get_expected_min() > 0 && word.find('=') == std::string::npos) ++i;  // its value
      continue;
    }
    CLI::App* sub = nullptr;
    for (CLI::App* c : at->get_subcommands({}))
      if (c->get_name() == word) sub = c;
    if (!sub) {
      std::vector<std::string> names;
      for (CLI::App* c : at->get_subcommands({})) names.push_back(c->get_name());
      const std::string valid = fmt::format("{}", fmt::join(names, ", "));
      if (at == &app) fail("unknown command '{}' (commands: {})", word, valid);
      fail("{}: unknown command '{}' (commands: {})", at->get_name(), word, valid);
    }
    at = sub;
  }
}

}  // namespace

int main(int argc, char** argv) {
  retain_freed_memory();  // before any tensor: large ones are then reused, not re-faulted (util/memory.h)
  CLI::App app{"salient: why did this transformer predict that?"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("salient ") + kVersion);
  int threads = 0;
  bool quiet = false;
  app.add_option("--threads", threads, "intra-op threads (default: number of cores, or $SALIENT_THREADS)");
  app.add_flag("--quiet", quiet, "no progress output");
  std::vector<Command> commands;
  add_core_commands(app, commands);
  add_explain_commands(app, commands);
  add_attattr_commands(app, commands);
  add_expnet_commands(app, commands);
  add_sst_commands(app, commands);
  add_pretrain_commands(app, commands);
  add_smat_commands(app, commands);
  add_vit_commands(app, commands);
  add_serve_commands(app, commands);
  // Every command that runs a model takes --device; models and inputs move there once.
  std::string device;
  for (const auto& c : commands)
    if (c.app->get_name() != "tokenize" && c.app->get_name() != "build" && c.app->get_name() != "split" &&
        c.app->get_name() != "report")
      c.app->add_option("--device", device, "cpu, cuda or cuda:N (default: $SALIENT_DEVICE, else cpu)");
  check_command_words(app, argc, argv);
  CLI11_PARSE(app, argc, argv);
  set_progress(!quiet && dist::is_root());  // one progress display under mpirun: rank 0's
  set_threads(threads);
  if (!device.empty()) set_device(device);
  if (device_is_cpu()) check_blas();
  for (const auto& c : commands) {
    if (!c.app->parsed()) continue;
    // Under mpirun only the commands that split their work run (docs/distributed.md); any other
    // would run N times over, writing the same files at once.
    const std::string name = c.app->get_parent() && c.app->get_parent()->get_parent()
                                 ? c.app->get_parent()->get_name() + " " + c.app->get_name()
                                 : c.app->get_name();
    static const std::vector<std::string> sharded_commands = {"explain", "benchmark", "train", "pretrain", "info",
                                                                 "attattr attribute", "attattr heads", "smat study",
                                                                 "expnet evaluate", "sst evaluate"};
    if (dist::sharded() && std::find(sharded_commands.begin(), sharded_commands.end(), name) == sharded_commands.end())
      fail("{}: does not run sharded yet (under mpirun: {}); run it as one process", name,
           fmt::join(sharded_commands, ", "));
    c.run();
  }
  return 0;
}

}  // namespace salient::cli

int main(int argc, char** argv) {
  // OpenBLAS chose its kernels when it loaded; on a CPU newer than its tables they are the generic
  // ones, 3-4x slower: run again asking for the CPU's (util/runtime.h).
  salient::reexec_with_better_blas(argv);
  // Under mpirun each rank is this process; alone, a world of one (docs/distributed.md).
  salient::dist::init(&argc, &argv);
  // Every rank with an error prints it; then all ranks end, so none waits at a collective forever.
  const std::string rank = salient::dist::sharded()
                               ? fmt::format("[rank {}/{}] ", salient::dist::rank(), salient::dist::size())
                               : std::string();
  try {
    const int code = salient::cli::main(argc, argv);
    salient::dist::finalize();
    return code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "salient: error: %s%s\n", rank.c_str(), salient::error_message(e).c_str());
  }
  std::fflush(stderr);
  salient::dist::abort_all(1);
  salient::dist::finalize();
  return 1;
}

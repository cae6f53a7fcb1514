// salient command-line interface.
#include <c10/util/Exception.h>

#include "commands.h"
#include "util/progress.h"
#include "util/runtime.h"

namespace salient::cli {

int main(int argc, char** argv) {
  CLI::App app{"salient: why did this transformer predict that?"};
  app.require_subcommand(1);
  int threads = 0;
  bool quiet = false;
  app.add_option("--threads", threads, "intra-op threads (default: number of cores, or $SALIENT_THREADS)");
  app.add_flag("--quiet", quiet, "no progress output");
  std::vector<Command> commands;
  add_core_commands(app, commands);
  add_explain_commands(app, commands);
  add_attattr_commands(app, commands);
  add_expnet_commands(app, commands);
  CLI11_PARSE(app, argc, argv);
  Progress::set_enabled(!quiet);
  set_threads(threads);
  check_blas();
  for (const auto& c : commands)
    if (c.app->parsed()) c.run();
  return 0;
}

}  // namespace salient::cli

int main(int argc, char** argv) {
  try {
    return salient::cli::main(argc, argv);
  } catch (const salient::Error& e) {
    std::fprintf(stderr, "salient: error: %s\n", salient::one_line(e.what()).c_str());
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "salient: error: %s\n", salient::one_line(e.what_without_backtrace()).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "salient: error: %s\n", salient::one_line(e.what()).c_str());
  }
  return 1;
}

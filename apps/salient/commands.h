#pragma once
// Each group of subcommands registers its options on the CLI11 app and the action to run when it
// was chosen. main.cpp parses and dispatches; errors become one line on stderr and exit code 1.
#include <functional>
#include <vector>

#include "common.h"

namespace salient::cli {

struct Command {
  CLI::App* app;
  std::function<void()> run;
};

void add_core_commands(CLI::App& app, std::vector<Command>& commands);  // train, predict, tokenize, info
void add_explain_commands(CLI::App& app, std::vector<Command>& commands);  // explain, benchmark
void add_attattr_commands(CLI::App& app, std::vector<Command>& commands);  // attattr attribute|heads|prune|tree|triggers
void add_expnet_commands(CLI::App& app, std::vector<Command>& commands);  // expnet train | explain | evaluate
void add_sst_commands(CLI::App& app, std::vector<Command>& commands);     // sst train | explain | evaluate
void add_pretrain_commands(CLI::App& app, std::vector<Command>& commands);  // corpus build, pretrain
void add_smat_commands(CLI::App& app, std::vector<Command>& commands);      // smat split | train | evaluate | study | report
void add_vit_commands(CLI::App& app, std::vector<Command>& commands);       // vit train | evaluate | explain
void add_serve_commands(CLI::App& app, std::vector<Command>& commands);     // serve

}  // namespace salient::cli

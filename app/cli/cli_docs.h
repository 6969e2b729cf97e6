// cli_docs.h: the command line's documentation made from its own definitions (the CLI11 apps of
// cli.cpp and window_options.cpp), so that it cannot drift from what the parser accepts: the man
// page's generated sections and the bash completion. The build runs
//   attention-lab --generate-man-sections      (packaging/attention-lab.1.in's @GENERATED@)
//   attention-lab --generate-bash-completion   (share/bash-completion/completions/attention-lab)
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace attnlab::cli {

/// roff for the man page: SYNOPSIS, WINDOW OPTIONS (every option of `window`) and SUBCOMMANDS
/// (each subcommand of `cli` with its description, arguments and options, as --help lists them).
std::string ManSections(const CLI::App& cli, const CLI::App& window);

/// A bash completion script for attention-lab: subcommands, each one's options, the window's
/// options; preset ids (`presets`) and file names where a scenario or preset goes.
std::string BashCompletion(const CLI::App& cli, const CLI::App& window,
                           const std::vector<std::string>& presets);

}  // namespace attnlab::cli

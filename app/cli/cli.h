// cli.h: the headless subcommands of attention-lab (dump, presets, variance, show).
// They use the core only; bad input of any kind gives exit status 2 and one line on stderr.
#pragma once

#include <string>

namespace attnlab::cli {

/// "attention-lab 0.1.0": the name and the CMake project version, for --version and Help > About.
std::string VersionLine();

/// True if argv[1] names a subcommand (so main() runs the command line, not the window).
bool IsSubcommand(const std::string& arg);

/// Runs the command line; returns the process exit status (0 ok, 2 bad input or failure).
int Run(int argc, char** argv);

}  // namespace attnlab::cli

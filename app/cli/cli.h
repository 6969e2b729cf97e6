// cli.h: the headless subcommands of attention-lab (kSubcommands).
// They use the core only; bad input of any kind gives exit status 2 and one line on stderr.
#pragma once

#include <array>
#include <string>

namespace attnlab::cli {

/// "attention-lab 0.1.0": the name and the CMake project version, for --version and Help > About.
std::string VersionLine();

/// What --version prints: VersionLine(), then "kernels: LEVEL (the best this CPU runs: BEST;
/// ...)", the instruction-set level the engine's kernels run at (ActiveCpuLevel, cpu_level.h).
std::string VersionText();

/// Every subcommand's name, in --help's order; the one list the window's usage, its "not a
/// subcommand" message and IsSubcommand read.
inline constexpr std::array<const char*, 12> kSubcommands = {
    "dump",  "presets", "variance", "show",  "match",    "code",
    "train", "export",  "decode",   "tiled", "microgpt", "circuits"};

/// The build's hidden commands (cli_docs.h): the man page's generated sections, the bash
/// completion, on standard output.
inline constexpr const char* kGenerateMan = "--generate-man-sections";
inline constexpr const char* kGenerateCompletion = "--generate-bash-completion";

/// kSubcommands joined by ", ".
std::string SubcommandList();

/// True if argv[1] names a subcommand (so main() runs the command line, not the window).
bool IsSubcommand(const std::string& arg);

/// Runs the command line; returns the process exit status (0 ok, 2 bad input or failure).
int Run(int argc, char** argv);

}  // namespace attnlab::cli

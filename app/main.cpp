// main.cpp: dispatch. With a subcommand (dump, presets, variance, show) attention-lab is a
// command-line tool built on the core; without one it is the desktop app.
#include <iostream>
#include <string>

#include "cli/cli.h"

int main(int argc, char** argv) {
  if (argc > 1 && attnlab::cli::IsSubcommand(argv[1])) return attnlab::cli::Run(argc, argv);
  // The window lands with its own issue; until then the app shows the first preset's stages.
  std::cout << "Attention Lab (command-line preview; the window is on its way)\n\n";
  char prog[] = "attention-lab", cmd[] = "show", preset[] = "raschka-journey";
  char* args[] = {prog, cmd, argc > 1 ? argv[1] : preset, nullptr};
  return attnlab::cli::Run(3, args);
}

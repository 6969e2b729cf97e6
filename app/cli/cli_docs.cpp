// cli_docs.cpp: see cli_docs.h.
#include "cli/cli_docs.h"

#include <algorithm>

namespace attnlab::cli {
namespace {

/// Text safe in roff: backslashes and hyphens escaped, no line starting with a control character.
std::string Roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

/// The value an option takes, as --help shows it ("ID", "TEXT", "INT"); "" for a flag.
std::string Metavar(const CLI::Option& o) {
  if (o.get_expected_min() == 0) return "";
  if (!o.get_option_text().empty()) return o.get_option_text();
  const std::string type = o.get_type_name();
  return type.empty() ? "VALUE" : type;
}

/// Every name of an option, short ones first ("-o", "--output").
std::vector<std::string> Names(const CLI::Option& o) {
  std::vector<std::string> names;
  for (const std::string& s : o.get_snames()) names.push_back("-" + s);
  for (const std::string& l : o.get_lnames()) names.push_back("--" + l);
  return names;
}

std::vector<const CLI::Option*> Flags(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return o->nonpositional(); });
}

std::vector<const CLI::Option*> Positionals(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return !o->nonpositional(); });
}

std::vector<const CLI::App*> Subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); });
}

/// One .TP paragraph per option: its names in bold, its value in italics, its description.
std::string OptionItems(const CLI::App& app) {
  std::string out;
  for (const CLI::Option* o : Flags(app)) {
    std::string names;
    for (const std::string& n : Names(*o)) names += (names.empty() ? "" : "\\fR, \\fB") + Roff(n);
    out += ".TP\n\\fB" + names + "\\fR";
    if (const std::string v = Metavar(*o); !v.empty()) out += " \\fI" + Roff(v) + "\\fR";
    out += "\n" + Roff(o->get_description()) + "\n";
  }
  return out;
}

}  // namespace

std::string ManSections(const CLI::App& cli, const CLI::App& window) {
  std::string out = ".SH SYNOPSIS\n.B attention\\-lab\n";
  for (const CLI::Option* p : Positionals(window)) out += ".RI [ " + Roff(p->get_name()) + " ]\n";
  out += ".RI [ options ]\n";
  for (const CLI::App* sub : Subcommands(cli)) {
    out += ".br\n.B attention\\-lab " + Roff(sub->get_name()) + "\n";
    for (const CLI::Option* p : Positionals(*sub))
      out += (p->get_required() ? ".I " : ".RI [ ") + Roff(p->get_name()) +
             (p->get_required() ? "\n" : " ]\n");
    if (!Flags(*sub).empty()) out += ".RI [ options ]\n";
  }
  out += ".br\n.B attention\\-lab \\-\\-version\n";
  out += ".SH WINDOW OPTIONS\n";
  for (const CLI::Option* p : Positionals(window))
    out += ".TP\n.I " + Roff(p->get_name()) + "\n" + Roff(p->get_description()) + "\n";
  out += OptionItems(window);
  out += ".SH SUBCOMMANDS\n";
  for (const CLI::App* sub : Subcommands(cli)) {
    out += ".SS " + Roff(sub->get_name()) + "\n" + Roff(sub->get_description()) + "\n";
    for (const CLI::Option* p : Positionals(*sub))
      out += ".TP\n.I " + Roff(p->get_name()) + "\n" + Roff(p->get_description()) + "\n";
    out += OptionItems(*sub);
    if (!sub->get_footer().empty()) out += ".PP\n.nf\n" + Roff(sub->get_footer()) + "\n.fi\n";
  }
  return out;
}

std::string BashCompletion(const CLI::App& cli, const CLI::App& window,
                           const std::vector<std::string>& presets) {
  auto words = [](const CLI::App& app) {
    std::string w;
    for (const CLI::Option* o : Flags(app))
      for (const std::string& n : Names(*o)) w += (w.empty() ? "" : " ") + n;
    return w;
  };
  // Options that take a value, so the word after them is that value (a file or a preset id).
  auto valued = [](const CLI::App& app) {
    std::string w;
    for (const CLI::Option* o : Flags(app))
      if (o->get_expected_min() != 0)
        for (const std::string& n : Names(*o)) w += (w.empty() ? "" : "|") + n;
    return w;
  };
  std::string subs, preset_ids;
  for (const CLI::App* sub : Subcommands(cli)) subs += (subs.empty() ? "" : " ") + sub->get_name();
  for (const std::string& id : presets) preset_ids += (preset_ids.empty() ? "" : " ") + id;
  std::string out =
      "# bash completion for attention-lab. Generated from its command line's definitions by\n"
      "# `attention-lab --generate-bash-completion` at build time (app/cli/cli_docs.cpp).\n"
      "_attention_lab() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} sub= i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${COMP_WORDS[i]} in " +
      [&] {
        std::string alt = subs;
        std::replace(alt.begin(), alt.end(), ' ', '|');
        return alt;
      }() +
      ") sub=${COMP_WORDS[i]}; break ;; esac\n"
      "  done\n"
      "  local opts values presets='" +
      preset_ids +
      "'\n"
      "  case $sub in\n";
  for (const CLI::App* sub : Subcommands(cli))
    out += "    " + sub->get_name() + ") opts='" + words(*sub) + "'; values='" + valued(*sub) +
           "' ;;\n";
  out += "    *) opts='" + subs + " " + words(window) + "'; values='" + valued(window) + "' ;;\n";
  out +=
      "  esac\n"
      "  if [[ $prev == --preset ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$presets\" -- \"$cur\")); return\n"
      "  fi\n"
      "  if [[ \"|$values|\" == *\"|$prev|\"* ]]; then\n"
      "    COMPREPLY=($(compgen -f -- \"$cur\")); return\n"
      "  fi\n"
      "  if [[ $cur == -* || ( -z $sub && $COMP_CWORD == 1 && $cur != */* ) ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
      "  fi\n"
      "  if [[ $cur != -* ]]; then\n"
      "    [[ -n $sub ]] && COMPREPLY+=($(compgen -W \"$presets\" -- \"$cur\"))\n"
      "    COMPREPLY+=($(compgen -f -- \"$cur\"))\n"
      "  fi\n"
      "}\n"
      "complete -o filenames -F _attention_lab attention-lab\n";
  return out;
}

}  // namespace attnlab::cli

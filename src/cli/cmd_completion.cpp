// Shell completions and man pages generated from the command line's own definition (the CLI::App
// tree command_line.cpp builds), so they name exactly the commands and options that parse:
//   gpuclk completion bash|zsh   the completion script for that shell, on stdout
//   gpuclk manpages DIR          gpuclk.1 and gpuclk-COMMAND.1 for every command, into DIR
// Both are hidden from --help: the build runs them (cmake/Install.cmake) and installs what they
// write, so a new option reaches the man pages and completions without anyone editing them.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/build_config.h"  // GPUCLK_VERSION
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "util/error.h"
#include "util/text.h"

namespace gpuclk::cli {
namespace {

// ---------------------------------------------------------------------------------------------
// The command tree, read from CLI11

struct OptionSpec {
  std::vector<std::string> names;  // "-i", "--id"
  bool takes_value = false;
  bool optional_value = false;  // --sim: bare, or --sim=SCENARIO (normalize_sim_flag)
  std::string type;             // TEXT, INT, ... (the help's label)
  std::string description;
};

struct PositionalSpec {
  std::string name;
  std::string description;
  bool required = false;
  bool repeated = false;
};

struct CommandSpec {
  std::vector<std::string> path;  // {} for gpuclk itself, {"bench", "gemm"}
  std::string description;
  std::string footer;  // without the global options' list (make_command_line)
  std::vector<OptionSpec> options;
  std::vector<PositionalSpec> positionals;
  std::vector<CommandSpec> commands;

  std::string name() const { return path.empty() ? "gpuclk" : path.back(); }
  std::string joined(const std::string& separator) const {
    std::string out;
    for (const auto& p : path) out += (out.empty() ? "" : separator) + p;
    return out;
  }
};

// Options that take a value CLI11 cannot tell is optional: command_line.cpp turns a bare --sim
// into --sim=default, so `--sim status` names no scenario.
bool value_is_optional(const std::vector<std::string>& names) {
  for (const auto& n : names) {
    if (n == "--sim") return true;
  }
  return false;
}

CommandSpec read_command(const CLI::App& app, std::vector<std::string> path) {
  CommandSpec c;
  c.path = std::move(path);
  c.description = app.get_description();
  c.footer = app.get_footer();
  for (const auto* opt : app.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden
    if (!opt->nonpositional()) {
      c.positionals.push_back({text::upper(opt->get_name(true, false)), opt->get_description(),
                               opt->get_required(),
                               opt->get_expected_max() >= CLI::detail::expected_max_vector_size});
      continue;
    }
    OptionSpec o;
    for (const auto& s : opt->get_snames()) o.names.push_back("-" + s);
    for (const auto& l : opt->get_lnames()) o.names.push_back("--" + l);
    // As `gpuclk --help` tells them apart (command_line.cpp): a flag has no type, or takes none.
    o.takes_value = !opt->get_type_name().empty() && opt->get_expected_max() != 0;
    o.optional_value = o.takes_value && value_is_optional(o.names);
    o.type = o.takes_value ? opt->get_type_name() : "";
    o.description = opt->get_description();
    c.options.push_back(std::move(o));
  }
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;  // hidden: completion, manpages
    auto below = c.path;
    below.push_back(sub->get_name());
    c.commands.push_back(read_command(*sub, std::move(below)));
  }
  return c;
}

// Every command's path, gpuclk itself first, parents before their subcommands.
void walk(const CommandSpec& c, std::vector<const CommandSpec*>& out) {
  out.push_back(&c);
  for (const auto& sub : c.commands) walk(sub, out);
}

std::string words_of(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// A global option (gpuclk's own, which every command takes too), not gpuclk's --help/--version.
bool is_global(const OptionSpec& o) {
  for (const auto& n : o.names) {
    if (n == "--version" || n == "--help") return false;
  }
  return true;
}

// The lines of a text, empty ones included.
std::vector<std::string> lines_of(const std::string& textblock) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= textblock.size()) {
    const auto end = textblock.find('\n', start);
    lines.push_back(textblock.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// bash

// A word in single quotes for sh.
std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string bash_script(const CommandSpec& root) {
  std::vector<const CommandSpec*> all;
  walk(root, all);
  std::vector<std::string> top;
  for (const auto& c : root.commands) top.push_back(c.name());

  std::string subcommands, options, value_options, positionals;
  for (const auto* c : all) {
    const std::string key = sh_quote(c->joined(" "));
    std::vector<std::string> subs, opts, values;
    for (const auto& s : c->commands) subs.push_back(s.name());
    if (c == &root) subs.push_back("help");
    const auto add = [&](const OptionSpec& o) {
      opts.insert(opts.end(), o.names.begin(), o.names.end());
      if (o.takes_value && !o.optional_value)
        values.insert(values.end(), o.names.begin(), o.names.end());
    };
    for (const auto& o : c->options) add(o);
    // The global options work after the command too (CLI11's fallthrough).
    if (c != &root) {
      for (const auto& o : root.options) {
        if (is_global(o)) add(o);
      }
    }
    if (!subs.empty())
      subcommands += fmt::format("    {}) echo {} ;;\n", key, sh_quote(words_of(subs)));
    options += fmt::format("    {}) echo {} ;;\n", key, sh_quote(words_of(opts)));
    if (!values.empty())
      value_options += fmt::format("    {}) echo {} ;;\n", key, sh_quote(words_of(values)));
    if (!c->positionals.empty()) positionals += fmt::format("    {}) return 0 ;;\n", key);
  }
  subcommands += fmt::format("    help) echo {} ;;\n", sh_quote(words_of(top)));

  return fmt::format(
      R"BASH(# bash completion for gpuclk. Generated by `gpuclk completion bash` from gpuclk's own command
# line (src/cli/cmd_completion.cpp): regenerate it rather than edit it.

# The subcommands of a command ('' is gpuclk itself; 'bench gemm' a subcommand's).
_gpuclk_subcommands() {{
  case $1 in
{}  esac
}}

# Every option a command takes, the global options included.
_gpuclk_options() {{
  case $1 in
{}  esac
}}

# The options of a command that take a value (the next word, or after '=').
_gpuclk_value_options() {{
  case $1 in
{}  esac
}}

# Whether a command takes arguments of its own (a profile, a report, a command to run).
_gpuclk_takes_arguments() {{
  case $1 in
{}  esac
  return 1
}}

_gpuclk() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD - 1]}}
  local command='' word next i skip=0
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${{COMP_WORDS[i]}}
    if ((skip > 0)); then
      ((skip--))
      continue
    fi
    case $word in
      --) return 0 ;; # the rest is a command's (stat -- CMD): bash completes files
      =) skip=1 ;;    # --option=value split at '=': the value follows
      -*)
        next=${{COMP_WORDS[i + 1]}}
        if [[ $word != *=* && " $(_gpuclk_value_options "$command") " == *" $word "* ]]; then
          if [[ $next == = ]]; then skip=2; else skip=1; fi
        fi
        ;;
      *)
        if [[ " $(_gpuclk_subcommands "$command") " == *" $word "* ]]; then
          command=${{command:+$command }}$word
        fi
        ;;
    esac
  done
  # A value: files (complete -o default), or whatever the user types.
  if [[ $cur == = || $prev == = ]]; then
    return 0
  fi
  if [[ " $(_gpuclk_value_options "$command") " == *" $prev "* ]]; then
    return 0
  fi
  local subs
  subs=$(_gpuclk_subcommands "$command")
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_gpuclk_options "$command")" -- "$cur")
  elif [[ -n $subs ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
  elif ! _gpuclk_takes_arguments "$command"; then
    mapfile -t COMPREPLY < <(compgen -W "$(_gpuclk_options "$command")" -- "$cur")
  fi
  return 0
}}
complete -o default -F _gpuclk gpuclk
)BASH",
      subcommands, options, value_options, positionals);
}

// ---------------------------------------------------------------------------------------------
// zsh

// Text inside an _arguments [description] or a _describe item, itself in single quotes.
std::string zsh_text(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\'') {
      out += "'\\''";
    } else if (ch == '[' || ch == ']' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out;
}

// The _arguments specs of one option: one per name.
std::vector<std::string> zsh_option_specs(const OptionSpec& o) {
  std::vector<std::string> specs;
  const std::string desc = "[" + zsh_text(o.description) + "]";
  for (const auto& n : o.names) {
    const bool is_long = n.rfind("--", 0) == 0;
    const std::string label = o.type.empty() ? "value" : text::lower(o.type);
    if (!o.takes_value) {
      specs.push_back(fmt::format("'{}{}'", n, desc));
    } else if (o.optional_value) {
      specs.push_back(fmt::format("'{}=-{}::{}:_files'", n, desc, label));
    } else {
      specs.push_back(fmt::format("'{}{}{}:{}:_files'", n, is_long ? "=" : "+", desc, label));
    }
  }
  return specs;
}

std::string zsh_function_name(const CommandSpec& c) {
  std::string name = "_gpuclk";
  for (const auto& p : c.path) name += "__" + p;
  for (auto& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name;
}

void zsh_functions(const CommandSpec& c, std::string& out) {
  std::string specs;
  for (const auto& o : c.options) {
    for (const auto& s : zsh_option_specs(o)) specs += "    " + s + " \\\n";
  }
  out += zsh_function_name(c) + "() {\n";
  if (c.commands.empty()) {
    out += "  _arguments -s -S $_gpuclk_globals \\\n" + specs;
    out += c.positionals.empty() ? "    && return 0\n" : "    '*:argument:_files' && return 0\n";
    out += "  return 1\n}\n\n";
    return;
  }
  out += "  local curcontext=$curcontext state state_descr line ret=1\n";
  out += "  typeset -A opt_args\n";
  out += "  _arguments -C -s -S $_gpuclk_globals \\\n" + specs;
  out += "    '1:command:->command' '*::argument:->argument' && ret=0\n";
  out += "  case $state in\n    command)\n      local -a commands=(\n";
  for (const auto& s : c.commands) {
    out += "        '" + zsh_text(s.name()) + ":" + zsh_text(s.description) + "'\n";
  }
  if (c.path.empty()) out += "        'help:the help of gpuclk or of a command'\n";
  const std::string what = c.path.empty() ? "gpuclk" : "gpuclk " + c.joined(" ");
  out += "      )\n      _describe -t commands '" + zsh_text(what) +
         " command' commands && ret=0\n      ;;\n";
  out += "    argument)\n      case $words[1] in\n";
  for (const auto& s : c.commands) {
    out += "        " + s.name() + ") " + zsh_function_name(s) + " && ret=0 ;;\n";
  }
  if (c.path.empty()) {
    out += "        help) _arguments '1:command:(";
    for (const auto& s : c.commands) out += " " + s.name();
    out += ")' && ret=0 ;;\n";
  }
  out += "      esac\n      ;;\n  esac\n  return ret\n}\n\n";
  for (const auto& s : c.commands) zsh_functions(s, out);
}

std::string zsh_script(const CommandSpec& root) {
  std::string out =
      "#compdef gpuclk\n"
      "# zsh completion for gpuclk. Generated by `gpuclk completion zsh` from gpuclk's own "
      "command\n# line (src/cli/cmd_completion.cpp): regenerate it rather than edit it.\n\n"
      "# The global options: before or after the command.\n"
      "_gpuclk_globals=(\n";
  for (const auto& o : root.options) {
    if (!is_global(o)) continue;
    for (const auto& s : zsh_option_specs(o)) out += "  " + s + "\n";
  }
  out += ")\n\n";
  CommandSpec top = root;  // gpuclk's own --help and --version, then the commands
  top.options.clear();
  for (const auto& o : root.options) {
    if (!is_global(o)) top.options.push_back(o);
  }
  zsh_functions(top, out);
  out +=
      "if [[ $funcstack[1] == _gpuclk ]]; then\n"
      "  _gpuclk \"$@\"\n"
      "else\n"
      "  compdef _gpuclk gpuclk\n"
      "fi\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
// man pages (roff, man(7) macros)

// Text for a roff text line: backslashes escaped, a leading '.' or '\'' kept literal.
std::string roff(const std::string& s) {
  std::string out;
  for (char ch : s) out += ch == '\\' ? std::string("\\e") : std::string(1, ch);
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

// A name to be typed (command, option): hyphens as \- so it copies as typed.
std::string roff_name(const std::string& s) {
  std::string out;
  for (char ch : s) out += ch == '-' ? std::string("\\-") : std::string(1, ch);
  return out;
}

std::string roff_option(const OptionSpec& o) {
  std::string names;
  for (const auto& n : o.names)
    names += (names.empty() ? "" : ", ") + ("\\fB" + roff_name(n) + "\\fR");
  std::string out = ".TP\n" + names;
  if (o.takes_value) {
    const std::string type = o.type.empty() ? "VALUE" : o.type;
    out += o.optional_value ? "[=\\fI" + roff(type) + "\\fR]" : " \\fI" + roff(type) + "\\fR";
  }
  return out + "\n" + roff(o.description) + "\n";
}

// A footer: paragraphs at blank lines; indented lines (examples) kept as they are.
std::string roff_paragraphs(const std::string& textblock) {
  std::string out;
  bool verbatim = false;
  bool paragraph_open = false;
  for (const auto& line : lines_of(textblock)) {
    if (text::trim(line).empty()) {
      if (verbatim) out += ".fi\n", verbatim = false;
      paragraph_open = false;
      continue;
    }
    const bool indented = line[0] == ' ' || line[0] == '\t';
    if (!paragraph_open) out += ".PP\n", paragraph_open = true;
    if (indented && !verbatim) out += ".nf\n", verbatim = true;
    if (!indented && verbatim) out += ".fi\n", verbatim = false;
    out += roff(line) + "\n";
  }
  if (verbatim) out += ".fi\n";
  return out;
}

std::string roff_header(const std::string& title, const std::string& name,
                        const std::string& summary) {
  return fmt::format(
      ".\\\" Generated by `gpuclk manpages` from gpuclk's own command line\n"
      ".\\\" (src/cli/cmd_completion.cpp): regenerate it rather than edit it.\n"
      ".TH {} 1 \"\" \"gpuclk {}\" \"User Commands\"\n"
      ".nh\n"  // command names must not be hyphenated (gpu-clk-query)
      ".ad l\n"
      ".SH NAME\n{} \\- {}\n",
      roff_name(text::upper(title)), GPUCLK_VERSION, roff_name(name), roff(summary));
}

// The first clause of a description, for NAME (whatis wants one short line): up to the first
// ": " outside parentheses, when that leaves a phrase.
std::string summary_of(const std::string& description) {
  int depth = 0;
  for (std::size_t i = 0; i + 1 < description.size(); ++i) {
    const char ch = description[i];
    if (ch == '(') ++depth;
    if (ch == ')' && depth > 0) --depth;
    if (ch == ':' && description[i + 1] == ' ' && depth == 0 && i > 20)
      return description.substr(0, i);
  }
  return description;
}

std::string synopsis(const CommandSpec& c) {
  std::string out = ".SH SYNOPSIS\n.B gpuclk\n[\\fIglobal options\\fR]\n";
  if (c.path.empty()) return out + "[\\fIcommand\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]]\n";
  out += ".B " + roff_name(c.joined(" ")) + "\n";
  if (!c.commands.empty()) out += "\\fIcommand\\fR\n";
  out += "[\\fIoptions\\fR]\n";
  for (const auto& p : c.positionals) {
    const std::string word = "\\fI" + roff(p.name) + "\\fR" + (p.repeated ? "..." : "");
    out += (p.required ? word : "[" + word + "]") + "\n";
  }
  return out;
}

std::string options_section(const std::string& heading, const CommandSpec& c) {
  std::string out;
  for (const auto& o : c.options) out += roff_option(o);
  for (const auto& p : c.positionals) {
    out += ".TP\n\\fI" + roff(p.name) + "\\fR" + (p.repeated ? "..." : "") + "\n" +
           roff(p.description.empty() ? "argument" : p.description) + "\n";
  }
  return out.empty() ? out : heading + out;
}

std::string globals_section(const CommandSpec& root) {
  std::string out = ".SH GLOBAL OPTIONS\nBefore or after the command.\n";
  for (const auto& o : root.options) {
    if (is_global(o)) out += roff_option(o);
  }
  return out;
}

// README's and util/error.h's exit codes.
constexpr const char* kExitStatus =
    ".SH EXIT STATUS\n"
    "As nvidia\\-smi's:\n"
    ".TP\n0\nok\n.TP\n2\nbad argument\n.TP\n3\nnot supported\n"
    ".TP\n4\nno permission, or read\\-only mode\n.TP\n6\nGPU not found\n"
    ".TP\n9\ndriver not loaded\n"
    ".TP\n10, 11\nwarnings, critical findings (doctor, fleet)\n"
    ".TP\n12\nNVML not found\n.TP\n15\nGPU lost\n"
    ".TP\n16\npartial: a change or restore left GPUs in different states (the message says which)\n"
    ".TP\n255\nother\n"
    ".PP\n\\fBgpuclk stat \\-\\- \\fICMD\\fR exits with the command's code (128 + N when signal N "
    "ended it).\n";

std::string see_also(const CommandSpec& root, const std::string& except) {
  std::string out = ".SH SEE ALSO\n";
  std::string refs;
  if (except != "gpuclk") refs = "\\fBgpuclk\\fR(1)";
  for (const auto& c : root.commands) {
    const auto page = "gpuclk-" + c.name();
    if (page == except) continue;
    refs += (refs.empty() ? "" : ",\n") + ("\\fB" + roff_name(page) + "\\fR(1)");
  }
  return out + refs + "\n.PP\nThe documentation in /usr/share/doc/gpuclk (README.md, docs/).\n";
}

std::string command_page(const CommandSpec& root, const CommandSpec& c) {
  const std::string page = "gpuclk-" + c.name();
  std::string out = roff_header(page, page, summary_of(c.description));
  out += synopsis(c);
  out += ".SH DESCRIPTION\n" + roff(c.description) + "\n";
  out += roff_paragraphs(c.footer);
  out += options_section(".SH OPTIONS\n", c);
  if (!c.commands.empty()) {
    out += ".SH COMMANDS\n";
    for (const auto& s : c.commands) {
      out += ".SS \"gpuclk " + roff_name(s.joined(" ")) + "\"\n" + roff(s.description) + "\n";
      if (s.footer != c.footer) out += roff_paragraphs(s.footer);  // CLI11 hands a footer down
      std::string options;
      for (const auto& o : s.options) options += roff_option(o);
      for (const auto& p : s.positionals)
        options += ".TP\n\\fI" + roff(p.name) + "\\fR\n" + roff(p.description) + "\n";
      out += options;
      for (const auto& below : s.commands) {
        out +=
            ".PP\n\\fB" + roff_name(below.joined(" ")) + "\\fR: " + roff(below.description) + "\n";
      }
    }
  }
  out += globals_section(root);
  out += ".SH EXIT STATUS\nSee \\fBgpuclk\\fR(1).\n";
  out += see_also(root, page);
  return out;
}

std::string main_page(const CommandSpec& root) {
  std::string out = roff_header("gpuclk", "gpuclk", root.description.substr(8));  // "gpuclk: "
  out += synopsis(root);
  out += ".SH DESCRIPTION\n" + roff(root.description) +
         ". Without a command, \\fBgpuclk\\fR runs \\fBstatus\\fR. \\fBgpuclk help\\fR "
         "\\fIcommand\\fR shows a command's help; each command has its page, "
         "\\fBgpuclk\\-\\fIcommand\\fR(1).\n";
  out += ".SH COMMANDS\n";
  for (const auto& c : root.commands) {
    out += ".TP\n\\fB" + roff_name(c.name()) + "\\fR\n" + roff(c.description) + "\n";
  }
  out += globals_section(root);
  out += kExitStatus;
  out += see_also(root, "gpuclk");
  return out;
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) {
    throw Error(ExitCode::other,
                fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)),
                "give a folder you may write to");
  }
}

int run_manpages(Context& ctx, const std::string& dir) {
  ctx.effect("write " + dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw Error(ExitCode::other, fmt::format("cannot create the folder {}", dir),
                ec ? ec.message() : "a file of that name is in the way");
  }
  const auto app = make_command_line(ctx);
  const auto root = read_command(*app, {});
  write_file(std::filesystem::path(dir) / "gpuclk.1", main_page(root));
  for (const auto& c : root.commands) {
    write_file(std::filesystem::path(dir) / ("gpuclk-" + c.name() + ".1"), command_page(root, c));
  }
  std::cout << fmt::format("wrote {} man pages to {}\n", root.commands.size() + 1, dir);
  return 0;
}

}  // namespace

void add_completion_command(CLI::App& app, Context& ctx) {
  auto shell = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("completion", "shell completion script for bash or zsh");
  sub->group("");  // hidden: the build installs its output
  sub->add_option("shell", *shell, "bash | zsh")->required();
  sub->callback([&ctx, shell] {
    ctx.run = [&ctx, shell] {
      if (*shell != "bash" && *shell != "zsh") {
        throw bad_argument(fmt::format("no completion for the shell '{}'", shell->substr(0, 40)),
                           "give bash or zsh");
      }
      const auto app_tree = make_command_line(ctx);
      const auto root = read_command(*app_tree, {});
      std::cout << (*shell == "bash" ? bash_script(root) : zsh_script(root));
      return 0;
    };
  });
}

void add_manpages_command(CLI::App& app, Context& ctx) {
  auto dir = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("manpages", "write gpuclk's man pages into a folder");
  sub->group("");  // hidden: the build installs its output
  sub->add_option("dir", *dir, "the folder (created when missing)")->required();
  sub->callback([&ctx, dir] { ctx.run = [&ctx, dir] { return run_manpages(ctx, *dir); }; });
}

}  // namespace gpuclk::cli

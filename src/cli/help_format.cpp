// What `netspec --help` and every command's help show, and what an unknown flag is answered with
// (see help_format.h).
#include "cli/help_format.h"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/nearest_name.h"

namespace netspec::cli {
namespace {

// The value a flag takes, by its long name, where the option holds plain text (the command
// checks the value itself): what `--epochs INT` tells a reader that `--epochs TEXT` does not.
const std::map<std::string, std::string>& flag_types() {
  static const std::map<std::string, std::string> t = {
      {"epochs", "INT"},         {"batch", "INT"},          {"seed", "INT"},
      {"limit", "INT"},          {"classes", "INT"},        {"top", "INT"},
      {"lr", "FLOAT"},           {"val-split", "FLOAT"},    {"data", "PATH"},
      {"config", "PATH"},        {"checkpoint", "PATH"},    {"init-from", "PATH"},
      {"pjrt-plugin", "PATH"},   {"input", "PATH"},         {"npy", "PATH"},
      {"output", "PATH"},        {"out", "PATH"},           {"run-dir", "DIR"},
      {"output-dir", "DIR"},     {"compile-cache", "DIR"},  {"png", "DIR"},
      {"masks", "DIR"},          {"judge", "RUN_DIR"},      {"net", "NET"},
      {"dataset", "NAME"},       {"optimizer", "NAME"},     {"schedule", "NAME"},
      {"backend", "NAME"},       {"module", "NAME"},        {"dtype", "NAME"},
      {"loss", "NAME"},          {"split", "NAME"},         {"task", "NAME"},
      {"format", "NAME"},        {"probe", "NAME"},         {"entry", "NAME"},
      {"set", "FIELD=VALUE"},    {"freeze", "PREFIX"},      {"wrt", "INDEX"},
      {"master-addr", "HOST"},   {"monitor", "METRIC"},     {"mode", "NAME"},
      {"save-top-k", "INT"},     {"early-stop", "INT"},     {"min-delta", "FLOAT"},
      {"data-memory", "MB"},     {"data-threads", "INT"},   {"iface", "NAME"},
      {"token-file", "PATH"},    {"steps-per-call", "INT"},  {"checkpoint-every-steps", "INT"}};
  return t;
}

void label_types(CLI::App* app) {
  const bool replicas = app->get_option_no_throw("--replicas") != nullptr;
  for (CLI::Option* opt : app->get_options()) {
    if (opt->get_lnames().empty()) continue;
    const std::string& name = opt->get_lnames().front();
    if (opt->get_type_name() == "TEXT")
      if (auto it = flag_types().find(name); it != flag_types().end())
        opt->type_name(it->second);
    // --pjrt-devices is shared (add_backend_options); only commands with --replicas use more
    // than one device.
    if (name == "pjrt-devices" && replicas)
      opt->description("xla on the CPU plugin: in-process devices for --replicas (default 1)");
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) label_types(sub);
}

struct CommandGroup {
  const char* title;
  std::vector<std::string> commands;
  const char* example;
};

const std::vector<CommandGroup>& command_groups() {
  static const std::vector<CommandGroup> g = {
      {"Train & use",
       {"train", "eval", "predict", "cam", "report", "sample", "generate", "launch"},
       "netspec train mlp --dataset fashion-mnist --epochs 2"},
      {"Inspect & emit",
       {"list", "summary", "emit", "compile", "gradcheck"},
       "netspec emit resnet18 --module train_step -o resnet18.mlir"},
      {"Engines", {"run", "bench"}, "netspec bench resnet18 --backend cpu"},
      {"Data", {"data", "convert"}, "netspec data synth --task seg --format pets --n 20 -o pets"},
  };
  return g;
}

// The top-level help lists commands by group, each with its first sentence and one example;
// a command no group names is listed under "Other" (never hidden).
class GroupedFormatter : public CLI::Formatter {
 public:
  std::string make_subcommands(const CLI::App* app, CLI::AppFormatMode mode) const override {
    if (app->get_parent() != nullptr || mode == CLI::AppFormatMode::All)
      return CLI::Formatter::make_subcommands(app, mode);
    std::set<std::string> listed;
    std::string out;
    auto line = [&](const CLI::App* c) {
      std::string d = c->get_description();
      d = d.substr(0, d.find('\n'));
      if (auto p = d.find(". "); p != std::string::npos) d = d.substr(0, p);
      if (!d.empty() && d.back() == '.') d.pop_back();
      std::stringstream s;
      CLI::detail::format_help(s, c->get_name(), d, get_column_width());
      listed.insert(c->get_name());
      return s.str();
    };
    for (const CommandGroup& g : command_groups()) {
      out += fmt::format("\n{}:\n", g.title);
      for (const auto& name : g.commands)
        if (const CLI::App* c = find(app, name)) out += line(c);
      out += fmt::format("  e.g. {}\n", g.example);
    }
    std::string other;
    for (const CLI::App* c : app->get_subcommands({}))
      if (!listed.count(c->get_name())) other += line(c);
    if (!other.empty()) out += "\nOther:\n" + other;
    return out;
  }

 private:
  static const CLI::App* find(const CLI::App* app, const std::string& name) {
    for (const CLI::App* c : app->get_subcommands({}))
      if (c->get_name() == name) return c;
    return nullptr;
  }
};

bool is_number(const std::string& s) {
  double v;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

void finish_help(CLI::App& app) {
  label_types(&app);
  app.formatter(std::make_shared<GroupedFormatter>());
}

void explain_unknown_flags(CLI::App& app, int argc, char** argv) {
  // The command the flags belong to: the deepest subcommand named on the line.
  CLI::App* cmd = &app;
  std::string path = "netspec";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    if (a.empty() || a[0] == '-') continue;
    for (CLI::App* sub : cmd->get_subcommands([](CLI::App*) { return true; }))
      if (sub->check_name(a)) {
        cmd = sub;
        path += " " + a;
        break;
      }
  }
  std::vector<std::string> names;
  for (const CLI::Option* opt : cmd->get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") break;
    if (a.size() < 2 || a[0] != '-' || is_number(a)) continue;
    a = a.substr(0, a.find('='));
    bool known = false;
    for (const auto& n : names) known |= n == a;
    // Single-dash groups (-abc) are CLI11's to judge.
    if (known || (a[1] != '-' && a.size() > 2)) continue;
    fail(path, "unknown flag {}{} ({} --help lists the flags)", a, did_you_mean(a, names), path);
  }
}

}  // namespace netspec::cli

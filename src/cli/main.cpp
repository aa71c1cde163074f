// netspec command line: subcommands are registered from cmd_*.cpp (see cli/commands.h).
#include <cstdio>

int main() {
  std::puts("netspec: under construction");
  return 0;
}

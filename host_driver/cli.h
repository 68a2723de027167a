// The n3 command line: main() only dispatches; each subcommand lives in its
// own cmd_<name>.cc, parses with Boost.Program_options and calls into the
// parts. Contract: docs/host_driver.md, "The command line" (results on
// stdout, progress on stderr, exit 2 with a one-line reason on bad input).
#pragma once
#include <string>
#include <vector>

namespace n3::cli {

using Args = std::vector<std::string>;  // arguments after the subcommand name

int cmd_golden(const Args& a);
int cmd_sim(const Args& a);
int cmd_diff(const Args& a);
int cmd_run(const Args& a);
int cmd_synth(const Args& a);
int cmd_convert(const Args& a);
int cmd_compile(const Args& a);
int cmd_asm(const Args& a);
int cmd_dis(const Args& a);
int cmd_estimate(const Args& a);
int cmd_cosim(const Args& a);

// Exit statuses shared by all commands.
constexpr int kExitOk = 0;
constexpr int kExitDiffer = 1;  // n3 diff: tensors differ
constexpr int kExitBadInput = 2;

}  // namespace n3::cli

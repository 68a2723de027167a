// Helpers every subcommand uses to parse options the same way.
#pragma once
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "host_driver/cli.h"

namespace n3::cli {

namespace po = boost::program_options;

// Parses `a` against `desc` (positional names in `pos`); returns false after
// printing help when --help was given. Throws n3::Error on unknown or
// malformed options, naming the command.
bool parse_args(const std::string& cmd, const Args& a, po::options_description& desc,
                const po::positional_options_description& pos, po::variables_map& vm,
                const std::string& usage);

// A whole count from the command line: decimal digits only (no sign, no
// exponent, no trailing text) within [lo, hi]; otherwise throws n3::Error
// naming `what` and the range, echoing at most the first 40 characters.
uint64_t parse_count(const std::string& text, const std::string& what, uint64_t lo, uint64_t hi);

// `s` cut at every `sep`; a trailing separator gives a last empty item and
// "" gives none (the sweep's value lists and the CSV readers rely on both).
std::vector<std::string> split(const std::string& s, char sep);

// Checks, before any compute, that the file an option names can be written
// (its folder exists and is writable, it is not a directory); an empty path
// is an option not given. Throws n3::Error naming the option and the path.
void check_output(const std::string& path, const std::string& option);

// Refuses, before anything runs or is written, a run whose positions pass
// the model's max_position_embeddings (`max_positions`): `prompt` ids from
// `ids_what` (the option and its file, e.g. "--ids P.npy") plus `more`
// positions after them, described by `more_what` (e.g. "--max-new 8",
// "--feed F.npy's 3 ids"; unused when `more` is 0). One line naming the
// file, the lengths and the limit.
void check_positions_fit(const std::string& ids_what, size_t prompt, size_t more, const std::string& more_what,
                         int64_t max_positions);

// Files and directories a command has written: removed again unless the
// command reaches commit(), so a failure part-way leaves no partial output.
// Inside n3's run journal (base/atomic_file.h: main() opens it, every
// committed file joins it) each path given here joins it too, so that an
// error or a signal after this guard's commit() still removes it: commit()
// here only means "this step is whole", the run commits when the command
// returns. Outside a run (unit tests) the guard works alone, as before.
class OutputGuard {
 public:
  OutputGuard() = default;
  OutputGuard(const OutputGuard&) = delete;
  OutputGuard& operator=(const OutputGuard&) = delete;
  // A path this command will write. One that exists now stays the user's
  // (kept on failure) until the run replaces it (AtomicFile::commit journals
  // it then).
  void add(const std::string& path);
  // prepare_output_dir(dir, force); the folders it created are removed again
  // on failure (the destructor) and on SIGINT / SIGTERM / SIGHUP
  // (watch_created_dir) until commit(). A folder that existed is kept.
  void prepare_dir(const std::string& dir, bool force);
  void commit();
  ~OutputGuard();

 private:
  std::vector<std::string> paths_;
  std::vector<int> watched_;  // watch_created_dir slots
};

}  // namespace n3::cli

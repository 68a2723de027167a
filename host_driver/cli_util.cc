#include <filesystem>
#include "host_driver/cli_util.h"

#include <iostream>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/file_util.h"

namespace n3::cli {

bool parse_args(const std::string& cmd, const Args& a, po::options_description& desc,
                const po::positional_options_description& pos, po::variables_map& vm,
                const std::string& usage) {
  desc.add_options()("help,h", "show this help");
  try {
    const po::parsed_options parsed = po::command_line_parser(a).options(desc).positional(pos).run();
    // An option given an empty value ("--dump ''", a shell variable that
    // was never set) is refused: read as "not given" it would skip an output
    // the user asked for, or fail only after the compute. (A flag's implicit
    // value is not in the parsed tokens, so flags are not affected.)
    for (const po::option& o : parsed.options)
      for (const std::string& v : o.value)
        require(!v.empty(), "n3 " + cmd + ": " + (o.position_key >= 0 ? "an argument" : "--" + o.string_key) +
                                ": empty value");
    po::store(parsed, vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n" << desc << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw Error("n3 " + cmd + ": " + e.what());
  }
  return true;
}

OutputGuard::~OutputGuard() {
  std::error_code ec;
  for (const std::string& p : paths_) std::filesystem::remove_all(p, ec);
  for (int slot : watched_) unwatch_created_dir(slot);
}

void OutputGuard::add(const std::string& path) {
  // A file that exists already is the user's until this run replaces it:
  // removing it on a failure before that would lose it. Replacing goes
  // through AtomicFile::commit (or Waveform::open), which journals the path
  // then; only a path this run will create is the run's from now on.
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return;
  paths_.push_back(path);
  track_output(path);
}

void OutputGuard::prepare_dir(const std::string& dir, bool force) {
  const std::string created = prepare_output_dir_created(dir, force);
  if (created.empty()) return;
  paths_.push_back(created);
  track_output(created);
  watched_.push_back(watch_created_dir(created));
}

void OutputGuard::commit() {
  paths_.clear();
  for (int slot : watched_) unwatch_created_dir(slot);
  watched_.clear();
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) v.push_back(cur);
  if (!s.empty() && s.back() == sep) v.push_back("");
  return v;
}

void check_output(const std::string& path, const std::string& option) {
  if (!path.empty()) check_output_path(path, option);
}

void check_positions_fit(const std::string& ids_what, size_t prompt, size_t more, const std::string& more_what,
                         int64_t max_positions) {
  // size_t sums of two vector lengths cannot wrap; compared unsigned.
  const size_t total = prompt + more;
  if (max_positions > 0 && total <= static_cast<uint64_t>(max_positions)) return;
  std::string m = ids_what + ": " + std::to_string(prompt) + " prompt ids";
  if (more > 0) m += " + " + more_what + " = " + std::to_string(total) + " positions";
  throw Error(m + " pass the model's max_position_embeddings = " + std::to_string(max_positions));
}

uint64_t parse_count(const std::string& text, const std::string& what, uint64_t lo, uint64_t hi) {
  const std::string shown = text.size() > 40 ? text.substr(0, 40) + "..." : text;
  const std::string range = "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  require(!text.empty() && text.find_first_not_of("0123456789") == std::string::npos,
          what + ": '" + shown + "' is not " + range);
  uint64_t v = 0;
  for (char c : text)
    require(!__builtin_mul_overflow(v, uint64_t(10), &v) && !__builtin_add_overflow(v, uint64_t(c - '0'), &v),
            what + ": '" + shown + "' is not " + range);
  require(v >= lo && v <= hi, what + ": " + shown + " is not " + range);
  return v;
}

}  // namespace n3::cli

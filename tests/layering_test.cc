// The layering of docs/architecture.md, enforced: the floor table there is
// the one statement of the rule, read here. Every #include "..." in a source
// file of a floor names a file of its own floor or a lower one; every source
// file of the repository lies on a floor; and every n3_* library of the CMake
// files sits on a floor, is built from that floor's folder, and links only
// libraries of its floor and lower ones. Within a folder, no two units (a
// header with its sources) include each other, directly or through others.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "tests/test_util.h"

namespace n3::test {
namespace {

namespace fs = std::filesystem;

struct Floor {
  int rank = 0;
  std::vector<std::string> folders;  // "golden/numerics/": a deeper folder is a floor of its own
  std::vector<std::string> targets;  // CMake libraries built on this floor
};

// The backticked words of a table cell.
std::vector<std::string> ticked(const std::string& cell) {
  std::vector<std::string> out;
  static const std::regex tick("`([^`]+)`");
  for (std::sregex_iterator it(cell.begin(), cell.end(), tick), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::stringstream s(row.substr(1));
  std::string c;
  while (std::getline(s, c, '|')) out.push_back(c);
  return out;
}

// The rows of the table under "## Floors": | rank | folders | targets | holds |,
// ranks increasing from the lowest floor. A malformed row fails the test
// rather than loosening the rule.
std::vector<Floor> parse_floors(const std::string& md) {
  std::vector<Floor> floors;
  std::stringstream in(md);
  std::string line;
  bool section = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      section = line == "## Floors";
      continue;
    }
    if (!section || line.rfind("| ", 0) != 0) continue;
    const std::vector<std::string> c = cells(line);
    const std::string rank = c.empty() ? "" : std::regex_replace(c[0], std::regex("\\s"), "");
    auto digit = [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; };
    if (rank.empty() || !std::all_of(rank.begin(), rank.end(), digit)) continue;  // header, rule
    EXPECT_GE(c.size(), 4u) << "docs/architecture.md: a floor row needs rank, folders, targets, holds: " << line;
    if (c.size() < 4) continue;
    Floor f;
    f.rank = std::stoi(rank);
    f.folders = ticked(c[1]);
    f.targets = ticked(c[2]);
    EXPECT_FALSE(f.folders.empty()) << "docs/architecture.md: a floor without folders: " << line;
    for (const std::string& d : f.folders)
      EXPECT_TRUE(!d.empty() && d.back() == '/') << "docs/architecture.md: folder " << d << " must end in /";
    if (!floors.empty()) {
      EXPECT_GT(f.rank, floors.back().rank) << "docs/architecture.md: ranks must increase";
    }
    floors.push_back(f);
  }
  return floors;
}

const std::vector<Floor>& repo_floors() {
  static const std::vector<Floor> floors = parse_floors(read_file_text(source_dir() + "/docs/architecture.md"));
  return floors;
}

// The floor of a repository-relative path (by its deepest floor folder), or nullptr.
const Floor* floor_of(const std::vector<Floor>& floors, const std::string& path) {
  const Floor* best = nullptr;
  size_t depth = 0;
  for (const Floor& f : floors)
    for (const std::string& d : f.folders)
      if (path.rfind(d, 0) == 0 && d.size() > depth) {
        best = &f;
        depth = d.size();
      }
  return best;
}

std::string folders_of(const Floor& f) {
  std::string s;
  for (const std::string& d : f.folders) s += (s.empty() ? "" : " ") + d;
  return "floor " + std::to_string(f.rank) + " (" + s + ")";
}

struct Include {
  int line = 0;
  std::string path;  // as written, from the repository root
};

std::vector<Include> includes_of(const std::string& text) {
  std::vector<Include> out;
  static const std::regex include("^\\s*#\\s*include\\s*\"([^\"]+)\"");
  std::stringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::smatch m;
    if (std::regex_search(line, m, include)) out.push_back({n, m[1]});
  }
  return out;
}

// One problem per #include "..." of `text` (the file at `path`) that climbs
// a floor or names a file on no floor.
std::vector<std::string> check_includes(const std::vector<Floor>& floors, const std::string& path,
                                        const std::string& text) {
  std::vector<std::string> problems;
  const Floor* own = floor_of(floors, path);
  if (!own) return {path + ": on no floor of docs/architecture.md"};
  for (const Include& inc : includes_of(text)) {
    const std::string where = path + ":" + std::to_string(inc.line) + ": includes \"" + inc.path + "\"";
    const Floor* to = floor_of(floors, inc.path);
    if (!to)
      problems.push_back(where + ", on no floor (include from the repository root)");
    else if (to->rank > own->rank)
      problems.push_back(where + ": " + folders_of(*own) + " may not include " + folders_of(*to));
  }
  return problems;
}

// A unit is a header with its sources: the path without its extension.
std::string unit_of(const std::string& path) { return path.substr(0, path.rfind('.')); }
std::string folder_of(const std::string& path) { return path.substr(0, path.rfind('/') + 1); }

// One problem per group of units of one folder that include each other,
// directly or through other units of the folder (`files`: path -> text).
// Within a floor the rule allows any include, so only such a cycle says
// that two parts are really one, or that one of them is in the wrong file.
std::vector<std::string> check_cycles(const std::map<std::string, std::string>& files) {
  std::map<std::string, std::map<std::string, std::string>> edges;  // unit -> unit -> first "file:line"
  for (const auto& [path, text] : files)
    for (const Include& inc : includes_of(text)) {
      const std::string a = unit_of(path), b = unit_of(inc.path);
      if (a != b && folder_of(a) == folder_of(b)) edges[a].emplace(b, path + ":" + std::to_string(inc.line));
    }
  std::map<std::string, std::set<std::string>> reach;  // units reachable from a unit
  for (const auto& [a, out] : edges) {
    std::set<std::string>& seen = reach[a];
    std::vector<std::string> todo{a};
    while (!todo.empty()) {
      const std::string u = todo.back();
      todo.pop_back();
      const auto it = edges.find(u);
      if (it == edges.end()) continue;
      for (const auto& [v, where] : it->second)
        if (seen.insert(v).second) todo.push_back(v);
    }
  }
  std::vector<std::string> problems;
  std::set<std::string> reported;
  for (const auto& [a, from_a] : reach) {
    if (!from_a.count(a) || reported.count(a)) continue;
    std::set<std::string> group;
    for (const std::string& b : from_a)
      if (reach.count(b) && reach.at(b).count(a)) group.insert(b);
    std::string units, how;
    for (const std::string& u : group) {
      units += (units.empty() ? "" : ", ") + u;
      for (const auto& [v, where] : edges.at(u))
        if (group.count(v)) how += (how.empty() ? "" : "; ") + where + " includes " + v;
      reported.insert(u);
    }
    problems.push_back("units of one folder include each other: " + units + " (" + how + ")");
  }
  return problems;
}

bool is_source(const fs::path& p) {
  static const std::set<std::string> ext = {".h", ".cc", ".cu", ".cuh"};
  return ext.count(p.extension().string()) > 0;
}

// Every C++/CUDA source of the repository, relative to its root: hidden
// folders and build trees (a CMakeCache.txt at their top) left out.
std::vector<std::string> repo_sources() {
  std::vector<std::string> out;
  const fs::path root = source_dir();
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& p = it->path();
    if (it->is_directory()) {
      if (p.filename().string()[0] == '.' || fs::exists(p / "CMakeCache.txt")) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && is_source(p)) out.push_back(fs::relative(p, root).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---- CMake: the n3_* libraries and what they link.

struct Command {
  std::string name;
  std::vector<std::string> args;
};

// The commands of a CMake file (comments dropped, quoted arguments unquoted).
std::vector<Command> cmake_commands(const std::string& text) {
  std::vector<Command> out;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    if (text[i] == '#') {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
      continue;
    }
    if (!(std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < n && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
    Command c;
    c.name = text.substr(i, j - i);
    while (j < n && (text[j] == ' ' || text[j] == '\t')) ++j;
    if (j >= n || text[j] != '(') {
      i = j;
      continue;
    }
    int depth = 1;
    std::string arg;
    auto flush = [&] {
      if (!arg.empty()) c.args.push_back(arg);
      arg.clear();
    };
    for (++j; j < n && depth > 0; ++j) {
      const char ch = text[j];
      // An unclosed quote or a comment on the last line ends the text (min with n - 1).
      if (ch == '"') {
        const size_t e = std::min(text.find('"', j + 1), n - 1);
        arg += text.substr(j + 1, e - j - 1);
        j = e;
      } else if (ch == '#') {
        flush();
        j = std::min(text.find('\n', j), n - 1);
      } else if (ch == '(' || ch == ')') {
        depth += ch == '(' ? 1 : -1;
        flush();
      } else if (std::isspace(static_cast<unsigned char>(ch))) {
        flush();
      } else {
        arg += ch;
      }
    }
    out.push_back(c);
    i = j;
  }
  return out;
}

// Problems of the libraries in `cmake` (the text of every CMake file): an
// n3_* library on no floor, an n3_part built from another floor's folder, a
// link to a library of a higher floor or of none.
std::vector<std::string> check_targets(const std::vector<Floor>& floors, const std::string& cmake) {
  std::map<std::string, const Floor*> floor_of_target;
  for (const Floor& f : floors)
    for (const std::string& t : f.targets) floor_of_target[t] = &f;
  const std::vector<Command> cmds = cmake_commands(cmake);
  std::map<std::string, std::vector<std::string>> vars;  // set(var values...): all values ever set
  for (const Command& c : cmds)
    if (c.name == "set" && !c.args.empty())
      vars[c.args[0]].insert(vars[c.args[0]].end(), c.args.begin() + 1, c.args.end());
  auto expand = [&](const std::string& a) {
    static const std::regex var("^\\$\\{(\\w+)\\}$");
    std::smatch m;
    if (std::regex_match(a, m, var)) return vars[m[1]];
    return std::vector<std::string>{a};
  };
  auto is_ours = [](const std::string& t) { return t.rfind("n3_", 0) == 0; };
  std::vector<std::string> problems;
  auto links = [&](const std::string& lib, std::vector<std::string>::const_iterator b,
                   std::vector<std::string>::const_iterator e) {
    if (!is_ours(lib)) return;  // a function's ${name}, an executable's tests
    const Floor* own = floor_of_target.count(lib) ? floor_of_target[lib] : nullptr;
    if (!own) return;  // reported where it is declared, or an executable
    for (auto it = b; it != e; ++it)
      for (const std::string& dep : expand(*it)) {
        if (!is_ours(dep)) continue;
        const Floor* to = floor_of_target.count(dep) ? floor_of_target[dep] : nullptr;
        if (!to)
          problems.push_back(lib + " links " + dep + ", which is on no floor of docs/architecture.md");
        else if (to->rank > own->rank)
          problems.push_back(lib + " (" + folders_of(*own) + ") links " + dep + " (" + folders_of(*to) + ")");
      }
  };
  for (const Command& c : cmds) {
    if ((c.name == "add_library" || c.name == "n3_part") && !c.args.empty() && is_ours(c.args[0]) &&
        !floor_of_target.count(c.args[0]))
      problems.push_back("library " + c.args[0] + " is on no floor of docs/architecture.md");
    if (c.name == "n3_part" && c.args.size() >= 2) {
      const Floor* own = floor_of_target.count(c.args[0]) ? floor_of_target[c.args[0]] : nullptr;
      if (own && floor_of(floors, c.args[1] + "/") != own)
        problems.push_back("library " + c.args[0] + " is built from " + c.args[1] + "/, not from " +
                           folders_of(*own));
      links(c.args[0], c.args.begin() + 2, c.args.end());
    }
    if (c.name == "target_link_libraries" && !c.args.empty()) links(c.args[0], c.args.begin() + 1, c.args.end());
  }
  return problems;
}

std::string repo_cmake_text() {
  std::string all;
  const fs::path root = source_dir();
  for (const auto& e : fs::directory_iterator(root)) {
    if (e.is_regular_file() && e.path().filename() == "CMakeLists.txt") all += read_file_text(e.path().string());
    if (!e.is_directory() || e.path().filename().string()[0] == '.') continue;
    const bool cmake_dir = e.path().filename() == "cmake";
    for (const auto& f : fs::directory_iterator(e.path()))
      if (f.is_regular_file() && (f.path().filename() == "CMakeLists.txt" ||
                                  (cmake_dir && f.path().extension() == ".cmake")))
        all += read_file_text(f.path().string()) + "\n";
  }
  return all;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "\n  " + x;
  return s;
}

TEST(Layering, TableListsTheFloors) {
  const std::vector<Floor>& floors = repo_floors();
  ASSERT_GE(floors.size(), 10u) << "docs/architecture.md: no floor table under \"## Floors\"";
  const Floor* numerics = floor_of(floors, "golden/numerics/ops.h");
  const Floor* golden = floor_of(floors, "golden/model.h");
  ASSERT_TRUE(numerics && golden);
  EXPECT_LT(numerics->rank, golden->rank) << "the numerics core is a floor of its own, below the model";
}

// Every source of the repository with its text, read once for the tests.
const std::map<std::string, std::string>& repo_files() {
  static const std::map<std::string, std::string> files = [] {
    std::map<std::string, std::string> m;
    for (const std::string& rel : repo_sources()) m[rel] = read_file_text(source_dir() + "/" + rel);
    return m;
  }();
  return files;
}

TEST(Layering, NoIncludeClimbsAFloor) {
  std::vector<std::string> problems;
  for (const auto& [path, text] : repo_files())
    for (const std::string& p : check_includes(repo_floors(), path, text)) problems.push_back(p);
  EXPECT_GT(repo_files().size(), 100u) << "the scan found too few sources under " << source_dir();
  EXPECT_TRUE(problems.empty()) << "docs/architecture.md's floors are broken:" << joined(problems);
}

TEST(Layering, NoTwoUnitsOfAFolderIncludeEachOther) {
  ASSERT_TRUE(repo_files().count("compiler/layout.cc")) << "the scan did not read compiler/";
  const std::vector<std::string> problems = check_cycles(repo_files());
  EXPECT_TRUE(problems.empty()) << joined(problems);
}

TEST(Layering, LibrariesLinkOnlyLowerFloors) {
  const std::string cmake = repo_cmake_text();
  ASSERT_NE(cmake.find("n3_part(n3_golden"), std::string::npos) << "the scan did not read CMakeLists.txt";
  const std::vector<std::string> problems = check_targets(repo_floors(), cmake);
  EXPECT_TRUE(problems.empty()) << joined(problems);
}

// The checkers themselves: a climbing line is named with both floors, a
// permitted one passes, a deeper folder is a floor of its own.
TEST(Layering, CheckerFindsAClimbingInclude) {
  const std::vector<Floor>& floors = repo_floors();
  const std::vector<std::string> bad =
      check_includes(floors, "golden/model.h", "#pragma once\n#include <vector>\n#include \"runtime/device.h\"\n");
  ASSERT_EQ(bad.size(), 1u) << joined(bad);
  EXPECT_NE(bad[0].find("golden/model.h:3"), std::string::npos) << bad[0];
  EXPECT_NE(bad[0].find("(golden/)"), std::string::npos) << bad[0];
  EXPECT_NE(bad[0].find("(runtime/)"), std::string::npos) << bad[0];

  EXPECT_TRUE(check_includes(floors, "golden/model.h", "#include \"base/error.h\"\n#include \"golden/weights.h\"\n")
                  .empty());
  EXPECT_EQ(check_includes(floors, "golden/numerics/ops.h", "  #  include \"golden/weights.h\"\n").size(), 1u);
  EXPECT_TRUE(check_includes(floors, "golden/weights.h", "#include \"golden/numerics/ops.h\"\n").empty());
  EXPECT_EQ(check_includes(floors, "golden/x.h", "#include \"nowhere/x.h\"\n").size(), 1u);
  EXPECT_EQ(check_includes(floors, "newpart/x.cc", "").size(), 1u) << "a file on no floor";
}

TEST(Layering, CheckerFindsUnitsIncludingEachOther) {
  std::map<std::string, std::string> files = {
      {"compiler/a.h", "#pragma once\n"},
      {"compiler/a.cc", "#include \"compiler/a.h\"\n#include \"compiler/b.h\"\n"},
      {"compiler/b.h", "#include <map>\n#include \"compiler/c.h\"\n"},
      {"compiler/c.h", "#include \"compiler/a.h\"\n"},
      {"compiler/d.cc", "#include \"compiler/a.h\"\n"},
      {"sim/a.h", "#include \"compiler/a.h\"\n"},
  };
  const std::vector<std::string> bad = check_cycles(files);
  ASSERT_EQ(bad.size(), 1u) << joined(bad);
  EXPECT_NE(bad[0].find("compiler/a, compiler/b, compiler/c ("), std::string::npos) << bad[0];
  EXPECT_NE(bad[0].find("compiler/a.cc:2 includes compiler/b"), std::string::npos) << bad[0];
  EXPECT_NE(bad[0].find("compiler/c.h:1 includes compiler/a"), std::string::npos) << bad[0];
  EXPECT_EQ(bad[0].find("compiler/d"), std::string::npos) << bad[0];
  files["compiler/c.h"] = "#pragma once\n";  // the chain a -> b -> c no longer closes
  EXPECT_TRUE(check_cycles(files).empty()) << joined(check_cycles(files));
}

TEST(Layering, CheckerFindsAClimbingLink) {
  const std::vector<Floor>& floors = repo_floors();
  const std::vector<std::string> bad = check_targets(floors,
                                                     "n3_part(n3_golden golden n3_base # a comment n3_host\n"
                                                     "  yaml-cpp)\n"
                                                     "set(up n3_runtime)\n"
                                                     "target_link_libraries(n3_golden PUBLIC ${up})\n"
                                                     "add_library(n3_extra STATIC x.cc)\n"
                                                     "n3_part(n3_compiler sim n3_isa)\n");
  ASSERT_EQ(bad.size(), 3u) << joined(bad);
  EXPECT_NE(bad[0].find("n3_golden (floor"), std::string::npos) << bad[0];
  EXPECT_NE(bad[0].find("links n3_runtime"), std::string::npos) << bad[0];
  EXPECT_NE(bad[1].find("n3_extra is on no floor"), std::string::npos) << bad[1];
  EXPECT_NE(bad[2].find("n3_compiler is built from sim/"), std::string::npos) << bad[2];
  EXPECT_TRUE(check_targets(floors, "target_link_libraries(n3_runtime PUBLIC n3_golden n3_base)").empty());
}

}  // namespace
}  // namespace n3::test

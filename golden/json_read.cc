#include "golden/json_read.h"

#include <unordered_set>
#include <vector>

#include "base/error.h"

namespace n3 {

namespace {

std::string clip(const std::string& s) { return s.size() > 80 ? s.substr(0, 80) + "..." : s; }

}  // namespace

nlohmann::json parse_json_file(const char* first, const char* last, const std::string& where) {
  using Event = nlohmann::json::parse_event_t;
  // One frame per open object: the keys seen so far and the latest one (the
  // path of a nested duplicate). Arrays open no frame; their objects do.
  struct Frame {
    std::unordered_set<std::string> keys;
    std::string last;
  };
  std::vector<Frame> open;
  std::string dup;  // the first repeated key's message; reported after parsing
  auto on_event = [&](int depth, Event ev, nlohmann::json& parsed) {
    // Nesting is bounded while parsing: printing or walking a value nested
    // 100 000 deep recursed off the stack (n3 diff of such a manifest.json
    // died of SIGSEGV). No JSON n3 reads nests more than a few levels.
    if ((ev == Event::object_start || ev == Event::array_start) && depth >= kMaxJsonDepth)
      throw Error(where + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    switch (ev) {
      case Event::object_start: open.emplace_back(); break;
      case Event::object_end:
        if (!open.empty()) open.pop_back();
        break;
      case Event::key: {
        if (open.empty() || !dup.empty()) break;
        Frame& f = open.back();
        f.last = parsed.get<std::string>();
        if (!f.keys.insert(f.last).second) {
          std::string in;
          for (size_t i = 0; i + 1 < open.size(); ++i) in += (in.empty() ? "" : ".") + open[i].last;
          dup = where + ": key '" + clip(f.last) + "' appears twice in " +
                (in.empty() ? std::string("the top-level object") : "'" + clip(in) + "'");
        }
        break;
      }
      default: break;
    }
    return true;  // keep everything; the duplicate is refused once parsing ends
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(first, last, on_event);
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": malformed JSON: " + e.what());
  }
  require(dup.empty(), dup);
  return j;
}

}  // namespace n3

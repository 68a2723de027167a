// Per-tensor dumps of a program run: every tensor symbol of the program's
// symbol table becomes one .npy (float32, [rows, cols]; the native dtype in
// the manifest) in the layout of docs/dumps.md, so n3 diff compares a
// simulator dump with a golden one. Names follow the golden model's
// ("layers.3.attn.q", "decode_logits"): the layer and phase are read from them.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "sim/func_sim.h"

namespace n3::sim {

// Writes into `dir` (prepare_output_dir first): the .npy files, then the manifest.
void write_dump(const std::string& dir, const std::vector<Capture>& caps, const std::map<std::string, std::string>& meta);

}  // namespace n3::sim

#include "rtl_bridge/waveform.h"

#include <verilated_vcd_sc.h>

namespace n3::rtl {

Waveform::Waveform(std::string path) : path_(std::move(path)) {}

Waveform::~Waveform() {
  if (vcd_) vcd_->close();
}

void Waveform::open(const std::function<void(VerilatedVcdC*)>& trace) {
  if (path_.empty()) return;
  vcd_ = std::make_unique<VerilatedVcdSc>();
  trace(vcd_.get());
  vcd_->open(path_.c_str());
}

void Waveform::flush() {
  if (vcd_) vcd_->flush();
}

}  // namespace n3::rtl

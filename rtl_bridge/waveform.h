// A Verilated unit's VCD waveform, owned by the unit's driver (GemvRtl,
// DmaRtl): opened at the start of simulation (VerilatedVcdSc needs the
// netlist bound first), flushed at its end, closed with the driver.
#pragma once

#include <functional>
#include <memory>
#include <string>

class VerilatedVcdC;
class VerilatedVcdSc;

namespace n3::rtl {

class Waveform {
 public:
  explicit Waveform(std::string path);  // "" = no waveform
  ~Waveform();
  // `trace` hooks the unit's signals (the Verilated top's trace(vcd, levels)).
  void open(const std::function<void(VerilatedVcdC*)>& trace);
  void flush();

 private:
  std::string path_;
  std::unique_ptr<VerilatedVcdSc> vcd_;
};

}  // namespace n3::rtl

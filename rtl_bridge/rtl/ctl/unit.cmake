# The control engine's execute stage (docs/rtl_ctl.md, "Control engine"): the
# scalar register file, ALU / ALUI, branch resolution, LDST addressing and
# its traps; field positions and enums from the generated n3_isa_pkg.sv.
n3_rtl_unit(ctl TOP n3_ctl SOURCES n3_ctl.sv)

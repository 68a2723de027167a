# The instruction decoder (docs/rtl_decoder.md, "Instruction decoder"): everything
# table-dependent comes from the generated n3_isa_pkg.sv, prepended by
# n3_rtl_unit; n3_decoder.sv is the 2-stage valid/ready pipeline around it.
n3_rtl_unit(decoder TOP n3_decoder SOURCES n3_decoder.sv)

# The clock-domain crossing (docs/rtl_cdc.md, "Clock-domain crossing"): the async
# FIFO between an AXI HP port's clock (clocks.axi_mhz) and the core clock
# (clocks.core_mhz). Two clock inputs, both driven by `n3 cosim --unit cdc`'s
# time wheel (rtl_bridge/cosim_cdc.cc). 32-bit words (the cosim's reference
# words), 16 deep, two synchroniser flops: the design point whose crossing
# latency timing.cdc_sync_cycles states (docs/timing.md).
n3_rtl_unit(cdc TOP n3_cdc_fifo SOURCES n3_cdc_fifo.sv
  PARAMS -GW=32 -GDEPTH=16 -GSYNC_STAGES=2)

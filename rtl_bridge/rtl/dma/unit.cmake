# The DMA engine (docs/rtl_dma.md): one MEMCPY / MEMSET a command, walked into jobs over
# AXI-like read and write channels. Its bus width and burst length come from
# the hardware file N3_RTL_HW (rtl_bridge/CMakeLists.txt): hp_port_bits x dma_hp_ports / 8
# bytes a beat, ddr_burst_bytes / that beats a burst.
n3_rtl_unit(dma TOP n3_dma_engine
  SOURCES ../fp/n3_fp_pkg.sv n3_dma_pkg.sv n3_dma_walk.sv n3_dma_core.sv n3_dma_engine.sv
  PARAMS -GBB=${N3_RTL_DMA_BB} -GBURST=${N3_RTL_DMA_BURST} -GLANES=${N3_RTL_DMA_LANES})

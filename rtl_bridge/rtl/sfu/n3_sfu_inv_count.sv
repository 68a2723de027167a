// n3_sfu_inv_count: n3_fp_pkg::fp_inv_count, the SFU's 1/n of a row of
// n elements, on W lanes of ports, for `n3 cosim --unit sfu-count`
// (rtl_bridge/cosim_sfu_count.cc), which drives every row length the ISA
// allows through it and compares each with num::inv_count. W lanes a
// evaluation keep the sweep of 2^24 - 1 lengths short. No logic of its own.
module n3_sfu_inv_count #(
  parameter int W = 64
) (
  input  logic [W-1:0][31:0] n,
  output logic [W-1:0][31:0] inv
);
  import n3_fp_pkg::*;
  for (genvar l = 0; l < W; l++) begin : lane
    assign inv[l] = fp_inv_count(n[l]);
  end
endmodule

// n3_gemv_blocker: cuts a stream of float beats (NE f32 values, `cnt` of
// them valid, `last` on the final beat of a vector) into BFP blocks of
// B = 2^blog elements and quantises each with fp_bfp_quant (the e_max pass
// and the mantissa pass, num::bfp_quantize_block). A vector's final block
// may be short (the zero padding of num::bfp_quantize). Each clock it moves
// min(elements left in the held beat, elements left in the block) into the
// block staging; a block is emitted (out_valid, one clock, no back-pressure:
// the caller always writes it) the clock its last element arrives, so with
// B >= NE a beat costs one clock and with B < NE a beat costs NE / B clocks.
module n3_gemv_blocker #(
  parameter int NE = 32,
  parameter int BMAX = 64
) (
  input  logic                      clk,
  input  logic                      rst_n,
  input  logic [2:0]                blog,
  input  logic [4:0]                mbits,
  input  logic                      in_valid,
  output logic                      in_ready,
  input  logic [NE-1:0][31:0]       in_vals,
  input  logic [$clog2(NE+1)-1:0]   in_cnt,
  input  logic                      in_last,
  output logic                      out_valid,
  output logic                      out_last,
  output logic signed [15:0]        out_exp,
  output logic [BMAX-1:0][15:0]     out_mant
);
  import n3_fp_pkg::*;
  localparam int CW = $clog2(NE + 1);
  localparam int SW = $clog2(BMAX + 1);
  // Wide enough for a beat's count (up to NE) and a beat index plus a block
  // position (below NE + BMAX): counts compared in SW bits wrap once NE
  // passes 2^SW - 1 (64 lanes and more against 32-element blocks).
  localparam int MW = (CW > SW ? CW : SW) + 1;

  logic bv, blast;
  logic [NE-1:0][31:0] bval;
  logic [CW-1:0] bn, bo;
  logic [BMAX-1:0][31:0] stg, merged;
  logic [SW-1:0] spos, k, bsize;
  logic consumed, complete;

  always_comb begin
    logic [MW-1:0] rb, rk, j;
    j = '0;
    bsize = SW'(1) << blog;
    rb = MW'(bn) - MW'(bo);
    rk = MW'(bsize) - MW'(spos);
    k = SW'((rb < rk) ? rb : rk);
    consumed = bv && (MW'(bo) + MW'(k) == MW'(bn));
    complete = bv && ((spos + k == bsize) || (blast && consumed));
    in_ready = !bv || consumed;
    // The staging moves only while a beat is held (why the branch: see
    // n3_fp_pkg; an idle blocker costs the simulation nothing).
    merged = stg;
    if (bv)
      for (int i = 0; i < BMAX; i++) begin
        j = MW'(bo) + MW'(i) - MW'(spos);
        if (SW'(i) >= spos && SW'(i) < spos + k && j < MW'(NE)) merged[i] = bval[j[$clog2(NE)-1:0]];
      end
  end

  // A block is quantised the clock it completes (out_valid); its outputs
  // are don't-care otherwise (zero here).
  always_comb begin
    logic [QB-1:0][31:0] x;
    logic [QB-1:0][15:0] m;
    x = '0;
    m = '0;
    out_exp = '0;
    out_mant = '0;
    if (complete) begin
      x[BMAX-1:0] = merged;
      fp_bfp_quant(x, 7'(spos + k), mbits, out_exp, m);
      out_mant = m[BMAX-1:0];
    end
  end
  assign out_valid = complete;
  assign out_last = blast && consumed;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      bv <= 1'b0;
      spos <= '0;
      bo <= '0;
    end else begin
      if (bv) begin
        bo <= bo + CW'(k);
        spos <= complete ? '0 : spos + k;
        stg <= merged;
      end
      if (in_valid && in_ready) begin
        bv <= 1'b1;
        bval <= in_vals;
        bn <= in_cnt;
        bo <= '0;
        blast <= in_last;
      end else if (consumed) begin
        bv <= 1'b0;
      end
    end
  end
endmodule

// The SFU's element pipeline (docs/rtl.md, "SFU"): the element-wise CVO
// functions, LANES elements a clock, bit-exact with golden/numerics/sfu.h,
// sfu_trig.h and sim/exec_sfu.cc (n3_sfu_pkg holds the programs).
//
// A command (one CVO instruction's function, its constant k and dst's
// format) is taken while the pipeline is empty; then beats of up to LANES
// elements stream in (in_mask says which lanes hold one) and their results
// stream out in order, `sfu_depth(func)` clocks later. Every stage holds one
// beat; all stages advance together whenever the output register is free or
// taken (no bubbles while out_ready is high), and stall together when not.
// Stage s of a lane applies step s of the function (n3_sfu_pkg::sfu_step) to
// the element it holds, only when it holds one.
module n3_sfu
  import n3_fp_pkg::*;
  import n3_sfu_pkg::*;
#(
  parameter int LANES = 1  // elements per clock (compute.sfu_elems_per_clk)
) (
  input logic clk,
  input logic rst_n,  // synchronous, active low: empties the pipeline
  // command: taken when the pipeline is empty
  input logic cmd_valid,
  output logic cmd_ready,
  input logic [5:0] cmd_func,  // n3_isa_pkg::cvo_func_e (element-wise ones)
  input logic [31:0] cmd_k,    // SCALE / ADDK / MAXK's constant (f32 bits)
  input logic [1:0] cmd_fmt,   // dst's format: results rounded into it
  // elements in (f32 bits; b: the second operand of ADD .. MAC; c: MAC's dst)
  input logic in_valid,
  output logic in_ready,
  input logic [LANES-1:0] in_mask,
  input logic [LANES-1:0][31:0] in_a,
  input logic [LANES-1:0][31:0] in_b,
  input logic [LANES-1:0][31:0] in_c,
  // results out (the f32 bits of the value in dst's format, canonical NaN)
  output logic out_valid,
  input logic out_ready,
  output logic [LANES-1:0] out_mask,
  output logic [LANES-1:0][31:0] out_y,
  output logic busy
);
  func_t func;
  logic [31:0] k;
  logic [1:0] fmt;
  logic [4:0] depth;  // sfu_depth(func): the stage whose register is the output
  logic armed;        // a command has been taken
  logic [DMAX:1] v;   // stage s holds a beat
  logic adv, in_fire, cmd_fire;
  logic kfunc;        // the function's second operand is k

  assign busy = v != '0;
  assign cmd_ready = !busy;
  assign cmd_fire = cmd_valid && cmd_ready;
  assign out_valid = v[depth];
  assign adv = !out_valid || out_ready;
  assign in_ready = armed && adv && !cmd_valid;
  assign in_fire = in_valid && in_ready;
  assign kfunc = func == F_SCALE || func == F_ADDK || func == F_MAXK;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      v <= '0;
      armed <= 1'b0;
      func <= '0;
      k <= '0;
      fmt <= '0;
      depth <= 5'd2;
    end else begin
      if (cmd_fire) begin
        func <= cmd_func;
        k <= cmd_k;
        fmt <= cmd_fmt;
        depth <= sfu_depth(cmd_func);
        armed <= 1'b1;
      end
      // Stages past the function's depth stay empty: its output is stage depth.
      if (adv) v <= {v[DMAX-1:1] & ~({(DMAX - 1){1'b1}} << (depth - 5'd1)), in_fire};
    end
  end

  for (genvar l = 0; l < LANES; l++) begin : lane
    sfu_st_t st[DMAX+1];  // st[s]: the lane's element in stage s (s >= 1)
    sfu_st_t e;           // the element coming in
    always_comb begin
      e = '0;
      e.on = in_mask[l];
      e.x = in_a[l];
      e.b = kfunc ? k : in_b[l];
      e.c = in_c[l];
    end
    // Stage 1 applies step 0 to the element coming in, stage s + 1 step s to
    // stage s's element; each only to an element it holds.
    always_ff @(posedge clk)
      if (adv && in_fire) begin
        sfu_st_t o;
        if (e.on) sfu_step(func, 0, depth, fmt, e, o);
        else o = e;
        st[1] <= o;
      end
    for (genvar s = 1; s < DMAX; s++) begin : stage
      always_ff @(posedge clk)
        if (adv && v[s] && s < int'(depth)) begin
          sfu_st_t o;
          if (st[s].on) sfu_step(func, s, depth, fmt, st[s], o);
          else o = st[s];
          st[s + 1] <= o;
        end
    end
    assign out_y[l] = st[depth].y;
    assign out_mask[l] = st[depth].on;
  end
endmodule

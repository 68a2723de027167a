// The SFU's element pipeline (docs/rtl_sfu.md, "SFU element pipeline"): the
// element-wise CVO functions and the row reductions, LANES elements a clock, bit-exact with golden/numerics/sfu.h,
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
//
// The row reductions (RSUM, RMAX, RSUMSQ, RMS) stream rows: each row starts at a
// fresh beat and in_last marks its last beat. The element pipeline forms the
// terms; a tail folds them into 32 accumulator lanes (element j of a row into
// lane j mod 32, in order), and at the row's end passes the lanes down a
// 5-stage tree (lanes j and j + 16, then 8, 4, 2, 1: one level a stage, a new
// row may enter every clock) to a last stage that rounds the row's result
// into dst's format; out_y[0] carries it (out_mask 1).
//
// RMS (num::rms: sqrt_rn(tree_sumsq(x) * inv_count(n))) is RSUMSQ with a
// longer tail: the tree's sum times 1/n, then SQRT's program
// (n3_sfu_pkg::sqrt_step 0..5), one step a stage, then the rounding: 6
// clocks more than the other reductions. n is the row's elements, which the
// tail counts beside the accumulator lanes; at the row's end the count
// enters the tree beside its first level and its 1/n (inv_count) the
// second, so 1/n is ready with the tree's sum and costs no clock. Rows of
// any lengths may share a command.
//
// The fused row operators (n3_sfu_row_pkg, docs/rtl_sfu.md "SFU row operators"):
// SOFTCAP and ROPE are element programs (ROPE streams rows, in_last on each
// row's last beat: the element's index in its row says which half of the
// pair it is, against d/2 of k's row length d: the rotation needs the half
// 12 clocks after the element enters, when a row of more than 13 beats has
// not ended, so the command carries d, the instruction's cols, rather than
// the unit counting it). RMSNORM, SOFTMAX, GTOPK and MAGMATCH re-read
// each row once a pass (row_passes): the row's beats stream in again each
// pass, in_last on the pass's last beat. A reduction pass runs its element
// program into the reduction tail; the tree's result goes to the scalar
// tail (tail_len clocks, in_ready low) instead of out; the last pass streams
// the row's results out; the next row's first pass starts when they are out.
module n3_sfu
  import n3_fp_pkg::*;
  import n3_sfu_pkg::*;
  import n3_sfu_row_pkg::*;
#(
  parameter int LANES = 1  // elements per clock (compute.sfu_elems_per_clk)
) (
  input logic clk,
  input logic rst_n,  // synchronous, active low: empties the pipeline
  // command: taken when the pipeline is empty
  input logic cmd_valid,
  output logic cmd_ready,
  input logic [5:0] cmd_func,  // n3_isa_pkg::cvo_func_e (every CVO function)
  input logic [31:0] cmd_k,    // the instruction's constant (f32 bits): SCALE / ADDK / MAXK's, RMSNORM's eps,
                               // GTOPK's mult, SOFTCAP's cap, MAGMATCH's floor; ROPE: the row length d (an
                               // integer: a's cols); others: unused
  input logic cmd_hasb,        // RMSNORM: b (the weight) streams in
  input logic [1:0] cmd_fmt,   // dst's format: results rounded into it
  // elements in (f32 bits; b: the second operand of ADD .. MAC, RMSNORM's weight, MAGMATCH's
  // target, ROPE's pair element; c: MAC's dst, ROPE's angle)
  input logic in_valid,
  output logic in_ready,
  input logic [LANES-1:0] in_mask,
  input logic in_last,  // reductions, ROPE: the beat ends a row; multi-pass row operators: a pass over it
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
  func_t func;        // the command's function
  func_t ef;          // the element program of the pass under way (pass_func)
  logic hasb;
  logic [31:0] k;
  logic [1:0] fmt;
  logic [4:0] depth;  // depth_of(ef): the stage whose register is the output
  logic armed;        // a command has been taken
  logic [DMAX:1] v;   // stage s holds a beat
  logic [DMAX:1] vl;  // ... the last beat of a row (reductions)
  logic red;          // the function is a row reduction
  logic [LANES-1:0][31:0] ey;  // the element pipeline's output stage
  logic [LANES-1:0] eon;
  // The reduction tail: the accumulator lanes, the row's count mod 32, the
  // tree stages (stage k holds 32 >> k lanes) and the rounded result.
  logic [31:0][31:0] acc;
  logic [4:0] cnt;
  logic [5:1][15:0][31:0] tr;
  logic [12:1] rv;     // rv[6]: a reduction's result; RMS goes on to rv[12]
  logic [31:0] rlen;   // RMS: the row's elements so far, then (rnum) at its end, then 1/n beside the tree
  logic [31:0] rnum;
  logic [5:2][31:0] rinv;
  sfu_st_t q[6:1];     // RMS: the square root's steps on the mean square
  logic rms;
  logic [31:0] rres;
  logic adv, in_fire, cmd_fire;
  logic kfunc;        // the function's second operand is k
  // The row operators' sequencer: the pass, its phase (PH_IN: the pass's
  // beats; PH_WAIT: its last results; PH_TAIL: the scalar tail), the tail's
  // step, the row's elements (pass 0) and the scalars.
  localparam logic [1:0] PH_IN = 2'd0, PH_WAIT = 2'd1, PH_TAIL = 2'd2;
  logic multi;        // func re-reads its rows
  logic [1:0] pass, ph;
  logic [3:0] ts;
  logic [31:0] rn, rcnt;  // the row's elements (pass 0); ROPE: the beat's index in its row
  logic [31:0] red_res;   // the reduction pass's result
  row_sc_t sc;
  logic tail_done, row_done, red_done;
  func_t nef;         // the next pass's element program
  logic [31:0] n_in;  // elements in the beat

  // (A row operator is idle between rows, and from the clock its last row is done.)
  assign busy = v != '0 || rv != '0 || cnt != 5'd0 || (multi && !(ph == PH_IN && pass == 2'd0 && rn == '0) && !row_done);
  assign cmd_ready = !busy;
  assign cmd_fire = cmd_valid && cmd_ready;
  assign red = is_red(ef);
  assign rms = ef == F_RMS;
  assign multi = is_multipass(func);
  // A row operator's reduction passes give no results out.
  assign out_valid = multi ? !red && v[depth] : red ? (rms ? rv[12] : rv[6]) : v[depth];
  assign adv = !out_valid || out_ready;
  assign in_ready = armed && adv && !cmd_valid && (!multi || ph == PH_IN);
  assign in_fire = in_valid && in_ready;
  assign kfunc = ef == F_SCALE || ef == F_ADDK || ef == F_MAXK || ef == E_SCAP;
  // A reduction pass's result is in the tree's last stage (rv[5]); the last
  // pass is done when its results are out (the pipeline is empty).
  assign red_done = multi && ph == PH_WAIT && red && rv[5];
  assign row_done = multi && ph == PH_WAIT && !red && v == '0;
  assign tail_done = multi && ph == PH_TAIL && ts == tail_len(func, pass) - 4'd1;
  assign nef = pass_func(func, row_done ? 2'd0 : pass + 2'd1, hasb);
  always_comb begin
    n_in = '0;
    for (int l = 0; l < LANES; l++) n_in = n_in + 32'(in_mask[l]);
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      v <= '0;
      armed <= 1'b0;
      func <= '0;
      ef <= '0;
      hasb <= 1'b0;
      k <= '0;
      fmt <= '0;
      depth <= 5'd2;
      pass <= 2'd0;
      ph <= PH_IN;
      rn <= '0;
      rcnt <= '0;
    end else begin
      if (cmd_fire) begin
        func <= cmd_func;
        ef <= pass_func(cmd_func, 2'd0, cmd_hasb);
        hasb <= cmd_hasb;
        k <= cmd_k;
        fmt <= cmd_fmt;
        depth <= depth_of(pass_func(cmd_func, 2'd0, cmd_hasb));
        armed <= 1'b1;
        pass <= 2'd0;
        ph <= PH_IN;
        rn <= '0;
        rcnt <= '0;
        // SOFTCAP's 1/cap, once a command (the first beat follows a clock later).
        if (cmd_func == F_SOFTCAP) sc.sa <= fdiv(ONE, cmd_k);
      end else begin
        if (in_fire) rcnt <= in_last ? '0 : rcnt + n_in;
        // The row operators' passes.
        if (multi) begin
          if (in_fire && pass == 2'd0) rn <= rn + n_in;
          if (in_fire && in_last) ph <= PH_WAIT;
          if (red_done) begin
            ph <= PH_TAIL;
            ts <= 4'd0;
            red_res <= tr[5][0];
          end
          if (ph == PH_TAIL) begin
            row_sc_t o;
            tail_step(func, pass, ts, red_res, rn, k, sc, o);
            sc <= o;
            ts <= ts + 4'd1;
          end
          if (tail_done || row_done) begin
            ph <= PH_IN;
            pass <= row_done ? 2'd0 : pass + 2'd1;
            ef <= nef;
            depth <= depth_of(nef);
            if (row_done) rn <= '0;
          end
        end
      end
      // Stages past the function's depth stay empty: its output is stage depth.
      if (adv) begin
        v <= {v[DMAX-1:1] & ~({(DMAX - 1){1'b1}} << (depth - 5'd1)), in_fire};
        vl <= {vl[DMAX-1:1], in_last};
      end
    end
  end

  // The reduction tail (only reductions use it; it advances with the pipeline).
  always_ff @(posedge clk) begin
    if (!rst_n || cmd_fire) begin
      rv <= '0;
      cnt <= 5'd0;
      rlen <= '0;
      for (int j = 0; j < 32; j++) acc[j] <= red_identity(pass_func(cmd_func, 2'd0, cmd_hasb));
    end else if (tail_done || row_done) begin  // a row operator's next pass
      for (int j = 0; j < 32; j++) acc[j] <= red_identity(nef);
      rv <= '0;  // (the tree's result went to the scalar tail: rv[6] on would keep the unit busy)
    end else if (adv && red) begin
      rv[1] <= 1'b0;
      if (v[depth]) begin
        logic [31:0][31:0] a;
        logic [4:0] c;
        logic [31:0] nn;
        a = acc;
        c = cnt;
        nn = rlen;
        for (int l = 0; l < LANES; l++)
          if (eon[l]) begin
            a[c] = red_op(ef, a[c], ey[l]);
            c = c + 5'd1;
            nn = nn + 32'd1;
          end
        if (vl[depth]) begin  // the row's end: tree level 1, fresh lanes
          for (int j = 0; j < 16; j++) tr[1][j] <= red_op(ef, a[j], a[j + 16]);
          rv[1] <= 1'b1;
          for (int j = 0; j < 32; j++) acc[j] <= red_identity(ef);
          cnt <= 5'd0;
          rnum <= nn;
          rlen <= '0;
        end else begin
          acc <= a;
          cnt <= c;
          rlen <= nn;
        end
      end
      for (int lv = 1; lv < 5; lv++) begin
        rv[lv + 1] <= rv[lv];
        if (rv[lv])
          for (int j = 0; j < (16 >> lv); j++) tr[lv + 1][j] <= red_op(ef, tr[lv][j], tr[lv][j + (16 >> lv)]);
      end
      rv[6] <= rv[5];
      // RMS's 1/n: the count at tree level 1, its reciprocal from level 2 on.
      if (rv[1] && rms) rinv[2] <= inv_count(rnum);
      for (int lv = 2; lv < 5; lv++)
        if (rv[lv] && rms) rinv[lv + 1] <= rinv[lv];
      if (rv[5] && !rms) rres <= fp_round_fmt(tr[5][0], fmt);  // canonical NaN, then dst's format
      // RMS: the mean square into SQRT's step 0, steps 1..5 a stage each
      // (an element its step 0 finished passes on), then the rounding.
      for (int j = 6; j < 12; j++) rv[j + 1] <= rv[j] && rms;
      if (rv[5] && rms) begin
        sfu_st_t e, o;
        e = '0;
        e.on = 1'b1;
        e.x = fmul(tr[5][0], rinv[5]);
        sqrt_step(0, 1'b0, e, o);
        q[1] <= o;
      end
      for (int j = 1; j < 6; j++)
        if (rv[5 + j] && rms) begin
          sfu_st_t o;
          if (q[j].fin) o = q[j];
          else sqrt_step(j, 1'b0, q[j], o);
          q[j + 1] <= o;
        end
      if (rv[11] && rms) rres <= fp_round_fmt(q[6].y, fmt);
    end
  end

  for (genvar l = 0; l < LANES; l++) begin : lane
    sfu_st_t st[DMAX+1];  // st[s]: the lane's element in stage s (s >= 1)
    sfu_st_t e;           // the element coming in
    // ROPE's cosine chain beside st (its sine's): the angle's COS program.
    sfu_st_t cs[ROPE_TRIG+1];
    logic rope;
    assign rope = ef == E_ROPE;
    always_comb begin
      e = '0;
      e.on = in_mask[l];
      e.x = in_a[l];
      e.b = kfunc ? k : ef == E_SMXP ? sc.sb : in_b[l];
      e.c = uses_scalar(ef) ? sc.sa : in_c[l];
      if (rope) begin  // the angle, the element, its pair; n[0]: the pair's first half
        e.x = in_c[l];
        e.b = in_a[l];
        e.c = in_b[l];
        e.n = {15'd0, rcnt + 32'(l) < {1'b0, k[31:1]}};  // d/2 of the command's d
      end
    end
    // Stage 1 applies step 0 to the element coming in, stage s + 1 step s to
    // stage s's element; each only to an element it holds.
    always_ff @(posedge clk)
      if (adv && in_fire) begin
        sfu_st_t o;
        // (sfu_step directly for the element-wise functions: one call less a stage.)
        if (e.on && ef < E_NORM) sfu_step(ef, 0, depth, fmt, e, o);
        else if (e.on) row_step(ef, 0, depth, fmt, e, o);
        else o = e;
        st[1] <= o;
        if (rope) begin
          if (e.on) trig_step(0, 1'b1, e, o);
          cs[1] <= o;
        end
      end
    for (genvar s = 1; s < DMAX; s++) begin : stage
      // Stage ROPE_TRIG's step is also ROPE's rotation (y = x cos -+ x' sin,
      // the pair's first half subtracting), which needs the cosine chain's
      // end: an elaboration-time condition, so other stages build none of it.
      always_ff @(posedge clk)
        if (adv && v[s] && s < int'(depth)) begin
          sfu_st_t o;
          if (st[s].on && ef < E_NORM) sfu_step(ef, s, depth, fmt, st[s], o);
          else if (st[s].on) row_step(ef, s, depth, fmt, st[s], o);
          else o = st[s];
          if (s == ROPE_TRIG && rope && st[s].on)
            o.y = st[s].n[0] ? fp_sub(fmul(st[s].b, cs[ROPE_TRIG].y), fmul(st[s].c, st[s].y))
                             : fadd(fmul(st[s].b, cs[ROPE_TRIG].y), fmul(st[s].c, st[s].y));
          st[s + 1] <= o;
        end
      if (s < ROPE_TRIG) begin : cos_stage
        always_ff @(posedge clk)
          if (adv && v[s] && rope) begin
            sfu_st_t o;
            o = cs[s];
            if (cs[s].on && !cs[s].fin) trig_step(s, 1'b1, cs[s], o);
            cs[s + 1] <= o;
          end
      end
    end
    assign ey[l] = st[depth].y;
    assign eon[l] = st[depth].on;
    assign out_y[l] = !red ? ey[l] : (l == 0) ? rres : 32'd0;
    assign out_mask[l] = !red ? eon[l] : (l == 0);
  end
endmodule

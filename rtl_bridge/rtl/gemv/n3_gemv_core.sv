// n3_gemv_core: one GEMV core (docs/rtl_gemv.md, "GEMV engine"). It takes the
// weight rows dealt to it (its own weight stream), holds them in three row
// buffers (one fills, one may sit in the BFP quantiser's last clock, the MAC
// reads the third: no bubble between rows) and runs one pass over
// the row per activation vector the row serves: LANES multiply-accumulates
// per clock, block partials exact, each block aligned to the pass's e_top
// (fp_acc_align) into a 64-bit accumulator, then the single rounding
// (fp_acc_round) in the finish stage; group scales and float weights sum
// f32 terms in the 32-lane tree of num::lane_tree.
//
// Row stream (w_*): ceil(L / LANES) beats per row, beat j holding elements
// [j*LANES, j*LANES + LANES) as raw bytes of the stored format (INT4 two per
// byte, even element in the low nibble; INT8 a byte; bf16/f16 two bytes; f32
// four), little-endian like memory. The row's first beat carries w_scale
// (row scale, f32 bits), w_tag (returned with its results) and w_vlo (first
// activation vector the row serves); every beat carries in w_gsc slot s the
// group scale (f32, SM_GROUP) or block scale (low 8 bits, SM_TWO) of the
// group starting at element j*LANES + 8s, if one starts there.
module n3_gemv_core #(
  parameter int LANES = 32,
  parameter int BMAX = 64,
  parameter int WROW = 16384,   // row buffer: elements of one row
  parameter int PMAX = 16,      // vectors served by one BFP row (e_top registers)
  parameter int AW = 20,        // activation buffer address bits
  parameter int XW = 17,        // activation exponent buffer address bits
  parameter int VW = 12,         // vector index bits
  parameter int NS = (LANES / 8 > 0) ? LANES / 8 : 1  // group starts per weight beat at most
) (
  input  logic                         clk,
  input  logic                         rst_n,
  input  logic                         start,      // a command was taken: clear the job state
  input  logic                         wgo,        // weight rows may flow (for BFP rows: activations are in)
  input  logic                         go,         // activations are in: the MAC may run
  input  logic [1:0]                   wkind, smode, wfmt, ofmt,
  input  logic [4:0]                   mbits,
  input  logic [2:0]                   blog,
  input  logic [31:0]                  group, len, lpad, nblk, vp, nrows,
  input  logic                         w_valid,
  output logic                         w_ready,
  input  logic [LANES*32-1:0]          w_data,
  input  logic [31:0]                  w_scale, w_tag, w_vlo,
  input  logic [NS*32-1:0]             w_gsc,
  output logic [AW-1:0]                act_addr,
  input  logic [LANES-1:0][31:0]       act_data,
  output logic [XW-1:0]                ax_addr,
  input  logic signed [15:0]           ax_data,
  output logic [PMAX-1:0][XW-1:0]      ex_addr,
  input  logic [PMAX-1:0][15:0]        ex_data,
  output logic [VW-1:0]                vv_addr,
  input  logic signed [15:0]           vv_emax,
  input  logic                         vv_pois,
  output logic                         r_valid,
  input  logic                         r_ready,
  output logic [31:0]                  r_data, r_tag, r_vi,
  output logic                         done
);
  import n3_fp_pkg::*;
  import n3_gemv_pkg::*;
  localparam int RW = $clog2(WROW);                    // row buffer index bits (per buffer)
  localparam int NG = WROW / 8;                        // groups / blocks per row at most
  localparam int GW = $clog2(NG);
  localparam int CW = $clog2(LANES + 1);

  // ---------------------------------------------------------------- buffers
  localparam int NB = 3;                 // row buffers
  logic [31:0] wbuf [NB * WROW];         // row elements: INT4/INT8 values, f32 bits or BFP mantissas
  logic signed [15:0] wexp [NB * NG];    // BFP rows: block exponents
  logic [31:0] gsc [NB * NG];            // group / block scales
  logic [31:0] rscale [NB], rtag [NB], rvlo [NB];
  logic [NB-1:0] full;                   // buffer holds a complete row
  logic signed [15:0] etop [NB][PMAX];   // BFP rows: e_top per served vector
  logic [PMAX-1:0] eany [NB];            // ... and whether any block pair was non-zero
  logic [NB-1:0] wpois;                  // BFP row holds NaN/Inf
  function automatic logic [1:0] nextb(logic [1:0] b);
    return (b == 2'(NB - 1)) ? 2'd0 : b + 2'd1;
  endfunction

  logic bfp, isfloat, grp, two;
  assign bfp = wkind == WK_BFP;
  assign isfloat = wkind == WK_FLOAT;
  assign grp = wkind == WK_INT4 && smode == SM_GROUP;
  assign two = wkind == WK_INT4 && smode == SM_TWO;
  logic [6:0] bsize;
  assign bsize = 7'd1 << blog;

  // ------------------------------------------------------------ row loader
  logic [1:0] wb;            // buffer the next accepted beat goes to
  logic [31:0] lpos;         // element of the next beat within its row
  logic [31:0] lrows;        // rows whose last beat was accepted
  logic [31:0] ngs, gidx;    // next group start, its group index
  logic [LANES-1:0][31:0] wconv;  // elements of the beat as f32 (float rows)
  logic [LANES-1:0][31:0] wint;   // elements of the beat as integers (INT4 / INT8)
  logic take, row_last;

  for (genvar i = 0; i < LANES; i++) begin : g_int
    assign wint[i] = (wkind == WK_INT4) ? {{28{w_data[4 * i + 3]}}, w_data[4 * i +: 4]}
                                        : {{24{w_data[8 * i + 7]}}, w_data[8 * i +: 8]};
  end
  // Float and BFP rows read the beat as f32; integer rows never do (the
  // branch is why the leaves are functions: see n3_fp_pkg).
  always_comb begin
    wconv = '0;
    if (w_valid && (isfloat || bfp))
      for (int i = 0; i < LANES; i++)
        wconv[i] = fp_to_f32((wfmt == FMT_F32 || wfmt == 2'd3) ? w_data[32 * i +: 32] : {16'd0, w_data[16 * i +: 16]},
                             wfmt);
  end

  // BFP rows: the beat goes through the blocker; blocks come out into buffer qwb.
  logic bk_ready, bk_valid, bk_last;
  logic signed [15:0] bk_exp;
  logic [BMAX-1:0][15:0] bk_mant;
  logic [1:0] qwb;
  logic [31:0] qblk;
  logic [CW-1:0] beat_cnt;
  assign row_last = lpos + 32'(LANES) >= len;
  assign beat_cnt = row_last ? CW'(len - lpos) : CW'(LANES);
  assign w_ready = wgo && lrows < nrows && !full[wb] && (!bfp || bk_ready);
  assign take = w_valid && w_ready;

  n3_gemv_blocker #(.NE(LANES), .BMAX(BMAX)) u_blk (
    .clk(clk), .rst_n(rst_n && !start), .blog(blog), .mbits(mbits), .in_valid(w_valid && w_ready && bfp),
    .in_ready(bk_ready), .in_vals(wconv), .in_cnt(beat_cnt), .in_last(row_last), .out_valid(bk_valid),
    .out_last(bk_last), .out_exp(bk_exp), .out_mant(bk_mant));

  // e_top of the vectors a BFP row serves: max over blocks of (activation
  // block exponent + row block exponent) where neither is all-zero, formed
  // as the blocks come out of the quantiser (num::dot_bfp_bfp's first loop).
  logic [31:0] q_ebase;
  assign q_ebase = (rvlo[qwb]) * nblk + qblk;
  for (genvar s = 0; s < PMAX; s++) begin : g_exa
    assign ex_addr[s] = XW'(q_ebase + 32'(s) * nblk);
  end

  always_ff @(posedge clk) begin
    if (!rst_n || start) begin
      wb <= '0;
      lpos <= '0;
      lrows <= '0;
      qwb <= '0;
      qblk <= '0;
      ngs <= '0;
      gidx <= '0;
    end else begin
      if (take) begin
        if (lpos == 0) begin
          rscale[wb] <= w_scale;
          rtag[wb] <= w_tag;
          rvlo[wb] <= w_vlo;
        end
        if (!bfp)
          for (int i = 0; i < LANES; i++)
            if (lpos + 32'(i) < len)
              wbuf[{wb, RW'(lpos + 32'(i))}] <= (wkind == WK_FLOAT) ? wconv[i] : wint[i];
        // Group / block scales riding on the beats: at most one per 8 elements.
        if (grp || two) begin
          logic [31:0] n, g;
          n = (lpos == 0) ? 32'd0 : ngs;
          g = (lpos == 0) ? 32'd0 : gidx;
          for (int s = 0; s < NS; s++)
            if (lpos + 32'(8 * s) == n && n < len) begin
              gsc[{wb, GW'(g)}] <= w_gsc[32 * s +: 32];
              g = g + 1;
              n = n + group;
            end
          ngs <= n;
          gidx <= g;
        end
        if (row_last) begin
          lpos <= '0;
          lrows <= lrows + 1;
          wb <= nextb(wb);
        end else begin
          lpos <= lpos + 32'(LANES);
        end
      end
      if (bfp && bk_valid) begin
        for (int i = 0; i < BMAX; i++)
          if (7'(i) < bsize) wbuf[{qwb, RW'((qblk << blog) + 32'(i))}] <= {{16{bk_mant[i][15]}}, bk_mant[i]};
        wexp[{qwb, GW'(qblk)}] <= bk_exp;
        wpois[qwb] <= (qblk == 0 ? 1'b0 : wpois[qwb]) | (bk_exp == EXP_POISON);
        for (int s = 0; s < PMAX; s++) begin
          logic signed [15:0] ax;
          logic signed [15:0] x;
          logic any;
          ax = ex_data[s];
          x = ax + bk_exp;
          any = (qblk == 0) ? 1'b0 : eany[qwb][s];
          if (ax != EXP_ZERO && ax != EXP_POISON && bk_exp != EXP_ZERO && bk_exp != EXP_POISON) begin
            if (!any || x > etop[qwb][s]) etop[qwb][s] <= x;
            eany[qwb][s] <= 1'b1;
          end else begin
            eany[qwb][s] <= any;
          end
        end
        if (bk_last) begin
          qwb <= nextb(qwb);
          qblk <= '0;
        end else begin
          qblk <= qblk + 1;
        end
      end
    end
  end

  // ------------------------------------------------------------------ MAC
  // One pass = one (row, vector) dot product. Per clock k elements: up to
  // LANES, never across a BFP block (one aligner per core), and, with float
  // weights, LANES at a time regardless of blocks.
  logic [1:0] mrb;                     // buffer of the row being passed over
  logic [31:0] mvi, mpos, mblk, mbpos, mg, mgb, mrows;
  logic signed [63:0] mpb, macc;       // block partial, accumulator
  logic [31:0] lanes [32];             // f32 lane-tree lanes (group sums, float products)
  logic run, stall, pass_end, bend, gbound, gend, zblk;
  logic [31:0] k, v;
  logic signed [15:0] x_b, e_top, wx;
  logic signed [63:0] psum, pnew, term, aligned, acc1;
  logic [31:0] y_g;
  logic [31:0] bpg;
  assign bpg = group >> blog;

  assign run = go && full[mrb];
  assign v = rvlo[mrb] + mvi;
  assign act_addr = AW'(v * lpad + mpos);
  assign ax_addr = XW'(v * nblk + mblk);
  assign vv_addr = VW'(v);
  assign wx = wexp[{mrb, GW'(mblk)}];

  always_comb begin
    logic [31:0] kb;
    logic signed [31:0] a, w;
    a = '0;
    w = '0;
    kb = isfloat ? 32'(LANES) : ((32'(bsize) - mbpos < 32'(LANES)) ? 32'(bsize) - mbpos : 32'(LANES));
    k = (len - mpos < kb) ? len - mpos : kb;
    pass_end = mpos + k == len;
    bend = (mbpos + k == 32'(bsize)) || pass_end;
    gbound = (grp || two) && bend && (mgb + 1 == bpg || pass_end);  // last block of a scale group
    gend = grp && gbound;
    psum = '0;
    if (run && !isfloat)
      for (int i = 0; i < LANES; i++) begin
        a = {{16{act_data[i][15]}}, act_data[i][15:0]};
        w = {{16{wbuf[{mrb, RW'(mpos + 32'(i))}][15]}}, wbuf[{mrb, RW'(mpos + 32'(i))}][15:0]};
        if (32'(i) < k) psum = psum + 64'(a * w);
      end
    pnew = mpb + psum;
    x_b = bfp ? ax_data + wx : ax_data;
    zblk = ax_data == EXP_ZERO || ax_data == EXP_POISON || (bfp && (wx == EXP_ZERO || wx == EXP_POISON));
    if (bfp) e_top = eany[mrb][mvi[$clog2(PMAX)-1:0]] ? etop[mrb][mvi[$clog2(PMAX)-1:0]] : 16'sd0;
    else e_top = (vv_emax == EXP_ZERO) ? 16'sd0 : vv_emax;
    term = two ? pnew * $signed({1'b0, gsc[{mrb, GW'(mg)}][7:0]}) : pnew;
    aligned = (run && bend && !zblk) ? fp_acc_align(term, x_b, e_top) : 64'sd0;
    acc1 = macc + aligned;
    // A group's sum is rounded at its end only.
    y_g = (run && gend) ? fp_acc_round(acc1, e_top, gsc[{mrb, GW'(mg)}], FMT_F32) : 32'd0;
  end

  // The 32 lanes: float weights add one product per lane per clock (lane of
  // element i is i mod 32, LANES divides 32); group sums add y_g into lane g mod 32.
  logic [31:0] lanes_next [32];
  always_comb begin
    logic [31:0] off, ii;
    off = mpos % 32;
    ii = '0;
    for (int l = 0; l < 32; l++) lanes_next[l] = lanes[l];
    if (run && isfloat)
      for (int l = 0; l < 32; l++) begin
        ii = 32'(l) - off;
        if (32'(l) >= off && ii < k)
          lanes_next[l] = fp_add(lanes[l], fp_mul(act_data[ii[$clog2(LANES)-1:0]], wbuf[{mrb, RW'(mpos + ii)}]));
      end
    else if (run && gend)
      lanes_next[mg[4:0]] = fp_add(lanes[mg[4:0]], y_g);
  end

  // ---------------------------------------------------------- finish stage
  // Integer kinds: the one rounding in one clock. Lane-tree kinds (group,
  // float): five clocks of the tree (lanes j += lanes j + off, off = 16 .. 1),
  // then the rounding to the output format.
  logic f_valid, f_tree, f_pois;
  logic [2:0] f_step;
  logic signed [63:0] f_acc;
  logic signed [15:0] f_etop;
  logic [31:0] f_scale, f_tag, f_vi;
  logic [31:0] f_lanes [32];
  logic [31:0] f_sum [16];
  logic [31:0] y_int, y_tree;
  logic o_valid;
  logic fin_done, fin_free, out_free;

  // Each leaf runs only in the step of the finish stage that uses it.
  always_comb begin
    for (int j = 0; j < 16; j++) f_sum[j] = '0;
    y_int = '0;
    y_tree = '0;
    if (f_valid && f_tree && f_step != 3'd5)
      for (int j = 0; j < 16; j++) f_sum[j] = fp_add(f_lanes[j], f_lanes[5'(j) + (5'd16 >> f_step)]);
    if (f_valid && f_tree && f_step == 3'd5) y_tree = fp_round_fmt(f_lanes[0], ofmt);
    if (f_valid && !f_tree) y_int = fp_acc_round(f_acc, f_etop, f_scale, ofmt);
  end

  assign out_free = !o_valid || r_ready;
  assign fin_done = f_valid && (!f_tree || f_step == 3'd5) && out_free;
  assign fin_free = !f_valid || fin_done;
  assign stall = pass_end && !fin_free;
  assign r_valid = o_valid;

  always_ff @(posedge clk) begin
    if (!rst_n || start) begin
      mrb <= '0;
      mvi <= '0;
      mpos <= '0;
      mblk <= '0;
      mbpos <= '0;
      mg <= '0;
      mgb <= '0;
      mpb <= '0;
      macc <= '0;
      mrows <= '0;
      for (int l = 0; l < 32; l++) lanes[l] <= '0;
      f_valid <= 1'b0;
      o_valid <= 1'b0;
      full <= '0;
    end else begin
      // Rows complete in the loader (set) and leave after their last pass (clear).
      if (take && row_last && !bfp) full[wb] <= 1'b1;
      if (bfp && bk_valid && bk_last) full[qwb] <= 1'b1;
      if (run && !stall) begin
        if (pass_end) begin
          f_valid <= 1'b1;
          f_tree <= grp || isfloat;
          f_step <= '0;
          f_acc <= acc1;
          f_etop <= e_top;
          f_scale <= rscale[mrb];
          f_pois <= !isfloat && (vv_pois || (bfp && wpois[mrb]));
          f_tag <= rtag[mrb];
          f_vi <= mvi;
          for (int l = 0; l < 32; l++) begin
            f_lanes[l] <= lanes_next[l];
            lanes[l] <= '0;
          end
          mpos <= '0;
          mblk <= '0;
          mbpos <= '0;
          mg <= '0;
          mgb <= '0;
          mpb <= '0;
          macc <= '0;
          if (mvi + 1 == vp) begin
            mvi <= '0;
            full[mrb] <= 1'b0;
            mrb <= nextb(mrb);
            mrows <= mrows + 1;
          end else begin
            mvi <= mvi + 1;
          end
        end else begin
          mpos <= mpos + k;
          mbpos <= bend ? '0 : mbpos + k;
          mblk <= mblk + (bend ? 1 : 0);
          mpb <= bend ? 64'sd0 : pnew;
          macc <= gend ? 64'sd0 : acc1;
          if (bend) mgb <= gbound ? '0 : mgb + 1;
          if (gbound) mg <= mg + 1;
          for (int l = 0; l < 32; l++) lanes[l] <= lanes_next[l];
        end
      end
      if (f_valid && f_tree && f_step != 3'd5) begin
        for (int j = 0; j < 16; j++)
          if (5'(j) < (5'd16 >> f_step)) f_lanes[j] <= f_sum[j];
        f_step <= f_step + 1;
      end
      if (fin_done && !(run && !stall && pass_end)) f_valid <= 1'b0;
      if (fin_done) begin
        o_valid <= 1'b1;
        r_data <= f_pois ? NAN_BITS : (f_tree ? y_tree : y_int);
        r_tag <= f_tag;
        r_vi <= f_vi;
      end else if (r_ready) begin
        o_valid <= 1'b0;
      end
    end
  end

  assign done = mrows == nrows && !f_valid && !o_valid;
endmodule

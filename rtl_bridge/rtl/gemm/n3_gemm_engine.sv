// n3_gemm_engine: the GEMM engine (docs/rtl_gemm.md): a weight-stationary
// array of ROWS x COLS processing elements of MPE multiply-accumulates each.
// A job is one gemm.mv instruction, y[T, N] = x[T, K] W[N, K]^T, cut into
// the engine's canonical form by the driver (rtl_bridge/gemm_rtl.cc):
//   one command beat; the T activation rows on the activation stream
//   (quantised to BFP block by block as they arrive, as the GEMV engine
//   does, with its blocker); the weight tiles on the weight stream; the
//   results, one beat per (N tile, token) carrying COLS values.
// A weight tile is KT = ROWS * MPE elements of K by COLS weight rows (N),
// ROWS beats (one array row each) in the order N tile major, K tile minor.
// The PEs hold two tiles (double buffering): the next tile loads while the
// array passes the current one's tokens, so with T >= ROWS the array never
// waits for weights. Each clock one token enters the array; its COLS sums
// leave the bottom of the array ROWS + COLS - 1 clocks later (the wavefront's
// skew) into an output accumulator of T x COLS exact integer sums per N
// tile, so a dot product over K tiles is the same exact integer sum
// as the GEMV engine's and rounds once (fp_acc_round): GEMM and GEMV give
// identical bits (isa.yaml, GEMM).
// Modelling note: the array's arithmetic is written as the sum the
// wavefront forms (all of a token's products in its entry clock, added to
// the output accumulator then) followed by a ROWS + COLS - 1 stage delay
// line that carries the token to the accumulator's drain; the cycle
// behaviour is the skewed array's, the per-PE pipeline registers are not
// spelled out (docs/rtl_gemm.md). Because the sums land D clocks early, an
// accumulator is reused only once its tokens have drained, and NA banks
// (one accumulating, one draining, the rest covering the skew) keep the
// array from waiting on the drain at any T (docs/rtl_gemm.md, "Pipeline").
// Weight kinds: INT4 and INT8 with a row scale, INT4 with TWO_LEVEL scales
// (a block scale per group multiplies each BFP block partial). GROUP scales
// and float weights (f32 lane trees) are not in this engine: the driver
// refuses them in one line.
module n3_gemm_engine #(
  parameter int ROWS = 32,
  parameter int COLS = 32,
  parameter int MPE = 2,
  parameter int BMAX = 64,              // largest numerics.bfp_block
  parameter int TMAX = 512,             // tokens per job
  parameter int ACT_ELEMS = 1 << 19     // activation buffer: T x K rounded up to blocks
) (
  input  logic                    clk,
  input  logic                    rst_n,
  input  logic                    cmd_valid,
  output logic                    cmd_ready,
  input  logic                    cmd_int8,    // 0: INT4 weights, 1: INT8
  input  logic                    cmd_two,     // TWO_LEVEL scales (INT4)
  input  logic [1:0]              cmd_afmt,    // activation storage format (fmt code)
  input  logic [1:0]              cmd_ofmt,    // result format
  input  logic [4:0]              cmd_mbits,   // BFP mantissa bits
  input  logic [2:0]              cmd_blog,    // log2 bfp_block (>= 3)
  input  logic [31:0]             cmd_ntok,    // T
  input  logic [31:0]             cmd_len,     // K
  input  logic [31:0]             cmd_ntiles,  // N tiles: ceil(N / COLS)
  // Activations: 256-bit beats of stored elements (8 f32 or 16 bf16/f16).
  input  logic                    a_valid,
  output logic                    a_ready,
  input  logic [255:0]            a_data,
  // Weights: one array row of a tile per beat. Element m of column c is
  // byte c * MPE + m (INT4: the low nibble); w_scale: the row scale of
  // each column (f32), taken on a tile's first beat; w_bsc: each column's
  // block scale (TWO_LEVEL) of the beat's elements.
  input  logic                    w_valid,
  output logic                    w_ready,
  input  logic [COLS*MPE*8-1:0]   w_data,
  input  logic [COLS*32-1:0]      w_scale,
  input  logic [COLS*8-1:0]       w_bsc,
  // Results: one token of one N tile per beat, f32 bits of the value in
  // the result format per column.
  output logic                    r_valid,
  input  logic                    r_ready,
  output logic [COLS*32-1:0]      r_data,
  output logic [31:0]             r_tok,
  output logic [31:0]             r_tile,
  output logic                    busy
);
  import n3_fp_pkg::*;
  import n3_gemv_pkg::EXP_ZERO;
  import n3_gemv_pkg::EXP_POISON;
  localparam int KT = ROWS * MPE;        // K elements per tile
  localparam int AW = $clog2(ACT_ELEMS);
  localparam int XW = $clog2(ACT_ELEMS / 8);
  localparam int TW = $clog2(TMAX);
  localparam int RW = (ROWS > 1) ? $clog2(ROWS) : 1;
  localparam int D = ROWS + COLS - 1;    // entry to the bottom of the last column
  // Output accumulators: N tiles are at least min(T, ROWS + 1) clocks apart
  // per K tile, and a bank is free T + D + 1 clocks after its N tile's last
  // K tile began, so 2 + ceil(D / (ROWS + 1)) banks never stall the array.
  localparam int NA = 2 + (D + ROWS) / (ROWS + 1);
  localparam int NW = $clog2(NA);

  logic [15:0] act_mem [ACT_ELEMS];      // BFP mantissas
  logic signed [15:0] aexp [ACT_ELEMS / 8];
  logic signed [15:0] vemax [TMAX];      // per token: e_max over non-zero blocks
  logic vpois [TMAX];                    // per token: a block held NaN/Inf

  typedef enum logic [1:0] { S_IDLE, S_ACT, S_RUN } st_t;
  st_t st;
  logic c_int8, c_two;
  logic [1:0] c_afmt, c_ofmt;
  logic [4:0] c_mbits;
  logic [2:0] c_blog;
  logic [31:0] c_ntok, c_len, c_ntiles, c_nk, c_lpad, c_nblk;
  logic start;
  assign cmd_ready = st == S_IDLE;
  assign start = cmd_valid && cmd_ready;

  // ------------------------------------------------------ activation stream
  // As n3_gemv_engine's: 16 lanes convert a beat, the blocker quantises.
  logic [31:0] av, apos;
  logic [4:0] epb, a_cnt;
  logic a_last, a_take;
  logic [15:0][31:0] a_conv;
  assign epb = (c_afmt == FMT_F32 || c_afmt == 2'd3) ? 5'd8 : 5'd16;
  assign a_last = apos + 32'(epb) >= c_len;
  assign a_cnt = a_last ? 5'(c_len - apos) : epb;
  always_comb begin
    a_conv = '0;
    if (a_valid && st == S_ACT)
      for (int j = 0; j < 16; j++)
        if (c_afmt == FMT_F32 || c_afmt == 2'd3) a_conv[j] = (j < 8) ? fp_to_f32(a_data[32 * (j % 8) +: 32], c_afmt) : 32'd0;
        else a_conv[j] = fp_to_f32({16'd0, a_data[16 * j +: 16]}, c_afmt);
  end
  logic bk_ready, bk_valid, bk_last;
  logic signed [15:0] bk_exp;
  logic [BMAX-1:0][15:0] bk_mant;
  assign a_ready = st == S_ACT && av < c_ntok && bk_ready;
  assign a_take = a_valid && a_ready;
  n3_gemv_blocker #(.NE(16), .BMAX(BMAX)) u_blk (
    .clk(clk), .rst_n(rst_n && !start), .blog(c_blog), .mbits(c_mbits), .in_valid(a_take), .in_ready(bk_ready),
    .in_vals(a_conv), .in_cnt(a_cnt), .in_last(a_last), .out_valid(bk_valid), .out_last(bk_last),
    .out_exp(bk_exp), .out_mant(bk_mant));
  logic [31:0] qv, qblk, qabase, qebase;
  logic signed [15:0] qemax;
  logic qhave, qpois;

  // ------------------------------------------------------ weight tiles (PEs)
  // Two banks of PE weights; a bank is full from its last beat until the
  // array has passed the tile's last token.
  logic [7:0] wsh [2][ROWS][COLS*MPE];   // element j of column c at index c * MPE + j % MPE (array row j / MPE)
  logic [COLS*8-1:0] wbs [2][ROWS];
  logic [COLS*32-1:0] wrs [2];
  logic [1:0] wfull;
  logic lb;
  logic [RW-1:0] lr;
  logic [31:0] ltiles;
  assign w_ready = (st == S_ACT || st == S_RUN) && ltiles < c_ntiles * c_nk && !wfull[lb];

  // ------------------------------------------------------------ the array
  logic cb;                 // bank the array passes
  logic [31:0] ct, ckt, cnt;  // token, K tile, N tile
  logic signed [63:0] pbuf [TMAX][COLS];     // a block's partial left open at a K tile's end
  logic signed [63:0] accm [NA][TMAX][COLS]; // output accumulators, N tile i in bank i mod NA
  logic [COLS*32-1:0] ers [NA];            // their row scales
  logic [31:0] etile [NA];                 // their N tile
  logic [NA-1:0] abusy;                    // accumulator holds an N tile not yet drained
  logic [NW-1:0] ab;
  logic fire, ktile_end;
  logic signed [63:0] p_next [COLS], acc_next [COLS];
  logic signed [15:0] t_etop;
  assign fire = st == S_RUN && wfull[cb] && (ckt != 0 || ct != 0 || !abusy[ab]);
  assign ktile_end = ct + 1 == c_ntok;
  assign t_etop = (vemax[TW'(ct)] == EXP_ZERO) ? 16'sd0 : vemax[TW'(ct)];

  // A token's pass: per column, element by element in K order, block
  // partials exact, each aligned onto the token's e_top when its block ends
  // (num::dot_int4_row / dot_int8_bfp), a block cut by the tile's end kept
  // in pbuf for the next K tile. What depends on the element alone (its
  // activation, whether its block ends there, the block's exponent) is
  // formed once for all columns.
  logic signed [15:0] e_a [KT], e_x [KT];
  logic e_in [KT], e_end [KT], e_zero [KT];
  always_comb begin
    logic [31:0] k;
    k = '0;
    for (int j = 0; j < KT; j++) begin
      k = ckt * 32'(KT) + 32'(j);
      e_in[j] = fire && k < c_len;
      e_a[j] = e_in[j] ? $signed(act_mem[AW'(ct * c_lpad + k)]) : 16'sd0;
      e_end[j] = ((k + 1) & ((32'd1 << c_blog) - 1)) == 0 || k + 1 == c_len;
      e_x[j] = e_in[j] && e_end[j] ? aexp[XW'(ct * c_nblk + (k >> c_blog))] : 16'sd0;
      e_zero[j] = e_x[j] == EXP_ZERO || e_x[j] == EXP_POISON;
    end
  end
  always_comb begin
    logic signed [63:0] p, acc, term;
    logic signed [31:0] w;
    logic [7:0] wb;
    {p, acc, term, w, wb} = '0;
    for (int c = 0; c < COLS; c++) begin
      p_next[c] = '0;
      acc_next[c] = '0;
    end
    if (fire)
      for (int c = 0; c < COLS; c++) begin
        p = (ckt == 0) ? 64'sd0 : pbuf[TW'(ct)][c];
        acc = (ckt == 0) ? 64'sd0 : accm[ab][TW'(ct)][c];
        for (int j = 0; j < KT; j++)
          if (e_in[j]) begin
            wb = wsh[cb][j / MPE][c * MPE + j % MPE];
            w = c_int8 ? {{24{wb[7]}}, wb} : {{28{wb[3]}}, wb[3:0]};
            p = p + 64'(32'(e_a[j]) * w);
            if (e_end[j]) begin
              term = c_two ? p * $signed({56'd0, wbs[cb][j / MPE][8 * c +: 8]}) : p;
              if (!e_zero[j]) acc = acc + fp_acc_align(term, e_x[j], t_etop);
              p = '0;
            end
          end
        p_next[c] = p;
        acc_next[c] = acc;
      end
  end

  // The wavefront's skew: a token of an N tile's last K tile reaches the
  // output accumulator's drain D clocks after it entered.
  logic [D-1:0] dl_v;
  logic [NW-1:0] dl_b [D];
  logic [31:0] rdy [NA];    // tokens of each accumulator ready to drain

  // ------------------------------------------------------- result drain
  logic [NW-1:0] e_b;
  logic [31:0] e_t, etiles;
  logic o_valid, emit;
  logic [COLS*32-1:0] y;
  assign emit = (!o_valid || r_ready) && e_t < rdy[e_b];
  always_comb begin
    y = '0;
    if (emit)
      for (int c = 0; c < COLS; c++)
        y[32 * c +: 32] = vpois[TW'(e_t)] ? NAN_BITS
                        : fp_acc_round(accm[e_b][TW'(e_t)][c],
                                       (vemax[TW'(e_t)] == EXP_ZERO) ? 16'sd0 : vemax[TW'(e_t)],
                                       ers[e_b][32 * c +: 32], c_ofmt);
  end
  assign r_valid = o_valid;
  assign busy = st != S_IDLE;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      st <= S_IDLE;
      o_valid <= 1'b0;
      wfull <= '0;
      abusy <= '0;
      dl_v <= '0;
      for (int i = 0; i < NA; i++) rdy[i] <= '0;
    end else begin
      case (st)
        S_IDLE:
          if (start) begin
            c_int8 <= cmd_int8;
            c_two <= cmd_two;
            c_afmt <= cmd_afmt;
            c_ofmt <= cmd_ofmt;
            c_mbits <= cmd_mbits;
            c_blog <= cmd_blog;
            c_ntok <= cmd_ntok;
            c_len <= cmd_len;
            c_ntiles <= cmd_ntiles;
            c_nk <= (cmd_len + 32'(KT) - 1) / 32'(KT);
            c_nblk <= (cmd_len + (32'd1 << cmd_blog) - 1) >> cmd_blog;
            c_lpad <= ((cmd_len + (32'd1 << cmd_blog) - 1) >> cmd_blog) << cmd_blog;
            {av, apos, qv, qblk, qabase, qebase} <= '0;
            qhave <= 1'b0;
            qpois <= 1'b0;
            {ltiles, ct, ckt, cnt, e_t, etiles} <= '0;
            lb <= 1'b0;
            lr <= '0;
            cb <= 1'b0;
            ab <= '0;
            e_b <= '0;
            st <= S_ACT;
          end
        S_ACT: begin
          if (a_take) begin
            if (a_last) begin
              apos <= '0;
              av <= av + 1;
            end else begin
              apos <= apos + 32'(epb);
            end
          end
          if (bk_valid) begin
            logic signed [15:0] e;
            logic h, p;
            for (int i = 0; i < BMAX; i++)
              if (32'(i) < (32'd1 << c_blog)) act_mem[AW'(qabase + (qblk << c_blog) + 32'(i))] <= bk_mant[i];
            aexp[XW'(qebase + qblk)] <= bk_exp;
            e = qemax;
            h = qhave;
            p = qpois | (bk_exp == EXP_POISON);
            if (bk_exp != EXP_ZERO && bk_exp != EXP_POISON && (!h || bk_exp > e)) begin
              e = bk_exp;
              h = 1'b1;
            end
            if (bk_last) begin
              vemax[TW'(qv)] <= h ? e : EXP_ZERO;
              vpois[TW'(qv)] <= p;
              qv <= qv + 1;
              qblk <= '0;
              qabase <= qabase + c_lpad;
              qebase <= qebase + c_nblk;
              qhave <= 1'b0;
              qpois <= 1'b0;
            end else begin
              qblk <= qblk + 1;
              qemax <= e;
              qhave <= h;
              qpois <= p;
            end
          end
          if (qv == c_ntok) st <= S_RUN;
        end
        S_RUN:
          if (etiles == c_ntiles && !o_valid) st <= S_IDLE;
        default: st <= S_IDLE;
      endcase

      // Weight loader (S_ACT and S_RUN: integer weights need nothing of the activations).
      if (w_valid && w_ready) begin
        for (int i = 0; i < COLS * MPE; i++) wsh[lb][lr][i] <= w_data[8 * i +: 8];
        wbs[lb][lr] <= w_bsc;
        if (lr == 0) wrs[lb] <= w_scale;
        if (lr == RW'(ROWS - 1)) begin
          lr <= '0;
          wfull[lb] <= 1'b1;
          lb <= ~lb;
          ltiles <= ltiles + 1;
        end else begin
          lr <= lr + 1;
        end
      end

      // The array.
      if (fire) begin
        for (int c = 0; c < COLS; c++) begin
          pbuf[TW'(ct)][c] <= p_next[c];
          accm[ab][TW'(ct)][c] <= acc_next[c];
        end
        if (ckt == 0 && ct == 0) begin
          abusy[ab] <= 1'b1;
          etile[ab] <= cnt;
        end
        if (ckt + 1 == c_nk && ct == 0) ers[ab] <= wrs[cb];
        if (ktile_end) begin
          ct <= '0;
          wfull[cb] <= 1'b0;
          cb <= ~cb;
          if (ckt + 1 == c_nk) begin
            ckt <= '0;
            cnt <= cnt + 1;
            ab <= (ab == NW'(NA - 1)) ? '0 : ab + 1;
          end else begin
            ckt <= ckt + 1;
          end
        end else begin
          ct <= ct + 1;
        end
      end
      dl_v <= {dl_v[D-2:0], fire && ckt + 1 == c_nk};
      dl_b[0] <= ab;
      for (int i = 1; i < D; i++) dl_b[i] <= dl_b[i - 1];

      // Drain: a token whose sums left the array rounds into a result beat.
      if (emit) begin
        o_valid <= 1'b1;
        r_data <= y;
        r_tok <= e_t;
        r_tile <= etile[e_b];
        if (e_t + 1 == c_ntok) begin
          e_t <= '0;
          e_b <= (e_b == NW'(NA - 1)) ? '0 : e_b + 1;
          etiles <= etiles + 1;
          abusy[e_b] <= 1'b0;
        end else begin
          e_t <= e_t + 1;
        end
      end else if (r_ready) begin
        o_valid <= 1'b0;
      end
      // (A bank's count grows only while the drain has not finished it.)
      for (int i = 0; i < NA; i++)
        if (emit && e_t + 1 == c_ntok && e_b == NW'(i)) rdy[i] <= '0;
        else if (dl_v[D-1] && dl_b[D-1] == NW'(i)) rdy[i] <= rdy[i] + 1;
    end
  end
endmodule

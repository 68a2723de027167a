// n3_gemv_engine: the GEMV engine (docs/rtl_gemv.md, "GEMV engine"): CORES cores
// of LANES multiply-accumulates per clock behind one activation buffer.
// A job (one gemv.mv / qk / pv instruction, cut into canonical form by the
// driver, rtl_bridge/gemv_rtl.cc) is one command beat, then its activation
// vectors on the activation stream (quantised to BFP block by block as they
// arrive, or kept as f32 for float weights), then its weight rows, dealt to
// the cores in turn (row u on core u mod CORES, each core its own weight
// stream), and the results, one stream per core tagged with (row, vector).
// Memories read combinationally (asynchronous reads): simple and
// synthesizable, not timed for 400 MHz (docs/rtl.md says so).
module n3_gemv_engine #(
  parameter int CORES = 4,
  parameter int LANES = 32,
  parameter int BMAX = 64,              // largest numerics.bfp_block
  parameter int ACT_ELEMS = 1 << 20,    // activation buffer: vectors x (len rounded up to blocks)
  parameter int VMAX = 4096,            // activation vectors per job
  parameter int WROW = 16384,           // longest row (dot product)
  parameter int PMAX = 16,              // vectors per row with BFP weights (qk/pv heads per KV head)
  parameter int SCALES = 65536,          // pv with INT8 values: token x KV-head scales
  parameter int NS = (LANES / 8 > 0) ? LANES / 8 : 1  // group starts per weight beat at most
) (
  input  logic                          clk,
  input  logic                          rst_n,
  // Command: one beat per job.
  input  logic                          cmd_valid,
  output logic                          cmd_ready,
  input  logic [1:0]                    cmd_wkind,   // n3_gemv_pkg WK_*
  input  logic [1:0]                    cmd_smode,   // n3_gemv_pkg SM_* (INT4)
  input  logic                          cmd_ascale,  // pv, INT8 values: p_t * scale_t first
  input  logic [1:0]                    cmd_afmt,    // activation storage format (fmt code)
  input  logic [1:0]                    cmd_wfmt,    // float weight storage format
  input  logic [1:0]                    cmd_ofmt,    // result format
  input  logic [4:0]                    cmd_mbits,   // BFP mantissa bits
  input  logic [2:0]                    cmd_blog,    // log2 bfp_block
  input  logic [31:0]                   cmd_group,   // scale group (elements), SM_GROUP / SM_TWO
  input  logic [31:0]                   cmd_nvec,    // activation vectors
  input  logic [31:0]                   cmd_len,     // dot length (elements per vector and row)
  input  logic [31:0]                   cmd_rows,    // weight rows
  input  logic [31:0]                   cmd_vp,      // vectors each row serves
  input  logic [31:0]                   cmd_nsc,     // cmd_ascale: scale words first on the activation stream
  input  logic [31:0]                   cmd_sstride, // cmd_ascale: scale words per KV head (= len)
  // Activations: 256-bit beats of stored elements (8 f32 or 16 bf16/f16).
  input  logic                          a_valid,
  output logic                          a_ready,
  input  logic [255:0]                  a_data,
  // Weight rows, one stream per core (n3_gemv_core).
  input  logic [CORES-1:0]              w_valid,
  output logic [CORES-1:0]              w_ready,
  input  logic [CORES-1:0][LANES*32-1:0] w_data,
  input  logic [CORES-1:0][31:0]        w_scale,
  input  logic [CORES-1:0][31:0]        w_tag,
  input  logic [CORES-1:0][31:0]        w_vlo,
  input  logic [CORES-1:0][NS*32-1:0]   w_gsc,
  // Results, one stream per core: f32 bits of the value in the result format.
  output logic [CORES-1:0]              r_valid,
  input  logic [CORES-1:0]              r_ready,
  output logic [CORES-1:0][31:0]        r_data,
  output logic [CORES-1:0][31:0]        r_tag,
  output logic [CORES-1:0][31:0]        r_vi,
  output logic                          busy
);
  import n3_fp_pkg::*;
  import n3_gemv_pkg::*;
  localparam int AW = $clog2(ACT_ELEMS);
  localparam int XW = $clog2(ACT_ELEMS / 8);
  localparam int VW = $clog2(VMAX);
  localparam int SW = $clog2(SCALES);

  logic [31:0] act_mem [ACT_ELEMS];      // BFP mantissas (sign-extended) or f32 bits
  logic signed [15:0] aexp [ACT_ELEMS / 8];  // block exponents
  logic signed [15:0] vemax [VMAX];      // per vector: e_max over non-zero blocks
  logic vpois [VMAX];                    // per vector: a block held NaN/Inf
  logic [31:0] sbuf [SCALES];            // pv INT8: scales, KV head-major

  typedef enum logic [1:0] { S_IDLE, S_SCALE, S_ACT, S_RUN } st_t;
  st_t st;
  logic [1:0] c_wkind, c_smode, c_afmt, c_wfmt, c_ofmt;
  logic c_ascale;
  logic [4:0] c_mbits;
  logic [2:0] c_blog;
  logic [31:0] c_group, c_nvec, c_len, c_rows, c_vp, c_nsc, c_sstride, c_lpad, c_nblk;
  logic start, isfloat;
  assign cmd_ready = st == S_IDLE;
  assign start = cmd_valid && cmd_ready;
  assign busy = st != S_IDLE;
  assign isfloat = c_wkind == WK_FLOAT;

  // ------------------------------------------------------ activation stream
  logic [31:0] sw, av, apos, akv, askh, abase;
  logic [4:0] epb;
  logic a_last, a_take;
  logic [4:0] a_cnt;
  logic [15:0][31:0] a_conv, a_val;
  assign epb = (c_afmt == FMT_F32 || c_afmt == 2'd3) ? 5'd8 : 5'd16;
  assign a_last = apos + 32'(epb) >= c_len;
  assign a_cnt = a_last ? 5'(c_len - apos) : epb;

  // The 16 activation lanes convert a beat while one is offered in S_ACT
  // (the only time a_conv / a_val are read; the branch keeps the idle
  // engine cheap to simulate, see n3_fp_pkg).
  always_comb begin
    logic [31:0] raw;
    raw = '0;
    a_conv = '0;
    a_val = '0;
    if (a_valid && st == S_ACT)
      for (int j = 0; j < 16; j++) begin
        if (c_afmt == FMT_F32 || c_afmt == 2'd3) raw = (j < 8) ? a_data[32 * (j % 8) +: 32] : 32'd0;
        else raw = {16'd0, a_data[16 * j +: 16]};
        a_conv[j] = fp_to_f32(raw, c_afmt);
        // pv with INT8 values: p'_t = round_to(score_format, p_t * scale_t).
        a_val[j] = c_ascale ? fp_round_fmt(fp_mul(a_conv[j], sbuf[SW'(askh + apos + 32'(j))]), c_afmt) : a_conv[j];
      end
  end

  logic bk_ready, bk_valid, bk_last;
  logic signed [15:0] bk_exp;
  logic [BMAX-1:0][15:0] bk_mant;
  assign a_ready = st == S_SCALE || (st == S_ACT && av < c_nvec && (isfloat || bk_ready));
  assign a_take = a_valid && a_ready && st == S_ACT;
  n3_gemv_blocker #(.NE(16), .BMAX(BMAX)) u_blk (
    .clk(clk), .rst_n(rst_n && !start), .blog(c_blog), .mbits(c_mbits), .in_valid(a_take && !isfloat),
    .in_ready(bk_ready), .in_vals(a_val), .in_cnt(a_cnt), .in_last(a_last), .out_valid(bk_valid),
    .out_last(bk_last), .out_exp(bk_exp), .out_mant(bk_mant));

  // Quantised blocks land in the buffer; per vector, e_max and poison.
  logic [31:0] qv, qblk, qabase, qebase;
  logic signed [15:0] qemax;
  logic qhave, qpois;

  // ------------------------------------------------------------------ cores
  // Rows of integer and float weights load while the activations do; rows
  // quantised to BFP need the activation exponents (e_top) first.
  logic wgo;
  assign wgo = st == S_RUN || ((st == S_SCALE || st == S_ACT) && c_wkind != WK_BFP);
  logic [CORES-1:0][AW-1:0] act_addr;
  logic [CORES-1:0][LANES-1:0][31:0] act_data;
  logic [CORES-1:0][XW-1:0] ax_addr;
  logic [CORES-1:0][15:0] ax_data;
  logic [CORES-1:0][PMAX-1:0][XW-1:0] ex_addr;
  logic [CORES-1:0][PMAX-1:0][15:0] ex_data;
  logic [CORES-1:0][VW-1:0] vv_addr;
  logic [CORES-1:0][15:0] vv_emax;
  logic [CORES-1:0] vv_pois, cdone;

  for (genvar c = 0; c < CORES; c++) begin : g_core
    logic [31:0] nrows;
    assign nrows = (c_rows > 32'(c)) ? (c_rows - 32'(c) - 1) / 32'(CORES) + 1 : 32'd0;
    for (genvar i = 0; i < LANES; i++) begin : g_rd
      assign act_data[c][i] = act_mem[AW'(act_addr[c] + AW'(i))];
    end
    for (genvar s = 0; s < PMAX; s++) begin : g_ex
      assign ex_data[c][s] = aexp[ex_addr[c][s]];
    end
    assign ax_data[c] = aexp[ax_addr[c]];
    assign vv_emax[c] = vemax[vv_addr[c]];
    assign vv_pois[c] = vpois[vv_addr[c]];
    n3_gemv_core #(.LANES(LANES), .BMAX(BMAX), .WROW(WROW), .PMAX(PMAX), .AW(AW), .XW(XW), .VW(VW)) u_core (
      .clk(clk), .rst_n(rst_n), .start(start), .wgo(wgo), .go(st == S_RUN), .wkind(c_wkind), .smode(c_smode),
      .wfmt(c_wfmt), .ofmt(c_ofmt), .mbits(c_mbits), .blog(c_blog), .group(c_group), .len(c_len),
      .lpad(c_lpad), .nblk(c_nblk), .vp(c_vp), .nrows(nrows), .w_valid(w_valid[c]), .w_ready(w_ready[c]),
      .w_data(w_data[c]), .w_scale(w_scale[c]), .w_tag(w_tag[c]), .w_vlo(w_vlo[c]), .w_gsc(w_gsc[c]),
      .act_addr(act_addr[c]), .act_data(act_data[c]), .ax_addr(ax_addr[c]), .ax_data(ax_data[c]),
      .ex_addr(ex_addr[c]), .ex_data(ex_data[c]), .vv_addr(vv_addr[c]), .vv_emax(vv_emax[c]),
      .vv_pois(vv_pois[c]), .r_valid(r_valid[c]), .r_ready(r_ready[c]), .r_data(r_data[c]), .r_tag(r_tag[c]),
      .r_vi(r_vi[c]), .done(cdone[c]));
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      st <= S_IDLE;
    end else begin
      case (st)
        S_IDLE:
          if (start) begin
            c_wkind <= cmd_wkind;
            c_smode <= cmd_smode;
            c_ascale <= cmd_ascale;
            c_afmt <= cmd_afmt;
            c_wfmt <= cmd_wfmt;
            c_ofmt <= cmd_ofmt;
            c_mbits <= cmd_mbits;
            c_blog <= cmd_blog;
            c_group <= cmd_group;
            c_nvec <= cmd_nvec;
            c_len <= cmd_len;
            c_rows <= cmd_rows;
            c_vp <= cmd_vp;
            c_nsc <= cmd_nsc;
            c_sstride <= cmd_sstride;
            c_nblk <= (cmd_len + (32'd1 << cmd_blog) - 1) >> cmd_blog;
            c_lpad <= ((cmd_len + (32'd1 << cmd_blog) - 1) >> cmd_blog) << cmd_blog;
            sw <= '0;
            av <= '0;
            apos <= '0;
            akv <= '0;
            askh <= '0;
            abase <= '0;
            qv <= '0;
            qblk <= '0;
            qabase <= '0;
            qebase <= '0;
            qhave <= 1'b0;
            qpois <= 1'b0;
            st <= cmd_ascale ? S_SCALE : S_ACT;
          end
        S_SCALE:
          if (a_valid) begin
            for (int j = 0; j < 8; j++)
              if (sw + 32'(j) < c_nsc) sbuf[SW'(sw + 32'(j))] <= a_data[32 * j +: 32];
            sw <= sw + 8;
            if (sw + 8 >= c_nsc) st <= S_ACT;
          end
        S_ACT: begin
          if (a_take) begin
            if (isfloat)
              for (int j = 0; j < 16; j++)
                if (5'(j) < a_cnt) act_mem[AW'(abase + apos + 32'(j))] <= a_conv[j];
            if (a_last) begin
              apos <= '0;
              av <= av + 1;
              abase <= abase + c_lpad;
              if (akv + 1 == c_vp) begin
                akv <= '0;
                askh <= askh + c_sstride;
              end else begin
                akv <= akv + 1;
              end
            end else begin
              apos <= apos + 32'(epb);
            end
          end
          if (bk_valid) begin
            logic signed [15:0] e;
            logic h, p;
            for (int i = 0; i < BMAX; i++)
              if (32'(i) < (32'd1 << c_blog))
                act_mem[AW'(qabase + (qblk << c_blog) + 32'(i))] <= {{16{bk_mant[i][15]}}, bk_mant[i]};
            aexp[XW'(qebase + qblk)] <= bk_exp;
            e = qemax;
            h = qhave;
            p = qpois | (bk_exp == EXP_POISON);
            if (bk_exp != EXP_ZERO && bk_exp != EXP_POISON && (!h || bk_exp > e)) begin
              e = bk_exp;
              h = 1'b1;
            end
            if (bk_last) begin
              vemax[VW'(qv)] <= h ? e : EXP_ZERO;
              vpois[VW'(qv)] <= p;
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
          if (isfloat ? av == c_nvec : qv == c_nvec) st <= S_RUN;
        end
        S_RUN:
          if (&cdone) st <= S_IDLE;
        default: st <= S_IDLE;
      endcase
    end
  end
endmodule

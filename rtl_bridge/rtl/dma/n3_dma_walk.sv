// n3_dma_walk: the DMA engine's descriptor walk (docs/rtl_dma.md, "The
// walk"). It takes one MEMCPY / MEMSET as the ISA encodes it: the raw
// descriptor records of dst and src (n3_isa_pkg DESC_* fields) and the
// values of the registers they name (the row offset of a gather, the
// run-time extent), and cuts it into the jobs n3_dma_core runs: runs of
// elements contiguous in both src and dst, one INT8 scale group, one fill
// row. It generates every address itself: rows by stride, the ring's wrap
// to physical row 0, the gather's starting row, the scale records and the
// scale-group cuts. One job a clock, so it never starves the core's queue.
//
// What it takes resolved: a ring's row offset reduced mod its rows (the
// dispatcher reduces the register's unbounded position, as for every
// engine, and traps an offset or extent out of range); the instruction
// legal (shapes, dtypes: the dispatcher traps otherwise). The walk is the
// functional simulator's (sim/exec_dma.cc, sim/view.h row_addr /
// scale_addr) and the timing model's cut (sim/systemc/dma_jobs.cc), job
// for job.
//
// Division: the records' group count (ceil(cols / group)) once per
// instruction, at the command; not timed for 400 MHz (as the core's fp_div).
module n3_dma_walk (
  input  logic          clk,
  input  logic          rst_n,
  input  logic          cmd_valid,
  output logic          cmd_ready,
  input  logic          cmd_memset,      // 1: MEMSET (dst only), 0: MEMCPY
  input  logic [255:0]  cmd_dst,         // dst descriptor record (n3_isa_pkg DESC_*)
  input  logic [255:0]  cmd_src,         // src descriptor record (MEMCPY)
  input  logic [39:0]   cmd_dst_roff,    // dst row offset (its row_reg's value; a ring's reduced mod rows)
  input  logic [39:0]   cmd_src_roff,
  input  logic [23:0]   cmd_dst_dyn,     // dst run-time extent (its dyn_reg's value)
  input  logic [23:0]   cmd_src_dyn,
  input  logic [31:0]   cmd_konst,       // MEMSET: f32 or INT32 bits
  // Jobs to n3_dma_core (its cmd_* port), `job_last` on the instruction's last.
  output logic          job_valid,
  input  logic          job_ready,
  output logic          job_last,
  output n3_dma_pkg::dma_job_t job  // the job (valid with job_valid)
);
  import n3_isa_pkg::*;
  import n3_dma_pkg::*;
  localparam int SPW = DMA_AW - 40;  // space bits above the byte address

  // One side (dst or src) of the instruction, decoded from its record.
  typedef struct packed {
    logic [3:0] dt;
    logic [SPW-1:0] space;
    logic [39:0] base, sbase;
    logic [23:0] ring_rows;   // the descriptor's rows: a ring's size
    logic [23:0] dcols;       // the descriptor's cols: the scale record's extent
    logic [23:0] rows, cols;  // effective extents (a run-time extent replaces one)
    logic [31:0] stride, sstride;
    logic ring;
    logic [1:0] smode;
    logic [15:0] group;
  } side_t;
  function automatic side_t decode(logic [255:0] d, logic [23:0] dyn);
    side_t s;
    logic dyn_on, dyn_cols;
    s.dt = d[DESC_DTYPE_LSB +: DESC_DTYPE_WIDTH];
    s.space = SPW'(d[DESC_SPACE_LSB +: DESC_SPACE_WIDTH]);
    s.base = d[DESC_BASE_LSB +: DESC_BASE_WIDTH];
    s.sbase = d[DESC_SCALE_BASE_LSB +: DESC_SCALE_BASE_WIDTH];
    s.ring_rows = d[DESC_ROWS_LSB +: DESC_ROWS_WIDTH];
    s.dcols = d[DESC_COLS_LSB +: DESC_COLS_WIDTH];
    s.stride = d[DESC_ROW_STRIDE_LSB +: DESC_ROW_STRIDE_WIDTH];
    s.sstride = 32'(d[DESC_SCALE_STRIDE_LSB +: DESC_SCALE_STRIDE_WIDTH]);
    s.ring = d[DESC_RING_LSB];
    s.smode = d[DESC_SCALE_MODE_LSB +: DESC_SCALE_MODE_WIDTH];
    s.group = d[DESC_GROUP_LSB +: DESC_GROUP_WIDTH];
    dyn_on = d[DESC_DYN_REG_LSB +: DESC_DYN_REG_WIDTH] != '0;
    dyn_cols = d[DESC_DYN_DIM_LSB] == DYN_DIM_COLS;
    s.rows = (dyn_on && !dyn_cols) ? dyn : s.ring_rows;
    s.cols = (dyn_on && dyn_cols) ? dyn : s.dcols;
    return s;
  endfunction
  // The gather: the first row's offset, zero without a row register.
  function automatic logic [39:0] roff(logic [DESC_ROW_REG_WIDTH-1:0] reg_no, logic [39:0] v);
    return (reg_no != '0) ? v : 40'd0;
  endfunction
  function automatic logic scaled_int(logic [3:0] t);
    return t == 4'(DTYPE_INT4) || t == 4'(DTYPE_INT8);
  endfunction
  // The scale group (isa::scale_group): ROW scales the whole descriptor row.
  function automatic logic [23:0] sgroup(logic [1:0] smode, logic [23:0] dcols, logic [15:0] group);
    return (smode == 2'(SCALE_MODE_ROW)) ? dcols : 24'(group);
  endfunction
  function automatic logic [23:0] min24(logic [23:0] a, logic [23:0] b);
    return (a < b) ? a : b;
  endfunction

  // Walk modes (sim/exec_dma.cc's four paths).
  localparam logic [1:0] W_FILL = 2'd0;    // memset_op: a fill job per dst row
  localparam logic [1:0] W_SCALED = 2'd1;  // copy_scaled: per row its bytes, then its scale record
  localparam logic [1:0] W_QUANT = 2'd2;   // quantize_int8: per row a job per group, then the record's unused entries zeroed
  localparam logic [1:0] W_RUNS = 2'd3;    // copy_raw / convert_to_float: runs cut at src rows, dst rows, src scale groups

  logic act, phase;  // walking; W_SCALED: the record, W_QUANT: the zero fill
  logic [1:0] mode;
  side_t S, D;
  logic [31:0] konst;
  logic [23:0] g;       // W_RUNS: the src cut length (its scale group, else its row); W_QUANT: dst's group
  logic [23:0] nrec;    // the scale record's groups (W_QUANT: dst's f32 entries; W_SCALED: src's)
  logic [31:0] rbytes;  // W_SCALED: a row's data bytes
  logic [31:0] sbytes;  // W_SCALED: a scale record's bytes
  // The walk's position: per side the physical row (a ring's wrap), its
  // data and record addresses; rows left (src's; W_FILL: dst's); the
  // columns done in the current src / dst row; the src scale group and the
  // column within it.
  logic [23:0] s_phys, d_phys, left, cs, cd, gk, gc;
  logic [39:0] s_ra, s_sa, d_ra, d_sa;

  // The record's group count at the command: GROUP / TWO_LEVEL
  // ceil(cols / group), ROW 1.
  side_t src_in, dst_in;
  logic [1:0] mode_in;
  logic [23:0] ng_in, rg_in, nc_in;
  logic [1:0] rm_in;
  always_comb begin
    src_in = decode(cmd_src, cmd_src_dyn);
    dst_in = decode(cmd_dst, cmd_dst_dyn);
    if (cmd_memset) mode_in = W_FILL;
    else if (src_in.dt == dst_in.dt && scaled_int(src_in.dt)) mode_in = W_SCALED;
    else if (src_in.dt != dst_in.dt && dst_in.dt == 4'(DTYPE_INT8)) mode_in = W_QUANT;
    else mode_in = W_RUNS;
    rg_in = (mode_in == W_QUANT) ? sgroup(dst_in.smode, dst_in.dcols, dst_in.group) : sgroup(src_in.smode, src_in.dcols, src_in.group);
    rm_in = (mode_in == W_QUANT) ? dst_in.smode : src_in.smode;
    nc_in = (mode_in == W_QUANT) ? dst_in.dcols : src_in.dcols;
    ng_in = (rm_in == 2'(SCALE_MODE_ROW) || rg_in == 24'd0) ? 24'd1 : 24'((25'(nc_in) + 25'(rg_in) - 25'd1) / 25'(rg_in));
  end

  // The job at the current position.
  logic [23:0] len;
  logic [26:0] s_off, d_off;  // nibbles: up to 2^24 columns of 8
  logic row_end, fin;
  always_comb begin
    job.kind = JK_COPY;
    job.sdt = S.dt;
    job.ddt = D.dt;
    job.smode = 2'(SCALE_MODE_NONE);
    job.n = 32'd0;
    job.snib = 1'b0;
    job.saddr = '0;
    job.scaddr = '0;
    job.bkaddr = '0;
    job.daddr = '0;
    job.qaddr = '0;
    job.konst = konst;
    len = 24'd0;
    s_off = 27'd0;
    d_off = 27'd0;
    row_end = 1'b0;  // this job ends its row (both sides' in W_SCALED / W_QUANT)
    fin = 1'b0;      // ... and the instruction
    case (mode)
      W_FILL: begin
        job.kind = JK_FILL;
        job.sdt = D.dt;
        job.n = 32'(D.cols);
        job.daddr = {D.space, d_ra};
        row_end = 1'b1;
      end
      W_SCALED: begin  // bit copies, as INT8 bytes (sim/systemc/dma_jobs.cc bytes_job)
        job.sdt = 4'(DTYPE_INT8);
        job.ddt = 4'(DTYPE_INT8);
        job.n = phase ? sbytes : rbytes;
        job.saddr = {S.space, phase ? s_sa : s_ra};
        job.daddr = {D.space, phase ? d_sa : d_ra};
        row_end = phase || sbytes == 32'd0;
      end
      W_QUANT:
        if (!phase) begin
          len = min24(g, S.cols - cs);
          job.kind = JK_QUANT;
          job.n = 32'(len);
          job.saddr = {S.space, s_ra + ((40'(cs) << nibbles_log2(elem_nibbles(S.dt))) >> 1)};
          job.daddr = {D.space, d_ra + 40'(cs)};
          job.qaddr = {D.space, d_sa + 40'(gk) * 40'd4};
          row_end = cs + len == S.cols && nrec <= gk + 24'd1;
        end else begin  // the record's entries past the row's last group: INT32 zeros
          job.kind = JK_FILL;
          job.sdt = 4'(DTYPE_INT32);
          job.ddt = 4'(DTYPE_INT32);
          job.n = 32'(nrec) - 32'(gk);
          job.daddr = {D.space, d_sa + 40'(gk) * 40'd4};
          job.konst = 32'd0;
          row_end = 1'b1;
        end
      default: begin  // W_RUNS
        len = min24(min24(S.cols - cs, D.cols - cd), g - gc);
        s_off = 27'(cs) << nibbles_log2(elem_nibbles(S.dt));  // nibbles into the src row
        d_off = 27'(cd) << nibbles_log2(elem_nibbles(D.dt));
        job.n = 32'(len);
        job.saddr = {S.space, s_ra + (40'(s_off) >> 1)};
        job.snib = s_off[0];
        job.daddr = {D.space, d_ra + (40'(d_off) >> 1)};
        if (S.dt != D.dt && S.smode != 2'(SCALE_MODE_NONE)) begin  // a dequantising run: one src scale group
          job.smode = S.smode;
          job.scaddr = {S.space, s_sa + ((S.smode == 2'(SCALE_MODE_GROUP)) ? 40'(gk) * 40'd4 : 40'd0)};
          job.bkaddr = {S.space, s_sa + 40'd4 + 40'(gk)};
        end
        row_end = cs + len == S.cols;  // src's row
      end
    endcase
    fin = row_end && left == 24'd1;
  end
  assign job_valid = act;
  assign job_last = fin;
  assign cmd_ready = !act;

  // The next row of a side: by stride, a ring wrapping to its row 0.
  function automatic logic wraps(logic ring, logic [23:0] ring_rows, logic [23:0] phys);
    return ring && phys == ring_rows - 24'd1;
  endfunction

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      act <= 1'b0;
    end else if (cmd_valid && cmd_ready) begin
      // The walk's start: each side at its gather's row (base + off x stride).
      act <= 1'b1;
      mode <= mode_in;
      phase <= 1'b0;
      S <= src_in;
      D <= dst_in;
      konst <= cmd_konst;
      g <= (mode_in == W_QUANT) ? sgroup(dst_in.smode, dst_in.dcols, dst_in.group) :
           (src_in.smode != 2'(SCALE_MODE_NONE) && src_in.dt != dst_in.dt) ? sgroup(src_in.smode, src_in.dcols, src_in.group) : src_in.cols;
      nrec <= ng_in;
      rbytes <= (src_in.dt == 4'(DTYPE_INT4)) ? (32'(src_in.cols) + 32'd1) >> 1 : 32'(src_in.cols);
      case (src_in.smode)
        2'(SCALE_MODE_ROW): sbytes <= 32'd4;
        2'(SCALE_MODE_GROUP): sbytes <= 32'(ng_in) * 32'd4;
        2'(SCALE_MODE_TWO_LEVEL): sbytes <= 32'd4 + 32'(ng_in);
        default: sbytes <= 32'd0;
      endcase
      s_phys <= 24'(roff(cmd_src[DESC_ROW_REG_LSB +: DESC_ROW_REG_WIDTH], cmd_src_roff));
      d_phys <= 24'(roff(cmd_dst[DESC_ROW_REG_LSB +: DESC_ROW_REG_WIDTH], cmd_dst_roff));
      s_ra <= src_in.base + roff(cmd_src[DESC_ROW_REG_LSB +: DESC_ROW_REG_WIDTH], cmd_src_roff) * 40'(src_in.stride);
      s_sa <= src_in.sbase + roff(cmd_src[DESC_ROW_REG_LSB +: DESC_ROW_REG_WIDTH], cmd_src_roff) * 40'(src_in.sstride);
      d_ra <= dst_in.base + roff(cmd_dst[DESC_ROW_REG_LSB +: DESC_ROW_REG_WIDTH], cmd_dst_roff) * 40'(dst_in.stride);
      d_sa <= dst_in.sbase + roff(cmd_dst[DESC_ROW_REG_LSB +: DESC_ROW_REG_WIDTH], cmd_dst_roff) * 40'(dst_in.sstride);
      left <= cmd_memset ? dst_in.rows : src_in.rows;
      cs <= 24'd0;
      cd <= 24'd0;
      gk <= 24'd0;
      gc <= 24'd0;
    end else if (job_valid && job_ready) begin
      if (fin) act <= 1'b0;
      // The src side's row advance (every mode but W_FILL), the dst side's
      // (every mode but W_RUNS, whose dst rows end on their own).
      if (row_end) begin
        left <= left - 24'd1;
        phase <= 1'b0;
        cs <= 24'd0;
        gk <= 24'd0;
        gc <= 24'd0;
        if (mode != W_FILL) begin
          s_phys <= wraps(S.ring, S.ring_rows, s_phys) ? 24'd0 : s_phys + 24'd1;
          s_ra <= wraps(S.ring, S.ring_rows, s_phys) ? S.base : s_ra + 40'(S.stride);
          s_sa <= wraps(S.ring, S.ring_rows, s_phys) ? S.sbase : s_sa + 40'(S.sstride);
        end
      end
      if ((row_end && mode != W_RUNS) || (mode == W_RUNS && cd + len == D.cols)) begin
        cd <= 24'd0;
        d_phys <= wraps(D.ring, D.ring_rows, d_phys) ? 24'd0 : d_phys + 24'd1;
        d_ra <= wraps(D.ring, D.ring_rows, d_phys) ? D.base : d_ra + 40'(D.stride);
        d_sa <= wraps(D.ring, D.ring_rows, d_phys) ? D.sbase : d_sa + 40'(D.sstride);
      end else if (mode == W_RUNS) begin
        cd <= cd + len;
      end
      if (!row_end)
        case (mode)
          W_SCALED: phase <= 1'b1;  // the row's data copied: its record next
          W_QUANT: begin            // the next group, or (the row's groups done) the zero fill
            cs <= cs + len;
            gk <= gk + 24'd1;
            if (cs + len == S.cols) phase <= 1'b1;
          end
          W_RUNS: begin
            cs <= cs + len;
            if (gc + len == g) begin
              gc <= 24'd0;
              gk <= gk + 24'd1;
            end else begin
              gc <= gc + len;
            end
          end
          default: ;
        endcase
    end
  end

  // Descriptor fields the walk does not use: reserved bits, the register
  // numbers beyond "one is named"; fields only the command needed (the
  // extents that set `left`, the record's group count) or only one side.
  logic unused;
  assign unused = ^{S.dcols, S.rows, S.group, D.dcols, D.rows, D.group, D.smode,
                    cmd_src[255:248], cmd_src[127:112], cmd_src[7], cmd_src[51:49], cmd_src[55:53], cmd_src[191:187],
                    cmd_dst[255:248], cmd_dst[127:112], cmd_dst[7], cmd_dst[51:49], cmd_dst[55:53], cmd_dst[191:187],
                    d_off[0]};
endmodule

// n3_dma_engine: the DMA engine (docs/rtl_dma.md). One command per MEMCPY /
// MEMSET: the raw descriptor records and the register values they name.
// n3_dma_walk walks the descriptors (rows, strides, ring wrap, row gathers,
// scale-group cuts) into jobs, a job a clock, into n3_dma_core's queue;
// n3_dma_core converts each job (dequantise, round, quantise, fill) and
// issues its AXI-like bursts. The instruction completes (done_valid) with
// its last job, after that job's last write response.
//
// One instruction at a time: cmd_ready is low from the command until its
// completion beat is taken (the completion counts the instruction's jobs).
module n3_dma_engine
  import n3_dma_pkg::*;
#(
  parameter int BB = 16,     // bus bytes per beat (hp_port_bits x dma_hp_ports / 8 of the hardware file)
  parameter int BURST = 16,  // beats per burst at most (ddr_burst_bytes / BB)
  parameter int LANES = 8,   // conversion lanes (compute.dma_lanes of the hardware file)
  parameter int CQ = 16,     // n3_dma_core's job queue
  parameter int CW = 64      // n3_dma_core's jobs awaiting write responses
) (
  input  logic            clk,
  input  logic            rst_n,
  // Command: one beat per instruction.
  input  logic            cmd_valid,
  output logic            cmd_ready,
  input  logic            cmd_memset,    // 1: MEMSET (cmd_src unused), 0: MEMCPY
  input  logic [255:0]    cmd_dst,       // descriptor records (n3_isa_pkg DESC_*)
  input  logic [255:0]    cmd_src,
  input  logic [39:0]     cmd_dst_roff,  // row_reg values (a ring's reduced mod its rows)
  input  logic [39:0]     cmd_src_roff,
  input  logic [23:0]     cmd_dst_dyn,   // dyn_reg values (run-time extents)
  input  logic [23:0]     cmd_src_dyn,
  input  logic [31:0]     cmd_konst,     // MEMSET: f32 or INT32 bits
  // Completion: one beat per instruction.
  output logic            done_valid,
  input  logic            done_ready,
  output logic            done_err,      // some response of the instruction was not OKAY
  output logic [31:0]     jobs,          // jobs the walk has cut from the current (or last) instruction
  // Read address / data.
  output logic            ar_valid,
  input  logic            ar_ready,
  output logic [DMA_AW-1:0]   ar_addr,
  output logic [7:0]      ar_len,        // beats - 1
  input  logic            r_valid,
  output logic            r_ready,
  input  logic [BB*8-1:0] r_data,
  input  logic [1:0]      r_resp,
  input  logic            r_last,
  // Write address / data / response.
  output logic            aw_valid,
  input  logic            aw_ready,
  output logic [DMA_AW-1:0]   aw_addr,
  output logic [7:0]      aw_len,
  output logic            w_valid,
  input  logic            w_ready,
  output logic [BB*8-1:0] w_data,
  output logic [BB-1:0]   w_strb,
  output logic            w_last,
  input  logic            b_valid,
  output logic            b_ready,
  input  logic [1:0]      b_resp,
  output logic            busy           // an instruction accepted and not yet completed
);
  logic j_valid, j_ready, j_last, cmd_fire;
  dma_job_t j;
  logic c_done_valid, c_done_ready, c_done_err, c_busy;

  // The instruction in flight: accepted, its last job not yet cut (walking),
  // jobs cut and not yet complete (open), errors of its completed jobs.
  logic inflight, walked, err, walk_ready;
  logic [31:0] open;
  assign cmd_ready = !inflight && walk_ready;
  assign cmd_fire = cmd_valid && cmd_ready;

  n3_dma_walk walk (
    .clk, .rst_n, .cmd_valid(cmd_valid && !inflight), .cmd_ready(walk_ready), .cmd_memset, .cmd_dst, .cmd_src, .cmd_dst_roff,
    .cmd_src_roff, .cmd_dst_dyn, .cmd_src_dyn, .cmd_konst, .job_valid(j_valid), .job_ready(j_ready),
    .job_last(j_last), .job(j));

  n3_dma_core #(.BB(BB), .BURST(BURST), .LANES(LANES), .CQ(CQ), .CW(CW)) core (
    .clk, .rst_n, .cmd_valid(j_valid), .cmd_ready(j_ready), .cmd(j),
    .done_valid(c_done_valid), .done_ready(c_done_ready), .done_err(c_done_err), .ar_valid, .ar_ready, .ar_addr,
    .ar_len, .r_valid, .r_ready, .r_data, .r_resp, .r_last, .aw_valid, .aw_ready, .aw_addr, .aw_len, .w_valid,
    .w_ready, .w_data, .w_strb, .w_last, .b_valid, .b_ready, .b_resp, .busy(c_busy));

  // The core's per-job completions are absorbed, but for the instruction's
  // last: that one is the instruction's, passed through in the same clock
  // (no clock added), held while done_ready is low.
  logic last_job;
  assign last_job = walked && open == 32'd1;
  assign done_valid = last_job && c_done_valid;
  assign c_done_ready = !last_job || done_ready;
  assign done_err = err || c_done_err;
  assign busy = inflight;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      inflight <= 1'b0;
      walked <= 1'b0;
      err <= 1'b0;
      open <= '0;
      jobs <= '0;
    end else begin
      if (cmd_fire) begin
        inflight <= 1'b1;
        walked <= 1'b0;
        err <= 1'b0;
        jobs <= '0;
      end
      if (j_valid && j_ready) begin
        jobs <= jobs + 32'd1;
        if (j_last) walked <= 1'b1;
      end
      open <= open + 32'(j_valid && j_ready) - 32'(c_done_valid && c_done_ready);
      if (c_done_valid && c_done_ready && c_done_err) err <= 1'b1;
      if (done_valid && done_ready) inflight <= 1'b0;
    end
  end

  logic unused;
  assign unused = c_busy;
endmodule

// n3_cdc_fifo: the asynchronous FIFO that carries an AXI HP port's data
// across to the core clock (and back), docs/rtl_cdc.md "Clock-domain crossing".
//
// The standard design (C. Cummings, "Simulation and Synthesis Techniques for
// Asynchronous FIFO Design", SNUG 2002): each side keeps a binary pointer
// (it addresses the memory) and its Gray code (it crosses). A Gray pointer
// changes one bit per word, so a synchroniser that samples it mid-change
// sees either the old or the new value, never a third one. Each side
// synchronises the other's Gray pointer through SYNC_STAGES flops clocked by
// itself, and compares with it:
//   empty (read side): the read pointer caught up with the synchronised
//     write pointer; full (write side): the write pointer is DEPTH ahead of
//     the synchronised read pointer (Gray: the two top bits inverted, the
//     rest equal).
// The synchronised pointer lags the real one, so empty and full may hold
// a few clocks longer than needed (pessimistic), never shorter: no word is
// overwritten unread and none is read before it is written. Both flags are
// registered (they drive other logic at the FIFO's clock rate), computed
// from the pointer after this clock's move, so a read that empties the FIFO
// raises empty at that same edge.
//
// Latency (what `n3 cosim --unit cdc` measures): a word written into an
// empty FIFO at write edge t becomes visible (rvalid) at the read edge that
// loads empty = 0, SYNC_STAGES + 1 read edges after t (the first read edge
// strictly after t captures the new Gray pointer into stage 1; stage
// SYNC_STAGES holds it SYNC_STAGES - 1 edges later; empty is registered from
// it one edge after that): between SYNC_STAGES and SYNC_STAGES + 1 read
// periods, with the phase of the two clocks.
//
// Interfaces are valid/ready: a word moves on a write edge with wvalid and
// wready, leaves on a read edge with rvalid and rready. rdata is the word at
// the head (first-word fall-through: valid together with rvalid).
// Each domain has its own asynchronous active-low reset; both must be
// asserted together (the FIFO empties) before either is released.
module n3_cdc_fifo #(
    parameter int W = 32,           // data bits
    parameter int DEPTH = 16,       // words; a power of two, at least 4
    parameter int SYNC_STAGES = 2   // synchroniser flops per crossing Gray pointer, at least 2
) (
    // Write (source) domain.
    input  logic         wclk,
    input  logic         wrst_n,
    input  logic         wvalid,
    output logic         wready,
    input  logic [W-1:0] wdata,
    // Read (destination) domain.
    input  logic         rclk,
    input  logic         rrst_n,
    output logic         rvalid,
    input  logic         rready,
    output logic [W-1:0] rdata
);
  localparam int AW = $clog2(DEPTH);  // address bits; the pointers carry one more (the wrap)

  // Elaboration-time checks: the full test below needs the two top pointer
  // bits (DEPTH >= 4); a depth not a power of two breaks the Gray wrap; one
  // flop is no synchroniser.
  if (DEPTH < 4 || (DEPTH & (DEPTH - 1)) != 0) begin : g_bad_depth
    $error("n3_cdc_fifo: DEPTH must be a power of two, at least 4");
  end
  if (SYNC_STAGES < 2) begin : g_bad_sync
    $error("n3_cdc_fifo: SYNC_STAGES must be at least 2");
  end

  function automatic logic [AW:0] bin2gray(input logic [AW:0] b);
    return b ^ (b >> 1);
  endfunction

  logic [W-1:0] mem[DEPTH];

  // ---- write domain ----
  logic [AW:0] wbin, wgray;
  logic [AW:0] wsync[SYNC_STAGES];  // the read Gray pointer, synchronised into wclk
  logic        wfull;
  wire         wpush = wvalid && !wfull;
  wire  [AW:0] wbin_next = wbin + {{AW{1'b0}}, wpush};
  wire  [AW:0] wgray_next = bin2gray(wbin_next);
  // Full: DEPTH ahead of the read pointer. In Gray code that is the two top
  // bits inverted and the others equal.
  wire  [AW:0] rgray_w = wsync[SYNC_STAGES-1];
  wire         wfull_next = wgray_next == {~rgray_w[AW:AW-1], rgray_w[AW-2:0]};

  always_ff @(posedge wclk or negedge wrst_n) begin
    if (!wrst_n) begin
      wbin <= '0;
      wgray <= '0;
      wfull <= 1'b0;
    end else begin
      wbin <= wbin_next;
      wgray <= wgray_next;
      wfull <= wfull_next;
    end
  end
  // The memory is not reset: a word is read only after it was written.
  always_ff @(posedge wclk) begin
    if (wpush) mem[wbin[AW-1:0]] <= wdata;
  end
  assign wready = !wfull;

  // ---- read domain ----
  logic [AW:0] rbin, rgray;
  logic [AW:0] rsync[SYNC_STAGES];  // the write Gray pointer, synchronised into rclk
  logic        rempty;
  wire         rpop = rready && !rempty;
  wire  [AW:0] rbin_next = rbin + {{AW{1'b0}}, rpop};
  wire  [AW:0] rgray_next = bin2gray(rbin_next);

  always_ff @(posedge rclk or negedge rrst_n) begin
    if (!rrst_n) begin
      rbin <= '0;
      rgray <= '0;
      rempty <= 1'b1;
    end else begin
      rbin <= rbin_next;
      rgray <= rgray_next;
      rempty <= rgray_next == rsync[SYNC_STAGES-1];
    end
  end
  assign rvalid = !rempty;
  assign rdata = mem[rbin[AW-1:0]];

  // ---- the synchronisers: SYNC_STAGES flops each, clocked by the side that
  // reads the pointer; only a Gray pointer (a register of the other side)
  // enters stage 0.
  always_ff @(posedge rclk or negedge rrst_n) begin
    if (!rrst_n) begin
      for (int i = 0; i < SYNC_STAGES; i++) rsync[i] <= '0;
    end else begin
      rsync[0] <= wgray;
      for (int i = 1; i < SYNC_STAGES; i++) rsync[i] <= rsync[i-1];
    end
  end
  always_ff @(posedge wclk or negedge wrst_n) begin
    if (!wrst_n) begin
      for (int i = 0; i < SYNC_STAGES; i++) wsync[i] <= '0;
    end else begin
      wsync[0] <= rgray;
      for (int i = 1; i < SYNC_STAGES; i++) wsync[i] <= wsync[i-1];
    end
  end
endmodule

// Shared codes of the GEMV engine (docs/rtl_gemv.md, "GEMV engine"): the job
// kinds of a command beat and the BFP exponent sentinels of
// golden/numerics/bfp.h (the float formats and NaN are n3_fp_pkg's).
// The codes name the whole interface; a unit need not use every one.
/* verilator lint_off UNUSEDPARAM */
package n3_gemv_pkg;
  // cmd_wkind: what the w operand's elements are and how a dot product is formed.
  localparam logic [1:0] WK_INT4 = 2'd0;   // INT4 x BFP activation (num::dot_int4_row*)
  localparam logic [1:0] WK_INT8 = 2'd1;   // INT8 x BFP activation (num::dot_int8_bfp)
  localparam logic [1:0] WK_FLOAT = 2'd2;  // float x float, lane tree (num::tree_dot)
  localparam logic [1:0] WK_BFP = 2'd3;    // float -> BFP x BFP activation (num::dot_bfp_bfp)
  // cmd_smode (WK_INT4 only; INT8 rows always take one row scale).
  localparam logic [1:0] SM_ROW = 2'd0;
  localparam logic [1:0] SM_GROUP = 2'd1;
  localparam logic [1:0] SM_TWO = 2'd2;
  // num::kBfpZero / kBfpPoison.
  localparam logic signed [15:0] EXP_ZERO = -16'sd32768;
  localparam logic signed [15:0] EXP_POISON = 16'sd32767;
endpackage
/* verilator lint_on UNUSEDPARAM */

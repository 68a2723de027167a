// The SFU's fused row operators (docs/rtl_sfu.md, "SFU row operators"): RMSNORM,
// SOFTMAX, GTOPK and MAGMATCH as passes over a row, each pass an element
// program of the element pipeline (n3_sfu_pkg's, or one below) whose terms
// the reduction tail may sum or max, with a short scalar tail between passes
// (n3_sfu's sequencer); SOFTCAP and ROPE as single-pass element programs.
// Each in exactly the order golden/numerics/ops.h writes it:
//   RMSNORM  p0 x*x summed (RSUMSQ's term); tail: inv = recip(float(n)),
//            r = rsqrt_rn(ss*inv + eps); p1 y = (x*r)*w (no weight: x*r).
//   SOFTMAX  p0 max (RMAX's term); tail: m; p1 exp(x - m) summed; tail:
//            r = recip(z); p2 y = exp(x - m)*r (exp recomputed: the same bits
//            as storing it).
//   GTOPK    p0 x summed (RSUM's); tail: mean = sum*inv; p1 (x - mean)^2
//            summed; tail: t = mean + mult*sqrt_rn(var*inv); p2 y = relu(x - t).
//   MAGMATCH p0 x*x summed; tail: c = recip(sqrt_rn(nmax(ss*inv, floor)));
//            p1 y = x*(target*c) (target*c: the C++'s f, the same each element).
//   SOFTCAP  y = cap*tanh(x*inv), inv = recip(cap) taken with the command.
//   ROPE     y = x*cos(a) -+ x'*sin(a) (x' the pair's other element, a its
//            angle): a second trig chain a lane gives the cosine beside the sine.
// n is the row's element count, which the sequencer counts on pass 0 (inv_count).
package n3_sfu_row_pkg;
  import n3_fp_pkg::*;
  import n3_sfu_pkg::*;

  localparam func_t F_RMSNORM = 6'(n3_isa_pkg::CVO_FUNC_RMSNORM), F_SOFTMAX = 6'(n3_isa_pkg::CVO_FUNC_SOFTMAX),
                    F_ROPE = 6'(n3_isa_pkg::CVO_FUNC_ROPE), F_GTOPK = 6'(n3_isa_pkg::CVO_FUNC_GTOPK),
                    F_SOFTCAP = 6'(n3_isa_pkg::CVO_FUNC_SOFTCAP), F_MAGMATCH = 6'(n3_isa_pkg::CVO_FUNC_MAGMATCH);

  // The passes' element programs that are not ISA functions (codes above the
  // ISA's, which end at 26).
  localparam func_t E_NORM = 6'd40,   // x*r (r in c)
                    E_NORMW = 6'd41,  // (x*r)*w (w in b)
                    E_SMXE = 6'd42,   // exp(x - m) (m in c), a term
                    E_SMXP = 6'd43,   // exp(x - m)*r (r in b)
                    E_DEV = 6'd44,    // (x - mean)^2 (mean in c), a term
                    E_GTK = 6'd45,    // relu(x - t) (t in c)
                    E_MAG = 6'd46,    // x*(target*c) (target in b)
                    E_SCAP = 6'd47,   // cap*tanh(x*inv) (inv in c, cap in b)
                    E_ROPE = 6'd48;   // angle in x, the element in b, its pair in c

  // ROPE: the stage whose element has both SIN's and COS's 12 steps done
  // (the rotation is its step).
  localparam int ROPE_TRIG = 12;

  // The row operators that re-read their row, and the passes.
  function automatic logic is_multipass(func_t f);
    return f == F_RMSNORM || f == F_SOFTMAX || f == F_GTOPK || f == F_MAGMATCH;
  endfunction
  function automatic logic [1:0] row_passes(func_t f);
    return (f == F_SOFTMAX || f == F_GTOPK) ? 2'd3 : (f == F_RMSNORM || f == F_MAGMATCH) ? 2'd2 : 2'd1;
  endfunction
  // Pass p's element program (a function that is not a row operator: itself).
  function automatic func_t pass_func(func_t f, logic [1:0] p, logic hasb);
    case (f)
      F_RMSNORM: return p == 2'd0 ? F_RSUMSQ : hasb ? E_NORMW : E_NORM;
      F_SOFTMAX: return p == 2'd0 ? F_RMAX : p == 2'd1 ? E_SMXE : E_SMXP;
      F_GTOPK: return p == 2'd0 ? F_RSUM : p == 2'd1 ? E_DEV : E_GTK;
      F_MAGMATCH: return p == 2'd0 ? F_RSUMSQ : E_MAG;
      F_SOFTCAP: return E_SCAP;
      F_ROPE: return E_ROPE;
      default: return f;
    endcase
  endfunction
  // The element programs whose results the reduction tail folds.
  function automatic logic is_red(func_t e);
    return is_reduce(e) || e == E_SMXE || e == E_DEV;
  endfunction
  // Pipeline depth (clocks from a beat in to its results out; a term: to the tail).
  function automatic logic [4:0] depth_of(func_t e);
    case (e)
      E_NORM, E_NORMW, E_DEV, E_GTK, E_MAG: return 5'd2;  // one step, then the rounding
      E_SMXE: return 5'd13;  // x - m, EXP's 11 steps, (a term: no rounding)
      E_SMXP: return 5'd14;  // x - m, EXP's 11 steps, *r, the rounding
      E_SCAP: return 5'd20;  // x*inv, TANH's 17 steps, cap*, the rounding
      E_ROPE: return 5'd14;  // SIN's and COS's 12 steps side by side, the rotation, the rounding
      default: return sfu_depth(e);
    endcase
  endfunction
  // Element programs whose c (and b) the sequencer's scalars give.
  function automatic logic uses_scalar(func_t e);
    return e == E_NORM || e == E_NORMW || e == E_SMXE || e == E_SMXP || e == E_DEV || e == E_GTK || e == E_MAG ||
           e == E_SCAP;
  endfunction

  // 1/n of the row (n3_fp_pkg::fp_inv_count), out of line as fdiv is.
  function automatic logic [31:0] inv_count(logic [31:0] n);
    /*verilator no_inline_task*/
    return fp_inv_count(n);
  endfunction

  // Clocks of the scalar tail after pass p's reduction (docs/rtl.md).
  function automatic logic [3:0] tail_len(func_t f, logic [1:0] p);
    case (f)
      F_RMSNORM: return 4'd8;                   // recip(n); ss*inv + eps; RSQRT's 6 steps
      F_SOFTMAX: return 4'd1;                   // m, or r = recip(z)
      F_GTOPK: return p == 2'd0 ? 4'd2 : 4'd8;  // recip(n); mean | var; SQRT's 6; mean + mult*sd
      default: return 4'd9;                     // MAGMATCH: recip(n); nmax(ss*inv, floor); SQRT's 6; recip
    endcase
  endfunction

  // The scalars the tail computes and the element programs read.
  typedef struct packed {
    logic [31:0] inv;   // 1/n (num::inv_count)
    logic [31:0] sa;    // the element programs' c: r, m, mean, t, 1/m
    logic [31:0] sb;    // SOFTMAX's 1/z (the element programs' b)
    logic [31:0] mean;  // GTOPK's mean while its variance is summed
    sfu_st_t q;         // SQRT's / RSQRT's program on the scalar
  } row_sc_t;

  // Step s of the scalar tail of operator f after pass p's reduction `red`
  // (the row's n elements, the command's k).
  function automatic void tail_step(input func_t f, input logic [1:0] p, input logic [3:0] s,
                                    input logic [31:0] red, input logic [31:0] n, input logic [31:0] k,
                                    input row_sc_t i, output row_sc_t o);
    /*verilator no_inline_task*/
    o = i;
    if (f == F_SOFTMAX) begin
      if (p == 2'd0) o.sa = red;
      else o.sb = fdiv(ONE, red);
      return;
    end
    if (s == 4'd0 && !(f == F_GTOPK && p == 2'd1)) begin
      o.inv = inv_count(n);
      return;
    end
    case (f)
      F_RMSNORM: begin
        if (s == 4'd1) begin
          o.q = '0;
          o.q.x = fadd(fmul(red, i.inv), k);
        end else if (!i.q.fin) sqrt_step(int'(s) - 2, 1'b1, i.q, o.q);
        if (s == 4'd7) o.sa = o.q.y;
      end
      F_GTOPK: begin
        if (p == 2'd0) begin  // s 1
          o.sa = fmul(red, i.inv);
          o.mean = o.sa;
        end else if (s == 4'd0) begin
          o.q = '0;
          o.q.x = fmul(red, i.inv);
        end else if (s <= 4'd6) begin
          if (!i.q.fin) sqrt_step(int'(s) - 1, 1'b0, i.q, o.q);
        end else o.sa = fadd(i.mean, fmul(k, i.q.y));
      end
      default: begin  // MAGMATCH
        if (s == 4'd1) begin
          o.q = '0;
          o.q.x = fp_nmax(fmul(red, i.inv), k);
        end else if (s <= 4'd7) begin
          if (!i.q.fin) sqrt_step(int'(s) - 2, 1'b0, i.q, o.q);
        end else o.sa = fdiv(ONE, i.q.y);
      end
    endcase
  endfunction

  // Step s of element program e on element i (n3_sfu_pkg::sfu_step for the
  // others): step depth - 1 rounds into dst's format (not a term); before
  // it a finished element passes through the function's own steps, but not
  // the operator's (SOFTMAX's *r, SOFTCAP's cap*). ROPE's rotation, which
  // needs the cosine chain, is n3_sfu's.
  function automatic void row_step(input func_t e, input int s, input logic [4:0] depth, input logic [1:0] fmt,
                                   input sfu_st_t i, output sfu_st_t o);
    /*verilator no_inline_task*/
    o = i;
    if (e < E_NORM) begin
      sfu_step(e, s, depth, fmt, i, o);
      return;
    end
    if (s == int'(depth) - 1) begin
      if (!is_red(e)) o.y = fp_round_fmt(i.y, fmt);
      return;
    end
    case (e)
      E_NORM: o.y = fmul(i.x, i.c);
      E_NORMW: o.y = fmul(fmul(i.x, i.c), i.b);
      E_DEV: begin
        o.y = fp_sub(i.x, i.c);
        o.y = fmul(o.y, o.y);
      end
      E_GTK: begin
        o.y = fp_sub(i.x, i.c);
        o.y = is_nan(o.y) ? NAN_BITS : (fp_lt(32'd0, o.y) ? o.y : 32'd0);
      end
      E_MAG: o.y = fmul(i.x, fmul(i.b, i.c));
      E_SMXE, E_SMXP:
        if (s == 0) o.x = fp_sub(i.x, i.c);
        else if (s <= 11) begin
          if (!i.fin) exp_step(s - 1, i, o);
        end else o.y = fmul(i.y, i.b);  // E_SMXP's 12
      E_SCAP:
        if (s == 0) o.x = fmul(i.x, i.c);
        else if (s <= 17) begin
          if (!i.fin) tanh_step(s - 1, i, o);
        end else o.y = fmul(i.b, i.y);  // 18
      E_ROPE: if (s <= 11 && !i.fin) trig_step(s, 1'b0, i, o);
      default: o.y = NAN_BITS;
    endcase
  endfunction
endpackage

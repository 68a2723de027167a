// The SFU's element programs (docs/rtl_sfu.md, "SFU element pipeline"): every
// element-wise CVO function (and the terms of the row reductions, which
// n3_sfu's tail sums) as a fixed sequence of pipeline steps, each step a few IEEE
// binary32 operations of n3_fp_pkg (fp_add, fp_mul, fp_div, fp_round_pack,
// ...) or integer operations, in exactly the order golden/numerics/sfu.h,
// sfu_trig.h and sim/exec_sfu.cc write them, so every result is bit-exact.
//
// An element travels down the pipeline as one `sfu_st_t` record (its inputs,
// a few f32 temporaries, the integer state of the reductions, and its result
// once known). Step s of function f is `sfu_step(f, s, ...)`: stage s of the
// pipeline applies it to the element it holds. Functions, not modules, for
// the reason n3_fp_pkg's header gives: the engine calls a step only for a
// valid element, so Verilator evaluates only the operations the element's
// function needs at that stage (synthesis builds the same gates, one copy of
// each step per stage, with the function a constant-folded select).
package n3_sfu_pkg;
  import n3_fp_pkg::*;

  // Constants of golden/numerics/sfu.h and sfu_trig.h as f32 bit patterns
  // (the C++'s hexadecimal float literals); RtlSfu's bit-exact comparison
  // against the numerics core is what proves each one.
  localparam logic [31:0] LOG2E = 32'h3fb8aa3b;      // kLog2e 0x1.715476p+0
  localparam logic [31:0] LN2HI = 32'h3f317200;      // kLn2Hi 0x1.62e4p-1
  localparam logic [31:0] LN2LO = 32'h35bfbe8e;      // kLn2Lo 0x1.7f7d1cp-20
  localparam logic [31:0] EXP_OVER = 32'h42b17217;   // kExpOver 0x1.62e42ep+6
  localparam logic [31:0] EXP_UNDER = 32'hc2cff1b4;  // kExpUnder -0x1.9fe368p+6
  // exp_q's polynomial E(r), c5 .. c0.
  localparam logic [5:0][31:0] EC = {32'h395165a3, 32'h3ab6983a, 32'h3c0887e4, 32'h3d2aaa80, 32'h3e2aaaab,
                                     32'h3f000000};
  // tanh_sfu's T(t), c6 .. c0.
  localparam logic [6:0][31:0] TC = {32'hbba55662, 32'h3bf30547, 32'hbc2976a5, 32'h3cb56126, 32'hbd5d271a,
                                     32'h3e0888c6, 32'hbeaaaaab};
  localparam logic [31:0] GCHI = 32'h3d372713;  // kGeluCHi 0x1.6e4e26p-5
  localparam logic [31:0] GCLO = 32'h30d4801f;  // kGeluCLo 0x1.a9003ep-30
  localparam logic [31:0] GKHI = 32'hbfcc422a;  // kGeluKHi -0x1.988454p+0
  localparam logic [31:0] GKLO = 32'h3342bc9b;  // kGeluKLo 0x1.857936p-25
  // sin_kernel's S(t) and cos_kernel's C(t), c4 .. c0.
  localparam logic [4:0][31:0] SC = {32'hb586abc8, 32'h368a06e8, 32'hb950b594, 32'h3c0888fc, 32'hbe2aaaab};
  localparam logic [4:0][31:0] CC = {32'hb5022e99, 32'h34d7098f, 32'h37cd6d1a, 32'hbab60994, 32'h3d2aaaaa};
  localparam logic [31:0] F_0P55 = 32'h3f0ccccd;     // 0.55f (tanh's polynomial bound)
  localparam logic [31:0] F_9 = 32'h41100000;        // 9 (tanh = +-1 from here)
  localparam logic [31:0] F_10 = 32'h41200000;       // 10 (gelu = x above)
  localparam logic [31:0] F_M20 = 32'hc1a00000;      // -20 (gelu = -0 below)
  localparam logic [31:0] F_40 = 32'h42200000;       // 40 (gelu's exponent bound)
  localparam logic [31:0] F_0P78125 = 32'h3f480000;  // sin/cos: no reduction below
  localparam logic [31:0] F_4097 = 32'h45800800;     // split()'s 2^12 + 1
  localparam logic [31:0] ONE = 32'h3f800000;
  localparam logic [31:0] HALF = 32'h3f000000;
  localparam logic [31:0] TWO = 32'h40000000;
  // two_over_pi_word(0..7) and kPiOver2Q63 of sfu_trig.h.
  localparam logic [7:0][31:0] TWO_OVER_PI = {32'hdebbc561, 32'hfe5163ab, 32'h3c439041, 32'hdb629599,
                                               32'hf534ddc0, 32'hfc2757d1, 32'h4e441529, 32'ha2f9836e};
  localparam logic [63:0] PIO2_Q63 = 64'hc90fdaa22168c234;

  // Function codes (the ISA's cvo_func).
  typedef logic [5:0] func_t;
  localparam func_t F_EXP = 6'(n3_isa_pkg::CVO_FUNC_EXP), F_SQRT = 6'(n3_isa_pkg::CVO_FUNC_SQRT),
                    F_GELU = 6'(n3_isa_pkg::CVO_FUNC_GELU), F_SIN = 6'(n3_isa_pkg::CVO_FUNC_SIN),
                    F_COS = 6'(n3_isa_pkg::CVO_FUNC_COS), F_SCALE = 6'(n3_isa_pkg::CVO_FUNC_SCALE),
                    F_RECIP = 6'(n3_isa_pkg::CVO_FUNC_RECIP), F_TANH = 6'(n3_isa_pkg::CVO_FUNC_TANH),
                    F_RSQRT = 6'(n3_isa_pkg::CVO_FUNC_RSQRT), F_RELU = 6'(n3_isa_pkg::CVO_FUNC_RELU),
                    F_ADDK = 6'(n3_isa_pkg::CVO_FUNC_ADDK), F_MAXK = 6'(n3_isa_pkg::CVO_FUNC_MAXK),
                    F_ADD = 6'(n3_isa_pkg::CVO_FUNC_ADD), F_SUB = 6'(n3_isa_pkg::CVO_FUNC_SUB),
                    F_MUL = 6'(n3_isa_pkg::CVO_FUNC_MUL), F_MAX = 6'(n3_isa_pkg::CVO_FUNC_MAX),
                    F_MAC = 6'(n3_isa_pkg::CVO_FUNC_MAC), F_RSUM = 6'(n3_isa_pkg::CVO_FUNC_RSUM),
                    F_RMAX = 6'(n3_isa_pkg::CVO_FUNC_RMAX), F_RSUMSQ = 6'(n3_isa_pkg::CVO_FUNC_RSUMSQ),
                    F_RMS = 6'(n3_isa_pkg::CVO_FUNC_RMS);

  // The row reductions: the element pipeline forms each term (step 0, not
  // rounded into dst's format), the reduction tail folds the terms into 32
  // lanes and the 5-level tree (docs/numerics.md, "Reductions").
  function automatic logic is_reduce(func_t f);
    return f == F_RSUM || f == F_RMAX || f == F_RSUMSQ || f == F_RMS;
  endfunction
  localparam logic [31:0] NEG_INF = 32'hff80_0000;

  // The pipeline's stage count, the deepest function's (GELU).
  localparam int DMAX = 23;

  // Branches an element's program can take (tanh, gelu, sin/cos).
  localparam logic [1:0] BR_MAIN = 2'd0, BR_POLY = 2'd1, BR_BIG = 2'd2, BR_SMALL = 2'd3;

  // One element in flight. x, b, c: the inputs (a; b or the command's k;
  // MAC's old dst value); y: the result once `fin` (later steps pass a
  // finished element on untouched, only the last step rounds it into dst's
  // format); t: f32 temporaries (each program's comments name them); n:
  // exp_q's power of two; kq, neg: sin/cos's quadrant and the reduced
  // argument's sign; w, z, ez: the integer datapaths (Payne-Hanek's product
  // and fraction, the square-root recurrences' operand and root).
  typedef struct packed {
    logic on;  // this lane holds an element
    logic [31:0] x, b, c, y;
    logic fin;
    logic [1:0] br;
    logic [7:0][31:0] t;
    logic signed [15:0] n;
    logic [1:0] kq;
    logic neg;
    logic [151:0] w;
    logic [63:0] z;
    exp_t ez;
  } sfu_st_t;

  // ---- f32 helpers ---------------------------------------------------------

  // The f32 operations the programs use, each a wrapper of n3_fp_pkg's one
  // definition kept out of line (/*verilator no_inline_task*/): the programs
  // call them a few hundred times, and inlining every call would make the
  // Verilated C++ (and Verilation) many times larger for no speed gain.
  function automatic logic [31:0] fadd(logic [31:0] a, logic [31:0] b);
    /*verilator no_inline_task*/
    return fp_add(a, b);
  endfunction
  function automatic logic [31:0] fmul(logic [31:0] a, logic [31:0] b);
    /*verilator no_inline_task*/
    return fp_mul(a, b);
  endfunction
  function automatic logic [31:0] fdiv(logic [31:0] a, logic [31:0] b);
    /*verilator no_inline_task*/
    return fp_div(a, b);
  endfunction
  function automatic logic [31:0] fpack(logic neg, logic [63:0] sig, exp_t exp, logic sticky);
    /*verilator no_inline_task*/
    return fp_round_pack(neg, sig, exp, sticky, FMT_F32);
  endfunction

  /* verilator lint_off UNUSEDSIGNAL */  // the sign bit: NaN either way
  function automatic logic is_nan(logic [31:0] a);
    return a[30:23] == 8'hff && a[22:0] != 23'd0;
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */
  function automatic logic [31:0] fneg(logic [31:0] a);  // C++ unary minus: the sign bit
    return {~a[31], a[30:0]};
  endfunction
  function automatic logic [31:0] fp_sub(logic [31:0] a, logic [31:0] b);  // a - b = a + (-b) in IEEE
    return fadd(a, fneg(b));
  endfunction
  // a < b for non-NaN a, b (IEEE: -0 == +0).
  function automatic logic fp_lt(logic [31:0] a, logic [31:0] b);
    if (a[30:0] == 31'd0 && b[30:0] == 31'd0) return 1'b0;
    if (a[31] != b[31]) return a[31];
    return a[31] ? (a[30:0] > b[30:0]) : (a[30:0] < b[30:0]);
  endfunction
  // num::nmax: NaN-propagating (canonical), ties keep a.
  function automatic logic [31:0] fp_nmax(logic [31:0] a, logic [31:0] b);
    if (is_nan(a) || is_nan(b)) return NAN_BITS;
    return fp_lt(a, b) ? b : a;
  endfunction
  // num::scale2(x, k): x * 2^k, rounded once if it leaves the normal range.
  function automatic logic [31:0] fp_scale2(logic [31:0] x, logic signed [15:0] k);
    if (x[30:0] == 31'd0) return x;
    if (x[30:23] == 8'hff) return is_nan(x) ? NAN_BITS : x;
    return fpack(x[31], 64'({x[30:23] != 8'd0, x[22:0]}),
                         ((x[30:23] == 8'd0) ? -20'sd149 : exp_t'(x[30:23]) - 20'sd150) + exp_t'(k), 1'b0);
  endfunction
  /* verilator lint_off UNUSEDSIGNAL */  // the sign bit: |x|
  // num::decompose of a finite non-zero x: |x| = sig * 2^e, sig in [2^23, 2^24).
  function automatic void decompose(logic [31:0] x, output logic [23:0] sig, output exp_t e);
    sig = {x[30:23] != 8'd0, x[22:0]};
    e = (x[30:23] == 8'd0) ? -20'sd149 : exp_t'(x[30:23]) - 20'sd150;
    for (int i = 0; i < 23; i++)
      if (!sig[23]) begin sig = sig << 1; e = e - 20'sd1; end
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */
  // Knuth TwoSum and Veltkamp/Dekker TwoProduct, the C++'s operation order.
  function automatic void two_sum(logic [31:0] a, logic [31:0] b, output logic [31:0] s, output logic [31:0] e);
    logic [31:0] x, bb;
    x = fadd(a, b);
    bb = fp_sub(x, a);
    s = x;
    e = fadd(fp_sub(a, fp_sub(x, bb)), fp_sub(b, bb));
  endfunction
  function automatic void split(logic [31:0] a, output logic [31:0] hi, output logic [31:0] lo);
    logic [31:0] c, h;
    c = fmul(F_4097, a);
    h = fp_sub(c, fp_sub(c, a));
    hi = h;
    lo = fp_sub(a, h);
  endfunction
  function automatic void two_prod(logic [31:0] a, logic [31:0] b, output logic [31:0] p, output logic [31:0] e);
    logic [31:0] ah, al, bh, bl, x;
    split(a, ah, al);
    split(b, bh, bl);
    x = fmul(a, b);
    p = x;
    e = fadd(fadd(fadd(fp_sub(fmul(ah, bh), x), fmul(ah, bl)), fmul(al, bh)), fmul(al, bl));
  endfunction
  function automatic logic [31:0] horner(logic [31:0] p, logic [31:0] r, logic [31:0] c);  // p * r + c
    return fadd(fmul(p, r), c);
  endfunction

  // ---- shared sub-programs ---------------------------------------------------

  // exp_q(hi = t0, lo = t1) in 9 steps: q -> t2, n -> n. Temporaries: t3 r,
  // t4 r*r, t5 p, t6 float(n), t7 n*kLn2Lo.
  function automatic void expq_step(input int s, input sfu_st_t i, output sfu_st_t o);
    /*verilator no_inline_task*/
    o = i;
    case (s)
      0: begin  // n = RNE_int(hi * kLog2e), its float
        o.n = 16'(rne_to_int(fmul(i.t[0], LOG2E)));
        o.t[6] = int_to_f32(32'(o.n));
      end
      1: begin  // hi - n*kLn2Hi; n*kLn2Lo beside it
        o.t[7] = fmul(i.t[6], LN2LO);
        o.t[3] = fp_sub(i.t[0], fmul(i.t[6], LN2HI));
      end
      2: o.t[3] = fadd(fp_sub(i.t[3], i.t[7]), i.t[1]);  // r = (.. - n*kLn2Lo) + lo
      3: begin  // r*r; the first Horner step of E(r)
        o.t[4] = fmul(i.t[3], i.t[3]);
        o.t[5] = horner(EC[5], i.t[3], EC[4]);
      end
      4, 5, 6, 7: o.t[5] = horner(i.t[5], i.t[3], EC[7 - s]);  // c3 .. c0
      default: o.t[2] = fadd(i.t[3], fmul(i.t[4], i.t[5]));  // 8: q = r + (r*r)*p
    endcase
  endfunction

  // div_one_plus_exp's tail in 6 steps, after exp_q (q = t2, n): u / (1 +
  // (1 + q) 2^n) -> t0, the numerator u in c. Temporaries: t0, t1 (d1, e1),
  // t3 q 2^n, t4, t5 (dh, e2), t6 dl, t7 y0; then t0, t1 (p, p'), t2 y0*dl,
  // t3 the remainder.
  function automatic void dope_step(input int s, input sfu_st_t i, output sfu_st_t o);
    /*verilator no_inline_task*/
    o = i;
    case (s)
      0: begin
        two_sum(ONE, fp_scale2(ONE, i.n), o.t[0], o.t[1]);
        o.t[3] = fp_scale2(i.t[2], i.n);
      end
      1: two_sum(i.t[0], i.t[3], o.t[4], o.t[5]);
      2: begin
        o.t[6] = fadd(i.t[1], i.t[5]);
        o.t[7] = fdiv(i.c, i.t[4]);
      end
      3: begin
        two_prod(i.t[7], i.t[4], o.t[0], o.t[1]);
        o.t[2] = fmul(i.t[7], i.t[6]);
      end
      4: o.t[3] = fp_sub(fp_sub(fp_sub(i.c, i.t[0]), i.t[1]), i.t[2]);
      default: o.t[0] = fadd(i.t[7], fdiv(i.t[3], i.t[4]));  // 5
    endcase
  endfunction

  // sin_kernel / cos_kernel(h = t0, l = t1) in 7 steps -> y. sin: t2 t,
  // t3 p, t4 h*t, t5 (l*t)*0.5, t6 the bracket. cos: t2, t6 (t, t'), t3 p,
  // t4 hz, t5 w, t7 0.5 t' + h l, then t6, t7 the two brackets.
  function automatic void kern_step(input int s, input logic use_cos, input sfu_st_t i, output sfu_st_t o);
    /*verilator no_inline_task*/
    o = i;
    if (!use_cos) begin
      case (s)
        0: o.t[2] = fmul(i.t[0], i.t[0]);
        1: begin
          o.t[3] = horner(SC[4], i.t[2], SC[3]);
          o.t[4] = fmul(i.t[0], i.t[2]);
          o.t[5] = fmul(fmul(i.t[1], i.t[2]), HALF);
        end
        2, 3, 4: o.t[3] = horner(i.t[3], i.t[2], SC[4 - s]);
        5: o.t[6] = fp_sub(fmul(i.t[4], i.t[3]), i.t[5]);
        default: o.y = fadd(i.t[0], fadd(i.t[1], i.t[6]));
      endcase
    end else begin
      case (s)
        0: two_prod(i.t[0], i.t[0], o.t[2], o.t[6]);
        1: begin
          o.t[3] = horner(CC[4], i.t[2], CC[3]);
          o.t[4] = fmul(HALF, i.t[2]);
          o.t[5] = fp_sub(ONE, o.t[4]);
          o.t[7] = fadd(fmul(HALF, i.t[6]), fmul(i.t[0], i.t[1]));
        end
        2, 3, 4: o.t[3] = horner(i.t[3], i.t[2], CC[4 - s]);
        5: begin
          o.t[6] = fp_sub(fmul(fmul(i.t[2], i.t[2]), i.t[3]), i.t[7]);
          o.t[7] = fp_sub(fp_sub(ONE, i.t[5]), i.t[4]);
        end
        default: o.y = fadd(i.t[5], fadd(i.t[7], i.t[6]));
      endcase
    end
  endfunction

  // ---- the functions -----------------------------------------------------------

  // Steps per function, the last one the rounding into dst's format: the
  // pipeline latency in clocks (docs/rtl_sfu.md, "SFU element pipeline").
  function automatic logic [4:0] sfu_depth(func_t f);
    case (f)
      F_EXP: return 5'd12;
      F_SQRT, F_RSQRT: return 5'd7;
      F_TANH: return 5'd18;
      F_GELU: return 5'd23;
      F_SIN, F_COS: return 5'd13;
      default: return 5'd2;  // one step of f32 arithmetic (a reduction's term), then the rounding
    endcase
  endfunction

  // exp_sfu: 0 the special values, 1..9 exp_q(x, 0), 10 scale2(1 + q, n).
  function automatic void exp_step(input int s, input sfu_st_t i, output sfu_st_t o);
    /*verilator no_inline_task*/
    o = i;
    if (s == 0) begin
      o.fin = 1'b1;
      if (is_nan(i.x)) o.y = NAN_BITS;
      else if (fp_lt(EXP_OVER, i.x)) o.y = {1'b0, INF_MAG};
      else if (fp_lt(i.x, EXP_UNDER)) o.y = 32'd0;
      else begin
        o.fin = 1'b0;
        o.t[0] = i.x;
        o.t[1] = 32'd0;
      end
    end else if (s <= 9) expq_step(s - 1, i, o);
    else begin
      o.y = fp_scale2(fadd(ONE, i.t[2]), i.n);
      o.fin = 1'b1;
    end
  endfunction

  // sqrt_rn / rsqrt_rn: 0 the special values and x = m 2^e with e even (m in
  // w, e in ez), 1..4 the digit recurrence, 7, 7, 6, 6 bits of the 26-bit
  // root a step (z), 5 the rounding with the exactness sticky.
  function automatic void sqrt_step(input int s, input logic rs, input sfu_st_t i, output sfu_st_t o);
    /*verilator no_inline_task*/
    logic [23:0] sig;
    exp_t e;
    int hib, lob;
    o = i;
    if (s == 0) begin
      o.fin = 1'b1;
      if (is_nan(i.x) || (i.x[31] && i.x[30:0] != 31'd0)) o.y = NAN_BITS;
      else if (i.x[30:0] == 31'd0) o.y = rs ? {i.x[31], INF_MAG} : i.x;
      else if (i.x[30:23] == 8'hff) o.y = rs ? 32'd0 : i.x;
      else begin
        o.fin = 1'b0;
        decompose(i.x, sig, e);
        o.w = 152'(sig) << e[0];
        o.ez = e[0] ? e - 20'sd1 : e;
        o.z = 64'd0;
      end
    end else if (s <= 4) begin
      hib = (s == 1) ? 25 : (s == 2) ? 18 : (s == 3) ? 11 : 5;
      lob = (s == 1) ? 19 : (s == 2) ? 12 : (s == 3) ? 6 : 0;
      for (int b = 25; b >= 0; b--)
        if (b <= hib && b >= lob) begin
          logic [63:0] t;
          t = o.z | (64'd1 << b);
          // sqrt: t^2 <= m 2^26; rsqrt: t^2 m <= 2^74 (77-bit products).
          if (rs ? (80'(t * t) * 80'(o.w[24:0]) <= (80'd1 << 74)) : (t * t <= (64'(o.w[24:0]) << 26))) o.z = t;
        end
    end else begin
      o.fin = 1'b1;
      if (rs)
        o.y = fpack(1'b0, i.z, -20'sd37 - (i.ez >>> 1), 80'(i.z * i.z) * 80'(i.w[24:0]) != (80'd1 << 74));
      else o.y = fpack(1'b0, i.z, (i.ez - 20'sd26) >>> 1, i.z * i.z != (64'(i.w[24:0]) << 26));
    end
  endfunction

  // tanh_sfu: 0 the special values and the branch; |x| < 0.55: 0 t = x*x
  // (t0), p = c6 (t5), 1..6 Horner, 7 x + (x*t)*p; 0.55 <= |x| < 9:
  // 1..9 exp_q(2|x|, 0), 10..15 div_one_plus_exp(2, ..) (u = 2 in c),
  // 16 1 - that with x's sign; |x| >= 9: +-1.
  function automatic void tanh_step(input int s, input sfu_st_t i, output sfu_st_t o);
    /*verilator no_inline_task*/
    logic [31:0] a;
    o = i;
    a = {1'b0, i.x[30:0]};
    if (s == 0) begin
      o.fin = 1'b1;
      if (is_nan(i.x)) o.y = NAN_BITS;
      else if (i.x[30:0] == 31'd0) o.y = i.x;
      else if (fp_lt(a, F_0P55)) begin
        o.fin = 1'b0;
        o.br = BR_POLY;
        o.t[0] = fmul(i.x, i.x);
        o.t[5] = TC[6];
      end else if (fp_lt(a, F_9)) begin
        o.fin = 1'b0;
        o.br = BR_MAIN;
        o.t[0] = fadd(a, a);
        o.t[1] = 32'd0;
        o.c = TWO;
      end else o.y = {i.x[31], ONE[30:0]};
    end else if (i.br == BR_POLY) begin
      if (s <= 6) o.t[5] = horner(i.t[5], i.t[0], TC[6 - s]);
      else begin
        o.y = fadd(i.x, fmul(fmul(i.x, i.t[0]), i.t[5]));
        o.fin = 1'b1;
      end
    end else if (s <= 9) expq_step(s - 1, i, o);
    else if (s <= 15) dope_step(s - 10, i, o);
    else begin
      o.y = fp_sub(ONE, i.t[0]);
      o.y[31] = i.x[31];  // with_sign
      o.fin = 1'b1;
    end
  endfunction

  // gelu_tanh_sfu: 0 the special values, (s, s') = x*x (t0, t1),
  // (a, a') = K_hi*x (t2, t3); 1 (q, q') = c_hi*s (t4, t5), c_hi*s' + c_lo*s
  // (t6), a' += K_lo*x; 2 q' += that, (w, w') = 1 + q (t6, t7); 3 w' += q';
  // 4 (v, v') = a*w (t0, t1), a*w' + a'*w (t4); 5 v' += that, the branch;
  // v <= 40: 6..14 exp_q(v, v'), 15..20 div_one_plus_exp(x, ..), 21 the
  // result; v > 40: 6..14 exp_q(-v, -v'), 15 scale2(x + x*q, n).
  function automatic void gelu_step(input int s, input sfu_st_t i, output sfu_st_t o);
    /*verilator no_inline_task*/
    o = i;
    case (s)
      0: begin
        o.fin = 1'b1;
        if (is_nan(i.x)) o.y = NAN_BITS;
        else if (i.x[30:0] == 31'd0 || fp_lt(F_10, i.x)) o.y = i.x;
        else if (fp_lt(i.x, F_M20)) o.y = 32'h8000_0000;
        else begin
          o.fin = 1'b0;
          two_prod(i.x, i.x, o.t[0], o.t[1]);
          two_prod(GKHI, i.x, o.t[2], o.t[3]);
        end
      end
      1: begin
        two_prod(GCHI, i.t[0], o.t[4], o.t[5]);
        o.t[6] = fadd(fmul(GCHI, i.t[1]), fmul(GCLO, i.t[0]));
        o.t[3] = fadd(i.t[3], fmul(GKLO, i.x));
      end
      2: begin
        o.t[5] = fadd(i.t[5], i.t[6]);
        two_sum(ONE, i.t[4], o.t[6], o.t[7]);
      end
      3: o.t[7] = fadd(i.t[7], i.t[5]);
      4: begin
        two_prod(i.t[2], i.t[6], o.t[0], o.t[1]);
        o.t[4] = fadd(fmul(i.t[2], i.t[7]), fmul(i.t[3], i.t[6]));
      end
      5: begin
        o.t[1] = fadd(i.t[1], i.t[4]);
        o.c = i.x;
        if (fp_lt(F_40, i.t[0])) begin
          o.br = BR_BIG;
          o.t[0] = fneg(i.t[0]);
          o.t[1] = fneg(o.t[1]);
        end else o.br = BR_MAIN;
      end
      default: begin
        if (s <= 14) expq_step(s - 6, i, o);
        else if (i.br == BR_BIG) begin
          o.y = fp_scale2(fadd(i.x, fmul(i.x, i.t[2])), i.n);
          o.fin = 1'b1;
        end else if (s <= 20) dope_step(s - 15, i, o);
        else begin
          o.y = i.t[0];
          o.fin = 1'b1;
        end
      end
    endcase
  endfunction

  // sin_sfu / cos_sfu: 0 the special values; |x| < 0.78125: h = |x| (t0),
  // l = 0 (t1), k = 0; otherwise Payne-Hanek: 0 P = m * (the 4 words of
  // 2/pi from j0) (w), binary point s (ez); 1 k and the signed fraction g
  // (w[127:0], neg); 2 r = g pi/2 normalised (z, ez), h = RNE(r); 3 l =
  // RNE(r - h); 4..10 the kernel the quadrant picks; 11 the quadrant's and
  // x's signs.
  function automatic void trig_step(input int s, input logic is_cos, input sfu_st_t i, output sfu_st_t o);
    /*verilator no_inline_task*/
    logic [23:0] m, hs;
    exp_t e, he;
    logic [127:0] win, g;
    logic [255:0] p256;
    logic [127:0] z128;
    logic [6:0] lz, zlz;
    logic [63:0] tt, res;
    int j0, sh;
    o = i;
    case (s)
      0: begin
        o.fin = 1'b1;
        if (i.x[30:23] == 8'hff) o.y = NAN_BITS;
        else if (!is_cos && i.x[30:0] == 31'd0) o.y = i.x;
        else begin
          o.fin = 1'b0;
          o.kq = 2'd0;
          o.neg = 1'b0;
          if (fp_lt({1'b0, i.x[30:0]}, F_0P78125)) begin
            o.br = BR_SMALL;
            o.t[0] = {1'b0, i.x[30:0]};
            o.t[1] = 32'd0;
          end else begin
            o.br = BR_MAIN;
            decompose({1'b0, i.x[30:0]}, m, e);
            j0 = (e >= 20'sd34) ? (int'(e) - 2) / 32 : 0;
            win = {TWO_OVER_PI[j0], TWO_OVER_PI[j0 + 1], TWO_OVER_PI[j0 + 2], TWO_OVER_PI[j0 + 3]};
            o.w = 152'(win) * 152'(m);
            o.ez = exp_t'(32 * (j0 + 4)) - e;
          end
        end
      end
      1: if (i.br == BR_MAIN) begin
        // bits [s, s + 2) are k; the 128 bits below s the fraction.
        p256 = {104'd0, i.w} << 64;
        sh = int'(i.ez);
        o.kq = 2'(i.w >> sh);
        g = 128'(p256 >> (sh - 64));
        if (g[127]) begin
          o.kq = o.kq + 2'd1;
          o.neg = 1'b1;
          g = 128'd0 - g;
        end
        o.w = 152'(g);
        if (g == 128'd0) begin
          o.br = BR_SMALL;
          o.t[0] = 32'd0;
          o.t[1] = 32'd0;
        end
      end
      2: if (i.br == BR_MAIN) begin
        g = i.w[127:0];
        lz = 7'd0;
        for (int b = 0; b < 128; b++)
          if (g[b]) lz = 7'(127 - b);
        tt = 64'((g << lz) >> 64);
        z128 = 128'(tt) * 128'(PIO2_Q63);
        zlz = 7'd0;
        for (int b = 64; b < 128; b++)
          if (z128[b]) zlz = 7'(127 - b);
        o.z = 64'((z128 << zlz) >> 64);
        o.ez = -exp_t'(lz) - 20'sd63 - exp_t'(zlz);
        o.t[0] = fpack(i.neg, o.z, o.ez, 1'b0);
      end
      3: if (i.br == BR_MAIN) begin
        decompose(i.t[0], hs, he);
        res = i.z - (64'(hs) << (he - i.ez));
        o.t[1] = 32'd0;
        if (res != 64'd0)
          o.t[1] = fpack(res[63] != i.neg, res[63] ? 64'd0 - res : res, i.ez, 1'b0);
      end
      4, 5, 6, 7, 8, 9, 10: kern_step(s - 4, i.kq[0] ^ is_cos, i, o);
      default: begin  // 11
        o.fin = 1'b1;
        if (is_cos ? (i.kq[1] ^ i.kq[0]) : i.kq[1]) o.y = fneg(i.y);
        if (!is_cos && i.x[31]) o.y = fneg(o.y);
      end
    endcase
  endfunction

  // The reduction's operation (num::SumOp / MaxOp) and identity.
  function automatic logic [31:0] red_op(func_t f, logic [31:0] a, logic [31:0] b);
    return (f == F_RMAX) ? fp_nmax(a, b) : fadd(a, b);
  endfunction
  function automatic logic [31:0] red_identity(func_t f);
    return (f == F_RMAX) ? NEG_INF : 32'd0;
  endfunction

  // One step of function f on element i: step depth - 1 rounds the result
  // into dst's format (num::round_to, as write_row does); before it, a
  // finished element passes through.
  function automatic void sfu_step(input func_t f, input int s, input logic [4:0] depth, input logic [1:0] fmt,
                                  input sfu_st_t i, output sfu_st_t o);
    /*verilator no_inline_task*/
    o = i;
    if (s == int'(depth) - 1) begin
      if (!is_reduce(f)) o.y = fp_round_fmt(i.y, fmt);  // a reduction's term stays f32
      return;
    end
    if (i.fin) return;
    case (f)
      F_EXP: exp_step(s, i, o);
      F_SQRT: sqrt_step(s, 1'b0, i, o);
      F_RSQRT: sqrt_step(s, 1'b1, i, o);
      F_TANH: tanh_step(s, i, o);
      F_GELU: gelu_step(s, i, o);
      F_SIN: trig_step(s, 1'b0, i, o);
      F_COS: trig_step(s, 1'b1, i, o);
      default: begin  // the one-step functions (b holds k for SCALE, ADDK, MAXK)
        o.fin = 1'b1;
        case (f)
          F_RECIP: o.y = fdiv(ONE, i.x);
          F_SCALE, F_MUL: o.y = fmul(i.x, i.b);
          F_ADDK, F_ADD: o.y = fadd(i.x, i.b);
          F_SUB: o.y = fp_sub(i.x, i.b);
          F_MAXK, F_MAX: o.y = fp_nmax(i.x, i.b);
          F_RELU: o.y = is_nan(i.x) ? NAN_BITS : (fp_lt(32'd0, i.x) ? i.x : 32'd0);
          F_MAC: o.y = fadd(i.c, fmul(i.x, i.b));
          F_RSUM, F_RMAX: o.y = i.x;              // the term: x
          F_RSUMSQ, F_RMS: o.y = fmul(i.x, i.x);  // x * x, rounded before it is added
          default: o.y = NAN_BITS;  // not an element-wise function
        endcase
      end
    endcase
  endfunction
endpackage

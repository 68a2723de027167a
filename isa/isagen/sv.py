"""The SystemVerilog side of the ISA: the package n3_isa_pkg.sv and the
dispatcher's legality check n3_isa_decode.sv (also the package's lint top).

Besides types and positions, the package carries the decode tables
(gen_decode_tables): every check isa::check_word makes, its precedence and
the field extraction as functions, so the RTL decoder (rtl_bridge/rtl/decoder/)
holds no copy of the table; `n3 cosim --unit decoder` compares it with the C++.
"""



# SystemVerilog keywords a field name may collide with; such fields get a
# trailing underscore in the package (wait_, const_ ...).
SV_KEYWORDS = {"wait", "const", "type", "bit", "byte", "int", "logic", "reg", "wire", "signed",
               "unsigned", "real", "time", "event", "string", "case", "default", "if", "else",
               "begin", "end", "module", "input", "output", "inout", "function", "task", "return",
               "assign", "always", "initial", "disable", "fork", "join", "force", "release", "repeat",
               "while", "for", "do", "forever", "struct", "union", "enum", "packed", "class", "new",
               "null", "this", "super", "static", "local", "protected", "virtual", "rand", "randc",
               "constraint", "property", "sequence", "assert", "assume", "cover", "expect", "import",
               "export", "package", "priority", "unique", "tagged", "void", "shortint", "longint",
               "integer", "genvar", "parameter", "localparam", "specparam", "defparam", "supply0",
               "supply1", "tri", "table", "config", "library", "design", "cell", "use", "instance"}


def sv_name(n):
    return n + "_" if n in SV_KEYWORDS else n


def packed_struct(w, fields, bits, name):
    """A packed struct of `bits` bits: the fields from the top, the gaps as rsv0, rsv1 ..."""
    w("  typedef struct packed {")
    bit = bits - 1
    n_rsv = 0
    for f in sorted(fields, key=lambda f: -f.hi):
        if f.hi < bit:
            w(f"    logic [{bit - f.hi - 1}:0] rsv{n_rsv};")
            n_rsv += 1
        t = f"{f.enum.name}_e" if f.enum else f"logic [{f.width - 1}:0]"
        w(f"    {t} {sv_name(f.name)};")
        bit = f.lo - 1
    if bit >= 0:
        w(f"    logic [{bit}:0] rsv{n_rsv};")
    w(f"  }} {name};")


def allowed_mask(f):
    """Bit v set for each value enum field f may hold (isa::FieldDef::allowed)."""
    m = 0
    for v in f.allowed_values():
        m |= 1 << v.value
    return m


def engine_bits(isa):
    return max(1, (len(isa.engines) - 1).bit_length())


def own_fields(isa):
    """(max own fields of an opcode, widest own field, widest sub-function field)."""
    nf = max(len(op.fields) for op in isa.opcodes)
    fb = max(f.width for op in isa.opcodes for f in op.fields)
    sb = max([op.subop_field.width for op in isa.opcodes if op.subop_field is not None] or [1])
    return nf, fb, sb


def extend(f, bits):
    """f's bits of word w, zero- or (sint, offset: as isa::field_signed) sign-extended to `bits`."""
    if f.width == bits:
        return f"w[{f.hi}:{f.lo}]"
    fill = f"w[{f.hi}]" if f.type in ("sint", "offset") else "1'b0"
    return f"{{{{{bits - f.width}{{{fill}}}}}, w[{f.hi}:{f.lo}]}}"


def gen_decode_tables(w, isa):
    """What an RTL decoder needs to decode exactly as isa::check_word, subop_of
    and field_raw / field_signed do: the checks of a word, each as one flag, the
    precedence that turns them into isa::Problem, and the fields as slots."""
    nf, fb, sb = own_fields(isa)
    hdr = {f.name: f for f in isa.header}
    eng_id = {e["name"]: e["id"] for e in isa.engines}
    w("  // ---- decoding (rtl_bridge/rtl/decoder/, docs/rtl.md) -----------------------")
    # The values are isa::Problem's (isa/isa.h, not the table); the cosim
    # compares the numbers, so a drift on either side is a mismatch.
    w("  // isa::Problem (isa/isa.h), same values: why a word is not a valid instruction.")
    w("  typedef enum logic [1:0] {")
    w("    PROBLEM_NONE = 2'd0,")
    w("    PROBLEM_RESERVED_OPCODE = 2'd1,")
    w("    PROBLEM_RESERVED_ENUM = 2'd2,")
    w("    PROBLEM_RESERVED_BITS = 2'd3")
    w("  } problem_e;")
    w("")
    w("  // A decoded word's fields as slots: slot k is the opcode's k-th own field")
    w("  // (isa::OpcodeDef::fields[3 + k], after opcode, wait, signal), zero-extended to")
    w("  // FIELD_BITS, sint / offset fields sign-extended (isa::field_signed); slots")
    w("  // past the opcode's fields, and every slot of a reserved opcode, are 0.")
    w(f"  localparam int unsigned MAX_OP_FIELDS = {nf};  // most own fields of one opcode")
    w(f"  localparam int unsigned FIELD_BITS = {fb};  // widest own field")
    w(f"  localparam int unsigned SUBOP_BITS = {sb};  // widest sub-function field")
    w("  typedef logic [MAX_OP_FIELDS-1:0][FIELD_BITS-1:0] insn_fields_t;")
    w("")
    w("  // Every check isa::check_word makes, evaluated at once (no precedence yet):")
    w("  // insn_problem applies check_word's order to them.")
    w("  typedef struct packed {")
    w("    logic op_defined;                 // the opcode is defined")
    w("    logic rsv_bits;                   // a bit no field of the opcode names is set")
    w("    logic subop_bad;                  // the sub-function field holds a reserved value")
    w("    logic [MAX_OP_FIELDS-1:0] unused_nz;  // slot k: not used by the sub-function, non-zero")
    w("    logic [MAX_OP_FIELDS-1:0] enum_bad;   // slot k: a used enum field (not the sub-function), reserved value")
    w("    logic own_token;                  // a wait or signal bit names the opcode's own engine")
    w("  } insn_checks_t;")
    w("")
    w("  function automatic insn_checks_t insn_checks(input logic [63:0] w);")
    w("    insn_checks_t c;")
    w("    logic [MAX_OP_FIELDS-1:0] nz, unused, bad;")
    w("    c = '0;")
    w("    nz = '0;")
    w("    unused = '0;")
    w("    bad = '0;")
    oc = hdr["opcode"]
    w(f"    case (w[{oc.hi}:{oc.lo}])")
    for op in isa.opcodes:
        P = op.name
        eid = eng_id[op.engine]
        w(f"      {oc.width}'d{op.value}: begin  // {P}")
        w("        c.op_defined = 1'b1;")
        w(f"        c.rsv_bits = (w & {P}_RESERVED_MASK) != 64'h0;")
        w(f"        c.own_token = w[{hdr['wait'].lo + eid}] || w[{hdr['signal'].lo + eid}];")
        for k, f in enumerate(op.fields):
            w(f"        nz[{k}] = |w[{f.hi}:{f.lo}];")
            if f.enum is not None and f is not op.subop_field and allowed_mask(f) != (1 << (1 << f.width)) - 1:
                w(f"        bad[{k}] = !{P}_{f.name.upper()}_ALLOWED[w[{f.hi}:{f.lo}]];")
        if op.subop_field is not None:
            sf = op.subop_field
            w(f"        c.subop_bad = !{P}_{sf.name.upper()}_ALLOWED[w[{sf.hi}:{sf.lo}]];")
            w(f"        case (w[{sf.hi}:{sf.lo}])")
            for sub in op.subops:
                used = {od.field for od in sub.operands} | {sf.name}
                m = sum(1 << k for k, f in enumerate(op.fields) if f.name not in used)
                w(f"          {sf.width}'d{sub.value}: unused = {nf}'b{m:0{nf}b};  // {sub.name}")
            w("          default: unused = '0;  // subop_bad decides")
            w("        endcase")
        else:
            used = {od.field for od in op.subops[0].operands}
            m = sum(1 << k for k, f in enumerate(op.fields) if f.name not in used)
            w(f"        unused = {nf}'b{m:0{nf}b};")
        w("      end")
    w("      default: ;  // reserved opcode: op_defined = 0 decides")
    w("    endcase")
    w("    c.unused_nz = unused & nz;")
    w("    c.enum_bad = ~unused & bad;")
    w("    return c;")
    w("  endfunction")
    w("")
    w("  // isa::check_word's precedence: the opcode, then reserved bits, then the")
    w("  // sub-function value, then the fields in table order (the lowest slot with a")
    w("  // problem decides between an unused non-zero field and a reserved enum")
    w("  // value), then a token bit naming the own engine.")
    w("  function automatic problem_e insn_problem(input insn_checks_t c);")
    w("    logic [MAX_OP_FIELDS-1:0] hit, first;")
    w("    hit = c.unused_nz | c.enum_bad;")
    w("    first = hit & (~hit + 1'b1);  // the lowest set bit of hit")
    w("    if (!c.op_defined) return PROBLEM_RESERVED_OPCODE;")
    w("    if (c.rsv_bits) return PROBLEM_RESERVED_BITS;")
    w("    if (c.subop_bad) return PROBLEM_RESERVED_ENUM;")
    w("    if (hit != '0) return (first & c.unused_nz) != '0 ? PROBLEM_RESERVED_BITS : PROBLEM_RESERVED_ENUM;")
    w("    if (c.own_token) return PROBLEM_RESERVED_BITS;")
    w("    return PROBLEM_NONE;")
    w("  endfunction")
    w("")
    w("  // 1 when the word is a valid instruction (isa::check_word(w).ok()).")
    w("  function automatic logic insn_legal(input logic [63:0] w);")
    w("    return insn_problem(insn_checks(w)) == PROBLEM_NONE;")
    w("  endfunction")
    w("")
    w("  // insn_fields and insn_subop take the whole word, as every function here, so")
    w("  // that a caller needs no layout; the bits they do not return (the token")
    w("  // bits; for insn_subop the operands) are not read, which -Wall would flag.")
    w("  /* verilator lint_off UNUSEDSIGNAL */")
    w("  // The fields of w's opcode as slots (insn_fields_t).")
    w("  function automatic insn_fields_t insn_fields(input logic [63:0] w);")
    w("    insn_fields_t f;")
    w("    f = '0;")
    w(f"    case (w[{oc.hi}:{oc.lo}])")
    for op in isa.opcodes:
        w(f"      {oc.width}'d{op.value}: begin  // {op.name}")
        for k, f in enumerate(op.fields):
            w(f"        f[{k}] = {extend(f, fb)};  // {f.name}")
        w("      end")
    w("      default: ;")
    w("    endcase")
    w("    return f;")
    w("  endfunction")
    w("")
    w("  // The raw sub-function field of w (0 for opcodes without one, as")
    w("  // isa::subop_of's single entry), zero-extended to SUBOP_BITS.")
    w("  function automatic logic [SUBOP_BITS-1:0] insn_subop(input logic [63:0] w);")
    w("    logic [SUBOP_BITS-1:0] s;")
    w("    s = '0;")
    w(f"    case (w[{oc.hi}:{oc.lo}])")
    for op in isa.opcodes:
        if op.subop_field is not None:
            w(f"      {oc.width}'d{op.value}: s = {extend(op.subop_field, sb)};  // {op.name}")
    w("      default: ;")
    w("    endcase")
    w("    return s;")
    w("  endfunction")
    w("  /* verilator lint_on UNUSEDSIGNAL */")
    w("")
    w("  // The engine whose queue an instruction goes to (0 for a reserved opcode).")
    w(f"  function automatic logic [ENGINE_BITS-1:0] insn_engine(input logic [{oc.width - 1}:0] opcode);")
    w("    logic [ENGINE_BITS-1:0] e;")
    w("    case (opcode)")
    for op in isa.opcodes:
        w(f"      {oc.width}'d{op.value}: e = ENGINE_BITS'({eng_id[op.engine]});")
    w("      default: e = '0;")
    w("    endcase")
    w("    return e;")
    w("  endfunction")
    w("")


def gen_sv(isa):
    o = []
    w = o.append
    w("// GENERATED by isa/gen_isa.py from isa/isa.yaml. Do not edit: change the table.")
    w("// The n3 ISA for RTL units: opcodes, enums, field positions, per-opcode packed")
    w("// views of an instruction word and of the table records, and reserved-bit masks.")
    w("package n3_isa_pkg;")
    w("")
    w("  // A package serves many units and each uses a few of its constants.")
    w("  /* verilator lint_off UNUSEDPARAM */")
    w(f"  localparam int unsigned ISA_VERSION = {isa.version};")
    for c in isa.constants:
        w(f"  localparam int unsigned {c['name']} = {c['value']};  // {' '.join(c['doc'].split())}")
    w(f"  localparam int unsigned NUM_ENGINES = {len(isa.engines)};")
    w("")
    w(f"  typedef enum logic [{len(isa.engines) - 1}:0] {{")
    w(",\n".join(f"    ENG_{e['name']} = {len(isa.engines)}'d{1 << e['id']}" for e in isa.engines))
    w("  } engine_bit_e;")
    for e in isa.engines:
        w(f"  localparam int unsigned ENGINE_{e['name']} = {e['id']};")
    w(f"  localparam int unsigned ENGINE_BITS = {engine_bits(isa)};")
    w("")
    w("  // The header every instruction starts with.")
    for f in isa.header:
        w(f"  localparam int unsigned HDR_{f.name.upper()}_LSB = {f.lo};")
        w(f"  localparam int unsigned HDR_{f.name.upper()}_WIDTH = {f.width};")
    w("")
    for ename, e in isa.enums.items():
        w(f"  // {e.doc}")
        w(f"  typedef enum logic [{e.width - 1}:0] {{")
        w(",\n".join(f"    {ename.upper()}_{v.name} = {e.width}'d{v.value}" for v in e.values))
        w(f"  }} {ename}_e;")
        w("")
    for op in isa.opcodes:
        P = op.name
        w(f"  // {P} (engine {op.engine})")
        for f in op.all_fields:
            w(f"  localparam int unsigned {P}_{f.name.upper()}_LSB = {f.lo};")
            w(f"  localparam int unsigned {P}_{f.name.upper()}_WIDTH = {f.width};")
        w(f"  localparam logic [63:0] {P}_RESERVED_MASK = 64'h{op.reserved_mask:016x};")
        for f in op.fields:
            if f.enum is not None:
                n = 1 << f.width
                m = f"{n}'h{allowed_mask(f):0{(n + 3) // 4}x}"
                w(f"  localparam logic [{n - 1}:0] {P}_{f.name.upper()}_ALLOWED = {m};  // bit v: value v defined")
        # packed struct, msb first, reserved gaps named
        packed_struct(w, op.all_fields, 64, f"{P.lower()}_insn_t")
        w("")
    for rname, r in isa.records.items():
        nb = r["bits"]
        w(f"  // {rname} table record ({nb} bits)")
        for f in r["fields"]:
            w(f"  localparam int unsigned {rname.upper()}_{f.name.upper()}_LSB = {f.lo};")
            w(f"  localparam int unsigned {rname.upper()}_{f.name.upper()}_WIDTH = {f.width};")
        w(f"  localparam logic [{nb - 1}:0] {rname.upper()}_RESERVED_MASK = {nb}'h{(((1 << nb) - 1) & ~r['used']):0{nb // 4}x};")
        packed_struct(w, r["fields"], nb, f"{rname}_rec_t")
        w("")
    gen_decode_tables(w, isa)
    w("  /* verilator lint_on UNUSEDPARAM */")
    w("endpackage")
    return "\n".join(o) + "\n"


def gen_sv_decode(isa):
    return """// GENERATED by isa/gen_isa.py from isa/isa.yaml. Do not edit: change the table.
// The dispatcher's front check: is a fetched word a legal instruction, and
// which engine queue does it go to. Illegal words trap (docs/sim.md).
module n3_isa_decode
  import n3_isa_pkg::*;
(
  input  logic [63:0]            insn,
  output logic                   legal,
  output logic [ENGINE_BITS-1:0] engine
);
  assign legal = insn_legal(insn);
  assign engine = insn_engine(insn[HDR_OPCODE_LSB +: HDR_OPCODE_WIDTH]);
endmodule
"""

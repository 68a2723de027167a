#!/usr/bin/env python3
"""Generates the n3 ISA layer from isa/isa.yaml.

  gen_isa.py --yaml isa/isa.yaml --intro isa/isa_intro.md --out DIR

writes DIR/isa_gen.h (C++17: enums, masks, static_asserts, typed
encode/decode, reflection tables for the assembler and the checks),
DIR/n3_isa_pkg.sv (SystemVerilog package for rtl_bridge/), DIR/n3_isa_decode.sv
(the dispatcher's legality check, also the package's lint top) and DIR/isa.md
(docs/isa.md). A file is rewritten only when its content changes, so a
rebuild recompiles nothing when the table did not change.

The table is checked first: field overlaps, fields crossing a 64-bit word,
enum values that do not fit their width, operands naming unknown fields,
unknown dtype classes. Any problem stops the build with the YAML path of it.
"""
import argparse
import os
import re
import sys

import yaml


class TableError(Exception):
    pass


def fail(where, msg):
    raise TableError(f"isa.yaml: {where}: {msg}")


def camel(s):
    return "".join(p[:1].upper() + p[1:] for p in s.split("_"))


# ---------------------------------------------------------------------------
# Loading and checking the table


FIELD_TYPES = ("uint", "sint", "enum", "desc", "const", "reg", "engines", "offset")
FIXED_WIDTH = {"desc": 12, "const": 8, "reg": 4, "engines": 5}


class Field:
    def __init__(self, d, where, enums, total_bits):
        self.name = d["name"]
        if not isinstance(self.name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            fail(where, f"field name {self.name!r} must be a lower_case string (quote YAML's on/off/yes/no)")
        self.doc = d.get("doc", "")
        hi, lo = d["bits"]
        if not (0 <= lo <= hi < total_bits):
            fail(where, f"field {self.name}: bits [{hi}, {lo}] outside [0, {total_bits})")
        if hi // 64 != lo // 64:
            fail(where, f"field {self.name}: bits [{hi}, {lo}] cross a 64-bit word")
        self.hi, self.lo = hi, lo
        self.width = hi - lo + 1
        self.word = lo // 64
        self.wlo = lo % 64  # bit position inside its word
        t = d["type"].split()
        self.type = t[0]
        if self.type not in FIELD_TYPES:
            fail(where, f"field {self.name}: unknown type {d['type']}")
        self.enum = None
        self.allowed = None
        if self.type == "enum":
            if len(t) != 2 or t[1] not in enums:
                fail(where, f"field {self.name}: unknown enum in '{d['type']}'")
            self.enum = enums[t[1]]
            if self.enum.width != self.width:
                fail(where, f"field {self.name}: {self.width} bits but enum {self.enum.name} is {self.enum.width}")
            allowed = d.get("values")
            if allowed is not None:
                names = {v.name for v in self.enum.values}
                for a in allowed:
                    if a not in names:
                        fail(where, f"field {self.name}: value {a} not in enum {self.enum.name}")
                self.allowed = list(allowed)
        elif len(t) != 1:
            fail(where, f"field {self.name}: malformed type '{d['type']}'")
        if self.type in FIXED_WIDTH and self.width != FIXED_WIDTH[self.type]:
            fail(where, f"field {self.name}: a {self.type} field is {FIXED_WIDTH[self.type]} bits, not {self.width}")

    def mask(self):
        return ((1 << self.width) - 1) << self.wlo

    def allowed_values(self):
        vals = self.enum.values if self.enum else []
        if self.allowed is not None:
            vals = [v for v in vals if v.name in self.allowed]
        return vals


class EnumValue:
    def __init__(self, d):
        self.name = d["name"]
        self.value = d["value"]
        self.doc = d.get("doc", "")
        self.extra = {k: v for k, v in d.items() if k not in ("name", "value", "doc")}


class Enum:
    def __init__(self, name, d):
        self.name = name
        self.width = d["width"]
        self.doc = d.get("doc", "")
        self.values = [EnumValue(v) for v in d["values"]]
        seen = set()
        for v in self.values:
            if not re.fullmatch(r"[A-Z][A-Z0-9_]*", v.name):
                fail(f"enums.{name}", f"value name {v.name} must be UPPER_CASE")
            if v.value < 0 or v.value >= (1 << self.width):
                fail(f"enums.{name}", f"{v.name} = {v.value} does not fit {self.width} bits")
            if v.value in seen:
                fail(f"enums.{name}", f"value {v.value} used twice")
            seen.add(v.value)
        if len({v.name for v in self.values}) != len(self.values):
            fail(f"enums.{name}", "duplicate value name")

    def by_name(self, n):
        for v in self.values:
            if v.name == n:
                return v
        return None


class Operand:
    def __init__(self, fname, d, field, classes, where):
        d = d or {}
        self.field = fname
        self.access = d.get("access", "")
        self.dtype = d.get("dtype", "")
        self.optional = bool(d.get("optional", False))
        if field.type == "desc":
            if self.access not in ("r", "w", "rw"):
                fail(where, f"operand {fname}: a desc operand needs access r, w or rw")
            if self.dtype not in classes:
                fail(where, f"operand {fname}: unknown dtype class '{self.dtype}'")
        elif field.type == "const":
            if self.dtype not in classes:
                fail(where, f"operand {fname}: unknown dtype class '{self.dtype}'")
            if self.access:
                fail(where, f"operand {fname}: constants have no access")
        else:
            if self.access or self.dtype or self.optional:
                fail(where, f"operand {fname}: only desc / const operands take access, dtype, optional")


class Subop:
    def __init__(self, name, value, d, fields, classes, where):
        self.name = name
        self.value = value
        self.doc = (d or {}).get("doc", "")
        ops = (d or {}).get("operands", {}) or {}
        byname = {f.name: f for f in fields}
        self.operands = []
        for fname, od in ops.items():
            if fname not in byname:
                fail(where, f"operand {fname} is not a field of this opcode")
            self.operands.append(Operand(fname, od, byname[fname], classes, f"{where}.{fname}"))


class Opcode:
    def __init__(self, d, enums, header, classes):
        self.name = d["name"]
        self.value = d["value"]
        self.engine = d["engine"]
        self.doc = d.get("doc", "")
        where = f"opcodes.{self.name}"
        self.fields = [Field(f, where, enums, 64) for f in d["fields"]]
        self.all_fields = header + self.fields
        names = [f.name for f in self.all_fields]
        if len(set(names)) != len(names):
            fail(where, "duplicate field name")
        used = 0
        for f in self.all_fields:
            if used & (((1 << f.width) - 1) << f.lo):
                fail(where, f"field {f.name} overlaps another")
            used |= ((1 << f.width) - 1) << f.lo
        self.reserved_mask = ((1 << 64) - 1) & ~used
        self.subop_field = None
        self.subops = []
        sub = d.get("subop")
        if sub:
            sf = [f for f in self.fields if f.name == sub]
            if not sf or sf[0].type != "enum":
                fail(where, f"subop field {sub} must be an enum field")
            self.subop_field = sf[0]
            allowed = self.subop_field.allowed_values()
            if "all_subops" in d:
                for v in allowed:
                    self.subops.append(Subop(v.name, v.value, dict(d["all_subops"], doc=v.doc),
                                             self.fields, classes, f"{where}.{v.name}"))
            else:
                sd = d.get("subops", {})
                for v in allowed:
                    if v.name not in sd:
                        fail(where, f"sub-function {v.name} has no entry under subops")
                    self.subops.append(Subop(v.name, v.value, sd[v.name], self.fields, classes,
                                             f"{where}.{v.name}"))
                for k in sd:
                    if k not in {v.name for v in allowed}:
                        fail(where, f"subops.{k} is not a value of {self.subop_field.enum.name}")
        else:
            self.subops.append(Subop("", 0, {"operands": d.get("operands", {}), "doc": ""}, self.fields,
                                     classes, where))
        for s in self.subops:
            for o in s.operands:
                if self.subop_field is not None and o.field == self.subop_field.name:
                    fail(where, "the subop field cannot be an operand")

    def field(self, name):
        for f in self.all_fields:
            if f.name == name:
                return f
        return None


class Isa:
    def __init__(self, d):
        self.name = d["name"]
        self.version = d["version"]
        if d["word_bits"] != 64:
            fail("word_bits", "must be 64")
        self.constants = d["constants"]
        self.engines = d["engines"]
        for i, e in enumerate(self.engines):
            if e["id"] != i:
                fail(f"engines.{e['name']}", "ids must be 0, 1, 2, ... in order")
        if len(self.engines) != FIXED_WIDTH["engines"]:
            fail("engines", f"the engine mask fields are {FIXED_WIDTH['engines']} bits; list that many engines")
        self.enums = {}
        for name, ed in d["enums"].items():
            self.enums[name] = Enum(name, ed)
        if "opcode" in self.enums:
            fail("enums.opcode", "is generated from opcodes; do not declare it")
        opc_vals = [{"name": o["name"], "value": o["value"], "doc": (o.get("doc") or "").split(".")[0]}
                    for o in d["opcodes"]]
        self.enums["opcode"] = Enum("opcode", {"width": 4, "doc": "Major opcode.", "values": opc_vals})
        self.classes = {}
        dt = self.enums["dtype"]
        for cname, cd in d["dtype_classes"].items():
            for t in cd["types"]:
                if not dt.by_name(t):
                    fail(f"dtype_classes.{cname}", f"unknown dtype {t}")
            self.classes[cname] = cd
        self.records = {}
        for rname, rd in d["records"].items():
            fields = [Field(f, f"records.{rname}", self.enums, rd["bits"]) for f in rd["fields"]]
            used = 0
            for f in fields:
                m = ((1 << f.width) - 1) << f.lo
                if used & m:
                    fail(f"records.{rname}", f"field {f.name} overlaps another")
                used |= m
            self.records[rname] = {"bits": rd["bits"], "doc": rd.get("doc", ""), "fields": fields,
                                   "words": rd["bits"] // 64, "used": used}
        self.header = [Field(f, "header", self.enums, 64) for f in d["header"]]
        self.opcodes = [Opcode(o, self.enums, self.header, self.classes) for o in d["opcodes"]]
        engines = {e["name"] for e in self.engines}
        for o in self.opcodes:
            if o.engine not in engines:
                fail(f"opcodes.{o.name}", f"unknown engine {o.engine}")


# ---------------------------------------------------------------------------
# C++


def cpp_type(f):
    if f.type == "enum":
        return camel(f.enum.name)
    if f.type in ("sint", "offset"):
        return "int32_t" if f.width <= 32 else "int64_t"
    if f.type == "desc":
        return "uint16_t"
    if f.type in ("const", "reg", "engines"):
        return "uint8_t"
    return "uint32_t" if f.width <= 32 else "uint64_t"


def hexmask(m, bits=64):
    return f"0x{m:0{bits // 4}x}ull"


def gen_cpp(isa):
    o = []
    w = o.append
    w("// GENERATED by isa/gen_isa.py from isa/isa.yaml. Do not edit: change the table.")
    w("// Encodings are shift/mask functions checked by static_asserts; no bitfield")
    w("// structs, so no compiler chooses a layout. docs/isa.md documents every field.")
    w("#pragma once")
    w("#include <cstdint>")
    w("")
    w("namespace n3::isa {")
    w("")
    w(f"constexpr int kIsaVersion = {isa.version};")
    for c in isa.constants:
        w(f"constexpr int64_t k{camel(c['name'].lower())} = {c['value']};  // {c['doc']}")
    w(f"constexpr int kNumEngines = {len(isa.engines)};")
    w("")
    # enums
    for ename, e in isa.enums.items():
        cname = camel(ename)
        w(f"// {e.doc}")
        w(f"enum class {cname} : uint8_t {{")
        for v in e.values:
            w(f"  {v.name} = {v.value},")
        w("};")
        w(f"constexpr int k{cname}Width = {e.width};")
        w(f"inline bool valid_{ename}(uint64_t v) {{")
        w("  switch (v) {")
        for v in e.values:
            w(f"    case {v.value}:")
        w("      return true;")
        w("    default:")
        w("      return false;")
        w("  }")
        w("}")
        w(f"inline const char* name_of({cname} v) {{")
        w("  switch (v) {")
        for v in e.values:
            w(f"    case {cname}::{v.name}:")
            w(f'      return "{v.name}";')
        w("  }")
        w('  return "?";')
        w("}")
        w("")
    w("enum class Engine : uint8_t {")
    for e in isa.engines:
        w(f"  {e['name']} = {e['id']},")
    w("};")
    w("inline const char* name_of(Engine e) {")
    w("  switch (e) {")
    for e in isa.engines:
        w(f'    case Engine::{e["name"]}:')
        w(f'      return "{e["name"]}";')
    w("  }")
    w('  return "?";')
    w("}")
    w("")
    # dtype extras
    dt = isa.enums["dtype"]
    w("// Bits per element of each dtype.")
    w("inline int dtype_bits(Dtype t) {")
    w("  switch (t) {")
    for v in dt.values:
        w(f"    case Dtype::{v.name}:")
        w(f"      return {v.extra['bits']};")
    w("  }")
    w("  return 0;")
    w("}")
    sp = isa.enums["space"]
    w("// Required alignment (bytes) of a descriptor base in each space.")
    w("inline int space_align(Space s) {")
    w("  switch (s) {")
    for v in sp.values:
        w(f"    case Space::{v.name}:")
        w(f"      return {v.extra['align']};")
    w("  }")
    w("  return 1;")
    w("}")
    w("")
    w("// dtype classes: bit (1 << Dtype) set for each member.")
    for cname, cd in isa.classes.items():
        m = 0
        for t in cd["types"]:
            m |= 1 << dt.by_name(t).value
        w(f"constexpr uint32_t kDtypeClass{camel(cname)} = 0x{m:x}u;  // {cd['doc']}")
    w("")
    # header masks
    w("// ---- instruction words -------------------------------------------------")
    for f in isa.header:
        w(f"constexpr int kHdr_{f.name}_lo = {f.lo};")
        w(f"constexpr int kHdr_{f.name}_width = {f.width};")
        w(f"constexpr uint64_t kHdr_{f.name}_mask = {hexmask(f.mask())};")
    w("inline Opcode opcode_raw_cast(uint64_t w) { return static_cast<Opcode>((w >> kHdr_opcode_lo) & 0xf); }")
    w("inline uint32_t opcode_bits(uint64_t w) { return static_cast<uint32_t>((w >> kHdr_opcode_lo) & 0xf); }")
    w("inline uint8_t wait_bits(uint64_t w) { return static_cast<uint8_t>((w & kHdr_wait_mask) >> kHdr_wait_lo); }")
    w("inline uint8_t signal_bits(uint64_t w) { return static_cast<uint8_t>((w & kHdr_signal_mask) >> kHdr_signal_lo); }")
    w("")
    for op in isa.opcodes:
        P = op.name
        w(f"// {P}: engine {op.engine}")
        for f in op.fields:
            w(f"constexpr uint64_t k{P}_{f.name}_mask = {hexmask(f.mask())};  // [{f.hi}:{f.lo}]")
        w(f"constexpr uint64_t k{P}_reserved_mask = {hexmask(op.reserved_mask)};")
        allm = " | ".join([f"kHdr_{f.name}_mask" for f in isa.header] + [f"k{P}_{f.name}_mask" for f in op.fields])
        w(f"static_assert(((({allm}) | k{P}_reserved_mask) == ~0ull), \"{P}: fields and reserved bits cover the word\");")
        fl = [f"kHdr_{f.name}_mask" for f in isa.header] + [f"k{P}_{f.name}_mask" for f in op.fields]
        for i in range(len(fl)):
            for j in range(i + 1, len(fl)):
                w(f"static_assert(({fl[i]} & {fl[j]}) == 0, \"{P}: fields overlap\");")
        w(f"struct {camel(P.lower())}Insn {{")
        w("  uint8_t wait = 0, signal = 0;")
        for f in op.fields:
            init = f"{cpp_type(f)}{{}}" if f.type == "enum" else "0"
            w(f"  {cpp_type(f)} {f.name} = {init};")
        w("};")
        w(f"inline {camel(P.lower())}Insn decode_{P.lower()}(uint64_t w) {{")
        w(f"  {camel(P.lower())}Insn i;")
        w("  i.wait = wait_bits(w);")
        w("  i.signal = signal_bits(w);")
        for f in op.fields:
            raw = f"((w & k{P}_{f.name}_mask) >> {f.wlo})"
            if f.type in ("sint", "offset"):
                sh = 64 - f.width
                w(f"  i.{f.name} = static_cast<{cpp_type(f)}>(static_cast<int64_t>({raw} << {sh}) >> {sh});")
            else:
                w(f"  i.{f.name} = static_cast<{cpp_type(f)}>{raw};")
        w("  return i;")
        w("}")
        w(f"inline uint64_t encode(const {camel(P.lower())}Insn& i) {{")
        w(f"  uint64_t w = uint64_t({op.value}) << kHdr_opcode_lo;")
        w("  w |= (uint64_t(i.wait) << kHdr_wait_lo) & kHdr_wait_mask;")
        w("  w |= (uint64_t(i.signal) << kHdr_signal_lo) & kHdr_signal_mask;")
        for f in op.fields:
            w(f"  w |= (static_cast<uint64_t>(i.{f.name}) << {f.wlo}) & k{P}_{f.name}_mask;")
        w("  return w;")
        w("}")
        w("")
    w("// Decodes w with its opcode's typed decoder and encodes the result again:")
    w("// w itself for every valid word (a word with reserved bits set loses them).")
    w("inline uint64_t reencode(uint64_t w) {")
    w("  switch (opcode_bits(w)) {")
    for op in isa.opcodes:
        w(f"    case {op.value}:")
        w(f"      return encode(decode_{op.name.lower()}(w));")
    w("    default:")
    w("      return w;")
    w("  }")
    w("}")
    w("")
    # records
    w("// ---- table records -------------------------------------------------------")
    for rname, r in isa.records.items():
        R = camel(rname)
        w(f"constexpr int k{R}Words = {r['words']};")
        for f in r["fields"]:
            w(f"constexpr int k{R}_{f.name}_word = {f.word};")
            w(f"constexpr uint64_t k{R}_{f.name}_mask = {hexmask(f.mask())};  // [{f.hi}:{f.lo}]")
        for k in range(r["words"]):
            m = (r["used"] >> (64 * k)) & ((1 << 64) - 1)
            w(f"constexpr uint64_t k{R}_reserved_mask{k} = {hexmask(((1 << 64) - 1) & ~m)};")
        w(f"struct {R}Record {{")
        for f in r["fields"]:
            init = f"{cpp_type(f)}{{}}" if f.type == "enum" else "0"
            w(f"  {cpp_type(f)} {f.name} = {init};")
        w("};")
        w(f"inline {R}Record decode_{rname}(const uint64_t* w) {{")
        w(f"  {R}Record r;")
        for f in r["fields"]:
            w(f"  r.{f.name} = static_cast<{cpp_type(f)}>((w[{f.word}] & k{R}_{f.name}_mask) >> {f.wlo});")
        w("  return r;")
        w("}")
        w(f"inline void encode(const {R}Record& r, uint64_t* w) {{")
        w(f"  for (int k = 0; k < k{R}Words; ++k) w[k] = 0;")
        for f in r["fields"]:
            w(f"  w[{f.word}] |= (static_cast<uint64_t>(r.{f.name}) << {f.wlo}) & k{R}_{f.name}_mask;")
        w("}")
        w("")
    # reflection
    w("// ---- reflection tables (assembler, disassembler, checks) ------------------")
    w("enum class FieldType : uint8_t { Uint, Sint, Enum, Desc, Const, Reg, Engines, Offset };")
    w("enum class EnumId : uint8_t {")
    w("  None,")
    for ename in isa.enums:
        w(f"  {camel(ename)},")
    w("};")
    w("enum class Access : uint8_t { None = 0, R = 1, W = 2, RW = 3 };")
    w("struct EnumValueDef {")
    w("  const char* name;")
    w("  uint32_t value;")
    w("  const char* doc;")
    w("};")
    w("struct EnumDef {")
    w("  const char* name;")
    w("  int width;")
    w("  const EnumValueDef* values;")
    w("  int count;")
    w("};")
    for ename, e in isa.enums.items():
        w(f"inline constexpr EnumValueDef kEnumValues_{ename}[] = {{")
        for v in e.values:
            w(f'    {{"{v.name}", {v.value}, {cstr(v.doc)}}},')
        w("};")
    w("inline const EnumDef& enum_def(EnumId id) {")
    w("  static const EnumDef defs[] = {")
    w('      {"none", 0, nullptr, 0},')
    for ename, e in isa.enums.items():
        w(f'      {{"{ename}", {e.width}, kEnumValues_{ename}, {len(e.values)}}},')
    w("  };")
    w("  return defs[static_cast<int>(id)];")
    w("}")
    w("struct FieldDef {")
    w("  const char* name;")
    w("  int word;          // 64-bit word of the record (0 for instructions)")
    w("  int lo;            // lowest bit inside that word")
    w("  int width;")
    w("  FieldType type;")
    w("  EnumId enum_id;")
    w("  uint64_t allowed;  // enum values the field may hold (bit v), all others reserved")
    w("  const char* doc;")
    w("  uint64_t mask() const { return (width == 64 ? ~0ull : ((1ull << width) - 1)) << lo; }")
    w("};")
    w("struct OperandDef {")
    w("  int field;         // index into OpcodeDef::fields")
    w("  Access access;")
    w("  uint32_t dtypes;   // bit (1 << Dtype) per allowed type")
    w("  const char* dtype_class;")
    w("  bool optional;")
    w("};")
    w("struct SubopDef {")
    w("  const char* name;  // \"\" for opcodes without sub-functions")
    w("  uint32_t value;")
    w("  uint32_t used;     // bit i: field i of OpcodeDef::fields is used")
    w("  const OperandDef* operands;")
    w("  int n_operands;")
    w("  const char* doc;")
    w("};")
    w("struct OpcodeDef {")
    w("  const char* name;")
    w("  Opcode opcode;")
    w("  Engine engine;")
    w("  const FieldDef* fields;  // the header fields first (opcode, wait, signal), then its own")
    w("  int n_fields;")
    w("  int subop_field;         // index into fields, -1 if none")
    w("  const SubopDef* subops;")
    w("  int n_subops;")
    w("  uint64_t reserved_mask;")
    w("  const char* doc;")
    w("};")
    w(f"constexpr int kNumHeaderFields = {len(isa.header)};")

    def field_init(f):
        eid = f"EnumId::{camel(f.enum.name)}" if f.enum else "EnumId::None"
        allowed = 0
        for v in f.allowed_values():
            allowed |= 1 << v.value
        return (f'{{"{f.name}", {f.word}, {f.wlo}, {f.width}, FieldType::{camel(f.type)}, {eid}, '
                f'0x{allowed:x}ull, {cstr(f.doc)}}}')

    for op in isa.opcodes:
        P = op.name
        w(f"inline constexpr FieldDef kFields_{P}[] = {{")
        for f in op.all_fields:
            w(f"    {field_init(f)},")
        w("};")
        idx = {f.name: i for i, f in enumerate(op.all_fields)}
        for s in op.subops:
            sn = s.name or "ALL"
            if s.operands:
                w(f"inline constexpr OperandDef kOperands_{P}_{sn}[] = {{")
                for od in s.operands:
                    acc = {"": "None", "r": "R", "w": "W", "rw": "RW"}[od.access]
                    dm = 0
                    if od.dtype:
                        for t in isa.classes[od.dtype]["types"]:
                            dm |= 1 << dt.by_name(t).value
                    w(f'    {{{idx[od.field]}, Access::{acc}, 0x{dm:x}u, "{od.dtype}", {str(od.optional).lower()}}},')
                w("};")
        w(f"inline constexpr SubopDef kSubops_{P}[] = {{")
        for s in op.subops:
            sn = s.name or "ALL"
            used = 0
            for i in range(len(isa.header)):
                used |= 1 << i
            if op.subop_field is not None:
                used |= 1 << idx[op.subop_field.name]
            for od in s.operands:
                used |= 1 << idx[od.field]
            ops = f"kOperands_{P}_{sn}" if s.operands else "nullptr"
            w(f'    {{"{s.name}", {s.value}, 0x{used:x}u, {ops}, {len(s.operands)}, {cstr(s.doc)}}},')
        w("};")
    w("inline const OpcodeDef* opcode_def(uint32_t opcode) {")
    w("  static const OpcodeDef defs[] = {")
    for op in isa.opcodes:
        P = op.name
        sf = -1 if op.subop_field is None else [f.name for f in op.all_fields].index(op.subop_field.name)
        w(f'      {{"{P}", Opcode::{P}, Engine::{op.engine}, kFields_{P}, {len(op.all_fields)}, {sf}, '
          f'kSubops_{P}, {len(op.subops)}, k{P}_reserved_mask, {cstr(op.doc)}}},')
    w("  };")
    w("  for (const auto& d : defs)")
    w("    if (static_cast<uint32_t>(d.opcode) == opcode) return &d;")
    w("  return nullptr;")
    w("}")
    w(f"constexpr int kNumOpcodes = {len(isa.opcodes)};")
    w("inline const OpcodeDef* opcode_def_at(int i) {")
    w(f"  static const uint32_t codes[] = {{{', '.join(str(o.value) for o in isa.opcodes)}}};")
    w("  return opcode_def(codes[i]);")
    w("}")
    for rname, r in isa.records.items():
        R = camel(rname)
        w(f"inline constexpr FieldDef kRecordFields_{rname}[] = {{")
        for f in r["fields"]:
            w(f"    {field_init(f)},")
        w("};")
        w(f"constexpr int kNumRecordFields_{rname} = {len(r['fields'])};")
    w("")
    w("}  // namespace n3::isa")
    return "\n".join(o) + "\n"


def cstr(s):
    s = " ".join((s or "").split())
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---------------------------------------------------------------------------
# SystemVerilog


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
        # packed struct, msb first, reserved gaps named
        w("  typedef struct packed {")
        bit = 63
        n_rsv = 0
        for f in sorted(op.all_fields, key=lambda f: -f.hi):
            if f.hi < bit:
                w(f"    logic [{bit - f.hi - 1}:0] rsv{n_rsv};")
                n_rsv += 1
            t = f"{f.enum.name}_e" if f.enum else f"logic [{f.width - 1}:0]"
            w(f"    {t} {sv_name(f.name)};")
            bit = f.lo - 1
        if bit >= 0:
            w(f"    logic [{bit}:0] rsv{n_rsv};")
        w(f"  }} {P.lower()}_insn_t;")
        w("")
    for rname, r in isa.records.items():
        nb = r["bits"]
        w(f"  // {rname} table record ({nb} bits)")
        for f in r["fields"]:
            w(f"  localparam int unsigned {rname.upper()}_{f.name.upper()}_LSB = {f.lo};")
            w(f"  localparam int unsigned {rname.upper()}_{f.name.upper()}_WIDTH = {f.width};")
        w(f"  localparam logic [{nb - 1}:0] {rname.upper()}_RESERVED_MASK = {nb}'h{(((1 << nb) - 1) & ~r['used']):0{nb // 4}x};")
        w("  typedef struct packed {")
        bit = nb - 1
        n_rsv = 0
        for f in sorted(r["fields"], key=lambda f: -f.hi):
            if f.hi < bit:
                w(f"    logic [{bit - f.hi - 1}:0] rsv{n_rsv};")
                n_rsv += 1
            t = f"{f.enum.name}_e" if f.enum else f"logic [{f.width - 1}:0]"
            w(f"    {t} {sv_name(f.name)};")
            bit = f.lo - 1
        if bit >= 0:
            w(f"    logic [{bit}:0] rsv{n_rsv};")
        w(f"  }} {rname}_rec_t;")
        w("")
    # legality: reserved bits, enum values, fields a sub-function does not use,
    # and wait/signal bits naming the instruction's own engine.
    eng_id = {e["name"]: e["id"] for e in isa.engines}
    w("  // 1 when the word is a valid instruction: defined opcode and sub-function,")
    w("  // every enum field holding a defined value, reserved bits and fields the")
    w("  // sub-function does not use all zero, no wait/signal bit for its own engine.")
    w("  function automatic logic insn_legal(input logic [63:0] w);")
    w("    logic ok;")
    w("    ok = 1'b0;")
    w("    case (w[63:60])")
    for op in isa.opcodes:
        own = 1 << eng_id[op.engine]
        w(f"      4'd{op.value}: begin")
        conds = [f"((w & {op.name}_RESERVED_MASK) == 64'h0)",
                 f"(w[59:55] & 5'd{own}) == 5'd0", f"(w[54:50] & 5'd{own}) == 5'd0"]
        for f in op.fields:
            if f.enum is not None and f is not op.subop_field:
                vals = " || ".join(f"w[{f.hi}:{f.lo}] == {f.width}'d{v.value}" for v in f.allowed_values())
                conds.append(f"({vals})")
        w(f"        ok = {' && '.join(conds)};")
        if op.subop_field is not None:
            sf = op.subop_field
            w(f"        case (w[{sf.hi}:{sf.lo}])")
            for sub in op.subops:
                used = {od.field for od in sub.operands}
                m = 0
                for f in op.fields:
                    if f is not sf and f.name not in used:
                        m |= f.mask()
                w(f"          {sf.width}'d{sub.value}: ok = ok && ((w & 64'h{m:016x}) == 64'h0);")
            w("          default: ok = 1'b0;")
            w("        endcase")
        w("      end")
    w("      default: ok = 1'b0;")
    w("    endcase")
    w("    return ok;")
    w("  endfunction")
    w("")
    w("  // The engine whose queue an instruction goes to (meaningful for legal words).")
    w(f"  function automatic logic [2:0] insn_engine(input logic [3:0] opcode);")
    w("    logic [2:0] e;")
    w("    case (opcode)")
    for op in isa.opcodes:
        w(f"      4'd{op.value}: e = 3'd{eng_id[op.engine]};")
    w("      default: e = 3'd0;")
    w("    endcase")
    w("    return e;")
    w("  endfunction")
    w("")
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
  input  logic [63:0] insn,
  output logic        legal,
  output logic [2:0]  engine
);
  assign legal = insn_legal(insn);
  assign engine = insn_engine(insn[63:60]);
endmodule
"""


# ---------------------------------------------------------------------------
# Markdown


def md_escape(s):
    return " ".join((s or "").split()).replace("|", "\\|")


def gen_md(isa, intro):
    o = []
    w = o.append
    w("<!-- GENERATED by isa/gen_isa.py from isa/isa.yaml and isa/isa_intro.md. Do not edit:")
    w("     change the table, rebuild, and copy build/gen/isa/isa.md here (a test compares). -->")
    w("")
    w(intro.rstrip())
    w("")
    w(f"## Reference (ISA version {isa.version})")
    w("")
    w("### Constants")
    w("")
    w("| name | value | meaning |")
    w("| --- | --- | --- |")
    for c in isa.constants:
        w(f"| `{c['name']}` | {c['value']} | {md_escape(c['doc'])} |")
    w("")
    w("### Engines")
    w("")
    w("Bit `i` of a `wait` / `signal` mask names engine `i`; a bit naming the")
    w("instruction's own engine is reserved.")
    w("")
    w("| id | engine | opcodes | role |")
    w("| --- | --- | --- | --- |")
    for e in isa.engines:
        ops = ", ".join(o.name for o in isa.opcodes if o.engine == e["name"])
        w(f"| {e['id']} | `{e['name']}` | {ops} | {md_escape(e['doc'])} |")
    w("")
    w("### Opcode map")
    w("")
    w("| opcode | value | engine | sub-function field |")
    w("| --- | --- | --- | --- |")
    used = {o.value for o in isa.opcodes}
    for op in isa.opcodes:
        sf = op.subop_field.name if op.subop_field else "-"
        w(f"| {op.name} | {op.value} | {op.engine} | {sf} |")
    rsv = [str(v) for v in range(16) if v not in used]
    w(f"| reserved | {', '.join(rsv)} | - | traps |")
    w("")
    w("### Instruction formats")
    w("")
    w("Every word starts with the same header:")
    w("")
    w("| bits | field | type | meaning |")
    w("| --- | --- | --- | --- |")
    for f in isa.header:
        w(f"| [{f.hi}:{f.lo}] | `{f.name}` | {f.type} | {md_escape(f.doc)} |")
    w("")
    for op in isa.opcodes:
        w(f"#### {op.name} (opcode {op.value}, engine {op.engine})")
        w("")
        w(" ".join(op.doc.split()))
        w("")
        w("| bits | field | type | meaning |")
        w("| --- | --- | --- | --- |")
        rows = []
        for f in op.fields:
            t = f.type
            if f.enum:
                t = f"enum `{f.enum.name}`"
                if f.allowed is not None:
                    t += " (" + ", ".join(f.allowed) + ")"
            elif f.type in ("sint", "uint", "offset"):
                t = f"{f.type}{f.width}"
            rows.append((f.hi, f"| [{f.hi}:{f.lo}] | `{f.name}` | {t} | {md_escape(f.doc)} |"))
        for lo, hi in reserved_ranges(op.reserved_mask):
            rows.append((hi, f"| [{hi}:{lo}] | reserved | - | must be 0 |"))
        for _, r in sorted(rows, key=lambda x: -x[0]):
            w(r)
        w("")
        if op.subop_field is not None:
            w("| sub-function | value | operands | semantics |")
            w("| --- | --- | --- | --- |")
            for s in op.subops:
                w(f"| `{op.name.lower()}.{s.name.lower()}` | {s.value} | {operand_text(s)} | {md_escape(s.doc)} |")
        else:
            w(f"Operands: {operand_text(op.subops[0])}.")
        w("")
    w("### Table records")
    w("")
    for rname, r in isa.records.items():
        w(f"#### `{rname}` ({r['bits']} bits, {r['words']} x 64-bit words, little-endian words)")
        w("")
        w(" ".join(r["doc"].split()))
        w("")
        w("| bits | field | type | meaning |")
        w("| --- | --- | --- | --- |")
        rows = []
        for f in r["fields"]:
            t = f"enum `{f.enum.name}`" if f.enum else f"{f.type}{f.width}" if f.type in ("uint", "sint") else f.type
            if f.allowed is not None:
                t += " (" + ", ".join(f.allowed) + ")"
            rows.append((f.hi, f"| [{f.hi}:{f.lo}] | `{f.name}` | {t} | {md_escape(f.doc)} |"))
        nb = r["bits"]
        for lo, hi in reserved_ranges(((1 << nb) - 1) & ~r["used"], nb):
            rows.append((hi, f"| [{hi}:{lo}] | reserved | - | must be 0 |"))
        for _, row in sorted(rows, key=lambda x: -x[0]):
            w(row)
        w("")
    w("### Enumerations")
    w("")
    w("Values not listed are reserved: an instruction or record holding one traps.")
    w("")
    for ename, e in isa.enums.items():
        w(f"#### `{ename}` ({e.width} bits)")
        w("")
        w(md_escape(e.doc))
        w("")
        extra_keys = sorted({k for v in e.values for k in v.extra})
        w("| name | value | " + "".join(f"{k} | " for k in extra_keys) + "meaning |")
        w("| --- | --- | " + "".join("--- | " for _ in extra_keys) + "--- |")
        for v in e.values:
            ex = "".join(f"{v.extra.get(k, '')} | " for k in extra_keys)
            w(f"| `{v.name}` | {v.value} | {ex}{md_escape(v.doc)} |")
        w("")
    w("### dtype classes")
    w("")
    w("| class | dtypes | meaning |")
    w("| --- | --- | --- |")
    for cname, cd in isa.classes.items():
        w(f"| `{cname}` | {', '.join(cd['types'])} | {md_escape(cd['doc'])} |")
    w("")
    return "\n".join(o) + "\n"


def operand_text(s):
    parts = []
    for od in s.operands:
        t = od.field
        if od.access:
            t += f" ({od.access}"
            if od.dtype:
                t += f", {od.dtype}"
            if od.optional:
                t += ", optional"
            t += ")"
        elif od.dtype:
            t += f" ({od.dtype})"
        parts.append(t)
    return ", ".join(parts) if parts else "none"


def reserved_ranges(mask, bits=64):
    out = []
    b = 0
    while b < bits:
        if (mask >> b) & 1:
            lo = b
            while b < bits and (mask >> b) & 1 and (b == lo or b % 64 != 0):
                b += 1
            out.append((lo, b - 1))
        else:
            b += 1
    return out


def gen_dict(isa):
    """A libFuzzer dictionary of the assembler's words (fuzz/asm_fuzz.cc)."""
    words = {".isa", ".desc", ".const", ".tensor", ".region", ".word", "raw=", "f32", "i32", "at=", "desc=",
             "role=", "size=", "-", "#", "|", ":", "0x", "r0", "r15", "nan", "inf", "end"}
    for op in isa.opcodes:
        words.add(op.name.lower())
        for sub in op.subops:
            if sub.name:
                words.add(f"{op.name.lower()}.{sub.name.lower()}")
        for f in op.all_fields:
            words.add(f.name + "=")
    for r in isa.records.values():
        for f in r["fields"]:
            words.add(f.name + "=")
    for e in isa.enums.values():
        for v in e.values:
            words.add(v.name.lower())
    for e in isa.engines:
        words.add(e["name"].lower())
    return "".join(f'"{w}"\n' for w in sorted(words))


# ---------------------------------------------------------------------------


def write_if_changed(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--yaml", required=True)
    ap.add_argument("--intro", required=True)
    ap.add_argument("--out", required=True, help="output directory")
    a = ap.parse_args()
    try:
        with open(a.yaml, encoding="utf-8") as f:
            d = yaml.safe_load(f)
        with open(a.intro, encoding="utf-8") as f:
            intro = f.read()
        isa = Isa(d)
    except (TableError, KeyError, TypeError, ValueError, yaml.YAMLError) as e:
        print(f"gen_isa.py: error: {e}", file=sys.stderr)
        return 1
    os.makedirs(a.out, exist_ok=True)
    write_if_changed(os.path.join(a.out, "isa_gen.h"), gen_cpp(isa))
    write_if_changed(os.path.join(a.out, "n3_isa_pkg.sv"), gen_sv(isa))
    write_if_changed(os.path.join(a.out, "n3_isa_decode.sv"), gen_sv_decode(isa))
    write_if_changed(os.path.join(a.out, "isa.md"), gen_md(isa, intro))
    write_if_changed(os.path.join(a.out, "asm.dict"), gen_dict(isa))
    return 0


if __name__ == "__main__":
    sys.exit(main())

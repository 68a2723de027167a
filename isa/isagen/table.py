"""Loading and checking isa/isa.yaml: the Isa model every emitter reads.

Any problem raises TableError with the YAML path of it: field overlaps, fields
crossing a 64-bit word, enum values that do not fit their width, operands
naming unknown fields, unknown dtype classes.
"""
import re


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

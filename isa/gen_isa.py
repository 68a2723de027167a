#!/usr/bin/env python3
"""Generates the n3 ISA layer from isa/isa.yaml.

  gen_isa.py --yaml isa/isa.yaml --intro isa/isa_intro.md --out DIR

writes DIR/isa_gen.h (C++17: enums, masks, static_asserts, typed
encode/decode, reflection tables for the assembler and the checks),
DIR/n3_isa_pkg.sv (SystemVerilog package for rtl_bridge/), DIR/n3_isa_decode.sv
(the dispatcher's legality check, also the package's lint top), DIR/isa.md
(docs/isa.md) and DIR/asm.dict (the assembler fuzzer's dictionary). A file is
rewritten only when its content changes, so a rebuild recompiles nothing when
the table did not change.

The table is checked first (isagen/table.py): field overlaps, fields crossing
a 64-bit word, enum values that do not fit their width, operands naming
unknown fields, unknown dtype classes. Any problem stops the build with the
YAML path of it. The emitters are isagen/cpp.py, isagen/sv.py and isagen/md.py.
"""
import argparse
import os
import sys

import yaml

# The build runs this from the source tree: leave no __pycache__ there.
sys.dont_write_bytecode = True
from isagen.cpp import gen_cpp, gen_dict  # noqa: E402
from isagen.md import gen_md  # noqa: E402
from isagen.sv import gen_sv, gen_sv_decode  # noqa: E402
from isagen.table import Isa, TableError  # noqa: E402


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

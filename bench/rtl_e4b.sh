#!/usr/bin/env bash
# E4B's shapes with the RTL units in the SystemC model (issue 20's E4B
# figure; docs/rtl.md, "E4B with the RTL units"): synthetic E4B weights, a
# two-token prompt and one decode step with the given RTL units, the same run
# on the timing model alone, the dumps compared bit for bit, and the two
# runs' cycles side by side per program, per layer and per operator
# (tools/rtl_vs_model.py), with the wall time and RTL cycles per wall second
# (the `rtl <unit>:` lines). Opt-in: about 5 GB of disk and 10 to 20
# minutes on 2 cores, most of it the RTL GEMV engine streaming the decode
# step's 2.25 GB of weights.
#
#   bench/rtl_e4b.sh [UNITS [WORKDIR]]     UNITS default gemv,dma,sfu
set -euo pipefail
cd "$(dirname "$0")/.."
UNITS=${1:-gemv,dma,sfu}
DIR=${2:-$(mktemp -d)}
N3=build/n3
mkdir -p "$DIR"
[ -f "$DIR/e4b.n3w" ] || $N3 synth -q --model configs/models/gemma3n-e4b.yaml --seed 1 -o "$DIR/e4b.n3w"
python3 - "$DIR" <<'EOF'
import struct, sys
def npy(path, vals):  # int32 .npy, as n3 reads ids
    hdr = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d,), }" % len(vals)
    hdr += " " * (127 - 10 - len(hdr)) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + struct.pack("<%di" % len(vals), *vals))
npy(sys.argv[1] + "/ids.npy", [2, 1017])
npy(sys.argv[1] + "/feed.npy", [4242])
EOF
IO="--model $DIR/e4b.n3w --ids $DIR/ids.npy --feed $DIR/feed.npy --force"
echo "== the timing model alone"
/usr/bin/time -f "model alone: %e s wall, %M KB peak" $N3 sim --backend systemc $IO --dump "$DIR/model" --stats "$DIR/model.json"
echo "== --rtl $UNITS"
/usr/bin/time -f "with the RTL: %e s wall, %M KB peak" $N3 sim --backend systemc --rtl "$UNITS" $IO --dump "$DIR/rtl" --stats "$DIR/rtl.json"
echo "== dumps"
$N3 diff "$DIR/rtl" "$DIR/model"
echo "== cycles"
python3 tools/rtl_vs_model.py "$DIR/rtl.json" "$DIR/model.json" --top 20

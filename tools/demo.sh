#!/usr/bin/env bash
# The demo: on the small embedded default model (configs/models/tiny.yaml),
# synthesise INT4 weights, run the golden model in reference and NPU
# numerics, list the dumps and diff them. Outputs land in out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
./bootstrap.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target n3
N3=build/n3
OUT=out/demo
mkdir -p "$OUT"
IDS=configs/demo/prompt_ids.npy
FEED=configs/demo/feed_ids.npy

echo "== 1. synthesise the tiny model's INT4 weights (seeded)"
$N3 synth -q --model configs/models/tiny.yaml --seed 1 -o "$OUT/tiny.n3w"

echo "== 2. golden model, reference numerics: prefill + KV-cached decode"
$N3 golden --model "$OUT/tiny.n3w" --ids "$IDS" --feed "$FEED" --numerics reference --dump "$OUT/reference" --force --dump-all

echo "== 3. the same run again: dumps are deterministic"
$N3 golden --model "$OUT/tiny.n3w" --ids "$IDS" --feed "$FEED" --numerics reference --dump "$OUT/reference2" --force --dump-all
$N3 diff "$OUT/reference2" "$OUT/reference" --quiet

echo "== 4. the dump: one .npy per tensor (NumPy opens them), manifest in canonical order"
ls "$OUT/reference" | head -n 12
echo "   ... $(ls "$OUT/reference" | wc -l) files"

if $N3 golden --model "$OUT/tiny.n3w" --ids "$IDS" --feed "$FEED" --dump "$OUT/npu" --force --dump-all 2>"$OUT/npu.log"; then
  echo "== 5. NPU numerics against reference numerics (tolerance diff: what the NPU formats cost)"
  $N3 diff "$OUT/npu" "$OUT/reference" --tol 0.05,0.05 --quiet || true
else
  echo "== 5. NPU numerics: $(tail -n 1 "$OUT/npu.log")"
fi
echo "== 6. host sampling loop: greedy, then seeded top-p sampling (ids stream to stdout)"
$N3 run --backend golden --numerics reference --model "$OUT/tiny.n3w" --ids "$IDS" --max-new 16
$N3 run --backend golden --numerics reference --model "$OUT/tiny.n3w" --ids "$IDS" --max-new 16 --preset pccx --seed 7
echo "demo done: dumps in $OUT/"

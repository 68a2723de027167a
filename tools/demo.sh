#!/usr/bin/env bash
# The demo (README's first command): the small Gemma 3n embedded in the repo
# (tests/fixtures/gemma3n-dev, a HuggingFace checkpoint) compiled for the
# default hardware (configs/hw/kv260.yaml) and run through the host sampling
# loop on the SystemC NPU model; its dumps diffed bit-exactly against the
# golden model; modelled throughput for this model and for Gemma 3n E4B; a
# Perfetto trace. Outputs land in out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
./bootstrap.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target n3 systemc_e4b_timing
N3=build/n3
HW=configs/hw/kv260.yaml
MODEL=tests/fixtures/gemma3n-dev/hf
IDS=tests/fixtures/gemma3n-dev/prompt_ids.npy
OUT=out/demo
rm -rf "$OUT"
mkdir -p "$OUT"
start=$(date +%s%N)

echo "== 1. weights: the embedded HF checkpoint quantised to INT4 (per-row scales) into an .n3w"
$N3 convert -q --model "$MODEL" -o "$OUT/dev.n3w"
WEIGHTS="$OUT/dev.n3w"

echo "== 2. compile for $HW: decode and prefill programs, memory plan, report"
$N3 compile --model "$WEIGHTS" --hw "$HW" -o "$OUT/compiled" --force

echo "== 3. generate 32 tokens, greedy, host loop on the SystemC NPU model (ids stream to stdout; every tensor dumped)"
$N3 run --backend systemc --model "$WEIGHTS" --hw "$HW" --ids "$IDS" --max-new 32 --out "$OUT/ids_systemc.npy" \
  --dump "$OUT/run_systemc" --dump-all 2>"$OUT/run_systemc.log" || { cat "$OUT/run_systemc.log"; exit 1; }
cat "$OUT/run_systemc.log"

echo "== 4. the same prompt on the golden model and the functional simulator: identical ids"
for b in golden func; do
  $N3 run --backend "$b" --model "$WEIGHTS" --hw "$HW" --ids "$IDS" --max-new 32 --out "$OUT/ids_$b.npy" \
    --dump "$OUT/run_$b" --dump-all >/dev/null 2>"$OUT/run_$b.log" || { cat "$OUT/run_$b.log"; exit 1; }
  cmp -s "$OUT/ids_$b.npy" "$OUT/ids_systemc.npy" && echo "   $b: identical ids" || { echo "   $b: ids DIFFER"; exit 1; }
done
for b in systemc func; do
  if $N3 diff "$OUT/run_$b" "$OUT/run_golden" --quiet >/dev/null; then
    echo "   n3 diff of the $b host-loop run's own dump (prefill + every decode step) against the golden run's: every tensor bit-identical"
  else echo "   n3 diff: the $b run DIFFERS from the golden model"; exit 1; fi
done

echo "== 5. the same run replayed (prefill + a decode step per generated id) on the SystemC model with"
echo "      stats and a Perfetto trace, its dump diffed against the golden model's: bit-identical"
$N3 sim --backend systemc --model "$WEIGHTS" --hw "$HW" --ids "$IDS" --feed "$OUT/ids_systemc.npy" \
  --dump "$OUT/systemc" --dump-all --force --stats "$OUT/stats.json" --trace "$OUT/trace.json"
$N3 golden --numerics npu --model "$WEIGHTS" --hw "$HW" --ids "$IDS" --feed "$OUT/ids_systemc.npy" \
  --dump "$OUT/golden" --dump-all --force
if $N3 diff "$OUT/systemc" "$OUT/golden" --quiet; then echo "   n3 diff: every tensor bit-identical"
else echo "   n3 diff: the SystemC run DIFFERS from the golden model"; exit 1; fi

echo "== 6. throughput on $HW"
grep -o "modelled NPU [^)]*)" "$OUT/run_systemc.log" | sed 's/^/   this model: /'
echo "   Gemma 3n E4B, analytic estimate:"
$N3 estimate --model configs/models/gemma3n-e4b.yaml --hw "$HW" | sed 's/^/     /'
echo "   Gemma 3n E4B, one decode token on the SystemC model (timing only, compiled from its YAML):"
build/bench/systemc_e4b_timing | grep -E "wall|modelled|roofline|DDR channel" | sed 's/^/     /'

ms=$((($(date +%s%N) - start) / 1000000))
echo "demo done in $((ms / 1000)).$((ms % 1000 / 100)) s after the build: outputs in $OUT/"
echo "open $OUT/trace.json in https://ui.perfetto.dev (one track per NPU unit, one slice per instruction)"

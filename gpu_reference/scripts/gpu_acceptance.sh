#!/bin/bash
# The CUDA path's acceptance run on a GPU machine (docs/gpu.md): the CUDA test
# suites and the cross-backend test (cuda included); for the gemma3n-dev
# fixture, tiny and E4B (synthetic weights), 32-token prefill + 4 decode steps,
# dumps of the CUDA path against the golden model in NPU numerics (n3 diff,
# bit-exact) and in reference numerics (relerr.py, 1e-5), and in NPU numerics
# with an INT8 KV cache (numerics.kv_format: int8); the decode benchmark with
# HF transformers' decode speed beside it (--hf), then with the INT8 cache.
#
# N3_SKIP_HF=1 / N3_SKIP_REF=1 leave out the HF timing / the reference-numerics comparisons.
# Writes tests.log, bench.log, small.log (dev, tiny) and e4b.log into OUTDIR,
# then one verdict line on stdout; exits 1 when any check failed.
#
# Run from the source tree the build was configured from (the tests have its
# path compiled in), with the build in build-cuda/ and, where the GPU machine
# lacks some shared libraries of the build machine, those in build-cuda/lib/:
#
#   gpu_reference/scripts/gpu_acceptance.sh OUTDIR [PART ...]
#
# PART is tests, bench, small or e4b (default: all four, in that order; on an
# H100 the whole took about 90 s, so one device call holds it). "quick" is
# the old name of "tests".
set -u
usage="usage: gpu_acceptance.sh OUTDIR [tests|bench|small|e4b ...]"
out=${1:?$usage}
shift
parts=" ${*:-tests bench small e4b} "
parts=${parts/ quick / tests }
for p in $parts; do
  case $p in tests | bench | small | e4b) ;; *) echo "gpu_acceptance.sh: unknown part '$p'; $usage" >&2; exit 2 ;; esac
done
want() { [[ $parts == *" $1 "* ]]; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
export LD_LIBRARY_PATH=$PWD/build-cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMP_NUM_THREADS=$(nproc)
n3=$PWD/build-cuda/n3
tmp=${N3_GPU_TMP:-/tmp/n3gpu}
mkdir -p $tmp
# kv260 with an INT8 KV cache (the only change).
hw_int8=$tmp/kv260_int8.yaml
sed 's/^  kv_format: {value: f16,/  kv_format: {value: int8,/' configs/hw/kv260.yaml > $hw_int8
grep -q "kv_format: {value: int8," $hw_int8 || { echo "gpu_acceptance.sh: could not make $hw_int8" >&2; exit 2; }
log() { echo "== $(date +%T) $*"; }
# t SECONDS CMD...: CMD under a time limit; a failure (or timeout) is counted
# and named in the log and in failures.txt.
failed=()
t() {
  timeout "$@"
  local rc=$?
  if [ $rc != 0 ]; then
    [ $rc = 124 ] && echo "TIMEOUT after $1 s: ${*:2}" || echo "FAILED (exit status $rc): ${*:2}"
    failed+=("${*:2}")
  fi
  return $rc
}

want tests && {
  log "machine"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv
  echo "cores: $(nproc)"; ldd $n3 | grep "not found"
  log "tests"
  t 300 build-cuda/tests/n3_tests --gtest_filter='Cuda*:Backends/CrossBackend.*' 2>&1
  log "done"
} > "$out/tests.log" 2>&1

# Deterministic (seed 1): a file left by an earlier run on the same machine is
# the same weights; the rename keeps a cut-off synth from being taken for one.
e4b_synth() {
  [ -s $tmp/e4b.n3w ] && return
  log "E4B synth"
  t 120 $n3 synth --model configs/models/gemma3n-e4b.yaml --seed 1 -o $tmp/e4b.part.n3w > $tmp/synth.log 2>&1 &&
    mv $tmp/e4b.part.n3w $tmp/e4b.n3w
  tail -1 $tmp/synth.log
}

want bench && {
  e4b_synth
  log "cuda_decode_bench (and HF transformers on the same GPU, --hf)"
  hf=--hf
  [ -n "${N3_SKIP_HF:-}" ] && hf=
  N3_BENCH_MODEL=$tmp/e4b.n3w PYTHONUNBUFFERED=1 t 420 build-cuda/bench/cuda_decode_bench --steps 128 $hf
  log "cuda_decode_bench, INT8 KV cache"
  N3_BENCH_MODEL=$tmp/e4b.n3w t 120 build-cuda/bench/cuda_decode_bench --steps 128 --hw $hw_int8
  log "done"
} > "$out/bench.log" 2>&1

# One model's dumps, 32-token prompt + 4 decode steps, through the CLI:
# n3 diff of the CUDA dump (candidate) against n3 golden --numerics npu must
# exit 0; reference numerics within 1e-5 per tensor (relerr.py).
# The same in NPU numerics with the INT8 KV cache (reference numerics keep
# float32 K/V whatever the format).
# check_model NAME MODEL VOCAB GOLDEN_TIMEOUT_S
check_model() {
  local name=$1 model=$2 vocab=$3 gt=$4 d=$tmp/$1
  mkdir -p $d
  t 30 python3 -c "
import numpy as np
np.save('$d/prompt.npy', ((np.arange(32) * 7919 + 2) % $vocab).astype(np.int32))
np.save('$d/feed.npy', (np.array([17, 262399, 5, 100000]) % $vocab).astype(np.int32))"
  local args="--model $model --ids $d/prompt.npy --feed $d/feed.npy --dump-all --force"
  log "$name cuda, NPU numerics"
  t 120 $n3 golden --backend cuda $args --numerics npu --dump $d/cuda_npu
  log "$name golden, NPU numerics (CPU, $OMP_NUM_THREADS threads)"
  t $gt $n3 golden $args --numerics npu --dump $d/gold_npu
  log "$name: n3 diff cuda_npu gold_npu"
  t 60 $n3 diff $d/cuda_npu $d/gold_npu > $d/diff_npu.txt; echo "n3 diff exit status: $?"
  grep -v " identical " $d/diff_npu.txt | head -40  # the differing tensors and the summary line
  log "$name cuda and golden, NPU numerics, INT8 KV cache"
  t 120 $n3 golden --backend cuda $args --numerics npu --hw $hw_int8 --dump $d/cuda_int8
  t $gt $n3 golden $args --numerics npu --hw $hw_int8 --dump $d/gold_int8
  log "$name: n3 diff cuda_int8 gold_int8"
  t 60 $n3 diff $d/cuda_int8 $d/gold_int8 > $d/diff_int8.txt; echo "n3 diff exit status: $?"
  grep -v " identical " $d/diff_int8.txt | head -40
  if [ -z "${N3_SKIP_REF:-}" ]; then
    log "$name cuda, reference numerics"
    t 120 $n3 golden --backend cuda $args --numerics reference --dump $d/cuda_ref
    log "$name golden, reference numerics (CPU)"
    t $gt $n3 golden $args --numerics reference --dump $d/gold_ref
    log "$name: relerr cuda_ref gold_ref"
    t 60 python3 gpu_reference/scripts/relerr.py $d/cuda_ref $d/gold_ref; echo "relerr exit status: $?"
  fi
}

want small && {
  t 60 $n3 synth --model configs/models/tiny.yaml --seed 1 -o $tmp/tiny.n3w > $tmp/synth.log 2>&1
  tail -1 $tmp/synth.log
  check_model dev tests/fixtures/gemma3n-dev/hf 512 60
  check_model tiny $tmp/tiny.n3w 256 60
  log "done"
} > "$out/small.log" 2>&1

want e4b && {
  e4b_synth
  check_model e4b $tmp/e4b.n3w 262400 300
  log "n3 run --backend cuda (E4B, greedy)"
  t 120 $n3 run --backend cuda --model $tmp/e4b.n3w --ids $tmp/e4b/prompt.npy --max-new 32
  log "done"
} > "$out/e4b.log" 2>&1

if ((${#failed[@]})); then
  echo "gpu_acceptance: ${#failed[@]} check(s) failed (parts:$parts; logs in $out):"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
echo "gpu_acceptance: every check passed (parts:$parts; logs in $out)"

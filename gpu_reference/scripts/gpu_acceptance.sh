#!/bin/bash
# The CUDA path's acceptance run on a GPU machine (docs/gpu.md), everything in
# one go: the CUDA test suites and the cross-backend test (cuda included); E4B (synthetic weights, 32-token prefill + 4
# decode steps) dumps of the CUDA path against the golden model in NPU
# numerics (n3 diff, bit-exact) and in reference numerics (relerr.py, 1e-5);
# the decode benchmark with HF transformers' decode speed beside it (--hf).
#
# N3_SKIP_HF=1 / N3_SKIP_REF=1 leave out the HF timing / the E4B reference-numerics comparison.
#
# Run from the source tree the build was configured from (the tests have its
# path compiled in), with the build in build-cuda/ and, where the GPU machine
# lacks some shared libraries of the build machine, those in build-cuda/lib/:
#
#   gpu_reference/scripts/gpu_acceptance.sh OUTDIR [quick]
set -u
out=${1:?usage: gpu_acceptance.sh OUTDIR [quick]}
quick=${2:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export LD_LIBRARY_PATH=$PWD/build-cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMP_NUM_THREADS=$(nproc)
n3=$PWD/build-cuda/n3
tmp=${N3_GPU_TMP:-/tmp/n3gpu}
mkdir -p $tmp
log() { echo "== $(date +%T) $*"; }
t() { timeout "$@"; local rc=$?; [ $rc = 124 ] && echo "TIMEOUT after $1 s: ${*:2}"; return $rc; }

{
  log "machine"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv
  echo "cores: $(nproc)"; ldd $n3 | grep "not found"
  log "tests"
  t 300 build-cuda/tests/n3_tests --gtest_filter='Cuda*:Backends/CrossBackend.*' 2>&1
  log "done"
} > "$out/tests.log" 2>&1
[ "$quick" = quick ] && exit 0

{
  log "E4B synth"
  t 120 $n3 synth --model configs/models/gemma3n-e4b.yaml --seed 1 -o $tmp/e4b.n3w
  log "cuda_decode_bench (and HF transformers on the same GPU, --hf)"
  hf=--hf
  [ -n "${N3_SKIP_HF:-}" ] && hf=
  N3_BENCH_MODEL=$tmp/e4b.n3w PYTHONUNBUFFERED=1 t 420 build-cuda/bench/cuda_decode_bench --steps 128 $hf
  log "done"
} > "$out/bench.log" 2>&1

{
  python3 -c "
import numpy as np
np.save('$tmp/prompt.npy', ((np.arange(32) * 7919 + 2) % 262400).astype(np.int32))
np.save('$tmp/feed.npy', np.array([17, 262399, 5, 100000], dtype=np.int32))"
  args="--model $tmp/e4b.n3w --ids $tmp/prompt.npy --feed $tmp/feed.npy --dump-all --force"
  log "E4B cuda, NPU numerics"
  t 120 $n3 golden --backend cuda $args --numerics npu --dump $tmp/cuda_npu
  log "E4B golden, NPU numerics (CPU, $OMP_NUM_THREADS threads)"
  t 300 $n3 golden $args --numerics npu --dump $tmp/gold_npu
  log "n3 diff cuda_npu gold_npu"
  $n3 diff $tmp/cuda_npu $tmp/gold_npu > $tmp/diff_npu.txt; echo "n3 diff exit status: $?"
  grep -v " identical " $tmp/diff_npu.txt | head -40; tail -1 $tmp/diff_npu.txt
  if [ -z "${N3_SKIP_REF:-}" ]; then
  log "E4B cuda, reference numerics"
  t 120 $n3 golden --backend cuda $args --numerics reference --dump $tmp/cuda_ref
  log "E4B golden, reference numerics (CPU)"
  t 300 $n3 golden $args --numerics reference --dump $tmp/gold_ref
  log "relerr cuda_ref gold_ref"
  python3 gpu_reference/scripts/relerr.py $tmp/cuda_ref $tmp/gold_ref; echo "relerr exit status: $?"
  fi
  log "n3 run --backend cuda (E4B, greedy)"
  t 120 $n3 run --backend cuda --model $tmp/e4b.n3w --ids $tmp/prompt.npy --max-new 32
  log "done"
} > "$out/e4b.log" 2>&1

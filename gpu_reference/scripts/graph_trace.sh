#!/bin/bash
# Where an E4B decode step's time goes inside the CUDA graph (docs/gpu.md):
# cuda_decode_bench under the kernel tracer (gpu_reference/tools/kernel_trace.cc),
# then graph_trace.py's table of each kernel's exposed time (its share of the
# chain) for one graph replay, and layer 5's kernels in order.
#
#   gpu_reference/scripts/graph_trace.sh OUTDIR
#
# Run from the source tree with the build in build-cuda/ (as gpu_acceptance.sh).
set -eu
out=${1:?usage: graph_trace.sh OUTDIR}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build-cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
lib=$PWD/build-cuda/libn3_kernel_trace.so
[ -f "$lib" ] || { echo "graph_trace.sh: $lib is missing (built where the CUDA toolkit has CUPTI)" >&2; exit 1; }
rm -f "$out/trace.tsv"
CUDA_INJECTION64_PATH=$lib N3_TRACE_OUT=$out/trace.tsv build-cuda/bench/cuda_decode_bench --steps 16 > "$out/bench.log"
[ -s "$out/trace.tsv" ] || { echo "graph_trace.sh: no trace written to $out/trace.tsv (see the tracer's message above)" >&2; exit 1; }
python3 "$(dirname "$0")/graph_trace.py" "$out/trace.tsv" --step 10 --layer 5

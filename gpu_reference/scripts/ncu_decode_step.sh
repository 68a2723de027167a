#!/bin/bash
# Per-kernel device times of one E4B decode step, from Nsight Compute
# (gpu__time_duration of every kernel run alone, no PDL overlap), summed by
# kernel over the last decode step of a 40-token prefill + 2 decode steps:
#
#   gpu_reference/scripts/ncu_decode_step.sh E4B.n3w OUTDIR
#
# Run from the source tree with the build in build-cuda/ (as gpu_acceptance.sh);
# needs ncu (Nsight Compute) and numpy.
set -eu
model=${1:?usage: ncu_decode_step.sh E4B.n3w OUTDIR}
out=${2:?usage: ncu_decode_step.sh E4B.n3w OUTDIR}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build-cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
python3 -c "
import numpy as np
np.save('$out/p40.npy', ((np.arange(40) * 7919 + 2) % 262400).astype(np.int32))
np.save('$out/f2.npy', np.array([17, 5], dtype=np.int32))"
$NCU --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
  build-cuda/n3 golden --backend cuda --model "$model" --ids $out/p40.npy --feed $out/f2.npy --numerics npu \
  --dump $out/dump --force > $out/dur.csv 2> $out/ncu_err.txt
OUT=$out python3 - <<'PY'
import collections, csv, os
rows = [r for r in csv.reader(open(os.environ['OUT'] + '/dur.csv')) if len(r) > 10]
hdr, rows = rows[0], rows[1:]
ki, vi, ui = hdr.index('Kernel Name'), hdr.index('Metric Value'), hdr.index('Metric Unit')
mul = {'nsecond': 1, 'usecond': 1e3, 'msecond': 1e6, 'second': 1e9}
ks = [(r[ki], float(r[vi].replace(',', '')) * mul.get(r[ui], 1)) for r in rows]
step = ks[[i for i, (k, _) in enumerate(ks) if 'embed_kernel' in k][-1]:]
tot = collections.defaultdict(lambda: [0, 0.0])
for k, v in step:
    name = k.split('(')[0].replace('void ', '')
    tot[name][0] += 1
    tot[name][1] += v
print('decode step: %d kernels, sum of ncu durations %.1f us' % (len(step), sum(v for _, v in step) / 1e3))
for name, (c, v) in sorted(tot.items(), key=lambda x: -x[1][1]):
    print(f'  {name[:58]:58s} {c:4d} {v/1e3:8.1f} us {v/c/1e3:7.2f} us each')
print('layer 5 in launch order:')
for k, v in step[7 + 15 * 5: 7 + 15 * 6]:
    print('   ', k.split('(')[0].replace('void ', '')[:50], round(v / 1e3, 2))
PY

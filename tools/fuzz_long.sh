#!/usr/bin/env bash
# The long fuzz runs (docs/fuzzing.md, "Long runs"): every target in
# libFuzzer's fork mode, several worker processes each, unseeded, from the
# checked-in corpus, for a wall-clock budget; prints one table row per target
# (workers, seconds, executions summed over the workers, edges, findings).
# Unlike CI's short seeded step this explores: every run tries new mutations.
#
#   tools/fuzz_long.sh SECONDS TARGET=WORKERS...      e.g. 600 n3w=16 hw_yaml=16 npy=1
#
# The binaries come from build-fuzz/ (tools/fuzz_ci.sh builds them) or from
# N3_FUZZ_BIN, so a machine without the toolchain can run binaries built
# elsewhere. N3_FUZZ_OUT (default a scratch directory) keeps each target's
# log, new inputs and any reproducer. Exit 1 if any target found something.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[ $# -ge 2 ] || { echo "usage: $0 SECONDS TARGET=WORKERS..." >&2; exit 2; }
secs=$1
shift
# Every argument is checked, one line each, before anything runs (libFuzzer
# would read a bad -max_total_time as 0, run without end, or the target name
# would leave $bin). N3_FUZZ_CHECK_ONLY=1 stops after the checks
# (tests/fuzz_scripts_test.cc).
[[ "$secs" =~ ^[1-9][0-9]{0,5}$ ]] ||
  { echo "$0: SECONDS '${secs:0:40}' is not a whole number from 1 to 999999" >&2; exit 2; }
bin=${N3_FUZZ_BIN:-$root/build-fuzz/fuzz}

declare -A workers
for a in "$@"; do
  [[ "$a" == *=* ]] || { echo "${a:0:60}: not TARGET=WORKERS" >&2; exit 2; }
  t=${a%%=*}
  n=${a#*=}
  [[ "$t" =~ ^[a-z][a-z0-9_]*$ ]] || { echo "${a:0:60}: TARGET must be a fuzz target's name (lower case, digits, _)" >&2; exit 2; }
  [ -z "${workers[$t]:-}" ] || { echo "${a:0:60}: target $t given twice" >&2; exit 2; }
  [[ "$n" =~ ^[1-9][0-9]{0,3}$ ]] || { echo "${a:0:60}: WORKERS must be a whole number from 1 to 9999" >&2; exit 2; }
  [ -x "$bin/fuzz_$t" ] || { echo "$a: no fuzzer $bin/fuzz_$t" >&2; exit 2; }
  [ -d "$root/tests/fuzz_corpus/$t" ] || { echo "$a: no corpus tests/fuzz_corpus/$t" >&2; exit 2; }
  workers[$t]=$n
done
[ "${N3_FUZZ_CHECK_ONLY:-}" != 1 ] || exit 0
out=${N3_FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/n3-fuzz-long.XXXXXX")}
mkdir -p "$out"

# The same limits as CI (docs/fuzzing.md): an allocation over 512 MiB, 2 GiB
# of memory or 10 s on one input is a finding. asm gets its dictionary.
for t in "${!workers[@]}"; do
  extra=()
  [ "$t" = asm ] && [ -f "$bin/../gen/isa/asm.dict" ] && extra=(-dict="$bin/../gen/isa/asm.dict" -max_len=4096)
  mkdir -p "$out/$t/new"
  (cd "$out/$t" && "$bin/fuzz_$t" new "$root/tests/fuzz_corpus/$t" -fork="${workers[$t]}" \
    -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 "${extra[@]}" \
    >log 2>&1; echo $? >rc) &
done
wait

# Fork mode's status lines read "#RUNS: cov: EDGES ft: ... oom/timeout/crash: O/T/C ...":
# the last one holds the totals over every job.
fail=0
printf '| target | workers | seconds | executions | edges | oom/timeout/crash |\n| --- | --- | --- | --- | --- | --- |\n'
for t in $(printf '%s\n' "${!workers[@]}" | sort); do
  last=$(grep -E '^#[0-9]+: cov:' "$out/$t/log" | tail -n 1 || true)
  runs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
  edges=$(sed -E 's/.* cov: ([0-9]+) .*/\1/' <<<"$last")
  otc=$(grep -oE 'oom/timeout/crash: [0-9]+/[0-9]+/[0-9]+' <<<"$last" | cut -d' ' -f2)
  rc=$(cat "$out/$t/rc")
  printf '| `fuzz_%s` | %s | %s | %s | %s | %s |\n' "$t" "${workers[$t]}" "$secs" "${runs:-?}" "${edges:-?}" "${otc:-?}"
  if [ "$rc" != 0 ] || [ "${otc:-x}" != 0/0/0 ]; then
    echo "fuzz_$t: exit $rc, findings kept in $out/$t" >&2
    tail -n 40 "$out/$t/log" >&2
    fail=1
  fi
done
echo "logs and new inputs: $out" >&2
exit $fail

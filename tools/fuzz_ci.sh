#!/usr/bin/env bash
# CI's fuzz step (docs/fuzzing.md): builds every libFuzzer target with clang,
# ASan and UBSan in build-fuzz/, then runs each for N3_FUZZ_SECONDS (default
# 30) from its checked-in corpus, two at a time (CI has two cores). New inputs
# go to a scratch directory, never into the repository. Any finding (crash,
# sanitizer report, leak, timeout, an allocation over -malloc_limit_mb) fails
# the step, with the fuzzer's log and the reproducer's path printed.
# Every run is seeded (N3_FUZZ_SEED, default 1): the mutations a CI run tries
# are then a prefix of one fixed sequence for a given commit and corpus, so a
# finding reproduces and a commit's verdict does not change from one CI run
# to the next. Exploration with fresh seeds is the long runs' job
# (docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
secs=${N3_FUZZ_SECONDS:-30}
seed=${N3_FUZZ_SEED:-1}
# Checked before anything is built or run, one line each: libFuzzer reads a
# non-numeric -seed as 0, and -seed=0 means "pick a random seed", which would
# silently give up the reproducible verdict above; -max_total_time is an int.
# N3_FUZZ_CHECK_ONLY=1 stops after these checks (tests/fuzz_scripts_test.cc).
[[ "$seed" =~ ^[1-9][0-9]{0,9}$ ]] && ((seed <= 4294967295)) ||
  { echo "tools/fuzz_ci.sh: N3_FUZZ_SEED '${seed:0:40}' is not a whole number from 1 to 4294967295" >&2; exit 2; }
[[ "$secs" =~ ^[1-9][0-9]{0,5}$ ]] ||
  { echo "tools/fuzz_ci.sh: N3_FUZZ_SECONDS '${secs:0:40}' is not a whole number from 1 to 999999" >&2; exit 2; }
[ "${N3_FUZZ_CHECK_ONLY:-}" != 1 ] || exit 0
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DN3_BUILD_FUZZERS=ON \
  -DN3_BUILD_TESTS=OFF -DN3_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz --target n3_fuzzers -j"$(nproc)"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/n3-fuzz.XXXXXX")
keep=0
trap '[ "$keep" = 1 ] || rm -rf "$scratch"' EXIT

# -malloc_limit_mb: a single allocation of more than 512 MiB is a finding
# (sizes declared in a file must be checked against the file before they
# are allocated); -timeout: one input taking 10 s is a hang.
run_one() {
  local t=$1
  shift
  mkdir -p "$scratch/$t/new"
  (cd "$scratch/$t" && "$root/build-fuzz/fuzz/fuzz_$t" new "$root/tests/fuzz_corpus/$t" \
    -max_total_time="$secs" -seed="$seed" -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 -print_final_stats=1 "$@" \
    >log 2>&1)
}

targets=(decode asm load sim safetensors safetensors_index n3w npy manifest image hw_yaml model_yaml)
declare -A extra=([asm]="-dict=$root/build-fuzz/gen/isa/asm.dict -max_len=4096")
fail=0
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  pids=()
  for t in "${targets[@]:i:2}"; do
    # shellcheck disable=SC2086
    run_one "$t" ${extra[$t]:-} &
    pids+=("$!:$t")
  done
  for p in "${pids[@]}"; do
    t=${p#*:}
    if wait "${p%%:*}"; then
      echo "fuzz_$t: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$scratch/$t/log" | grep -o '[0-9]*$') runs, clean"
    else
      echo "fuzz_$t: FINDING" >&2
      tail -n 60 "$scratch/$t/log" >&2
      ls "$scratch/$t" >&2
      fail=1
    fi
  done
done
if [ "$fail" = 1 ]; then
  keep=1
  echo "fuzz step failed: reproducers kept under $scratch/<target>/" >&2
  exit 1
fi

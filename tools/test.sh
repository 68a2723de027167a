#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs the default suite.
# Opt-in suites (E4B-sized models) are separate: see docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
./bootstrap.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build -j"$(nproc)" --output-on-failure --timeout 900

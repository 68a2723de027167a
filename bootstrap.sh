#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build, test and run n3.
# Idempotent: packages already present are skipped by apt-get.
set -euo pipefail
PKGS=(cmake ninja-build g++ pkg-config
      libyaml-cpp-dev libboost-program-options-dev nlohmann-json3-dev
      libgtest-dev libgmock-dev libbenchmark-dev
      libsystemc-dev verilator zlib1g-dev
      libsentencepiece-dev sentencepiece
      clang libclang-rt-14-dev
      python3 python3-numpy python3-yaml
      python3-matplotlib)  # tools/plot_estimate.py (n3 estimate --sweep plots)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "bootstrap: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

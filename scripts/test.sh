#!/usr/bin/env bash
# Installs the dependencies, builds zygote and runs the whole test suite under ctest:
# unit, integration, fuzzers (bounded runs), the sanitizer build and the kernel lane.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh --test

jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZYGOTE_KERNEL_LANE=ON
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs" --timeout 1800)

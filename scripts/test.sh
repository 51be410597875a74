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

# >>> robust: the sanitizer lane and the fuzz lane (docs/FUZZING.md)
# The unit and integration tests again, against an ASan+UBSan build: a daemon that touches freed
# memory, overflows, hits undefined behaviour or leaks (LeakSanitizer at its exit) fails its test
# (conftest.py reads every zygoted's log). The load test runs 10,000 spawns there (ASan slows
# each one down); the kernel lane and the benchmarks do not run there.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZYGOTE_SANITIZE=ON
cmake --build build-asan -j"$jobs"
(cd build-asan && ZYGOTE_LOAD_SPAWNS=10000 ctest --output-on-failure -j"$jobs" --timeout 1800 -R '^(unit|integration)-')
# Every libFuzzer target (clang, ASan+UBSan) for a bounded number of inputs.
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DZYGOTE_FUZZ=ON
cmake --build build-fuzz -j"$jobs"
(cd build-fuzz && ctest --output-on-failure -j"$jobs" --timeout 900 -R '^fuzz-')
# <<< robust

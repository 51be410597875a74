#!/usr/bin/env bash
# The benchmarks of zygote, in one command (see docs/BENCHMARKS.md):
#
#   tests/bench/run.sh [--out DIR] [--quick] [--no-readme] [--build DIR]
#
# Builds what it needs in build/ (or --build DIR) when missing, starts its own zygoted daemons
# (one per tier) on private sockets, measures, and writes results.json, results.md and plot.png
# to DIR (default: BUILD/bench). A full run (minutes: docs/BENCHMARKS.md) also refreshes the README's
# Benchmarks section and tests/bench/results/; --quick (a smoke run with few samples) and
# --no-readme leave them alone. Run it as root on an otherwise idle machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

build=$repo/build
args=()
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --build=*) build=${1#--build=}; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done
build=$(mkdir -p "$build" && cd "$build" && pwd)

# The benchmark tool lives in tests/: a build configured without tests (scripts/run.sh does that)
# must be reconfigured with them.
if [[ ! -f $build/CMakeCache.txt ]] || grep -q '^BUILD_TESTING:BOOL=OFF' "$build/CMakeCache.txt"; then
  cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target zygoted zygote-ref launchctl zygote-bench >/dev/null

exec /usr/bin/python3 "$here/bench.py" run --build "$build" "${args[@]}"

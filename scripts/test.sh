#!/usr/bin/env bash
# Installs the dependencies, builds zygote and runs the whole test suite under ctest, in three
# lanes that each build their own tree:
#
#   main  build/       unit, integration and (as the ctest entry kernel-lane) the kernel lane
#   asan  build-asan/  the unit and integration tests again against an ASan+UBSan build
#   fuzz  build-fuzz/  every libFuzzer target (clang, ASan+UBSan) for a bounded number of inputs
#
# Every lane runs even when an earlier one failed. Each prints one summary line (passed, failed,
# skipped, wall time); a lane whose configure or build fails counts as one failed test, and so
# does a lane that ran no test at all. Each tree is configured with every option its lane needs
# given explicitly (tests on, sanitizers, fuzzers, kernel lane, compiler), whatever an earlier
# command (scripts/run.sh builds build/ without tests) left in its cache. Every ctest entry runs
# through tests/helpers/bounded-run.c: a time bound each, and a test that leaves processes
# running fails. After the lanes, scripts/check-collected.py checks that every test file of the
# tree runs in some lane (one failed test for each that does not). Each skip is listed with its
# reason (scripts/ctest-skips.py: a skipped entry's, and each pytest case skipped inside an entry
# that passed), and each lane's line counts the pytest cases beside ctest's entries. The last
# line is the sum over all lanes, `N passed, M failed, K skipped (ctest entries; the pytest cases
# in them: P passed, S skipped)`; the exit status is 1 when anything failed. Each lane's ctest
# output is kept in its build directory as ctest.log.
#
#   scripts/test.sh            all three lanes
#   ZYGOTE_TEST_LANES="main fuzz" scripts/test.sh     only those lanes
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

jobs=$(nproc)
lanes=${ZYGOTE_TEST_LANES:-main asan fuzz}
summary=()
total_passed=0 total_failed=0 total_skipped=0
total_cases_passed=0 total_cases_skipped=0 skip_reasons=()

fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# lane NAME DIR CC "CMAKE ARGS" "CTEST ARGS" [VAR=VALUE...]: configure, build and ctest one tree
# with the C compiler CC.
lane() {
        local name=$1 dir=$2 cc=$3 cmake_args=$4 ctest_args=$5 t0=$SECONDS rc passed failed skipped note='' cases=''
        shift 5
        echo "=== lane $name: $dir"
        # A tree cached with another compiler: cmake would start it over by itself, and forget
        # every -D option of this command line while doing so (the kernel lane's among them).
        # So it is started over here, before the configure that sets them.
        cc=$(command -v "$cc") || cc=$3
        local cached
        cached=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt" 2>/dev/null)
        if [[ -n $cached && $cached != "$cc" ]]; then
                echo "test.sh: $dir was configured with $cached, this lane needs $cc: configuring it anew"
                rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
        fi
        cmake_args+=" -DCMAKE_C_COMPILER=$cc"
        # shellcheck disable=SC2086 # the argument strings are word lists
        if ! cmake -S . -B "$dir" $cmake_args || ! cmake --build "$dir" -j"$jobs"; then
                passed=0 failed=1 skipped=0 note=" (the build failed)"
        else
                # shellcheck disable=SC2086
                (cd "$dir" && env "$@" ctest --output-on-failure -j"$jobs" $ctest_args) 2>&1 | tee "$dir/ctest.log"
                rc=${PIPESTATUS[0]}
                # One line per finished test: "  3/25 Test  #3: name ......   Passed    0.01 sec".
                local results
                results=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$dir/ctest.log")
                passed=$(grep -cE ' Passed +[0-9.]+ sec' <<<"$results")
                skipped=$(grep -cE '\*\*\*Skipped|Not Run.*Skipped' <<<"$results")
                failed=$(($(grep -c . <<<"$results") - passed - skipped))
                if ((passed + failed + skipped == 0)); then
                        # "No tests were found!!!" (a tree configured without tests) or a filter
                        # that matches nothing: a lane that runs nothing has tested nothing
                        failed=1 note=" (no test ran: ctest found none in $dir)"
                elif ((rc != 0 && failed == 0)); then
                        failed=1 note=" (ctest exited $rc)"
                fi
                local k
                k=$(grep -E 'Test +#[0-9]+: kernel-lane ' <<<"$results" | sed -E 's/.*: kernel-lane \.* *//; s/ +/ /g')
                [[ -n $k ]] && note+=" (kernel-lane: $k)"
                # each skip with its reason, and the pytest cases inside the entries: ctest's
                # "skipped" counts entries, and one that passed may hold many skipped cases
                local report
                report=$(python3 scripts/ctest-skips.py "$dir" "$dir/ctest.log")
                echo "$report"
                skip_reasons+=("$(grep -E '^skipped' <<<"$report" | sed "s/^/lane $name: /")")
                cases=$(tail -1 <<<"$report")
                note+="; ${cases% in *}"
                total_cases_passed=$((total_cases_passed + $(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"$cases")))
                total_cases_skipped=$((total_cases_skipped + $(sed -E 's/.* ([0-9]+) skipped.*/\1/' <<<"$cases")))
        fi
        summary+=("lane $name: $passed passed, $failed failed, $skipped skipped in $(fmt_time $((SECONDS - t0)))$note")
        echo "=== ${summary[-1]}"
        total_passed=$((total_passed + passed))
        total_failed=$((total_failed + failed))
        total_skipped=$((total_skipped + skipped))
}

t_all=$SECONDS
if ! scripts/deps.sh --test; then
        echo "test.sh: scripts/deps.sh --test failed: no lane can run" >&2
        echo "0 passed, 1 failed"
        exit 1
fi

# What every lane's tree needs, whatever its cache holds: tests on, a build type with symbols.
common="-DBUILD_TESTING=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo"
ran_lanes=()
for l in $lanes; do
        ran_lanes+=("$l")
        case $l in
        main)
                lane main build gcc "$common -DZYGOTE_SANITIZE=OFF -DZYGOTE_FUZZ=OFF -DZYGOTE_KERNEL_LANE=ON -DZYGOTE_FORMAT_CHECK=ON" \
                        "--timeout 1800"
                ;;
        asan)
                # A daemon that touches freed memory, overflows, hits undefined behaviour or leaks
                # (LeakSanitizer at its exit) fails its test (conftest.py reads every zygoted's log).
                # The load test runs 10,000 spawns here (ASan slows each one down).
                lane asan build-asan gcc "$common -DZYGOTE_SANITIZE=ON -DZYGOTE_FUZZ=OFF -DZYGOTE_KERNEL_LANE=OFF -DZYGOTE_FORMAT_CHECK=OFF" \
                        "--timeout 1800 -R ^(unit|integration)-" ZYGOTE_LOAD_SPAWNS=10000
                ;;
        fuzz)
                # docs/FUZZING.md: each target for a bounded number of inputs.
                lane fuzz build-fuzz clang "$common -DZYGOTE_SANITIZE=OFF -DZYGOTE_FUZZ=ON -DZYGOTE_KERNEL_LANE=OFF -DZYGOTE_FORMAT_CHECK=OFF" \
                        "--timeout 900 -R ^fuzz-"
                ;;
        *) echo "test.sh: unknown lane $l (main, asan, fuzz)" >&2; exit 2 ;;
        esac
done

# Every test file runs in some lane (only meaningful when all three ran).
all_ran=1
for l in main asan fuzz; do [[ " ${ran_lanes[*]} " == *" $l "* ]] || all_ran=0; done
if ((all_ran)); then
        t0=$SECONDS
        if out=$(python3 scripts/check-collected.py main=build asan=build-asan:'^(unit|integration)-' \
                fuzz=build-fuzz:'^fuzz-' 2>&1); then
                echo "$out"
                summary+=("every test file runs in some lane: $(tail -1 <<<"$out")")
        else
                echo "$out"
                missing=$(grep -c '^not collected: ' <<<"$out")
                ((missing > 0)) || missing=1
                total_failed=$((total_failed + missing))
                summary+=("every test file runs in some lane: $missing failed (above) in $(fmt_time $((SECONDS - t0)))")
        fi
fi

echo
echo "=== skipped, and why"
printf '%s\n' "${skip_reasons[@]}" | grep . || echo "nothing"
echo
echo "=== summary ($(fmt_time $((SECONDS - t_all))) in all, $jobs cores)"
printf '%s\n' "${summary[@]}"
echo "$total_passed passed, $total_failed failed, $total_skipped skipped (ctest entries; the pytest cases in them:" \
        "$total_cases_passed passed, $total_cases_skipped skipped)"
((total_failed == 0))

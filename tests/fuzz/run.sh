#!/usr/bin/env bash
# run.sh — fuzz every target for SECONDS each (default 60) with libFuzzer + ASan + UBSan (clang),
# starting from the seed corpus in tests/fuzz/corpus/<target>. New interesting inputs collect in
# build-fuzz/corpus/<target> (not committed); a crash stops that target, is saved under
# build-fuzz/artifacts/ and makes the script fail: keep it in tests/fuzz/crashes/<target>/ with a
# fix, and ctest's fuzz_replay replays it from then on. Prints execs/s and coverage per target.
# Usage: tests/fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(state json_config hf_import estimate_search launch_import)
build="$root/build-fuzz"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DMESHFIT_FUZZ=ON -DMESHFIT_BUILD_CLI=OFF >/dev/null
cmake --build "$build" -j"${MESHFIT_JOBS:-2}" --target $(printf 'fuzz_%s ' "${targets[@]}")
status=0
for target in "${targets[@]}"; do
  mkdir -p "$build/corpus/$target" "$build/artifacts"
  log="$build/fuzz_$target.log"
  echo "== fuzz_$target for ${seconds}s"
  if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$build/fuzz_$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$build/artifacts/${target}-" \
      "$build/corpus/$target" "$root/tests/fuzz/corpus/$target" >"$log" 2>&1; then
    result="no findings"
  else
    result="FINDING (see $log and $build/artifacts/)"
    status=1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  echo "   $runs executions, $rate execs/s, $cov, $result"
done
exit $status

#!/usr/bin/env bash
# What gemmtune adds per call to microsecond GEMMs, cublasSgemm_v2's and cublasLtMatmul's (nn.Linear's)
# (docs/PRELOAD.md, "Threads, devices, handles"): runs build/preload_overhead (tests/preload/overhead.c) once without
# the preload and three times under it, and prints their tables. Needs a GPU; builds nothing: run it from the repo
# root over a build (carry build/, with libcjson.so.1 in build/lib):
#     bash tests/preload/overhead.sh            # MAX_US=0.3 (the aim), ROUNDS=31, CALLS=200; exit 0 if all pass
#   1. no preload: gemmtune_sgemm with its cuBLAS fallback against cuBLAS called directly, after the cost of the
#      pieces a judged call is made of (--parts);
#   1b. preloaded with GEMMTUNE_PRELOAD=off: the interposer's pass-through alone;
#   2. preloaded, no winners, GEMMTUNE_FALLBACK unset: the interposer forwarding to cuBLAS, against the real cuBLAS;
#   3. preloaded, GEMMTUNE_FALLBACK=cublas: the interposer serving through gemmtune's own cuBLAS handle;
#   4. preloaded, GEMMTUNE_FALLBACK=default: the interposer serving the built-in kernel, against gemmtune_sgemm
#      running the same kernel directly;
#   5. build/tests/preload_cost (tests/preload/cost.c) without and under the preload: the interposer's own cost per
#      forwarded call, on stand-ins of cuBLAS and cuBLASLt that return at once (no real library's spread).
set -uo pipefail
BUILD=${BUILD:-build}
MAX_US=${MAX_US:-0.3}
args=(--rounds "${ROUNDS:-31}" --calls "${CALLS:-200}" --max-us "$MAX_US")
bin=$BUILD/preload_overhead
lib=$(cd "$BUILD" 2>/dev/null && pwd)/libgemmtune_cublas.so
for f in "$bin" "$lib"; do [ -e "$f" ] || { echo "overhead.sh: $f missing (build first: make)"; exit 1; }; done
unset GEMMTUNE_DB GEMMTUNE_JSON GEMMTUNE_FALLBACK GEMMTUNE_RECORD GEMMTUNE_PRELOAD GEMMTUNE_PRELOAD_LOG \
      GEMMTUNE_PRELOAD_BATCH NVIDIA_TF32_OVERRIDE CUBLAS_EMULATE_SINGLE_PRECISION LD_PRELOAD
empty=$(mktemp -d)                      # XDG_DATA_HOME without a database: no winners anywhere
trap 'rm -rf "$empty"' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null
failed=0 summary=()
# One configuration: its table, then a summary line (the marked row of 100^3 and the verdict) for the end.
run() {
  local what=$1 txt=$empty/run.txt; shift
  echo; echo "== $what"
  "$@" > "$txt" 2>&1 || failed=1
  cat "$txt"
  while read -r line; do # the marked rows of 100^3: cublasSgemm_v2's (or gemmtune's), and cublasLtMatmul's
    summary+=("$(printf '%-34s %s | %s' "$what" "$(cut -c1-80 <<< "$line")" "$(grep -o 'PASS\|FAIL' "$txt" | tail -1)")")
  done < <(grep '<-' "$txt" | grep '100x100x100')
}
run "no preload" env XDG_DATA_HOME="$empty" "$bin" "${args[@]}" --parts
run "preload, pass-through (off)" env XDG_DATA_HOME="$empty" GEMMTUNE_PRELOAD=off LD_PRELOAD="$lib" "$bin" "${args[@]}"
run "preload, forwarding" env XDG_DATA_HOME="$empty" LD_PRELOAD="$lib" "$bin" "${args[@]}"
run "preload, GEMMTUNE_FALLBACK=cublas" env XDG_DATA_HOME="$empty" GEMMTUNE_FALLBACK=cublas LD_PRELOAD="$lib" "$bin" "${args[@]}"
run "preload, GEMMTUNE_FALLBACK=default" env XDG_DATA_HOME="$empty" GEMMTUNE_FALLBACK=default LD_PRELOAD="$lib" "$bin" "${args[@]}"
echo; echo "summary (100x100x100; columns: host us, wall us, host +/-, wall +/- against the baseline; aim <= $MAX_US us):"
printf '%s\n' "${summary[@]}"
# The drop-in's own cost per forwarded call, on stand-ins of cuBLAS and cuBLASLt that return at once: the same
# judging, descriptor reads and loader lookup, without the real library's host time and its run-to-run spread.
cost=$BUILD/tests/preload_cost
echo; echo "== the drop-in's own cost per forwarded 100x100x100 call ($cost: stand-in cuBLAS and cuBLASLt, no winners)"
if plain=$(env XDG_DATA_HOME="$empty" "$cost") && with=$(env XDG_DATA_HOME="$empty" LD_PRELOAD="$lib" "$cost"); then
  for api in sgemm lt; do
    b=$(awk -v k="${api}_ns" '$1 == k {print $2}' <<< "$plain")
    w=$(awk -v k="${api}_ns" '$1 == k {print $2}' <<< "$with")
    line=$(awk -v b="$b" -v w="$w" -v max="$MAX_US" -v api="$api" 'BEGIN {
      d = (w - b) / 1000; printf "%-6s %8.1f ns plain, %8.1f ns preloaded: +%.3f us %s", api, b, w, d, d <= max ? "PASS" : "FAIL" }')
    echo "$line"
    grep -q FAIL <<< "$line" && failed=1
  done
else
  echo "preload_cost failed"; failed=1
fi
exit $failed

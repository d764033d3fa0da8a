#!/usr/bin/env bash
# GPU check of the cuBLAS drop-in (docs/PRELOAD.md), in one go on a GPU machine. Builds nothing: run it from the
# repo root over a build made elsewhere (carry build/, with libcjson.so.1 copied into build/lib):
#     bash tests/preload/run_check.sh
# tests/preload/check_cublas (a program that knows only cuBLAS) runs without the preload (the reference) and
# under it: served calls must be within the FP32 bound of cuBLAS's, forwarded ones (device pointer mode, TF32,
# ...) bit-identical, invalid ones get cuBLAS's status; GEMMTUNE_PRELOAD=off must be bit-identical throughout.
# cublasLtMatmul the same way (tests/preload/check_lt). Then: the loader's own cuBLAS fallback through the
# interposer (no recursion), the handle's stream, the added cost per call (tests/preload/overhead.sh: <= MAX_US,
# 0.3 us, over cuBLAS), and record -> tune -> rerun with tuned winners.
# Logs go to $OUT (or ./preload-out); the last thing printed is a table, and the exit status is 0 when all pass.
# TUNE=0 skips the tuning step (the rest takes a minute or two; tuning is capped at 4 minutes).
set -uo pipefail
BUILD=${BUILD:-build}
out=${OUT:-preload-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -d "$BUILD" ] || { echo "run_check: no $BUILD/ here (run from the repo root, over a build)"; exit 1; }
lib=$(cd "$BUILD" && pwd)/libgemmtune_cublas.so
check=$BUILD/check_cublas
export PATH=/usr/local/cuda/bin:$PATH
# Whatever the caller's shell has set must not steer these runs.
unset GEMMTUNE_DB GEMMTUNE_JSON GEMMTUNE_FALLBACK GEMMTUNE_RECORD GEMMTUNE_PRELOAD GEMMTUNE_PRELOAD_LOG \
      GEMMTUNE_PRELOAD_BATCH NVIDIA_TF32_OVERRIDE CUBLAS_EMULATE_SINGLE_PRECISION LD_PRELOAD
empty_xdg=$out/xdg-empty              # no database there: every served call takes the loader's fallback
rm -rf "$empty_xdg" "$out"/ref "$out"/served "$out"/off "$out"/viacublas "$out"/tuned "$out"/*.log "$out"/shapes.txt
mkdir -p "$empty_xdg" "$out"/ref "$out"/served "$out"/off "$out"/viacublas "$out"/tuned

declare -a rows=()
failed=0
row() { rows+=("$(printf '%-44s %-5s %s' "$1" "$2" "$3")"); [ "$2" = ok ] || [ "$2" = info ] || failed=1; }

for f in "$lib" "$check" "$BUILD/check_lt" "$BUILD/preload_overhead" "$BUILD/gemmtune"; do
  [ -e "$f" ] || { echo "run_check: $f missing (build first: make)"; exit 1; }
done
if ldd "$lib" "$BUILD/preload_overhead" | grep -q 'not found'; then
  ldd "$lib" "$BUILD/preload_overhead" | grep 'not found'
  echo "run_check: a library is missing; copy libcjson.so.1 (and libsqlite3 if absent) into $BUILD/lib"; exit 1
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee "$out/gpu.txt"

# A command under the preload: pl [VAR=value ...] command args. Only the command gets LD_PRELOAD.
pl() {
  local vars=()
  while [[ $1 == *=* ]]; do vars+=("$1"); shift; done
  env XDG_DATA_HOME="$empty_xdg" ${vars[@]+"${vars[@]}"} LD_PRELOAD="$lib" "$@"
}
summary() { grep -o 'summary: .*' "$1" | sed 's/summary: //'; }
last() { tail -n 1 "$1" | cut -c1-150; }

# 1. No-GPU paths still answer the same with the preload (a NULL handle: cuBLAS's own status).
"$check" probe > "$out/probe_plain.txt" 2>&1; pl "$check" probe > "$out/probe_preload.txt" 2>&1
if cmp -s "$out/probe_plain.txt" "$out/probe_preload.txt"; then row "statuses on a NULL handle" ok "as cuBLAS's"
else row "statuses on a NULL handle" FAIL "see $out/probe_*.txt"; fi

# 2. The reference: the real cuBLAS alone.
"$check" run "$out/ref" > "$out/ref.txt" 2>&1 || { cat "$out/ref.txt"; echo "run_check: the reference run failed"; exit 1; }

# 3. Served: no winners, GEMMTUNE_FALLBACK=default, so every servable call runs gemmtune's built-in kernel.
pl GEMMTUNE_FALLBACK=default GEMMTUNE_PRELOAD_LOG="$out/served.log" "$check" run "$out/served" > "$out/served.txt" 2>&1
"$check" compare "$out/ref" "$out/served" > "$out/compare_served.txt" 2>&1
# Per-call lines end in "[cublas...]"; the total at exit ("N calls served by gemmtune, ...") does not count.
st=$?; n_served=$(grep -c ' served by .*\[cublas' "$out/served.log" 2>/dev/null); n_fwd=$(grep -c 'forwarded to cuBLAS: .*\[cublas' "$out/served.log" 2>/dev/null)
for why in 'device pointer mode' 'math mode allows TF32' 'compute type is not pure FP32' 'invalid arguments' \
           'k == 0' 'alpha == 0' 'batch larger than'; do
  grep -q "forwarded to cuBLAS: .*$why" "$out/served.log" || { st=1; echo "served.log lacks: $why" >> "$out/compare_served.txt"; }
done
[ "${n_served:-0}" -gt 20 ] || st=1
row "served vs cuBLAS (forwarded ones bitwise)" "$([ $st = 0 ] && echo ok || echo FAIL)" \
    "$(summary "$out/compare_served.txt"); log: $n_served served, $n_fwd forwarded"

# 4. Pass-through switch: cuBLAS's bits everywhere.
pl GEMMTUNE_PRELOAD=off GEMMTUNE_PRELOAD_LOG="$out/off.log" "$check" run "$out/off" > "$out/off.txt" 2>&1
"$check" compare "$out/ref" "$out/off" --bitwise > "$out/compare_off.txt" 2>&1
st=$?; grep -q '\[cublas' "$out/off.log" && st=1    # pass-through: no per-call line at all
row "GEMMTUNE_PRELOAD=off is bit-identical" "$([ $st = 0 ] && echo ok || echo FAIL)" "$(summary "$out/compare_off.txt")"

# 5. The loader's own cuBLAS fallback calls cublasSgemm_v2 from inside the preload: it must reach the real one.
pl GEMMTUNE_FALLBACK=cublas GEMMTUNE_PRELOAD_LOG="$out/viacublas.log" "$check" run "$out/viacublas" > "$out/viacublas.txt" 2>&1
"$check" compare "$out/ref" "$out/viacublas" > "$out/compare_viacublas.txt" 2>&1
st=$?; grep -q 'served by cublas' "$out/viacublas.log" || st=1
row "loader's cuBLAS fallback (re-entry)" "$([ $st = 0 ] && echo ok || echo FAIL)" "$(summary "$out/compare_viacublas.txt")"

# 6. The handle's stream: a call waits behind its held stream, the other stream's call runs.
pl GEMMTUNE_FALLBACK=default GEMMTUNE_PRELOAD_LOG="$out/streams.log" "$check" streams > "$out/streams.txt" 2>&1
"$check" streams > "$out/streams_plain.txt" 2>&1
st=0; grep -q 'streams: ok' "$out/streams.txt" || st=1; grep -q 'served by default' "$out/streams.log" || st=1
row "calls run on the handle's stream" "$([ $st = 0 ] && echo ok || echo FAIL)" "$(last "$out/streams.txt" | cut -c1-90)"

# 6b. cublasLtMatmul (nn.Linear's path): served calls within the FP32 bound of cuBLASLt's, the bias epilogue and C
# apart from D included; forwarded ones (TF32, other epilogues, device pointers, row order, a batch, an attribute)
# bit-identical; cuBLASLt's status for what it rejects. GEMMTUNE_PRELOAD=off bit-identical throughout.
rm -rf "$out"/lt_ref "$out"/lt_served "$out"/lt_off && mkdir -p "$out"/lt_ref "$out"/lt_served "$out"/lt_off
"$BUILD/check_lt" run "$out/lt_ref" > "$out/lt_ref.txt" 2>&1 || { cat "$out/lt_ref.txt"; echo "run_check: the cuBLASLt reference run failed"; exit 1; }
pl GEMMTUNE_FALLBACK=default GEMMTUNE_PRELOAD_LOG="$out/lt.log" "$BUILD/check_lt" run "$out/lt_served" > "$out/lt_served.txt" 2>&1
"$BUILD/check_lt" compare "$out/lt_ref" "$out/lt_served" > "$out/compare_lt.txt" 2>&1
st=$?; n_served=$(grep -c ' served by .*\[cublasLtMatmul' "$out/lt.log" 2>/dev/null); n_fwd=$(grep -c 'forwarded to cuBLASLt: .*\[cublasLtMatmul' "$out/lt.log" 2>/dev/null)
for why in 'compute type is not pure FP32' 'epilogue other than DEFAULT or BIAS' 'BIAS epilogue with beta' \
           'device pointer mode' 'not column-major' 'batched cuBLASLt' 'attribute that gemmtune does not serve' \
           'alpha == 0' 'invalid arguments' 'scale or bias type'; do
  grep -q "forwarded to cuBLASLt: .*$why" "$out/lt.log" || { st=1; echo "lt.log lacks: $why" >> "$out/compare_lt.txt"; }
done
grep -q ' served by .*epilogue=bias\]' "$out/lt.log" || { st=1; echo "lt.log: no bias call served" >> "$out/compare_lt.txt"; }
[ "${n_served:-0}" -gt 20 ] || st=1
row "cublasLtMatmul served vs cuBLASLt" "$([ $st = 0 ] && echo ok || echo FAIL)" \
    "$(summary "$out/compare_lt.txt"); log: $n_served served, $n_fwd forwarded"
pl GEMMTUNE_PRELOAD=off "$BUILD/check_lt" run "$out/lt_off" > "$out/lt_off.txt" 2>&1
"$BUILD/check_lt" compare "$out/lt_ref" "$out/lt_off" --bitwise > "$out/compare_lt_off.txt" 2>&1
row "cublasLtMatmul, GEMMTUNE_PRELOAD=off" "$([ $? = 0 ] && echo ok || echo FAIL)" "$(summary "$out/compare_lt_off.txt")"

# 7. Cost per call (tests/preload/overhead.sh): the loader's path to cuBLAS and the interposer's (forwarding,
# serving through cuBLAS, serving the built-in kernel) against cuBLAS called directly, or the same kernel.
BUILD="$BUILD" MAX_US="${MAX_US:-0.3}" bash tests/preload/overhead.sh > "$out/overhead.txt" 2>&1
st=$?
row "added host cost per call (<= ${MAX_US:-0.3} us)" "$([ $st = 0 ] && echo ok || echo FAIL)" \
    "$(grep -c ': PASS' "$out/overhead.txt") of 4 runs pass; tables in $out/overhead.txt"
while read -r line; do row "  ${line:0:34}" info "${line:35}"; done < <(sed -n '/^summary/,$p' "$out/overhead.txt" | tail -n +2)

# 8. The loop of docs/PRELOAD.md: record the program's shapes, tune them, run it again with the winners. The vendor
# family is in the sweep: a winner of ours slower than cuBLAS is never served, so without it nothing would be exact.
if [ "${TUNE:-1}" != 0 ]; then
pl GEMMTUNE_RECORD="$out/shapes.txt" GEMMTUNE_PRELOAD_LOG="$out/before.log" "$check" loop > "$out/before.txt" 2>&1
sizes=512,1000 label=512,1000
if [ -s "$out/shapes.txt" ]; then sizes=@$out/shapes.txt label=@shapes.txt; fi
tune() { timeout 240 "$BUILD/gemmtune" --gpu 0 --sizes "$1" --preset quick --family cublas,tile2d,warptile \
           --strategy halving --db "$out/tuned.db" --no-progress > "$out/tune.txt" 2>&1; }
tune "$sizes"; st=$?
if [ $st = 2 ] && [ "$sizes" != 512,1000 ]; then sizes=512,1000 label=512,1000; tune "$sizes"; st=$?; fi  # no @file yet
row "gemmtune tune --sizes $label" "$([ $st = 0 ] && echo ok || echo FAIL)" "$(last "$out/tune.txt" | cut -c1-90)"
pl GEMMTUNE_DB="$out/tuned.db" GEMMTUNE_PRELOAD_LOG="$out/after.log" "$check" loop > "$out/after.txt" 2>&1
pl GEMMTUNE_DB="$out/tuned.db" GEMMTUNE_PRELOAD_LOG="$out/tuned.log" "$check" run "$out/tuned" > "$out/tuned.txt" 2>&1
"$check" compare "$out/ref" "$out/tuned" > "$out/compare_tuned.txt" 2>&1
st=$?; grep -q 'served by exact' "$out/after.log" || st=1
row "tuned winners vs cuBLAS (exact, nearest)" "$([ $st = 0 ] && echo ok || echo FAIL)" \
    "$(summary "$out/compare_tuned.txt")"
for s in 512x512x512 1000x1000x1000; do
  b=$(grep -o "$s nn: [0-9.]* ms/call" "$out/before.txt" | grep -o '[0-9.]* ms'); a=$(grep -o "$s nn: [0-9.]* ms/call" "$out/after.txt" | grep -o '[0-9.]* ms')
  r=$(grep -o "^gemmtune: $s nn [a-z]* [a-z]*[^[]*" "$out/after.log" | head -1 | cut -c1-60)
  row "  $s nn: cuBLAS -> tuned" info "${b:-?} -> ${a:-?} (${r#gemmtune: })"
done
fi

echo
printf '%-44s %-5s %s\n' check result detail
for r in "${rows[@]}"; do echo "$r"; done
echo "logs: $out"
exit $failed

#!/usr/bin/env bash
# GPU session for "never slower than cuBLAS" and the sweep's cost, in stages that each fit one device call:
#   tune    the public suite of docs/BENCHMARKS.md tuned into $DB (every family, the default strategy, cross-timing)
#   bench   the loader against our own best and cuBLAS over the public suite and ten untuned shapes
#   loop    record -> tune -> serve: a run records its untuned calls, gemmtune tunes them, the next run serves them
#   cost    the sweep's cost: `make run`'s sweep and 8192^3 by halving, each into a fresh database
#   strategies  exhaustive and the default strategy on $STRATEGY_SIZES, each into a fresh database
#   exh-8192    8192^3, multistage exhaustively (the family halving's winner comes from), for the rank correlation
#   odd-tune    issue 14's shapes beyond the public suite (small, skinny, odd, unaligned) tuned into $DB
#   odd-bench   the loader, our own best and cuBLAS over the public suite and issue 14's shapes
#   probe       $PROBE_SIZES tuned with $PROBE_FAMILIES only into a fresh database, then benched (a quick look)
#   tf32x3      issue 16: squares and the public suite tuned with every math class into $out/tf.db, then benched
#               with GEMMTUNE_MATH=tf32x3 (the faster of each shape's FP32 and tf32x3 winners) and without
# Usage (repo root, build/ carried with build/lib/libcjson.so.1): bash tests/serve_session.sh tune bench ...
# Logs go to $OUT (or ./serve-out); the database is $DB (default $OUT/suite.db; carry it between calls).
set -uo pipefail
out=${OUT:-serve-out}
B=${BUILD:-build}
db=${DB:-$out/suite.db}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
public=1024,2048,4096,8192,1000,5000,3000x5000x700,4096x4096x256,256x4096x4096,8192x128x8192,127x4099x1025,64x64x65536
untuned=96,256,640,1200,2500,5000x64x5000,64x5000x5000,3333x1111x777,7x1000x13,1x4096x4096
odd=128,640,1280,2500,16x16384x4096,4096x16x4096,5000x300x5000,1000x1000x20000,1111x2222x3333,2049,2047
odd=$odd,4097x4095x4093,777x1531x2049,33x8191x4097,10240x96x10240
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader \
    | tee -a "$out/gpu.txt"
for stage in "$@"; do
    echo "=== $stage $(date +%T)"
    case $stage in
    tune) /usr/bin/time -f "tune: %e s wall" "$B"/gemmtune --gpu 0 --sizes "$public" --db "$db" --no-progress 2>&1 \
              | tee "$out/tune.log" | tail -20 ;;
    bench) "$B"/gemmtune bench --sizes "$public,$untuned" --db "$db" 2>&1 | tee "$out/bench.log" ;;
    odd-tune) /usr/bin/time -f "odd-tune: %e s wall" "$B"/gemmtune --gpu 0 --sizes "$odd" --db "$db" --no-progress 2>&1 \
              | tee "$out/odd-tune.log" | tail -20 ;;
    odd-bench) "$B"/gemmtune bench --sizes "$public,$odd" --db "$db" 2>&1 | tee "$out/odd-bench.log" ;;
    probe)
        "$B"/gemmtune --gpu 0 --sizes "$PROBE_SIZES" --family "$PROBE_FAMILIES" --db "$out/probe.db" --no-progress 2>&1 \
            | tee "$out/probe-tune.log" | tail -12
        "$B"/gemmtune bench --sizes "$PROBE_SIZES" --db "$out/probe.db" 2>&1 | tee "$out/probe-bench.log" ;;
    tf32x3)
        "$B"/gemmtune --gpu 0 --math all --sizes "1024,2048,4096,8192,5000,3000x5000x700,256x4096x4096,8192x128x8192" \
            --db "$out/tf.db" --no-progress 2>&1 | tee "$out/tf-tune.log" | tail -6
        GEMMTUNE_MATH=tf32x3 "$B"/gemmtune bench --sizes "1024,2048,4096,8192,5000,3000x5000x700,256x4096x4096,8192x128x8192" \
            --db "$out/tf.db" 2>&1 | tee "$out/tf-bench.log"
        "$B"/gemmtune bench --sizes "1024,2048,4096,8192" --db "$out/tf.db" 2>&1 | tail -1 ;;
    loop)
        rm -f "$out/calls.txt"
        GEMMTUNE_RECORD="$out/calls.txt" "$B"/gemmtune bench --sizes 1200:nn,7x1000x13:tn,2500:nn --db "$db" --reps 3 \
            > "$out/loop-before.log" 2>&1
        cat "$out/calls.txt"
        "$B"/gemmtune --gpu 0 --sizes @"$out/calls.txt" --db "$db" --no-progress 2>&1 | tail -6
        "$B"/gemmtune bench --sizes @"$out/calls.txt" --db "$db" 2>&1 | tee "$out/loop-after.log" ;;
    cost)
        /usr/bin/time -f "make run sweep: %e s wall" "$B"/gemmtune --gpu 0 --sizes 1024,2048 --db "$out/run.db" \
            --no-progress 2>&1 | tail -8
        /usr/bin/time -f "8192 halving: %e s wall" "$B"/gemmtune --gpu 0 --sizes 8192 --strategy halving \
            --db "$out/h8192.db" --no-progress 2>&1 | tail -6 ;;
    strategies) # GPU time and winners: exhaustive against the default strategy, each into a fresh database
        for st in exhaustive halving; do
            /usr/bin/time -f "$st: %e s wall" "$B"/gemmtune --gpu 0 --sizes "${STRATEGY_SIZES:-1024,2048,127x4099x1025,64x64x65536,4096x4096x256}" \
                --strategy $st --no-cross --db "$out/$st.db" --no-progress 2>&1 | tail -30
        done ;;
    exh-8192) /usr/bin/time -f "8192 exhaustive (multistage): %e s wall" "$B"/gemmtune --gpu 0 --sizes 8192 \
                  --family multistage --strategy exhaustive --no-cross --db "$out/e8192.db" --no-progress 2>&1 | tail -5 ;;
    gpu-test) timeout 420 "$B"/gt_tests --gpu 2>&1 | tee "$out/gpu_tests.log" \
                  | grep -E "^\[ (FAIL|SKIP)|check failed|passed|MISMATCH" ;;
    *) echo "unknown stage $stage" ;;
    esac
done

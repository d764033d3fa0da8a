#!/usr/bin/env bash
# One device call's worth of GPU checks: the GPU tests, a sweep into a fresh database, what the loader serves from
# it against our own best kernel and cuBLAS (bench, tuned and untuned shapes), and the cuBLAS drop-in's check.
# Run on the GPU machine from the repo root over a build made on a machine with the -dev packages
# (carry build/, with libcjson.so.1 copied into build/lib):   bash tests/gpu_session.sh [SIZES]
# Logs go to $OUT (or ./gpu-out) so they can be kept. The longer sessions: tests/serve_session.sh.
set -uo pipefail
out=${OUT:-gpu-out}
B=${BUILD:-build}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$out/gpu.txt"
sizes=${1:-1024,2048,1000}
"$B"/gt_tests --gpu 2>&1 | tee "$out/gpu_tests.log" | grep -E "^\[ (FAIL|SKIP)|check failed|passed"
"$B"/gemmtune --gpu 0 --sizes "$sizes" --db "$out/sweep.db" --no-progress 2>&1 | tee "$out/sweep.log" | tail -8
"$B"/gemmtune bench --sizes "$sizes,1536,100" --db "$out/sweep.db" 2>&1 | tee "$out/bench.log"
OUT="$out/preload" bash tests/preload/run_check.sh 2>&1 | tail -14

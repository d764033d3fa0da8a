#!/usr/bin/env bash
# One device call's worth of GPU checks: the GPU tests, a sweep into a fresh database, and its winners.
# Run on the GPU machine from the repo root over a build made on a machine with the -dev packages
# (carry build/, with libcjson.so.1 copied into build/lib):   bash tests/gpu_session.sh [SIZES]
# Logs go to $OUT (or ./gpu-out) so they can be kept.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$out/gpu.txt"
sizes=${1:-1024,2048,1000}
"${BUILD:-build}"/gt_tests --gpu 2>&1 | tee "$out/gpu_tests.log"
"${BUILD:-build}"/gemmtune --gpu 0 --sizes "$sizes" --db "$out/sweep.db" --no-progress 2>&1 | tee "$out/sweep.log"
"${BUILD:-build}"/gemmtune query --db "$out/sweep.db" 2>&1 | tee "$out/query.log"

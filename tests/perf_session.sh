#!/usr/bin/env bash
# Benchmark session on a GPU machine: tune the public benchmark suite of docs/BENCHMARKS.md (or SIZES) into a fresh database, then
# `gemmtune bench` the winners against cuBLAS, and dump the SASS of the 4096^3 winner for reading.
# Usage (repo root, build/ carried with build/lib/libcjson.so.1):
#   FAMILIES=multistage,warptile STRATEGY=halving bash tests/perf_session.sh [SIZES]
set -uo pipefail
out=${OUT:-perf-out}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
suite=1024,2048,4096,8192,1000,5000,3000x5000x700,4096x4096x256,256x4096x4096,8192x128x8192,127x4099x1025,64x64x65536
sizes=${1:-$suite}
db=${DB:-$out/perf.db}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$out/gpu.txt"
"${BUILD:-build}"/gemmtune --gpu 0 --sizes "$sizes" --family "${FAMILIES:-multistage,warptile,vec4,tile2d}" \
    --strategy "${STRATEGY:-halving}" --db "$db" --no-progress 2>&1 | tee "$out/tune.log"
"${BUILD:-build}"/gemmtune bench --sizes "$sizes" --db "$db" 2>&1 | tee "$out/bench.log"
# The 4096^3 winner's machine code, for reading register use, LDS widths and FFMA density.
python3 - "$db" "$out" <<'PY'
import sqlite3, sys
db, out = sys.argv[1:3]
c = sqlite3.connect(db)
row = c.execute("""SELECT cb.cubin, c.params FROM winners w JOIN shapes s ON s.id = w.shape_id
                   JOIN candidates c ON c.id = w.candidate_id JOIN cubins cb ON cb.source_hash = c.source_hash
                   WHERE s.m = 4096 AND s.n = 4096 AND s.k = 4096 LIMIT 1""").fetchone()
if row:
    open(out + "/w4096.cubin", "wb").write(row[0])
    print("4096 winner:", row[1])
PY
if [ -f "$out/w4096.cubin" ]; then
    cuobjdump -sass "$out/w4096.cubin" > "$out/w4096.sass"
    echo "SASS lines: $(wc -l < "$out/w4096.sass"); FFMA $(grep -c FFMA "$out/w4096.sass"); LDS.128 $(grep -c 'LDS.128' "$out/w4096.sass"); LDS $(grep -c 'LDS' "$out/w4096.sass"); LDGSTS $(grep -c LDGSTS "$out/w4096.sass"); BAR $(grep -c BAR "$out/w4096.sass")"
fi

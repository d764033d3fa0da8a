#!/usr/bin/env bash
# Skinny shapes on a GPU machine (issue 28): measure this GPU's two ceilings (tests/perf/roofline.cu), tune the
# shapes into a fresh database, `gemmtune bench` them (served, our own best, cuBLAS pedantic, in one process), and
# print each shape's roofline beside the three: bandwidth time (A, B and C once), FFMA time, our share of the
# larger. The sweep screens every candidate (MODEL_STOP=0): the guided screen finds our own best only as far as it
# could beat cuBLAS, and this table is about our best. Usage (repo root, build/ carried with build/lib/libcjson.so.1):
#   OUT=dir FAMILIES=skinny,multistage LAYOUTS=nn,tn bash tests/perf/skinny_session.sh [SIZES]
set -uo pipefail
out=${OUT:-skinny-out}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
suite=33x8191x4097,50x4492x6473,37x7454x391,10240x96x10240,16x16384x4096,8x4096x4096,4096x16x4096,45x303x475
sizes=${1:-$suite}
db=${DB:-$out/skinny.db}
bin=${BUILD:-build}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$out/gpu.txt"
nvcc -O3 -arch=sm_90 -o "$out/roofline" tests/perf/roofline.cu && "$out/roofline" | tee "$out/roofline.txt"
"$bin"/gemmtune --gpu 0 --sizes "$sizes" --layouts "${LAYOUTS:-nn}" --family "${FAMILIES:-skinny,multistage}" \
    --model-stop "${MODEL_STOP:-0}" \
    --strategy "${STRATEGY:-halving}" --db "$db" --no-progress > "$out/tune.log" 2>&1
tail -n 5 "$out/tune.log"
"$bin"/gemmtune bench --sizes "$sizes" --layouts "${LAYOUTS:-nn}" --db "$db" --format csv > "$out/bench.csv" 2> "$out/bench.err"
python3 - "$out/roofline.txt" "$out/bench.csv" <<'PY'
import csv, sys
bw = ff = None
for line in open(sys.argv[1]):
    if line.startswith("roofline"):
        _, bw, ff = line.split(); bw, ff = float(bw), float(ff)
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r.get("m", "").isdigit()]
print(f"{'shape':>20} {'lay':3} {'bw us':>7} {'ffma us':>7} {'cuBLAS us':>9} {'own us':>8} {'own x':>6} "
      f"{'roof %':>6} {'served x':>8}  own kernel")
for r in rows:
    m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
    t_bw = 4.0 * (m * k + k * n + m * n) / (bw * 1e3)
    t_ff = 2.0 * m * n * k / (ff * 1e6)
    own = float(r["own_ms"]) * 1e3 if r.get("own_ms") else float("nan")
    cub = float(r["cublas_ms"]) * 1e3
    print(f"{m}x{n}x{k:>6} {r['layout']:3} {t_bw:7.1f} {t_ff:7.1f} {cub:9.1f} {own:8.1f} {cub / own:6.2f} "
          f"{100 * max(t_bw, t_ff) / own:6.1f} {float(r['served_ratio']):8.3f}  {r.get('own', '')[:60]}")
PY

#!/bin/bash
# tests/cluster/slurm.sh: --shard auto under a real Slurm. Starts a one-node cluster (Debian's slurm-wlm and munge,
# config and state in a temp dir, stopped on exit), runs `tune --dry-run --shard auto` as the tasks of an sbatch
# --array, and checks that every task took its own part and that the parts cover the unsharded plan exactly once.
# With --gpu (a GPU present): the real sharded sweep, merged, against an unsharded one. Run: make slurm-test (root,
# no GPU needed; not in make test or CI; GT_SLURM_BIN names another gemmtune). docs/CLUSTER.md, "Testing it on one
# machine".
set -uo pipefail

usage() {
    cat <<'EOF'
usage: tests/cluster/slurm.sh [--tasks N] [--sizes LIST] [--layout LIST] [--gpu] [--keep]

Starts a one-node Slurm cluster in a temp dir (installs slurm-wlm and munge with apt-get if absent; needs root),
submits an sbatch --array=0-(N-1) whose tasks run `gemmtune tune --dry-run --shard auto --arch sm_90`, and checks
that each task took the part Slurm gave it (SLURM_ARRAY_TASK_ID/COUNT) and that the parts' trials together are the
unsharded dry run's, none in two parts. Everything it started is stopped on exit.

  --tasks N      array tasks (default 4)
  --sizes LIST   the sweep's --sizes (default 1024,2048,3000x5000x700)
  --layout LIST  the sweep's --layout (default nn,tn); --math is all
  --gpu          also run the real sweep (exhaustive, --no-cross) as the array's tasks, one at a time on GPU 0,
                 each into its own database; gemmtune merge them and compare the merged trials and winners with
                 an unsharded sweep's (gemmtune query). Needs nvidia-smi to work. Takes minutes.
  --keep         keep the temp dir (config, logs, task outputs) also when the test passes
Exit status: 0 PASS, 1 FAIL, 2 bad arguments or a cluster that could not be set up.
EOF
}

TASKS=4 SIZES=1024,2048,3000x5000x700 LAYOUT=nn,tn GPU=0 KEEP=0
while [ $# -gt 0 ]; do
    case $1 in
        --tasks) TASKS=${2:-}; shift 2 || { usage >&2; exit 2; } ;;
        --sizes) SIZES=${2:-}; shift 2 || { usage >&2; exit 2; } ;;
        --layout|--layouts) LAYOUT=${2:-}; shift 2 || { usage >&2; exit 2; } ;;
        --gpu) GPU=1; shift ;;
        --keep) KEEP=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "slurm.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
[[ $TASKS =~ ^[0-9]+$ ]] && [ "$TASKS" -ge 1 ] && [ "$TASKS" -le 64 ] ||
    { echo "slurm.sh: --tasks wants 1 to 64, not '$TASKS'" >&2; exit 2; }

START=$SECONDS
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GT=${GT_SLURM_BIN:-$ROOT/build/gemmtune} # make slurm-test passes its $(BUILD)'s
FAILS=0
say() { printf 'slurm.sh: %s\n' "$*"; }
die() { printf 'slurm.sh: %s\n' "$*" >&2; exit 2; }
fail() { printf 'slurm.sh: FAIL: %s\n' "$*"; FAILS=$((FAILS + 1)); }

[ -x "$GT" ] || die "no $GT: build it first (make -j\$(nproc) all)"
if [ "$GPU" -eq 1 ]; then
    nvidia-smi -L >/dev/null 2>&1 || die "--gpu: nvidia-smi does not work here (no GPU or no driver)"
    command -v python3 >/dev/null || die "--gpu: the comparison of the sweeps needs python3"
fi

# ---- slurm-wlm and munge, from Debian's packages ----
NEED="slurmctld slurmd sbatch sinfo squeue scancel munged munge"
missing() { for c in $NEED; do command -v "$c" >/dev/null || return 0; done; return 1; }
[ "$(id -u)" -eq 0 ] ||
    die "needs root: it starts slurmd, which runs the jobs (and apt-get, where slurm-wlm or munge is missing)"
if missing; then
    command -v apt-get >/dev/null ||
        die "slurm-wlm and munge are not installed and there is no apt-get: install them by hand"
    say "installing slurm-wlm and munge (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    alog=$(mktemp "${TMPDIR:-/tmp}/gemmtune-slurm-apt.XXXXXX") || die "cannot make a temp file for apt-get's log"
    apt-get install -y --no-install-recommends slurm-wlm munge >"$alog" 2>&1 ||
        { apt-get update >>"$alog" 2>&1 &&
          apt-get install -y --no-install-recommends slurm-wlm munge >>"$alog" 2>&1; } ||
        die "could not install slurm-wlm and munge with apt-get (see $alog)"
    rm -f "$alog" # kept only where the install failed
    missing && die "slurm-wlm and munge are installed but one of: $NEED is not on PATH"
fi

# ---- the cluster: config, state and logs under one temp dir; everything started is stopped on exit ----
T=$(mktemp -d /tmp/gemmtune-slurm.XXXXXX) || die "cannot make a temp dir"
chmod 755 "$T" # munged wants every folder above its socket searchable by all
mkdir -p "$T"/{munge,state,spool,log,run,dry,gpu}
export SLURM_CONF=$T/slurm.conf

pid_of() { [ -s "$T/$1" ] && cat "$T/$1"; }
stop_all() {
    local rc=$? p pid t0=$SECONDS
    trap - EXIT INT TERM
    if [ -s "$T/slurm.conf" ] && [ -s "$T/run/slurmctld.pid" ]; then
        scancel --quiet --user=root 2>/dev/null # a job still running (a failure, an interrupt)
        for _ in $(seq 20); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.5; done
    fi
    for p in run/slurmd.pid run/slurmctld.pid munge/munged.pid; do
        pid=$(pid_of $p) || continue
        kill "$pid" 2>/dev/null || continue
        for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
        kill -0 "$pid" 2>/dev/null && { kill -9 "$pid" 2>/dev/null; say "$p: $pid killed (it did not stop)"; }
    done
    say "cluster stopped in $((SECONDS - t0)) s (munged, slurmctld, slurmd); $((SECONDS - START)) s in all"
    if [ "$rc" -eq 0 ] && [ "$KEEP" -eq 0 ]; then rm -rf "$T"; else say "kept $T (config, logs, task outputs)"; fi
    exit "$rc"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=
for p in $(seq 16817 2 16899); do in_use "$p" || in_use $((p + 1)) || { PORT=$p; break; }; done
[ -n "$PORT" ] || die "no free pair of ports in 16817..16900 for slurmctld and slurmd"

NODE_LINE=$(slurmd -C | head -n 1) # NodeName=host CPUs=... RealMemory=...: this machine as slurmd sees it
NODE=$(sed -n 's/^NodeName=\([^ ]*\).*/\1/p' <<<"$NODE_LINE")
[ -n "$NODE" ] || die "slurmd -C printed no NodeName: $NODE_LINE"
cat >"$T/slurm.conf" <<EOF
# one node, controller on localhost, no accounting: written by tests/cluster/slurm.sh
ClusterName=gemmtune-test
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/run/slurmctld.pid
SlurmdPidFile=$T/run/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
$NODE_LINE NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF

dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none && chmod 400 "$T/munge/munge.key"
munged --key-file="$T/munge/munge.key" --socket="$T/munge/munge.socket" --pid-file="$T/munge/munged.pid" \
    --log-file="$T/log/munged.log" --seed-file="$T/munge/munged.seed" || die "munged did not start: $T/log/munged.log"
slurmctld -f "$T/slurm.conf" -i || die "slurmctld did not start: $T/log/slurmctld.log"
slurmd -f "$T/slurm.conf" || die "slurmd did not start: $T/log/slurmd.log"
for _ in $(seq 60); do
    STATE=$(sinfo -h -n "$NODE" -o %T 2>/dev/null)
    [ "$STATE" = idle ] && break
    sleep 0.5
done
[ "$STATE" = idle ] || die "node $NODE is '${STATE:-unknown}', not idle, after 30 s: see $T/log"
say "one-node cluster up in $((SECONDS - START)) s: node $NODE idle ($(sed 's/^NodeName=[^ ]* //' <<<"$NODE_LINE")),"\
    "slurmctld on 127.0.0.1:$PORT, config $T/slurm.conf"

# ---- the plan: trial keys of a dry run's output ----
# A trial is its (shape, layout) header plus its line (family, variant, cubin state, kernel id, params): unique in a
# plan. Lines of families asked of the GPU at run time (cublas) cannot be split without a GPU: kept apart.
keys_of() {
    awk '/^[0-9].* candidates?$/ { sub(/:.*/, ""); shape = $0; next }
         /^  / && !/^  family / && !/asked of the GPU/ { sub(/ +$/, ""); print shape "|" $0 }' "$1" | LC_ALL=C sort
}
device_of() {
    awk '/^[0-9].* candidates?$/ { sub(/:.*/, ""); shape = $0; next }
         /asked of the GPU at run time\)$/ { print shape "|" $1 }' "$1" | LC_ALL=C sort
}

PLAN=(--arch sm_90 --sizes "$SIZES" --layout "$LAYOUT" --math all --db "$T/plan.db")
env -u SLURM_ARRAY_TASK_ID -u SLURM_PROCID "$GT" tune --dry-run "${PLAN[@]}" >"$T/dry/whole.out" 2>&1 ||
    die "the unsharded dry run failed: $(head -c 600 "$T/dry/whole.out")"
keys_of "$T/dry/whole.out" >"$T/dry/whole.keys"
device_of "$T/dry/whole.out" >"$T/dry/whole.device"
WHOLE=$(wc -l <"$T/dry/whole.keys")
[ "$WHOLE" -gt 0 ] || die "the unsharded dry run listed no trials: $T/dry/whole.out"
[ -z "$(uniq -d "$T/dry/whole.keys")" ] || fail "the unsharded dry run lists a trial twice: the key is not unique"

cat >"$T/dry/task.sbatch" <<'EOF'
#!/bin/bash
echo "task: SLURM_ARRAY_JOB_ID=$SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID=$SLURM_ARRAY_TASK_ID" \
    "SLURM_ARRAY_TASK_COUNT=$SLURM_ARRAY_TASK_COUNT host=$(hostname)"
exec "$GT_BIN" tune --dry-run --shard auto "$@"
EOF
say "sbatch --array=0-$((TASKS - 1)): gemmtune tune --dry-run --shard auto ${PLAN[*]}"
JOBOUT=$(cd "$T/dry" && GT_BIN=$GT timeout 300 sbatch --wait --array=0-$((TASKS - 1)) --job-name=gemmtune-dry \
    --output="$T/dry/task-%a.out" --error="$T/dry/task-%a.err" "$T/dry/task.sbatch" "${PLAN[@]}" 2>&1)
RC=$?
JOB=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' <<<"$JOBOUT")
[ -n "$JOB" ] || die "sbatch did not submit the array: $JOBOUT"
[ "$RC" -eq 0 ] || fail "array job $JOB: sbatch --wait exit $RC (a task failed, or 300 s passed): $JOBOUT"

# ---- each task took its own part; the parts cover the plan exactly once ----
: >"$T/dry/parts.keys"
COUNTS=
for i in $(seq 0 $((TASKS - 1))); do
    out=$T/dry/task-$i.out
    [ -s "$out" ] ||
        { fail "task $i wrote no output ($T/dry/task-$i.err: $(head -c 300 "$T/dry/task-$i.err" 2>/dev/null))"; continue; }
    grep -qx "task: SLURM_ARRAY_JOB_ID=$JOB SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=$TASKS host=.*" "$out" ||
        fail "task $i: not array job $JOB's task $i of $TASKS: $(head -n 1 "$out")"
    grep -qxF "shard $i/$TASKS (Slurm job array: task $i of $TASKS tasks from 0)" "$out" ||
        fail "task $i: no 'shard $i/$TASKS (Slurm job array: task $i of $TASKS tasks from 0)' line: $(head -n 3 "$out")"
    keys_of "$out" >"$T/dry/task-$i.keys"
    n=$(wc -l <"$T/dry/task-$i.keys")
    [ "$n" -gt 0 ] || fail "task $i: no trials listed"
    cmp -s "$T/dry/whole.device" <(device_of "$out") ||
        fail "task $i: its lists asked of the GPU differ from the unsharded run's"
    cat "$T/dry/task-$i.keys" >>"$T/dry/parts.keys"
    COUNTS=${COUNTS:+$COUNTS+}$n
done
LC_ALL=C sort -o "$T/dry/parts.keys" "$T/dry/parts.keys"
uniq -d "$T/dry/parts.keys" >"$T/dry/twice.keys"
LC_ALL=C comm -23 "$T/dry/whole.keys" <(uniq "$T/dry/parts.keys") >"$T/dry/only-whole.keys"
LC_ALL=C comm -13 "$T/dry/whole.keys" <(uniq "$T/dry/parts.keys") >"$T/dry/only-parts.keys"
[ -s "$T/dry/twice.keys" ] &&
    fail "$(wc -l <"$T/dry/twice.keys") trials are in two parts, e.g. $(head -n 1 "$T/dry/twice.keys")"
[ -s "$T/dry/only-whole.keys" ] && fail "$(wc -l <"$T/dry/only-whole.keys") trials of the unsharded run are in" \
    "no part, e.g. $(head -n 1 "$T/dry/only-whole.keys")"
[ -s "$T/dry/only-parts.keys" ] && fail "$(wc -l <"$T/dry/only-parts.keys") trials of the parts are not the" \
    "unsharded run's, e.g. $(head -n 1 "$T/dry/only-parts.keys")"
[ -e "$T/plan.db" ] && fail "a dry run created $T/plan.db"
DEVICE=$(wc -l <"$T/dry/whole.device")
[ "$FAILS" -eq 0 ] && say "dry run: array job $JOB, $TASKS tasks, each shard i/$TASKS from its" \
    "SLURM_ARRAY_TASK_ID/COUNT; $WHOLE trials = $COUNTS, none in two parts, union = the unsharded run's" \
    "($DEVICE lists asked of the GPU, in every part)"

# ---- --gpu: the real sweep as the array's tasks, merged, against an unsharded sweep ----
# Exhaustive, so every candidate of a part is timed whatever the others do (halving screens within its part), and
# --no-cross, so no trial depends on another shape's winner. One task at a time (%1): each has the GPU to itself.
compare_py() {
    cat <<'EOF'
import json, sys
d, tie = sys.argv[1], float(sys.argv[2])
load = lambda name: json.load(open(f"{d}/{name}.json"))
shape = lambda r: (r["gpu"], r["batch"], r["m"], r["n"], r["k"], r["layout"])
kernel = lambda r: (r["family"], r["params"])
fails = 0
trials = {}
for db in ("whole", "merged"):
    keys = [shape(r) + kernel(r) for r in load(db + ".trials")]
    trials[db] = set(keys)
    if len(keys) != len(trials[db]):
        print(f"FAIL: {db}: {len(keys) - len(trials[db])} trials stored twice"); fails += 1
only_w, only_m = trials["whole"] - trials["merged"], trials["merged"] - trials["whole"]
if only_w or only_m:
    print(f"FAIL: trials: {len(only_w)} only in the unsharded sweep, {len(only_m)} only in the merged parts, "
          f"e.g. {sorted(only_w or only_m)[0]}"); fails += 1
ms = {shape(r) + kernel(r): r["ms"] for r in load("whole.trials") if r["ms"] is not None}
same = ties = 0
for math in ("fp32", "tf32x3"):
    w = {shape(r): kernel(r) for r in load("whole." + math)}
    m = {shape(r): kernel(r) for r in load("merged." + math)}
    if w.keys() != m.keys():
        print(f"FAIL: {math}: winners for {len(w)} shapes unsharded, {len(m)} merged"); fails += 1
    for s in sorted(w.keys() & m.keys()):
        if w[s] == m[s]: same += 1; continue
        a, b = ms.get(s + w[s]), ms.get(s + m[s])
        if a and b and b <= a * (1 + tie):
            ties += 1
            print(f"near tie: {math} {s}: unsharded {w[s]} {a:.4f} ms, merged {m[s]} {b:.4f} ms (within {tie:.0%})")
        else:
            print(f"FAIL: {math} {s}: unsharded winner {w[s]} ({a} ms), merged {m[s]} ({b} ms in the unsharded sweep)")
            fails += 1
print(f"{len(trials['whole'] & trials['merged'])} trials in both; winners: {same} the same, {ties} near ties, {fails} failures")
sys.exit(1 if fails else 0)
EOF
}

gpu_part() {
    local G=$T/gpu i out db m
    local SWEEP=(--gpu 0 --strategy exhaustive --no-cross --no-progress --sizes "$SIZES" --layout "$LAYOUT" --math all)
    cat >"$G/task.sbatch" <<'EOF'
#!/bin/bash
echo "task: SLURM_ARRAY_JOB_ID=$SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID=$SLURM_ARRAY_TASK_ID" \
    "SLURM_ARRAY_TASK_COUNT=$SLURM_ARRAY_TASK_COUNT host=$(hostname)"
exec "$GT_BIN" tune --shard auto "$@" --db "$GT_OUT/part-$SLURM_ARRAY_TASK_ID.db"
EOF
    say "--gpu: sbatch --array=0-$((TASKS - 1))%1: gemmtune tune --shard auto ${SWEEP[*]}"
    local t0=$SECONDS
    JOBOUT=$(cd "$G" && GT_BIN=$GT GT_OUT=$G timeout 3600 sbatch --wait --array=0-$((TASKS - 1))%1 \
        --job-name=gemmtune-gpu --output="$G/task-%a.out" --error="$G/task-%a.err" "$G/task.sbatch" "${SWEEP[@]}" 2>&1) ||
        fail "--gpu: array job: sbatch --wait failed (a task failed, or an hour passed): $JOBOUT; see $G/task-*.err"
    for i in $(seq 0 $((TASKS - 1))); do
        grep -qxF "shard $i/$TASKS (Slurm job array: task $i of $TASKS tasks from 0)" "$G/task-$i.out" 2>/dev/null ||
            fail "--gpu: task $i: no 'shard $i/$TASKS (Slurm job array: ...)' line in $G/task-$i.out"
    done
    say "--gpu: the parts took $((SECONDS - t0)) s; the unsharded sweep next"
    env -u SLURM_ARRAY_TASK_ID -u SLURM_PROCID "$GT" tune "${SWEEP[@]}" --db "$G/whole.db" >"$G/whole.out" 2>&1 ||
        { fail "--gpu: the unsharded sweep failed: $(tail -n 5 "$G/whole.out")"; return; }
    "$GT" merge "$G"/part-*.db --db "$G/merged.db" >"$G/merge.out" 2>&1 ||
        { fail "--gpu: gemmtune merge failed: $(tail -n 5 "$G/merge.out")"; return; }
    for db in whole merged; do
        "$GT" query --trials --format json --db "$G/$db.db" >"$G/$db.trials.json" ||
            { fail "--gpu: query --trials $db"; return; }
        for m in fp32 tf32x3; do
            "$GT" query --math $m --format json --db "$G/$db.db" >"$G/$db.$m.json" 2>/dev/null ||
                { fail "--gpu: query --math $m $db"; return; }
        done
    done
    python3 <(compare_py) "$G" "${GT_SLURM_TIE:-0.03}" | tee "$G/compare.out" | sed 's/^/slurm.sh: --gpu: /'
    [ "${PIPESTATUS[0]}" -eq 0 ] || fail "--gpu: the merged parts are not the unsharded sweep (above; $G)"
}
[ "$GPU" -eq 1 ] && gpu_part

if [ "$FAILS" -eq 0 ]; then
    say "PASS: Slurm array of $TASKS tasks on one node$([ "$GPU" -eq 1 ] && echo ', dry run and GPU sweep')," \
        "$((SECONDS - START)) s"
    exit 0
fi
say "FAIL: $FAILS check(s) failed, $((SECONDS - START)) s"
exit 1

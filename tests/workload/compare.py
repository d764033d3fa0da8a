"""The workload benchmark's table (tests/workload/run.sh writes the files it reads): for each program, its own time
without gemmtune, served FP32 and served tf32x3, the speedups, the agreement of its losses or outputs with the
unmodified run, and the calls gemmtune served and forwarded (with the reasons, from `gemmtune exec`'s summary).
    python3 compare.py OUT_DIR          (markdown on stdout)
"""
import json
import os
import re
import sys

HOWS = ("base", "fp32", "tf32x3")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def calls(summary_text):
    """Served and forwarded counts, and the forwarded reasons, from exec's summary lines."""
    m = re.search(r"(\d+) cuBLAS GEMM calls served by gemmtune, (\d+) forwarded", summary_text)
    served, fwd = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    reasons = {}
    for line in summary_text.splitlines():
        r = re.match(r"\s+forwarded\s+(\d+)\s+(\S+)\s+(.*)$", line)
        if r:
            key = "%s: %s" % (r.group(2), r.group(3).strip())
            reasons[key] = reasons.get(key, 0) + int(r.group(1))
    return served, fwd, reasons


def rel_diff(a, b):
    return max((abs(x - y) / max(abs(x), 1e-30) for x, y in zip(a, b)), default=float("nan"))


def transformer_row(out, name):
    res = {h: load(os.path.join(out, "%s_%s.json" % (name, h))) for h in HOWS}
    if not res["base"]:
        return None
    base = res["base"]
    row = ["transformer step, %s (d=%d, %d heads, T=%d, batch %d, %d layers)" % (
        name, base["config"]["d"], base["config"]["heads"], base["config"]["t"], base["config"]["batch"],
        base["config"]["layers"]), "%.2f ms" % base["step_ms"]]
    for h in HOWS[1:]:
        r = res[h]
        if not r:
            row += ["-", "-"]
            continue
        same = r["losses"] == base["losses"]
        agree = "bit-identical" if same else "losses within %.1e" % rel_diff(base["losses"], r["losses"])
        row += ["%.2f ms (%.3fx)" % (r["step_ms"], base["step_ms"] / r["step_ms"]), agree]
    return row


def mlp_rows(out):
    res = {h: load(os.path.join(out, "mlp_%s.json" % h)) for h in HOWS}
    if not res["base"]:
        return []
    diffs = {}
    try:
        import torch
        outs = {h: torch.load(os.path.join(out, "mlp_%s.json.pt" % h)) for h in HOWS}
        for h in HOWS[1:]:
            diffs[h] = {b: float(((outs[h][b] - outs["base"][b]).abs().max() /
                                  outs["base"][b].abs().max().clamp_min(1e-30))) for b in outs["base"]}
    except Exception:  # no torch here, or a run missing: the times still stand
        pass
    rows = []
    for b, v in res["base"]["batches"].items():
        row = ["MLP inference 4096-16384-4096-4096, batch %s" % b, "%.3f ms" % v["ms"]]
        for h in HOWS[1:]:
            r = res[h] and res[h]["batches"].get(b)
            d = diffs.get(h, {}).get(int(b))
            row += ["%.3f ms (%.3fx)" % (r["ms"], v["ms"] / r["ms"]) if r else "-",
                    "outputs within %.1e" % d if d is not None else "-"]
        rows.append(row)
    return rows


def program_row(out, name, label, pattern, unit):
    t = {h: text(os.path.join(out, "%s_%s.txt" % (name, h))) for h in HOWS}
    v = {}
    for h in HOWS:
        m = re.search(pattern, t[h])
        v[h] = float(m.group(1)) if m else None
    if v["base"] is None:
        return None
    row = [label, "%.4g %s" % (v["base"], unit)]
    for h in HOWS[1:]:
        ok = "its own check passed" if "All results match" in t[h] else ("-" if name != "darknet" else "n/a")
        row += ["%.4g %s (%.3fx)" % (v[h], unit, v["base"] / v[h]) if v[h] else "-", ok]
    return row


def main():
    out = sys.argv[1]
    rows = [r for r in (transformer_row(out, m) for m in ("gpt2", "bert", "issue")) if r]
    rows += mlp_rows(out)
    r = program_row(out, "llmc", "llm.c dev/cuda/matmul_backward (GPT-2 MLP backward, cuBLAS SGEMM)",
                    r"time ([0-9.]+) ms", "ms")
    if r:
        rows.append(r)
    r = program_row(out, "darknet", "darknet speed, VGG-16 batch 1 (C, cublasSgemm)", r"Speed: ([0-9.]+) sec/eval",
                    "s")
    if r:
        rows.append(r)
    print("| program | without gemmtune | served FP32 | agreement | served tf32x3 | agreement |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    print("Calls through the drop-in (gemmtune exec's summary), served / forwarded, and why forwarded:")
    print()
    for f in sorted(os.listdir(out)):
        m = re.match(r"(.+)_(fp32|tf32x3)\.txt$", f)
        if not m:
            continue
        served, fwd, reasons = calls(text(os.path.join(out, f)))
        why = "; ".join("%d %s" % (n, k) for k, n in sorted(reasons.items(), key=lambda kv: -kv[1]))
        print("- %s, %s: %d served, %d forwarded%s" % (m.group(1), m.group(2), served, fwd, (": " + why) if why else ""))


if __name__ == "__main__":
    main()

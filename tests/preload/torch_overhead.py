"""What the cuBLAS drop-in costs a host-bound PyTorch loop whose calls it forwards (docs/PRELOAD.md), on a GPU
machine with PyTorch:

    /opt/torch/.venv/bin/python3 tests/preload/torch_overhead.py [build/libgemmtune_cublas.so] [ROUNDS]

A child process times loops of 2,000 small calls (F.linear with a bias at 64 x 64: cublasLtMatmul; torch.mm at
64 x 64: cublasSgemm_v2), so small that the host issues them slower than the GPU runs them. The parent runs the
child ROUNDS times (default 5) without the preload and under it with no winners (an empty XDG_DATA_HOME: every
call forwarded), alternating, and prints each loop's median microseconds per call both ways and the difference."""
import os
import statistics
import subprocess
import sys
import tempfile

CALLS = 2000


def child():
    import time

    import torch
    import torch.nn.functional as F

    torch.backends.cuda.matmul.allow_tf32 = False
    dev = "cuda"
    x, w, b = (torch.randn(64, 64, device=dev), torch.randn(64, 64, device=dev), torch.randn(64, device=dev))
    loops = {"F.linear 64x64 (cublasLtMatmul)": lambda: F.linear(x, w, b), "torch.mm 64x64 (cublasSgemm_v2)":
             lambda: torch.mm(x, w)}
    for name, fn in loops.items():
        for _ in range(200):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(7):
            t0 = time.perf_counter()
            for _ in range(CALLS):
                fn()
            times.append((time.perf_counter() - t0) / CALLS * 1e6)
            torch.cuda.synchronize()
        print(f"{name}\t{statistics.median(times):.3f}", flush=True)
    return 0


def run(env):
    out = subprocess.run([sys.executable, os.path.abspath(__file__)], env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"torch_overhead: the child failed:\n{out.stdout}{out.stderr}")
    return dict((l.split("\t")[0], float(l.split("\t")[1])) for l in out.stdout.splitlines() if "\t" in l)


def parent(lib, rounds):
    if not os.path.exists(lib):
        print(f"torch_overhead: {lib} missing (build first: make)")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        base = dict(os.environ, GT_TORCH_OVERHEAD_CHILD="1", XDG_DATA_HOME=tmp)
        for var in ("GEMMTUNE_DB", "GEMMTUNE_JSON", "GEMMTUNE_PRELOAD", "GEMMTUNE_FALLBACK", "GEMMTUNE_RECORD",
                    "LD_PRELOAD", "DISABLE_ADDMM_CUDA_LT"):
            base.pop(var, None)
        pre = dict(base, LD_PRELOAD=os.path.abspath(lib))
        plain, under = [], []
        for _ in range(rounds):
            plain.append(run(base))
            under.append(run(pre))
    print(f"{'loop':36} {'plain us/call':>14} {'preloaded':>10} {'+/-':>8}   (medians of {rounds} runs each)")
    for name in plain[0]:
        p, u = statistics.median(r[name] for r in plain), statistics.median(r[name] for r in under)
        print(f"{name:36} {p:14.3f} {u:10.3f} {u - p:+8.3f}")
    return 0


if __name__ == "__main__":
    if os.environ.get("GT_TORCH_OVERHEAD_CHILD"):
        sys.exit(child())
    sys.exit(parent(sys.argv[1] if len(sys.argv) > 1 else "build/libgemmtune_cublas.so",
                    int(sys.argv[2]) if len(sys.argv) > 2 else 5))

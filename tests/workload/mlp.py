"""FP32 MLP inference at batch 1 to 64, knowing nothing of gemmtune: the skinny shapes of serving a model.

Three Linear layers with bias (4096 -> 16384 -> 4096 -> 4096, GELU between), TF32 off. For each batch size it
times the forward pass (median of many, CUDA-synchronised) and keeps the outputs, so that runs with and without
gemmtune's drop-in can be compared element by element. Prints one JSON object.
    python3 mlp.py --out mlp.json      (the outputs go to mlp.json.pt; tests/workload/run.sh runs it)
"""
import argparse
import json
import time

import torch
import torch.nn as nn

BATCHES = (1, 2, 4, 8, 16, 32, 64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=50, help="timed forward passes per batch size")
    ap.add_argument("--out", help="also write the JSON here, and the outputs (torch.save) to OUT.pt")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    dev = torch.device("cuda")
    mlp = nn.Sequential(nn.Linear(4096, 16384), nn.GELU(), nn.Linear(16384, 4096), nn.GELU(),
                        nn.Linear(4096, 4096)).to(dev).eval()
    res, outs = dict(batches={}, gpu=torch.cuda.get_device_name(), torch=torch.__version__), {}
    with torch.no_grad():
        for b in BATCHES:
            x = torch.randn(b, 4096, device=dev, generator=torch.Generator(dev).manual_seed(b))
            for _ in range(3):
                y = mlp(x)
            times = []
            for _ in range(a.reps):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                y = mlp(x)
                torch.cuda.synchronize()
                times.append((time.perf_counter() - t0) * 1e3)
            times.sort()
            res["batches"][str(b)] = dict(ms=times[len(times) // 2])
            outs[b] = y.cpu()
    text = json.dumps(res)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
        torch.save(outs, a.out + ".pt")


if __name__ == "__main__":
    main()

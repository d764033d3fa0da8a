"""nn.Linear's forward through the cuBLAS drop-in (docs/PRELOAD.md), on a GPU machine with PyTorch:

    /opt/torch/.venv/bin/python3 tests/preload/torch_linear.py [build/libgemmtune_cublas.so]

It runs itself again under LD_PRELOAD with the preload's log in a file, with no winners (an empty XDG_DATA_HOME)
and GEMMTUNE_FALLBACK=default, so every call gemmtune may serve runs its built-in kernel. The child checks each
Linear against float64 (the FP32 bound, 16 sqrt(K) eps of |x||W|^T + |b|); the parent prints the log's
cublasLtMatmul lines and exits 0 only when the results pass, a bias call was served through cublasLtMatmul and the
TF32 one was forwarded. Without DISABLE_ADDMM_CUDA_LT=1, PyTorch sends a Linear with a bias to cublasLtMatmul
(at::cuda::blas::gemm_and_bias); one without a bias goes to cublasSgemm_v2."""
import os
import subprocess
import sys
import tempfile


def child():
    import torch

    torch.manual_seed(0)
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}", flush=True)
    eps = torch.finfo(torch.float32).eps
    failed = 0

    def case(name, lin, x, tf32=False):
        nonlocal failed
        torch.backends.cuda.matmul.allow_tf32 = tf32
        with torch.no_grad():
            y = lin(x)
            torch.cuda.synchronize()
            xd, wd = x.double(), lin.weight.double()
            ref = xd @ wd.T + (lin.bias.double() if lin.bias is not None else 0)
            bound = xd.abs() @ wd.abs().T + (lin.bias.double().abs() if lin.bias is not None else 0)
        k = x.shape[-1]
        ratio = ((y.double() - ref).abs() / (16 * k**0.5 * eps * bound).clamp_min(1e-300)).max().item()
        ok = ratio <= 1.0 or tf32  # TF32 is cuBLAS's own answer, not held to the FP32 bound
        failed += not ok
        print(f"{name}: {tuple(x.shape)} -> {tuple(y.shape)}: error {ratio:.3g} x the FP32 bound"
              f"{'' if ok else '  FAILED'}", flush=True)

    dev = "cuda"
    case("Linear(256, 512) with bias", torch.nn.Linear(256, 512, device=dev), torch.randn(64, 256, device=dev))
    case("Linear(1000, 1000) with bias", torch.nn.Linear(1000, 1000, device=dev), torch.randn(1000, 1000, device=dev))
    case("Linear(300, 77) with bias, 3-D input", torch.nn.Linear(300, 77, device=dev),
         torch.randn(8, 33, 300, device=dev))
    case("Linear(128, 96) without bias", torch.nn.Linear(128, 96, bias=False, device=dev),
         torch.randn(40, 128, device=dev))
    case("Linear(512, 256) with bias, TF32 allowed", torch.nn.Linear(512, 256, device=dev),
         torch.randn(128, 512, device=dev), tf32=True)
    return 1 if failed else 0


def parent(lib):
    if not os.path.exists(lib):
        print(f"torch_linear: {lib} missing (build first: make)")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "preload.log")
        env = dict(os.environ, GT_TORCH_LINEAR_CHILD="1", LD_PRELOAD=os.path.abspath(lib),
                   GEMMTUNE_PRELOAD_LOG=log, GEMMTUNE_FALLBACK="default", XDG_DATA_HOME=tmp)
        for var in ("GEMMTUNE_DB", "GEMMTUNE_JSON", "GEMMTUNE_PRELOAD", "DISABLE_ADDMM_CUDA_LT",
                    "NVIDIA_TF32_OVERRIDE", "CUBLAS_EMULATE_SINGLE_PRECISION"):
            env.pop(var, None)
        rc = subprocess.call([sys.executable, os.path.abspath(__file__)], env=env)
        text = open(log).read() if os.path.exists(log) else ""
    lines = text.splitlines()
    lt = [l for l in lines if "[cublasLtMatmul" in l]
    print("\n".join(["log, cublasLtMatmul lines:"] + lt + ["log, other lines:"] + [l for l in lines if l not in lt]))
    served_bias = any(" served by " in l and "epilogue=bias]" in l for l in lt)
    tf32_forwarded = any("forwarded to cuBLASLt: cuBLASLt compute type is not pure FP32" in l for l in lt)
    print(f"results {'pass' if rc == 0 else 'FAIL'}; a bias Linear served through cublasLtMatmul: "
          f"{'yes' if served_bias else 'NO'}; the TF32 one forwarded: {'yes' if tf32_forwarded else 'NO'}")
    return 0 if rc == 0 and served_bias and tf32_forwarded else 1


if __name__ == "__main__":
    if os.environ.get("GT_TORCH_LINEAR_CHILD"):
        sys.exit(child())
    sys.exit(parent(sys.argv[1] if len(sys.argv) > 1 else "build/libgemmtune_cublas.so"))

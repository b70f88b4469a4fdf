"""Kernel rates on the GPU at hand, for the step-time model (core/perf/perf_model.cpp):
GEMM TFLOP/s over (M, N, K) and dtype, SDPA forward and forward+backward by sequence and head dim
and backend, elementwise / norm / cross-entropy bandwidth, kernel launch overhead, and the AdamW
step time per parameter. Writes one CSV (tests/data/gpu_kernel_rates.csv, or --out), one row per
measurement: kind, name, shape columns, dtype, median time, the work counted (FLOPs and bytes), the
rate, and the software versions.

Timing: triton.testing.do_bench (CUDA events; L2 flushed before each repetition), median.
Inputs are random normal (never zeros).
"""
import argparse
import csv
import os
import sys
import time

import torch
import torch.nn.functional as F
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory_sweep import versions  # noqa: E402

COLUMNS = ["kind", "name", "dtype", "m", "n", "k", "batch", "heads", "kv_heads", "seq", "head_dim", "backend",
           "elements", "median_ms", "flops", "bytes", "tflops", "gb_per_s", "note"]


def bench(fn, rep=100):
    return do_bench(fn, warmup=25, rep=rep, return_mode="median")


def gemm_rows(rows):
    models = {"1b": (2048, 8192, 32, 8), "3b": (3072, 8192, 24, 8), "8b": (4096, 14336, 32, 8),
              "70b": (8192, 28672, 64, 8)}
    shapes = set()
    for n in (1024, 2048, 4096, 8192, 16384):
        shapes.add(("square", n, n, n))
    for name, (h, f, a, kv) in models.items():
        d = h // a
        for t in (2048, 8192, 16384):
            for lin, (out_f, in_f) in {"wq": (h, h), "wkv": (kv * d, h), "wo": (h, h), "w1": (f, h), "w2": (h, f),
                                       "output": (128256, h)}.items():
                shapes.add((f"{name}.{lin}.fwd", t, out_f, in_f))
                if t == 8192:
                    shapes.add((f"{name}.{lin}.dgrad", t, in_f, out_f))
                    shapes.add((f"{name}.{lin}.wgrad", out_f, in_f, t))
    for label, m, n, k in sorted(shapes, key=lambda x: (x[1] * x[2] * x[3], x[0])):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        ms = bench(lambda: torch.mm(a, b.t()))
        fl = 2.0 * m * n * k
        rows.append(dict(kind="gemm", name=label, dtype="bf16", m=m, n=n, k=k, median_ms=ms, flops=fl,
                         bytes=2 * (m * k + n * k + m * n), tflops=fl / ms / 1e9))
        if label == "square" or label.endswith(".fwd") and m == 8192:
            try:
                a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
                one = torch.ones((), device="cuda", dtype=torch.float32)
                ms8 = bench(lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
                rows.append(dict(kind="gemm", name=label, dtype="fp8_e4m3", m=m, n=n, k=k, median_ms=ms8, flops=fl,
                                 bytes=m * k + n * k + 2 * m * n, tflops=fl / ms8 / 1e9,
                                 note="torch._scaled_mm, tensor-wise scales, bf16 out"))
            except Exception as e:  # noqa: BLE001
                rows.append(dict(kind="gemm", name=label, dtype="fp8_e4m3", m=m, n=n, k=k, note=str(e)[:120]))
        if label == "square" and m in (4096, 8192):
            a32, b32 = a.float(), b.float()
            for tf32 in (False, True):
                torch.backends.cuda.matmul.allow_tf32 = tf32
                ms32 = bench(lambda: torch.mm(a32, b32.t()))
                rows.append(dict(kind="gemm", name=label, dtype="tf32" if tf32 else "fp32", m=m, n=n, k=k,
                                 median_ms=ms32, flops=fl, bytes=4 * (m * k + n * k + m * n), tflops=fl / ms32 / 1e9))
            torch.backends.cuda.matmul.allow_tf32 = False
            del a32, b32
        del a, b
        print(f"gemm {label:24s} {m:6d} {n:6d} {k:6d} {rows[-1].get('tflops') or 0:7.1f} TFLOP/s", flush=True)


def head_gemm_rows(rows):
    """The LM head's three GEMMs as F.linear and its backward issue them (forward x W^T, dgrad
    dy W, wgrad dy^T x), by vocabulary: 50257 (GPT-2's, odd), 50260 (a multiple of 4), 50272 (of 8),
    50304 (of 64, nanoGPT's padding). cuBLAS's Hopper kernels need 16-byte-aligned leading
    dimensions; a bf16 dimension that is not a multiple of 8 falls back to older kernels."""
    for h in (768, 2048, 4096):
        for t in (8192, 32768):
            for v in (50257, 50260, 50272, 50304):
                x = torch.randn(t, h, device="cuda", dtype=torch.bfloat16)
                w = torch.randn(v, h, device="cuda", dtype=torch.bfloat16)
                dy = torch.randn(t, v, device="cuda", dtype=torch.bfloat16)
                fl = 2.0 * t * h * v
                for label, fn, (m, n, k) in (("head.fwd", lambda: torch.mm(x, w.t()), (t, v, h)),
                                             ("head.dgrad", lambda: torch.mm(dy, w), (t, h, v)),
                                             ("head.wgrad", lambda: torch.mm(dy.t(), x), (v, h, t))):
                    ms = bench(fn)
                    rows.append(dict(kind="gemm", name=label, dtype="bf16", m=m, n=n, k=k, median_ms=ms, flops=fl,
                                     bytes=2 * (m * k + n * k + m * n), tflops=fl / ms / 1e9,
                                     note=f"vocab {v} (mod 8 = {v % 8})"))
                    print(f"gemm {label:10s} h{h:5d} t{t:6d} v{v:6d} {fl / ms / 1e9:7.1f} TFLOP/s", flush=True)
                del x, w, dy


def attention_rows(rows):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    for backend, heads, head_dim in (("flash", 32, 128), ("flash", 32, 64), ("flash", 16, 256),
                                     ("cudnn", 32, 128), ("efficient", 32, 128)):
        for seq in (512, 1024, 2048, 4096, 8192, 16384, 32768):
            batch = max(1, 16384 // seq)
            q, k, v = (torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                       for _ in range(3))
            fwd_flops = 4.0 * batch * heads * seq * seq * head_dim / 2  # causal: half the square
            try:
                with sdpa_kernel([backends[backend]]):
                    ms_f = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
                    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    g = torch.randn_like(out)

                    def fb():  # autograd.grad: no accumulation into q/k/v.grad timed with it
                        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                        torch.autograd.grad(o, (q, k, v), g)
                    ms_fb = bench(fb)
                io = 2 * 4 * batch * heads * seq * head_dim
                rows.append(dict(kind="attention", name="sdpa_fwd", dtype="bf16", batch=batch, heads=heads, seq=seq,
                                 head_dim=head_dim, backend=backend, median_ms=ms_f, flops=fwd_flops, bytes=io,
                                 tflops=fwd_flops / ms_f / 1e9, note="causal"))
                rows.append(dict(kind="attention", name="sdpa_fwd_bwd", dtype="bf16", batch=batch, heads=heads,
                                 seq=seq, head_dim=head_dim, backend=backend, median_ms=ms_fb, flops=3.5 * fwd_flops,
                                 bytes=3 * io, tflops=3.5 * fwd_flops / ms_fb / 1e9,
                                 note="causal; backward counted as 2.5x forward FLOPs (FlashAttention-2 paper)"))
                print(f"sdpa {backend:9s} d{head_dim:3d} s{seq:6d} fwd {fwd_flops / ms_f / 1e9:6.1f} "
                      f"fwd+bwd {3.5 * fwd_flops / ms_fb / 1e9:6.1f} TFLOP/s", flush=True)
            except Exception as e:  # noqa: BLE001
                rows.append(dict(kind="attention", name="sdpa_fwd", dtype="bf16", batch=batch, heads=heads, seq=seq,
                                 head_dim=head_dim, backend=backend, note=str(e)[:120]))
            del q, k, v


def bandwidth_rows(rows):
    n = 256 * 2**20  # elements
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    xf = torch.randn(n, device="cuda", dtype=torch.float32)
    cases = [
        ("copy_bf16", lambda: x.clone(), 4 * n),
        ("add_bf16", lambda: x + y, 6 * n),
        ("mul_bf16", lambda: x * y, 6 * n),
        ("silu_bf16", lambda: F.silu(x), 4 * n),
        ("cast_bf16_to_fp32", lambda: x.float(), 6 * n),
        ("cast_fp32_to_bf16", lambda: xf.to(torch.bfloat16), 6 * n),
        ("copy_fp32", lambda: xf.clone(), 8 * n),
    ]
    for name, fn, nbytes in cases:
        ms = bench(fn)
        rows.append(dict(kind="bandwidth", name=name, dtype="bf16", elements=n, median_ms=ms, bytes=nbytes,
                         gb_per_s=nbytes / ms / 1e6))
        print(f"bw {name:24s} {nbytes / ms / 1e6:8.0f} GB/s", flush=True)
    for h in (2048, 4096, 8192):
        t = 16384
        xh = torch.randn(t, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        w = torch.ones(h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        ms = bench(lambda: F.rms_norm(xh, (h,), w, 1e-5))
        rows.append(dict(kind="bandwidth", name="rms_norm_fwd", dtype="bf16", m=t, n=h, elements=t * h, median_ms=ms,
                         bytes=4 * t * h, gb_per_s=4 * t * h / ms / 1e6, note="F.rms_norm eager"))
        g = torch.randn(t, h, device="cuda", dtype=torch.bfloat16)

        def fb():
            torch.autograd.grad(F.rms_norm(xh, (h,), w, 1e-5), (xh, w), g)
        ms = bench(fb)
        rows.append(dict(kind="bandwidth", name="rms_norm_fwd_bwd", dtype="bf16", m=t, n=h, elements=t * h,
                         median_ms=ms, bytes=10 * t * h, gb_per_s=10 * t * h / ms / 1e6, note="F.rms_norm eager"))
        a1 = torch.randn(t, 4 * h, device="cuda", dtype=torch.bfloat16)
        a3 = torch.randn(t, 4 * h, device="cuda", dtype=torch.bfloat16)
        ms = bench(lambda: F.silu(a1) * a3)
        nb = 2 * t * 4 * h * 5
        rows.append(dict(kind="bandwidth", name="swiglu_eager_fwd", dtype="bf16", m=t, n=4 * h, elements=t * 4 * h,
                         median_ms=ms, bytes=nb, gb_per_s=nb / ms / 1e6, note="silu then mul: two kernels"))
        print(f"bw rms/swiglu h{h}", flush=True)
    for t in (4096, 16384):
        v = 128256
        logits = torch.randn(t, v, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        labels = torch.randint(0, v, (t,), device="cuda")

        def ce():
            torch.autograd.grad(F.cross_entropy(logits.float(), labels), (logits,))
        ms = bench(ce, rep=50)
        rows.append(dict(kind="bandwidth", name="cross_entropy_eager_fwd_bwd", dtype="bf16", m=t, n=v, elements=t * v,
                         median_ms=ms, bytes=2 * t * v * 2, gb_per_s=4 * t * v / ms / 1e6,
                         note="F.cross_entropy(logits.float()) fwd+bwd; bytes = bf16 logits read + grad written"))
        cce = torch.compile(lambda lg, lb: F.cross_entropy(lg.float(), lb))

        def cce_fb():
            torch.autograd.grad(cce(logits, labels), (logits,))
        ms = bench(cce_fb, rep=50)
        rows.append(dict(kind="bandwidth", name="cross_entropy_compiled_fwd_bwd", dtype="bf16", m=t, n=v,
                         elements=t * v, median_ms=ms, bytes=4 * t * v, gb_per_s=4 * t * v / ms / 1e6,
                         note="torch.compile'd loss fwd+bwd"))
        print(f"bw ce t{t}", flush=True)


def launch_rows(rows):
    x = torch.randn(16, device="cuda")
    for _ in range(100):
        x.add_(1.0)
    torch.cuda.synchronize()
    n = 5000
    t0 = time.perf_counter()
    for _ in range(n):
        x.add_(1.0)
    torch.cuda.synchronize()
    per = (time.perf_counter() - t0) / n
    rows.append(dict(kind="launch", name="eager_op_issue", median_ms=per * 1e3,
                     note="host time per tiny eager op (x.add_), 5000 back to back, one sync"))
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            x.add_(1.0)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(1000):
            x.add_(1.0)
    ms = bench(lambda: g.replay())
    rows.append(dict(kind="launch", name="graph_kernel", median_ms=ms / 1000,
                     note="device time per tiny kernel inside a CUDA graph replay of 1000"))
    t0 = time.perf_counter()
    for _ in range(1000):
        torch.cuda.synchronize()
    rows.append(dict(kind="launch", name="synchronize", median_ms=(time.perf_counter() - t0),
                     note="host time per torch.cuda.synchronize() on an idle device"))
    print(f"launch eager {per * 1e6:.2f} us, graph {ms:.3f} us", flush=True)


def optimizer_rows(rows):
    for dtype, impl in ((torch.float32, "fused"), (torch.float32, "foreach"), (torch.bfloat16, "fused"),
                        (torch.bfloat16, "foreach")):
        params = [torch.nn.Parameter(torch.randn(8 * 2**20, device="cuda", dtype=dtype)) for _ in range(64)]
        for p in params:
            p.grad = torch.randn_like(p)
        opt = torch.optim.AdamW(params, lr=1e-4, fused=impl == "fused", foreach=impl == "foreach")
        opt.step()
        ms = bench(opt.step, rep=200)
        n = sum(p.numel() for p in params)
        es = params[0].element_size()
        nb = n * (es * 2 + es * 2 * 2 + es)  # read p, g, m, v; write p, m, v
        rows.append(dict(kind="optimizer", name=f"adamw_{impl}", dtype=str(dtype).replace("torch.", ""),
                         elements=n, median_ms=ms, bytes=nb, gb_per_s=nb / ms / 1e6,
                         note=f"64 tensors of 8M; ns per parameter {ms * 1e6 / n:.4f}"))
        print(f"adamw {impl} {dtype}: {ms * 1e6 / n:.3f} ns/param", flush=True)
        del params, opt
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                                                  "gpu_kernel_rates.csv"))
    ap.add_argument("--only", default="gemm,head_gemm,attention,bandwidth,launch,optimizer")
    args = ap.parse_args()
    torch.manual_seed(0)
    env = versions()
    rows = []
    for part in args.only.split(","):
        t0 = time.time()
        try:
            globals()[part + "_rows"](rows)
        except Exception as e:  # noqa: BLE001
            rows.append(dict(kind=part, name="failed", note=f"{type(e).__name__}: {e}"[:200]))
            print(f"{part} failed: {e}", flush=True)
        print(f"{part}: {time.time() - t0:.0f} s", flush=True)
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS + list(env.keys()))
            w.writeheader()
            for r in rows:
                r = dict(r)
                for key in ("median_ms", "tflops", "gb_per_s"):
                    if isinstance(r.get(key), float):
                        r[key] = f"{r[key]:.6g}"
                r.update(env)
                w.writerow(r)


if __name__ == "__main__":
    main()

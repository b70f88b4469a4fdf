"""Profiles one harness row's steady training step with torch.profiler: where the GPU time goes
(kernels grouped by kind) and how many ops the host dispatches per step, so that the step-time
model's kernel and host terms can be checked one by one. Usage:
    python3 tests/gpu/profile_row.py ROW_ID [ROW_ID ...] --out DIR
Writes DIR/profile_<id>.txt (the profiler's tables) and appends one line per row to
DIR/gpu_profiles.csv: id, step_ms, gpu_busy_ms, kernels, aten_ops (top-level, per step), and GPU
milliseconds by kernel group.
"""
import argparse
import csv
import json
import os
import re
import sys
import time

import torch
import torch.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import memory_sweep  # noqa: E402
from llama import cross_entropy_loss  # noqa: E402
from train_row import build, mixed_precision, one_rank_process_group, sdpa_context  # noqa: E402

GROUPS = [("gemm", r"gemm|cutlass|sm90_xmma|sm80_xmma|cublas|nvjet|ampere_|hopper_|wgmma"),
          ("attention", r"flash|fmha|attention|cudnn"),
          ("norm", r"norm"),
          ("softmax_ce", r"softmax|nll|cross_entropy|log_softmax"),
          ("optimizer", r"adam|multi_tensor"),
          ("reduce", r"reduce|sum"),
          ("copy_cast", r"copy|cast|cat|to_copy|direct_copy"),
          ("elementwise", r"elementwise|vectorized|unrolled|gelu|silu|mul|add"),
          ("nccl", r"nccl")]


def group_of(name):
    low = name.lower()
    for g, pat in GROUPS:
        if re.search(pat, low):
            return g
    return "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ids", nargs="+")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(os.path.join(HERE, "models.json")) as f:
        models = json.load(f)
    by_id = {r["id"]: r for r in memory_sweep.rows()}
    rid = args.ids[0]
    if len(args.ids) > 1:  # one process per row (fresh CUDA context and process group)
        import subprocess
        for r in args.ids:
            penv = dict(os.environ, PYTORCH_ALLOC_CONF="expandable_segments:True")
            subprocess.run([sys.executable, __file__, r, "--out", args.out], env=penv, timeout=300)
        return
    row = by_id[rid]
    torch.cuda.set_device(0)
    if row["wrapper"] != "plain":
        one_rank_process_group()
    a, model, inner = build(row, models)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4, fused=True)
    loss_fn = torch.compile(cross_entropy_loss) if row["loss"] == "compiled" else cross_entropy_loss
    b, s = row["micro_batch"], row["seq"]
    amp = mixed_precision(row)
    tokens = torch.randint(0, a.vocab, (b, s), device="cuda")
    labels = torch.randint(0, a.vocab, (b, s), device="cuda")

    def step():
        for _ in range(row.get("grad_accum", 1)):
            with amp:
                pred = model(tokens)
                loss = loss_fn(pred, labels)
            del pred
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    with sdpa_context(row["attention"]):
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        step_ms = (time.perf_counter() - t0) / 3 * 1e3
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            step()
            torch.cuda.synchronize()
    events = prof.key_averages()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    by_group = {}
    for e in kernels:
        g = group_of(e.name)
        by_group[g] = by_group.get(g, 0.0) + e.device_time / 1e3
    gpu_busy = sum(by_group.values())
    # Top-level aten ops the host dispatched (an op called from inside another is not counted).
    cpu = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CPU and e.name.startswith("aten::")]
    top = [e for e in cpu if not (e.cpu_parent and e.cpu_parent.name.startswith("aten::"))]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"profile_{rid}.txt"), "w") as f:
        f.write(f"{rid}: step {step_ms:.2f} ms, GPU busy {gpu_busy:.2f} ms, {len(kernels)} kernels, {len(top)} top-level aten ops\n")
        f.write(json.dumps({k: round(v, 3) for k, v in sorted(by_group.items(), key=lambda kv: -kv[1])}) + "\n")
        f.write(events.table(sort_by="cuda_time_total", row_limit=45, max_name_column_width=70))
        f.write(events.table(sort_by="count", row_limit=40, max_name_column_width=50))
    path = os.path.join(args.out, "gpu_profiles.csv")
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.writer(f)
        cols = [g for g, _ in GROUPS] + ["other"]
        if new:
            w.writerow(["id", "gpu", "torch", "step_ms", "gpu_busy_ms", "kernels", "aten_ops"] + [c + "_ms" for c in cols])
        w.writerow([rid, torch.cuda.get_device_name(0), torch.__version__, round(step_ms, 3), round(gpu_busy, 3),
                    len(kernels), len(top)] + [round(by_group.get(c, 0.0), 3) for c in cols])
    print(f"{rid}: step {step_ms:.2f} ms, GPU busy {gpu_busy:.2f} ms, {len(kernels)} kernels, {len(top)} aten ops "
          + json.dumps({k: round(v, 2) for k, v in sorted(by_group.items(), key=lambda kv: -kv[1])}), flush=True)
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

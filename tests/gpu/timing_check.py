"""Does the harness's own bookkeeping slow the steps it times? Runs one row's training step four ways
in one process and prints the median step time of each (steps 3-12):
  harness   train_row.py's loop: synchronize before each step, five memory-stat marks, a snapshot
  nomarks   synchronize before each step, no marks or snapshot
  nosync    back to back, no synchronize between steps (as a training loop runs), timed over 10
  profile   back to back, as profile_row.py times it
Usage: python3 tests/gpu/timing_check.py ROW_ID [ROW_ID ...]   (one process per row)
"""
import json
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import memory_sweep  # noqa: E402
from llama import cross_entropy_loss  # noqa: E402
from train_row import build, mixed_precision, one_rank_process_group, sdpa_context  # noqa: E402


def main():
    ids = sys.argv[1:]
    if len(ids) > 1:
        for rid in ids:
            subprocess.run([sys.executable, __file__, rid], env=dict(os.environ, PYTORCH_ALLOC_CONF="expandable_segments:True"),
                           timeout=300)
        return
    row = {r["id"]: r for r in memory_sweep.rows()}[ids[0]]
    with open(os.path.join(HERE, "models.json")) as f:
        models = json.load(f)
    torch.cuda.set_device(0)
    if row["wrapper"] != "plain":
        one_rank_process_group()
    a, model, inner = build(row, models)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4, betas=(0.9, 0.95),
                            weight_decay=0.1, fused=True)
    b, s = row["micro_batch"], row["seq"]
    amp = mixed_precision(row)
    g = torch.Generator(device="cuda").manual_seed(0)

    def step(marks):
        tokens = torch.randint(0, a.vocab, (b, s), device="cuda", generator=g)
        labels = torch.randint(0, a.vocab, (b, s), device="cuda", generator=g)
        for _ in range(row.get("grad_accum", 1)):
            with amp:
                pred = model(tokens)
            marks()
            with amp:
                loss = cross_entropy_loss(pred, labels)
            del pred
            marks()
            loss.backward()
            del loss
            marks()
        opt.step()
        marks()
        opt.zero_grad(set_to_none=True)
        marks()

    def mark():
        torch.cuda.max_memory_allocated()
        torch.cuda.max_memory_reserved()
        torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()

    out = {}
    with sdpa_context(row["attention"]):
        for _ in range(3):
            step(lambda: None)
        for name, marks, snapshot in (("harness", mark, True), ("nomarks", lambda: None, False)):
            times = []
            for _ in range(10):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                step(marks)
                torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
                if snapshot:
                    torch.cuda.memory_snapshot()
            out[name] = statistics.median(times) * 1e3
        for name in ("nosync", "profile"):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(10):
                step(lambda: None)
            torch.cuda.synchronize()
            out[name] = (time.perf_counter() - t0) / 10 * 1e3
    tokens = b * s * row.get("grad_accum", 1)
    print(f"{ids[0]:20s} " + "  ".join(f"{k} {v:8.2f} ms ({tokens / v * 1e3:9.0f} tok/s)" for k, v in out.items()), flush=True)
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

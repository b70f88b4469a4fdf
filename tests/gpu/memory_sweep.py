"""Runs the measured training configurations, one process each, and writes
tests/data/gpu_memory_measured.csv (or --out): configuration, software versions and every measured
byte count, one row per configuration. `--part` picks a slice (the device lease runs it in parts);
`--only` picks rows by id. Rows whose process errs are written with status=error and the message.
"""
import argparse
import csv
import datetime
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

BASE = dict(model="llama3.1-8b", layers=4, seq=4096, micro_batch=1, grad_accum=1, wrapper="fsdp2",
            precision="bf16", recompute="none", attention="flash", loss="eager", compile=0,
            allocator="expandable_segments", optimizer="adamw", optimizer_impl="fused", snapshot=1)


def rows():
    out = []

    def add(part, rid, **kw):
        r = dict(BASE)
        r.update(kw)
        r["id"], r["part"] = rid, part
        out.append(r)

    # Part 1: FSDP2 world size 1, eager, torchtitan's defaults unless named.
    for layers in (2, 4, 8):
        add(1, f"8b-l{layers}", layers=layers)
    for seq in (512, 1024, 2048, 8192, 16384, 32768):
        add(1, f"8b-l4-s{seq}", seq=seq)
    for mb in (2, 4, 8):
        add(1, f"8b-l4-s2048-mb{mb}", seq=2048, micro_batch=mb)
    add(1, "8b-l4-s8192-mb2", seq=8192, micro_batch=2)
    for rc in ("selective", "full"):
        for seq in (4096, 16384):
            add(1, f"8b-l4-s{seq}-{rc}", seq=seq, recompute=rc)
    add(1, "8b-l8-s8192-full", layers=8, seq=8192, recompute="full")
    add(1, "8b-l2-s8192-selective", layers=2, seq=8192, recompute="selective")
    add(1, "8b-l2-s32768-full", layers=2, seq=32768, recompute="full")
    for loss in ("compiled", "chunked"):
        for seq in (4096, 16384):
            add(1, f"8b-l4-s{seq}-loss-{loss}", seq=seq, loss=loss)
    add(1, "8b-l4-pure", precision="pure_bf16")
    add(1, "8b-l8-s8192-full-pure", layers=8, seq=8192, recompute="full", precision="pure_bf16")
    for rid, kw in (("8b-l4", {}), ("8b-l4-s16384", dict(seq=16384)), ("8b-l4-s2048-mb4", dict(seq=2048, micro_batch=4)),
                    ("8b-l4-s16384-full", dict(seq=16384, recompute="full"))):
        add(1, rid + "-caching", allocator="caching", **kw)
    add(1, "8b-l4-foreach", optimizer_impl="foreach")
    add(1, "8b-l8-foreach", layers=8, optimizer_impl="foreach")
    for seq in (1024, 2048, 4096):
        add(1, f"8b-l4-s{seq}-math", seq=seq, attention="math")
    add(1, "8b-l4-efficient", attention="efficient")
    add(1, "8b-l4-cudnn", attention="cudnn")
    one = dict(model="llama3.2-1b", layers=None)
    for seq in (512, 2048, 4096, 8192, 16384):
        add(1, f"1b-s{seq}", seq=seq, **one)
    add(1, "1b-s2048-mb4", seq=2048, micro_batch=4, **one)
    add(1, "1b-s8192-selective", seq=8192, recompute="selective", **one)
    add(1, "1b-s8192-full", seq=8192, recompute="full", **one)
    add(1, "1b-pure", precision="pure_bf16", **one)
    add(1, "1b-s2048-mb4-caching", seq=2048, micro_batch=4, allocator="caching", **one)
    three = dict(model="llama3.2-3b", layers=None)
    add(1, "3b-s2048", seq=2048, **three)
    add(1, "3b-s2048-mb2", seq=2048, micro_batch=2, **three)
    add(1, "3b-s4096-full", recompute="full", **three)
    add(1, "3b-s8192-selective", seq=8192, recompute="selective", **three)
    add(1, "3b-pure", precision="pure_bf16", **three)
    seventy = dict(model="llama3.1-70b")
    add(1, "70b-l1", layers=1, **seventy)
    add(1, "70b-l1-s16384", layers=1, seq=16384, **seventy)
    add(1, "70b-l2-full", layers=2, recompute="full", **seventy)
    add(1, "70b-l1-s8192-pure", layers=1, seq=8192, precision="pure_bf16", **seventy)
    # Part 2: DDP with one rank (autocast bf16 over fp32 params), gradient accumulation, compile.
    add(2, "ddp-8b-l2", layers=2, wrapper="ddp")
    add(2, "ddp-8b-l4", wrapper="ddp")
    add(2, "ddp-8b-l4-s8192-full", seq=8192, recompute="full", wrapper="ddp")
    add(2, "ddp-1b", wrapper="ddp", **one)
    add(2, "ddp-1b-pure", wrapper="ddp", precision="pure_bf16", **one)
    add(2, "8b-l4-ga2", grad_accum=2)
    add(2, "1b-ga4-s2048", seq=2048, grad_accum=4, **one)
    add(2, "8b-l4-compile", compile=1, loss="compiled")
    add(2, "8b-l4-compile-selective", compile=1, loss="compiled", recompute="selective")
    add(2, "8b-l4-s16384-compile-full", seq=16384, compile=1, loss="compiled", recompute="full")
    add(2, "1b-compile", compile=1, loss="compiled", **one)
    # Part 3: LoRA on a plain model. (Every row records the per-stream pools at its peak; the
    # committed CSV's *-pools rows are the repeats that first did, at harness commit 131bef4.)
    lora = dict(wrapper="plain", precision="pure_bf16", lora_rank=16, lora_targets="all-linear", layers=None)
    add(3, "lora-8b-s2048", model="llama3.1-8b", seq=2048, **lora)
    add(3, "lora-8b-s4096-mb2-full", model="llama3.1-8b", micro_batch=2, recompute="full", **lora)
    add(3, "lora-8b-s2048-r64-attn", model="llama3.1-8b", seq=2048, **dict(lora, lora_rank=64, lora_targets="attention"))
    add(3, "lora-3b-s4096", model="llama3.2-3b", **lora)
    add(3, "lora-1b-s4096-mb4", model="llama3.2-1b", micro_batch=4, **lora)
    add(3, "lora-8b-s8192-selective", model="llama3.1-8b", seq=8192, recompute="selective", **lora)
    # Part 4: GPT-3-shaped models (tests/gpu/gpt.py) in the small-model regime: DDP with one rank
    # and autocast bf16 (Megatron-DeepSpeed's mixed precision keeps fp32 master weights too), flash
    # SDPA, at the micro-batches and accumulation counts where a per-kernel floor shows.
    gpt = dict(wrapper="ddp", layers=None, seq=2048, steps=10)
    for m in ("125m", "350m", "760m", "1.3b", "2.7b"):
        add(4, f"gpt-{m}", model=f"gpt3-{m}", **gpt)
    for m in ("125m", "350m", "1.3b"):
        for mb in (4, 16):
            add(4, f"gpt-{m}-mb{mb}", model=f"gpt3-{m}", **dict(gpt, micro_batch=mb))
    add(4, "gpt-125m-mb8-s1024", model="gpt3-125m", **dict(gpt, micro_batch=8, seq=1024))
    add(4, "gpt-125m-ga8", model="gpt3-125m", **dict(gpt, grad_accum=8))
    add(4, "gpt-1.3b-ga4", model="gpt3-1.3b", **dict(gpt, grad_accum=4))
    add(4, "gpt-350m-fsdp2", model="gpt3-350m", **dict(gpt, wrapper="fsdp2"))
    add(4, "gpt-1.3b-fsdp2-mb4", model="gpt3-1.3b", **dict(gpt, wrapper="fsdp2", micro_batch=4))
    add(4, "gpt-1.3b-mb4-full", model="gpt3-1.3b", **dict(gpt, micro_batch=4, recompute="full"))
    add(4, "gpt-350m-mb8-math", model="gpt3-350m", **dict(gpt, micro_batch=8, attention="math"))
    add(4, "gpt-350m-mb8-compile", model="gpt3-350m", **dict(gpt, micro_batch=8, compile=1, loss="compiled"))
    # Part 5: the caching allocator (HF Trainer's and torchtune's default) under a replicated model
    # whose gradients are freed every step, and issue 11's single-GPU full fine-tunes of Llama 3.2 3B
    # at seq 1024, micro-batch 4, pure bf16 and mixed precision (fp32 weights under autocast), as a
    # plain loop (no wrapper), whose peaks hold on any card they fit.
    for rid, kw in (("ddp-1b", dict(model="llama3.2-1b", layers=None, wrapper="ddp")),
                    ("ddp-8b-l4", dict(wrapper="ddp")),
                    ("gpt-350m", dict(model="gpt3-350m", **gpt)),
                    ("gpt-760m", dict(model="gpt3-760m", **gpt)),
                    ("gpt-1.3b-mb4", dict(model="gpt3-1.3b", **dict(gpt, micro_batch=4))),
                    ("gpt-125m-mb16", dict(model="gpt3-125m", **dict(gpt, micro_batch=16)))):
        add(5, rid + "-caching", allocator="caching", **kw)
    ft = dict(model="llama3.2-3b", layers=None, wrapper="plain", seq=1024, micro_batch=4, allocator="caching")
    add(5, "ft-3b-s1024-mb4-pure", precision="pure_bf16", **ft)
    add(5, "ft-3b-s1024-mb4-mixed", precision="bf16", **ft)
    return out


def versions():
    import torch
    props = torch.cuda.get_device_properties(0)
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    except Exception:
        driver = "unknown"
    return dict(gpu=props.name, gpu_memory_bytes=props.total_memory, sms=props.multi_processor_count,
                driver=driver, cuda=torch.version.cuda, torch=torch.__version__,
                harness_commit=os.environ.get("MESHFIT_HARNESS_COMMIT", "unknown"),
                date=datetime.date.today().isoformat())


CONFIG_COLUMNS = ["id", "model", "layers", "seq", "micro_batch", "grad_accum", "wrapper", "precision", "recompute",
                  "attention", "loss", "compile", "allocator", "optimizer", "optimizer_impl", "lora_rank", "lora_targets"]
ENV_COLUMNS = ["gpu", "gpu_memory_bytes", "sms", "driver", "cuda", "torch", "harness_commit", "date"]
PHASE_COLUMNS = [f"{p}_{k}" for p in ("fwd", "loss", "bwd", "opt", "zero") for k in ("alloc", "peak")]
STEP_COLUMNS = PHASE_COLUMNS + ["peak_alloc", "peak_reserved", "device_used", "reserved_end", "nonpytorch"]
RESULT_COLUMNS = (["status", "parameters", "trainable_parameters", "context_bytes", "after_pg_nonpytorch_bytes", "states_allocated",
                   "states_reserved"] + ["s1_" + c for c in STEP_COLUMNS] + ["sn_" + c for c in STEP_COLUMNS] +
                  ["s1_pools", "sn_pools", "step_time_s", "first_step_time_s", "tokens_per_s", "model_tflops", "oom_step", "oom_phase",
                   "oom_peak_alloc", "oom_peak_reserved", "wall_s", "error"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "..", "data", "gpu_memory_measured.csv"))
    ap.add_argument("--part", type=int, default=0, help="0 = all parts")
    ap.add_argument("--only", default="", help="comma-separated row ids")
    ap.add_argument("--budget-s", type=float, default=1e9, help="stop starting rows after this many seconds")
    args = ap.parse_args()
    todo = [r for r in rows() if (not args.part or r["part"] == args.part)]
    if args.only:
        keep = set(args.only.split(","))
        todo = [r for r in todo if r["id"] in keep]
    env = versions()
    results = []
    start = time.time()
    for i, r in enumerate(todo):
        if time.time() - start > args.budget_s:
            print(f"budget spent: {len(todo) - i} rows not run", flush=True)
            break
        penv = dict(os.environ)
        penv.pop("PYTORCH_ALLOC_CONF", None)
        penv.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        if r["allocator"] == "expandable_segments":
            penv["PYTORCH_ALLOC_CONF"] = "expandable_segments:True"
        t0 = time.time()
        timeout = 300 if r["compile"] else 120
        try:
            p = subprocess.run([sys.executable, os.path.join(HERE, "train_row.py"), json.dumps(r)], env=penv,
                               capture_output=True, text=True, timeout=timeout)
            lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
            res = json.loads(lines[-1][7:]) if lines else {"status": "error", "error": p.stderr.strip()[-300:]}
            if res.get("status") == "error" and p.stderr:
                print(p.stderr[-2000:], flush=True)
        except subprocess.TimeoutExpired:
            res = {"status": "error", "error": f"timeout after {timeout} s"}
        res["wall_s"] = round(time.time() - t0, 1)
        row = {k: r.get(k) for k in CONFIG_COLUMNS}
        row.update(env)
        row.update({k: res.get(k) for k in RESULT_COLUMNS})
        results.append(row)
        gib = lambda x: f"{x / 2**30:7.2f}" if isinstance(x, (int, float)) else "      -"
        print(f"{r['id']:32s} {res['status']:5s} alloc {gib(res.get('sn_peak_alloc'))} reserved "
              f"{gib(res.get('sn_peak_reserved'))} used {gib(res.get('sn_device_used'))} "
              f"tok/s {res.get('tokens_per_s') or 0:9.0f} {res['wall_s']:6.1f}s {res.get('error') or ''}", flush=True)
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=CONFIG_COLUMNS + ENV_COLUMNS + RESULT_COLUMNS)
            w.writeheader()
            w.writerows(results)
        if len(results) == 3 and all(x["status"] == "error" for x in results):
            print("the first three rows failed: stopping", flush=True)
            sys.exit(1)


if __name__ == "__main__":
    main()

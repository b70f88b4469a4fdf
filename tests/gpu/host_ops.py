"""Host dispatch cost of one transformer layer's forward and backward, in units of one tiny eager op
(x.add_) timed in the same process, so that the figure carries from one host to another. Each case
builds a model at tiny width (the GPU finishes every kernel long before the host issues the next),
runs forward + backward at 8 and at 16 layers, and takes the difference over 8 layers. Cases: the
Llama block (tests/gpu/llama.py) and the GPT-3 block (tests/gpu/gpt.py), bf16 parameters or fp32
parameters under autocast, plain or wrapped in DDP or FSDP2 (world size 1). Prints one line per case
and writes --out (CSV).
"""
import argparse
import csv
import datetime
import os
import sys
import time
from contextlib import nullcontext

import torch
import torch.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gpt import GptArgs, GptTransformer  # noqa: E402
from llama import Args, Transformer  # noqa: E402
from train_row import one_rank_process_group  # noqa: E402

LLAMA = dict(hidden=256, layers=8, heads=4, kv_heads=2, head_dim=0, ffn=512, vocab=1024, tied_embeddings=False,
             norm="rmsnorm", mlp="swiglu", linear_bias=False)
GPT = dict(hidden=256, layers=8, heads=4, kv_heads=4, head_dim=0, ffn=1024, vocab=1024, tied_embeddings=True,
           norm="layernorm", mlp="gelu", linear_bias=True)


def eager_op_us():
    x = torch.zeros(16, device="cuda")
    for _ in range(200):
        x.add_(1)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(5000):
        x.add_(1)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / 5000 * 1e6


def step_us(kind, layers, precision, wrapper, seq=64, iters=30):
    spec = dict(LLAMA if kind == "llama" else GPT, layers=layers)
    a = (Args if kind == "llama" else GptArgs)(spec)
    with torch.device("cuda"):
        model = (Transformer if kind == "llama" else GptTransformer)(a, seq)
    model = model.to(torch.bfloat16 if precision == "bf16" else torch.float32)
    model.init_weights("cuda")
    if wrapper == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        model = DistributedDataParallel(model, device_ids=[0])
    elif wrapper == "fsdp2":
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for block in model.layers.values():
            fully_shard(block, mp_policy=mp)
        fully_shard(model, mp_policy=mp)
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if precision == "autocast" else nullcontext()
    tokens = torch.randint(0, a.vocab, (1, seq), device="cuda")

    def once():
        with amp:
            out = model(tokens)
        out.float().sum().backward()
        for p in model.parameters():
            p.grad = None

    for _ in range(5):
        once()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        once()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "..", "data", "gpu_host_ops.csv"))
    args = ap.parse_args()
    torch.cuda.set_device(0)
    one_rank_process_group()
    op = eager_op_us()
    rows = []
    for kind in ("llama", "gpt"):
        for precision, wrapper in (("bf16", "plain"), ("autocast", "plain"), ("autocast", "ddp"), ("bf16", "ddp"),
                                   ("fp32", "fsdp2")):
            per_layer = (step_us(kind, 16, precision, wrapper) - step_us(kind, 8, precision, wrapper)) / 8
            rows.append(dict(block=kind, precision="autocast" if precision == "autocast" else precision,
                             wrapper=wrapper, us_per_layer_fwd_bwd=round(per_layer, 2), eager_op_us=round(op, 3),
                             op_equivalents_per_layer=round(per_layer / op, 1)))
            print(f"{kind:6s} {precision:9s} {wrapper:6s} {per_layer:8.1f} us per layer fwd+bwd = "
                  f"{per_layer / op:6.1f} eager ops ({op:.2f} us each)", flush=True)
    props = torch.cuda.get_device_properties(0)
    env = dict(gpu=props.name, torch=torch.__version__, cuda=torch.version.cuda,
               harness_commit=os.environ.get("MESHFIT_HARNESS_COMMIT", "unknown"), date=datetime.date.today().isoformat())
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) + list(env.keys()))
        w.writeheader()
        for r in rows:
            w.writerow(dict(r, **env))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""One measured training configuration, run in its own process (a fresh CUDA context, so one row's
peaks and allocator state never leak into the next). Called by memory_sweep.py with a JSON row;
prints one line `RESULT {json}`.

The training step is torchtitan's (train.py forward_backward_step + optimizer step):
    pred = model(inputs); loss = loss_fn(pred, labels); del pred; loss.backward()
    optimizer.step(); optimizer.zero_grad()          # set_to_none=True
Per step it records the bytes allocated at the end of each phase and the phase's peak
(torch.cuda.reset_peak_memory_stats at each phase start), the step's peak allocated/reserved,
and the device's used memory (torch.cuda.mem_get_info: what nvidia-smi shows) at the step end.
"""
import json
import os
import statistics
import sys
import tempfile
import time
import traceback
from contextlib import nullcontext
from functools import partial

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt import GptArgs, GptTransformer  # noqa: E402
from llama import Args, Transformer, cross_entropy_loss, model_flops_per_token, parameter_count  # noqa: E402

PHASES = ("fwd", "loss", "bwd", "opt", "zero")


def device_used():
    free, total = torch.cuda.mem_get_info()
    return total - free


def apply_ac(block, mode):
    """torchtitan distributed/activation_checkpoint.py: full = checkpoint_wrapper per block;
    selective "op" = save every compute op in _save_list except every second mm."""
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
    if mode == "full":
        return checkpoint_wrapper(block, preserve_rng_state=False)
    from collections import defaultdict
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
    save_list = {
        torch.ops.aten.mm.default,
        torch.ops.aten._scaled_dot_product_efficient_attention.default,
        torch.ops.aten._scaled_dot_product_flash_attention.default,
        torch.ops.aten.max.default,
    }
    for name in ("_scaled_dot_product_cudnn_attention",):
        op = getattr(torch.ops.aten, name, None)
        if op is not None:
            save_list.add(op.default)

    def policy_for(meta):
        def policy(ctx, func, *args, **kwargs):
            mode_key = "recompute" if ctx.is_recompute else "forward"
            key = f"{mode_key}_mm_count"
            if func == torch.ops.aten.mm.default:
                meta[key] += 1
            to_save = func in save_list and not (func == torch.ops.aten.mm.default and meta[key] % 2 == 0)
            return CheckpointPolicy.MUST_SAVE if to_save else CheckpointPolicy.PREFER_RECOMPUTE
        return policy

    def context_fn():
        return create_selective_checkpoint_contexts(policy_for(defaultdict(int)))

    return checkpoint_wrapper(block, context_fn=context_fn, preserve_rng_state=False)


def one_rank_process_group():
    """A one-rank NCCL process group (fully_shard and DDP need one; a plain loop does not)."""
    store = dist.FileStore(tempfile.mktemp(prefix="meshfit_pg_"), 1)
    dist.init_process_group("nccl", store=store, rank=0, world_size=1, device_id=torch.device("cuda", 0))


def mixed_precision(row):
    """Mixed precision without FSDP's casts: fp32 weights under autocast (DDP, or a plain loop as HF
    Trainer runs one GPU); FSDP2 casts in its own policy, and pure bf16 needs nothing."""
    if row["wrapper"] in ("ddp", "plain") and row["precision"] == "bf16":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return nullcontext()


def sdpa_context(attention):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
               "math": SDPBackend.MATH, "cudnn": SDPBackend.CUDNN_ATTENTION}[attention]
    return sdpa_kernel([backend])


def build(row, models):
    spec = models[row["model"]]
    gpt = spec["mlp"] == "gelu"
    a = (GptArgs if gpt else Args)(spec, row.get("layers"))
    pure = row["precision"] == "pure_bf16"
    wrapper = row["wrapper"]
    # Built on the GPU and sharded in place (torchtitan builds on the meta device and materialises
    # after fully_shard; the end state is the same, and empty_cache() below drops the build's
    # transient blocks so that they don't count as the steps' reserve).
    with torch.device("cuda"):
        model = (GptTransformer if gpt else Transformer)(a, row["seq"])
    model = model.to(dtype=torch.bfloat16 if pure else torch.float32)
    model.init_weights("cuda")  # after the cast: RoPE's complex buffer stays complex64
    if row["recompute"] != "none":
        for key in list(model.layers.keys()):
            model.layers[key] = apply_ac(model.layers[key], row["recompute"])
    if row["compile"]:
        for key in list(model.layers.keys()):
            model.layers[key] = torch.compile(model.layers[key], fullgraph=True)
    if row.get("lora_rank"):
        # PEFT LoRA on the frozen base (autocast_adapter_dtype=True: fp32 adapters), as HF + PEFT.
        from peft import LoraConfig, get_peft_model
        targets = {"all-linear": ["wq", "wk", "wv", "wo", "w1", "w2", "w3"],
                   "attention": ["wq", "wk", "wv", "wo"]}[row["lora_targets"]]
        inner_model = model
        model = get_peft_model(model, LoraConfig(r=row["lora_rank"], lora_alpha=2 * row["lora_rank"],
                                                 target_modules=targets, lora_dropout=0.0))
        model.to("cuda")
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        return a, model, inner_model
    if wrapper == "plain":
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        return a, model, model
    if wrapper == "fsdp2":
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        mp = MixedPrecisionPolicy() if pure else MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                                                      reduce_dtype=torch.float32)
        # torchtitan llama3 parallelize.py apply_fsdp: embeddings, each block, [norm, output]
        # (not resharded after forward) and the root. A tied head shares the embedding's
        # parameter, so it stays with the root.
        if not a.tied:
            fully_shard(model.tok_embeddings, mp_policy=mp, reshard_after_forward=True)
        for block in model.layers.values():
            fully_shard(block, mp_policy=mp, reshard_after_forward=True)
        if not a.tied:
            try:
                fully_shard([model.norm, model.output], mp_policy=mp, reshard_after_forward=False)
            except TypeError:  # a PyTorch whose fully_shard takes one module
                fully_shard(model.output, mp_policy=mp, reshard_after_forward=False)
        fully_shard(model, mp_policy=mp)
        inner = model
    else:
        from torch.nn.parallel import DistributedDataParallel
        inner = model
        model = DistributedDataParallel(model, device_ids=[0])
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return a, model, inner


def run(row, models):
    out = {"status": "error"}
    torch.cuda.set_device(0)
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    out["context_bytes"] = device_used() - torch.cuda.memory_reserved()
    if row["wrapper"] != "plain":  # fully_shard and DDP need a process group; a plain loop has none
        one_rank_process_group()
        torch.cuda.synchronize()
    out["after_pg_nonpytorch_bytes"] = device_used() - torch.cuda.memory_reserved()

    a, model, inner = build(row, models)
    out["parameters"] = parameter_count(inner)
    out["trainable_parameters"] = sum(p.numel() for p in model.parameters() if p.requires_grad)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1,
                            fused=row["optimizer_impl"] == "fused", foreach=row["optimizer_impl"] == "foreach")
    loss_fn = cross_entropy_loss
    if row["loss"] == "compiled":
        loss_fn = torch.compile(cross_entropy_loss)
    if row["loss"] == "chunked":
        inner.chunks = 8
    torch.cuda.synchronize()
    out["states_allocated"] = torch.cuda.memory_allocated()
    out["states_reserved"] = torch.cuda.memory_reserved()

    b, s, v = row["micro_batch"], row["seq"], a.vocab
    g = torch.Generator(device="cuda").manual_seed(0)
    amp = mixed_precision(row)
    steps = row.get("steps", 5)
    times = []
    phase = "start"
    step = 0
    try:
        with sdpa_context(row["attention"]):
            for step in range(1, steps + 1):
                tokens = torch.randint(0, v, (b, s), device="cuda", generator=g)
                labels = torch.randint(0, v, (b, s), device="cuda", generator=g)
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                rec = {}
                step_peak_alloc = step_peak_res = 0

                def mark(name):
                    nonlocal step_peak_alloc, step_peak_res
                    pa, pr = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
                    rec[name + "_alloc"] = torch.cuda.memory_allocated()
                    rec[name + "_peak"] = pa
                    step_peak_alloc, step_peak_res = max(step_peak_alloc, pa), max(step_peak_res, pr)
                    torch.cuda.reset_peak_memory_stats()

                torch.cuda.reset_peak_memory_stats()
                for micro in range(row.get("grad_accum", 1)):
                    phase = "fwd"
                    with amp:
                        if inner.chunks:
                            loss = model(tokens, labels)
                        else:
                            pred = model(tokens)
                    mark("fwd")
                    phase = "loss"
                    if not inner.chunks:
                        with amp:
                            loss = loss_fn(pred, labels)
                        del pred
                    mark("loss")
                    phase = "bwd"
                    loss.backward()
                    del loss
                    mark("bwd")
                phase = "opt"
                opt.step()
                mark("opt")
                phase = "zero"
                opt.zero_grad(set_to_none=True)
                mark("zero")
                torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
                rec["peak_alloc"] = step_peak_alloc
                rec["peak_reserved"] = step_peak_res
                rec["device_used"] = device_used()
                rec["reserved_end"] = torch.cuda.memory_reserved()
                rec["nonpytorch"] = rec["device_used"] - rec["reserved_end"]
                if row.get("snapshot"):
                    # Reserved never shrinks inside a step, so the segments now are the ones at
                    # the peak: bytes reserved / allocated per CUDA stream (FSDP2 allocates its
                    # all-gather and reduce-scatter buffers on side streams).
                    pools = {}
                    for seg in torch.cuda.memory_snapshot():
                        t = pools.setdefault(seg["stream"], [0, 0, 0])
                        t[0] += seg["total_size"]
                        t[1] += seg["allocated_size"]
                        t[2] += 1
                    rec["pools"] = ";".join(f"{k}={v[0]}/{v[1]}/{v[2]}" for k, v in sorted(pools.items()))
                prefix = "s1_" if step == 1 else "sn_"
                for k, val in rec.items():
                    out[prefix + k] = val
        out["status"] = "ok"
    except torch.OutOfMemoryError as e:
        out["status"] = "oom"
        out["oom_step"] = step
        out["oom_phase"] = phase
        out["oom_peak_alloc"] = torch.cuda.max_memory_allocated()
        out["oom_peak_reserved"] = torch.cuda.max_memory_reserved()
        out["error"] = str(e).splitlines()[0][:200]
    if len(times) >= 2:
        out["step_time_s"] = statistics.median(times[1:])
        out["tokens_per_s"] = b * s * row.get("grad_accum", 1) / out["step_time_s"]
        out["model_tflops"] = out["tokens_per_s"] * model_flops_per_token(a, s) / 1e12
    out["first_step_time_s"] = times[0] if times else None
    if dist.is_initialized():
        dist.destroy_process_group()
    return out


def main():
    row = json.loads(sys.argv[1])
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "models.json")) as f:
        models = json.load(f)
    try:
        out = run(row, models)
    except Exception as e:  # a harness bug or an unsupported option: reported, the sweep goes on
        out = {"status": "error", "error": f"{type(e).__name__}: {e}"[:300]}
        traceback.print_exc()
    print("RESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()

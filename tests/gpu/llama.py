"""A Llama-architecture decoder as torchtitan writes it (torchtitan/models/llama3/model.py), built
from one of meshfit's model presets (tests/gpu/models.json, written by `meshfit presets --json`).

The memory meshfit's FSDP2 profile predicts depends on how this code saves tensors, so the model
follows torchtitan's on purpose: RoPE through complex fp32 views cast back to bf16, K and V
expanded to every head by repeat_kv (an eager copy), SDPA on (b, heads, s, d) transposes, the SDPA
output made contiguous before wo, nn.RMSNorm, SwiGLU w2(silu(w1 x) * w3 x), untied output unless
the preset ties it. Weights are random (normal, std 0.02): memory and speed do not depend on them.
"""
import torch
import torch.nn.functional as F
from torch import nn


class Args:
    def __init__(self, spec, layers=None):
        self.dim = spec["hidden"]
        self.n_layers = layers if layers else spec["layers"]
        self.n_heads = spec["heads"]
        self.n_kv_heads = spec["kv_heads"] or spec["heads"]
        self.head_dim = spec["head_dim"] or spec["hidden"] // spec["heads"]
        self.ffn = spec["ffn"]
        self.vocab = spec["vocab"]
        self.tied = bool(spec["tied_embeddings"])
        assert spec["norm"] == "rmsnorm" and spec["mlp"] == "swiglu" and not spec["linear_bias"], spec


def precompute_freqs_cis(dim, end, theta=500000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device, dtype=torch.float32)
    return torch.polar(torch.ones(end, dim // 2), torch.outer(t, freqs))


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    fc = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * fc).flatten(3)
    xk_out = torch.view_as_real(xk_ * fc).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(x, n_rep):
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (x[:, :, :, None, :].expand(bs, slen, n_kv_heads, n_rep, head_dim)
            .reshape(bs, slen, n_kv_heads * n_rep, head_dim))


class Attention(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = a.n_heads, a.n_kv_heads, a.head_dim
        self.n_rep = a.n_heads // a.n_kv_heads
        self.wq = nn.Linear(a.dim, a.n_heads * a.head_dim, bias=False)
        self.wk = nn.Linear(a.dim, a.n_kv_heads * a.head_dim, bias=False)
        self.wv = nn.Linear(a.dim, a.n_kv_heads * a.head_dim, bias=False)
        self.wo = nn.Linear(a.n_heads * a.head_dim, a.dim, bias=False)

    def forward(self, x, freqs_cis):
        bs, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bs, seqlen, -1, self.head_dim)
        xk = xk.view(bs, seqlen, -1, self.head_dim)
        xv = xv.view(bs, seqlen, -1, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
        keys = repeat_kv(xk, self.n_rep)
        values = repeat_kv(xv, self.n_rep)
        xq, xk, xv = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        output = F.scaled_dot_product_attention(xq, xk, xv, is_causal=True)
        output = output.transpose(1, 2).contiguous().view(bs, seqlen, -1)
        return self.wo(output)


class FeedForward(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.w1 = nn.Linear(a.dim, a.ffn, bias=False)
        self.w2 = nn.Linear(a.ffn, a.dim, bias=False)
        self.w3 = nn.Linear(a.dim, a.ffn, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.attention = Attention(a)
        self.feed_forward = FeedForward(a)
        self.attention_norm = nn.RMSNorm(a.dim, eps=1e-5)
        self.ffn_norm = nn.RMSNorm(a.dim, eps=1e-5)

    def forward(self, x, freqs_cis):
        h = x + self.attention(self.attention_norm(x), freqs_cis)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, a, seq):
        super().__init__()
        self.a = a
        self.tok_embeddings = nn.Embedding(a.vocab, a.dim)
        self.layers = nn.ModuleDict({str(i): TransformerBlock(a) for i in range(a.n_layers)})
        self.norm = nn.RMSNorm(a.dim, eps=1e-5)
        self.output = nn.Linear(a.dim, a.vocab, bias=False)
        if a.tied:
            self.output.weight = self.tok_embeddings.weight
        self.seq = seq
        self.register_buffer("freqs_cis", precompute_freqs_cis(a.head_dim, seq), persistent=False)
        self.chunks = 0  # > 0: forward returns the summed loss over this many output chunks

    @torch.no_grad()
    def init_weights(self, device):
        self.freqs_cis = precompute_freqs_cis(self.a.head_dim, self.seq).to(device)
        for p in self.parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, std=0.02)
            else:
                nn.init.ones_(p)

    def forward(self, tokens, labels=None):
        h = self.tok_embeddings(tokens)
        for layer in self.layers.values():
            h = layer(h, self.freqs_cis)
        h = self.norm(h)
        return chunked_loss(self.output, h, labels, self.chunks) if self.chunks else self.output(h)


def chunked_loss(output, h, labels, chunks):
    """torchtune LinearCrossEntropyLoss: project and take the fp32 cross-entropy chunk by chunk, so
    the whole logits tensor never exists at once."""
    total = 0
    for hc, lc in zip(h.chunk(chunks, dim=1), labels.chunk(chunks, dim=1)):
        logits = output(hc)
        total = total + F.cross_entropy(logits.flatten(0, 1).float(), lc.flatten(0, 1), reduction="sum")
    return total / labels.numel()


def cross_entropy_loss(pred, labels):
    """torchtitan components/loss.py cross_entropy_loss."""
    return F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))


def parameter_count(model):
    seen, n = set(), 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            n += p.numel()
    return n


def model_flops_per_token(a, seq):
    """6N + 12*L*h_attn*s (causal halves it: torchtitan get_num_flop_per_token counts the full
    square); used only to print an MFU beside each row."""
    mlp_matrices = 2 if getattr(a, "gelu", False) else 3
    n = a.n_layers * (a.dim * a.head_dim * (a.n_heads * 2 + a.n_kv_heads * 2) + mlp_matrices * a.dim * a.ffn) + a.vocab * a.dim
    return 6 * n + 12 * a.n_layers * a.n_heads * a.head_dim * seq

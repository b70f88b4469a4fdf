"""A GPT-2/GPT-3-style decoder (LayerNorm with bias, one fused QKV projection with bias, learned
positions, GeLU(tanh) MLP of two biased matrices, head tied to the embedding, no dropout), as
Megatron-LM's GPTModel and nanoGPT write it, built from one of meshfit's gpt_style presets
(tests/gpu/models.json). Same attribute names as llama.Transformer (tok_embeddings, layers, norm,
output, chunks, init_weights) so that train_row.py wraps both alike. meshfit does not count the
learned position table (seq x h parameters: 1.2% of gpt3-125m at seq 2048, 0.2% of 1.3B).
"""
import torch
import torch.nn.functional as F
from torch import nn

from llama import chunked_loss


class GptArgs:
    def __init__(self, spec, layers=None):
        self.dim = spec["hidden"]
        self.n_layers = layers if layers else spec["layers"]
        self.n_heads = spec["heads"]
        self.n_kv_heads = spec["heads"]
        self.head_dim = spec["head_dim"] or spec["hidden"] // spec["heads"]
        self.ffn = spec["ffn"]
        self.vocab = spec["vocab"]
        self.tied = bool(spec["tied_embeddings"])
        self.gelu = True
        assert spec["norm"] == "layernorm" and spec["mlp"] == "gelu" and spec["linear_bias"], spec


class GptBlock(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.n_heads, self.head_dim = a.n_heads, a.head_dim
        self.ln_1 = nn.LayerNorm(a.dim)
        self.qkv = nn.Linear(a.dim, 3 * a.n_heads * a.head_dim)
        self.proj = nn.Linear(a.n_heads * a.head_dim, a.dim)
        self.ln_2 = nn.LayerNorm(a.dim)
        self.fc1 = nn.Linear(a.dim, a.ffn)
        self.fc2 = nn.Linear(a.ffn, a.dim)

    def forward(self, x, _positions=None):
        bs, seqlen, _ = x.shape
        q, k, v = self.qkv(self.ln_1(x)).split(self.n_heads * self.head_dim, dim=2)
        q, k, v = (t.view(bs, seqlen, self.n_heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = x + self.proj(y.transpose(1, 2).contiguous().view(bs, seqlen, -1))
        return h + self.fc2(F.gelu(self.fc1(self.ln_2(h)), approximate="tanh"))


class GptTransformer(nn.Module):
    def __init__(self, a, seq):
        super().__init__()
        self.a = a
        self.tok_embeddings = nn.Embedding(a.vocab, a.dim)
        self.pos_embeddings = nn.Embedding(seq, a.dim)
        self.layers = nn.ModuleDict({str(i): GptBlock(a) for i in range(a.n_layers)})
        self.norm = nn.LayerNorm(a.dim)
        self.output = nn.Linear(a.dim, a.vocab, bias=False)
        if a.tied:
            self.output.weight = self.tok_embeddings.weight
        self.seq = seq
        self.chunks = 0

    @torch.no_grad()
    def init_weights(self, device):
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, std=0.02)
            elif name.endswith("bias"):
                nn.init.zeros_(p)
            else:
                nn.init.ones_(p)

    def forward(self, tokens, labels=None):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        h = self.tok_embeddings(tokens) + self.pos_embeddings(positions)
        for layer in self.layers.values():
            h = layer(h)
        h = self.norm(h)
        return chunked_loss(self.output, h, labels, self.chunks) if self.chunks else self.output(h)

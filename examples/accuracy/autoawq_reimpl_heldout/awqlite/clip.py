"""Output-error clipping search: per output channel and input group, shrink
the weight's absolute maximum over a grid of n_grid steps (down to
1 - max_shrink), fake-quantise the clamped weight and keep the bound whose
grouped partial outputs on sampled calibration tokens have the smallest
mean squared error. Query/key projections are skipped (their product is
hard to clip). The bounds are applied by clamping the weight in place."""

import torch
from torch import nn

from .grid import fake_quantize


# portq: ports autoawq:awq/quantize/auto_clip.py::auto_clip_layer @460d6d4
@torch.no_grad()
def search_clip(w, feats, n_bit, q_config, n_grid=20, max_shrink=0.5, n_sample_token=512, rows_per_pass=256):
    if w.dim() != 2:
        raise ValueError("expected a 2-D weight")
    group = q_config["q_group_size"] if q_config["q_group_size"] > 0 else w.shape[1]
    feats = feats.view(-1, feats.shape[-1])
    feats = feats.reshape(1, feats.shape[0], -1, group)
    stride = max(feats.shape[1] // n_sample_token, 1)
    feats = feats[:, ::stride]
    grouped = w.reshape(w.shape[0], 1, -1, group)
    if grouped.shape[0] % rows_per_pass:
        raise ValueError(f"{grouped.shape[0]} output channels are not a multiple of {rows_per_pass}")
    kw = {"q_group_size": q_config["q_group_size"]}

    bounds = []
    for start in range(0, grouped.shape[0], rows_per_pass):
        part = grouped[start:start + rows_per_pass]
        peak = part.abs().amax(dim=-1, keepdim=True)
        best = peak.clone()
        least = torch.full_like(peak, 1e9)
        feats = feats.to(part.device)
        ref = (feats * part).sum(dim=-1)
        for k in range(int(max_shrink * n_grid)):
            bound = peak * (1 - k / n_grid)
            trial = fake_quantize(torch.clamp(part, -bound, bound), n_bit=n_bit, **kw)
            err = ((feats * trial).sum(dim=-1) - ref).pow(2).mean(dim=1).view(least.shape)
            better = err < least
            least[better] = err[better]
            best[better] = bound[better]
        bounds.append(best)
    return torch.cat(bounds, dim=0).squeeze(1)


# portq: ports autoawq:awq/quantize/auto_clip.py::auto_clip_block @460d6d4
@torch.no_grad()
def search_clips(block, w_bit, q_config, feats_by_name, skip=("q_", "k_")):
    found = []
    for name, m in block.named_modules():
        if not isinstance(m, nn.Linear) or any(s in name for s in skip):
            continue
        found.append((name, search_clip(m.weight, feats_by_name[name], n_bit=w_bit, q_config=q_config)))
    return found


# portq: ports autoawq:awq/quantize/auto_clip.py::apply_clip @460d6d4
@torch.no_grad()
def clamp_to_clips(block, found):
    for name, bound in found:
        layer = block.get_submodule(name)
        bound = bound.to(layer.weight.device)
        shape = layer.weight.shape
        grouped = layer.weight.data.reshape(*bound.shape[:2], -1)
        layer.weight.data = torch.clamp(grouped, -bound, bound).reshape(shape)

import pytest
import torch

from ropeops import NEOX, rope_qk

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def reference(x, cos, sin, positions, half_table):
    c = cos[positions].float()
    s = sin[positions].float()
    if half_table:
        c = c.repeat_interleave(2, dim=-1)
        s = s.repeat_interleave(2, dim=-1)
    xf = x.float()
    pairs = xf.unflatten(-1, (-1, 2))
    rotated = torch.stack((-pairs[..., 1], pairs[..., 0]), dim=-1).flatten(-2)
    return (xf * c[:, None, :] + rotated * s[:, None, :]).to(x.dtype)


@pytest.mark.parametrize("tokens, heads, dim", [(1, 1, 8), (45, 3, 64), (70, 2, 16)])
@pytest.mark.parametrize("half_table", [True, False])
def test_rope_qk_matches_torch(tokens, heads, dim, half_table):
    torch.manual_seed(0)
    q = torch.randn(tokens, heads, dim).to(DEVICE)
    k = torch.randn(tokens, heads, dim).to(DEVICE)
    cols = dim // 2 if half_table else dim
    angles = (torch.rand(128, cols) * 6.0).to(DEVICE)
    cos, sin = angles.cos(), angles.sin()
    positions = torch.randint(0, 128, (tokens,)).to(DEVICE)
    q_out, k_out = rope_qk(q, k, cos, sin, positions, half_table=half_table)
    torch.testing.assert_close(q_out, reference(q, cos, sin, positions, half_table), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(k_out, reference(k, cos, sin, positions, half_table), atol=1e-5, rtol=1e-5)


def test_rope_qk_rejects_neox():
    x = torch.randn(4, 1, 8, device=DEVICE)
    tab = torch.ones(8, 4, device=DEVICE)
    with pytest.raises(NotImplementedError):
        rope_qk(x, x, tab, tab, torch.zeros(4, dtype=torch.long, device=DEVICE), style=NEOX)

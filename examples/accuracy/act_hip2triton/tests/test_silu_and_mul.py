import torch

from gatedact import silu_and_mul

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_silu_and_mul_matches_torch():
    inp = torch.randn(5, 2 * 384).to(torch.bfloat16).to(DEVICE)
    out = torch.empty(5, 384, dtype=torch.bfloat16, device=DEVICE)
    silu_and_mul(out, inp)
    x, y = inp.float().chunk(2, dim=-1)
    torch.testing.assert_close(out, (torch.nn.functional.silu(x) * y).to(torch.bfloat16), atol=2e-2, rtol=2e-2)

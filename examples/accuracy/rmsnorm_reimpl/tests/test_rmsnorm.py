import pytest
import torch

from normops import rmsnorm

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def reference(x, w, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


@pytest.mark.parametrize("rows, cols", [(1, 8), (7, 100), (5, 4096)])
def test_rmsnorm_matches_torch(rows, cols):
    x = torch.randn(rows, cols, dtype=torch.float16).to(DEVICE)
    w = torch.randn(cols, dtype=torch.float16).to(DEVICE)
    torch.testing.assert_close(rmsnorm(x, w, 1e-6), reference(x, w, 1e-6), atol=2e-3, rtol=2e-3)


def test_rmsnorm_tiles_a_row_wider_than_one_tile():
    # float32 rows of 20000 exceed the 16384-element tile, so the tiled path runs.
    x = torch.randn(3, 20000, dtype=torch.float32).to(DEVICE)
    w = torch.randn(20000, dtype=torch.float32).to(DEVICE)
    torch.testing.assert_close(rmsnorm(x, w, 1e-5), reference(x, w, 1e-5), atol=1e-4, rtol=1e-4)

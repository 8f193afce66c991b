import torch

# fp16: the CPU interpreter computes bf16 tl.dot wrongly (see kernels/mla_prefix).

from densegemm import gemm_a16w16

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_gemm_a16w16_matches_matmul_with_bias():
    x = torch.randn(64, 256).to(torch.float16).to(DEVICE)
    w = torch.randn(96, 256).to(torch.float16).to(DEVICE)
    bias = torch.randn(96).to(torch.float16).to(DEVICE)
    y = gemm_a16w16(x, w, bias, dtype=torch.float16)
    ref = (x.float() @ w.float().T + bias.float()).to(torch.float16)
    torch.testing.assert_close(y, ref, atol=2e-2, rtol=2e-2)

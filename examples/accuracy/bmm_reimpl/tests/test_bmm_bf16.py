import torch

# fp16: the CPU interpreter computes bf16 tl.dot wrongly (see kernels/mla_prefix).

from mlabmm import bmm_bf16

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_bmm_bf16_matches_torch_bmm_with_bias():
    x = torch.randn(3, 40, 96).to(torch.float16).to(DEVICE)
    w = torch.randn(3, 72, 96).to(torch.float16).to(DEVICE)
    bias = torch.randn(3, 1, 72).to(torch.float16).to(DEVICE)
    out = bmm_bf16(x, w, bias, out_dtype=torch.float16)
    ref = (torch.bmm(x.float(), w.float().transpose(1, 2)) + bias.float()).to(torch.float16)
    torch.testing.assert_close(out, ref, atol=3e-2, rtol=3e-2)

import pytest
import torch

from engine import decoder_step

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available() or not hasattr(torch.ops, "engine_tm") or not hasattr(torch.ops.engine_tm, "rms_norm"),
    reason="needs a GPU and the engine_tm extension built from csrc/tm_ops.cu with the vendored TurboMind kernels",
)


def test_rms_norm_and_silu_gate_match_torch():
    torch.manual_seed(0)
    x = torch.randn(37, 4096, device="cuda", dtype=torch.float16)
    w = torch.rand(4096, device="cuda", dtype=torch.float16)
    gate, up = torch.randn(2, 37, 11008, device="cuda", dtype=torch.float16)
    expected_gate = torch.nn.functional.silu(gate.float()) * up.float()
    normed, gated = decoder_step.mlp_norm_and_gate(x, w, gate, up.clone())
    xf = x.float()
    expected = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).half() * w
    torch.testing.assert_close(normed, expected, atol=2e-2, rtol=2e-2)
    torch.testing.assert_close(gated.float(), expected_gate, atol=2e-2, rtol=2e-2)


def test_top_p_keeps_the_smallest_prefix_reaching_p():
    probs = torch.tensor([[0.5, 0.1, 0.3, 0.1], [0.25, 0.25, 0.25, 0.25]], device="cuda")
    top_ps = torch.tensor([0.7, 1.0], device="cuda")
    min_ps = torch.zeros(2, device="cuda")
    sorted_probs, sorted_ids, kept = decoder_step.top_p_candidates(probs.clone(), 4, top_ps, min_ps)
    assert sorted_ids[0, :2].tolist() == [0, 2]
    assert kept.tolist() == [2, 4]


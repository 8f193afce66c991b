"""The engine's block and head on small shapes, through the ops (TRITON_INTERPRET=1 on a CPU)."""

import torch

from engine import block, head

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_pre_attention_normalises_and_rotates_q_and_k():
    torch.manual_seed(0)
    pre = block.PreAttention(16, block.RotaryTables(8, 8, device=DEVICE), device=DEVICE)
    hidden = torch.randn(1, 4, 16, device=DEVICE)
    normed, residual = pre.normalise(hidden, None)
    assert residual.dtype == torch.float32
    torch.testing.assert_close(normed.pow(2).mean(-1), torch.ones(1, 4, device=DEVICE), atol=1e-3, rtol=1e-3)
    q = torch.randn(1, 4, 2, 8, device=DEVICE)
    rq, rk = pre.rotate(q, q.clone(), 2)
    torch.testing.assert_close(rq.norm(dim=-1), q.norm(dim=-1), atol=1e-5, rtol=1e-5)  # a rotation keeps lengths
    assert torch.equal(rq, rk)


def test_lm_loss_is_the_mean_over_labelled_tokens_and_trains():
    torch.manual_seed(1)
    logits = torch.randn(5, 30, device=DEVICE, requires_grad=True)
    labels = torch.tensor([3, -100, 29, 0, 7], device=DEVICE)
    loss = head.lm_loss(logits * 1.0, labels)
    keep = labels != -100
    torch.testing.assert_close(loss, torch.nn.functional.cross_entropy(logits[keep], labels[keep]), atol=1e-4, rtol=1e-4)
    loss.backward()
    assert logits.grad[1].abs().max() == 0

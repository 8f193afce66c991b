"""The engine's block and head on small shapes, through the ops (TRITON_INTERPRET=1 on a CPU)."""

import torch
import torch.nn.functional as F

from engine import block, head

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_block_normalises_rotates_and_gates():
    torch.manual_seed(0)
    norm = block.BlockNorm(16, device=DEVICE)
    hidden = torch.randn(1, 4, 16, device=DEVICE)
    torch.testing.assert_close(norm(hidden).pow(2).mean(-1), torch.ones(1, 4, device=DEVICE), atol=1e-3, rtol=1e-3)
    q = torch.randn(1, 2, 4, 8, device=DEVICE)
    rq, rk = block.Rotary(8, 8, device=DEVICE)(q.clone(), q.clone())
    torch.testing.assert_close(rq.norm(dim=-1), q.norm(dim=-1), atol=1e-5, rtol=1e-5)  # a rotation keeps lengths
    assert torch.equal(rq, rk)
    gate, up = torch.randn(1, 4, 32, device=DEVICE), torch.randn(1, 4, 32, device=DEVICE)
    torch.testing.assert_close(block.mlp_activation(gate, up), F.silu(gate) * up)


def test_head_norms_and_trains_on_labelled_tokens():
    torch.manual_seed(1)
    norm = block.BlockNorm(8, device=DEVICE)
    normed = head.final_norm(torch.randn(2, 8, device=DEVICE), norm)
    torch.testing.assert_close(normed.pow(2).mean(-1), torch.ones(2, device=DEVICE), atol=1e-3, rtol=1e-3)
    logits = torch.randn(1, 5, 30, device=DEVICE, requires_grad=True)
    labels = torch.tensor([[3, -100, 29, 0, 7]], device=DEVICE)
    loss = head.lm_loss(logits * 1.0, labels)
    keep = labels != -100
    torch.testing.assert_close(loss, F.cross_entropy(logits.detach()[keep], labels[keep]), atol=1e-4, rtol=1e-4)
    loss.backward()
    assert logits.grad[0, 1].abs().max() == 0
    per_token = head.token_losses(logits.detach()[0].clone(), labels[0])
    assert per_token[1] == 0

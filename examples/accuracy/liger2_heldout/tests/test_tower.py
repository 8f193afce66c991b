"""The engine's tower calls the ops end to end."""

import torch

from engine import stem, tower

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def test_encode_with_layer_norm_and_with_dyt():
    images = torch.randn(2, 8, 3, 3).to(DEVICE)
    image_stem = stem.Stem(8, 4, device=DEVICE)
    tokens = tower.encode(images, image_stem, tower.make_pre_norm(8, False, device=DEVICE))
    assert tokens.shape == (2, 9, 8)
    torch.testing.assert_close(tokens.mean(-1), torch.zeros(2, 9, device=DEVICE), atol=1e-4, rtol=0)
    dyt_tokens = tower.encode(images, image_stem, tower.make_pre_norm(8, True, device=DEVICE))
    assert dyt_tokens.shape == (2, 9, 8) and dyt_tokens.abs().max() <= 1.0

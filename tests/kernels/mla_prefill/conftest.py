"""Fixtures shared by the MLA prefill caller tests."""
from __future__ import annotations

import pytest
import torch


@pytest.fixture
def device() -> torch.device:
    """Run on CUDA when present, else on the CPU through Triton's interpreter."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")

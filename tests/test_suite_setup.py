"""The suite runs as README says on a machine without a GPU, and also when the
caller forgets ``TRITON_INTERPRET=1``: the kernels' tests then run through
Triton's interpreter instead of failing on the missing driver."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.skipif(_has_cuda(), reason="on a GPU the kernels run on the device, not the interpreter")
def test_kernel_tests_pass_without_the_interpreter_variable_on_a_machine_without_a_gpu():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    test = "tests/kernels/kv_cache/test_kv_cache_concat.py"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", test,
                           "-k", "test_plain_formats"], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout, done.stdout[-2000:]


@pytest.mark.skipif(_has_cuda(), reason="on a GPU the kernels run on the device, not the interpreter")
def test_an_explicit_interpreter_setting_is_kept():
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    probe = "import os, tests.conftest; print(os.environ['TRITON_INTERPRET'])"
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "0"

"""A kernel that handed its program id to a tiling helper imported from another module (whose
decomposition the comparison cannot see) now decomposes the id inline (``pid % m``, ``pid // m``), on the
same program-id axes. Upstream's old side decomposed nothing the comparison saw, and a port that reads its
tiles from program-id axes of its own decomposes nothing either: "the port still decomposes the old way" is
then only that neither side was seen packing work into the id, which proves nothing about the port, so the
change is for a reader (NEEDS_REVIEW). A port that decomposes the id exactly as upstream's old side did
(``pid // n``, ``pid % n`` written in the kernel) is still behind."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.golden.pipeline import classify_commit

KERNELS = "pkg/ops/matvec.py"
MATRIX = """\
[[row]]
id       = "MV"
title    = "A tiled matrix-vector kernel"
upstream = "vllm"
paths    = ["pkg/ops/matvec.py", "pkg/ops/tiling.py"]
tree     = ["ported/", "engine/"]
tests    = ["tests/"]
"""

BEFORE = '''\
import triton
import triton.language as tl

from .tiling import tile_of


@triton.jit
def _mv_kernel(a_ptr, x_ptr, out_ptr, m, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row, col = tile_of(pid, m, n)
    offs = row * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs + col * m, mask=offs < m)
    x = tl.load(x_ptr + col)
    tl.atomic_add(out_ptr + offs, a * x, mask=offs < m)
'''

AFTER = BEFORE.replace("    row, col = tile_of(pid, m, n)\n", "    row, col = pid % m, pid // m\n")

PORT = '''\
import triton
import triton.language as tl


# portq: ports vllm:pkg/ops/matvec.py::_mv_kernel
@triton.jit
def _mv_tile(a, x, out, m, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    col = tl.program_id(1)
    offs = row * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(a + offs + col * m, mask=offs < m)
    s = tl.load(x + col)
    tl.atomic_add(out + offs, v * s, mask=offs < m)


def matvec(a, x, out, m, n):
    _mv_tile[(triton.cdiv(m, 64), n)](a, x, out, m, n, BLOCK=64)
    return out
'''

# Sound neighbour: upstream's old kernel decomposed the id in its own body, and the port does the same.
OWN_BEFORE = BEFORE.replace("    row, col = tile_of(pid, m, n)\n", "    row, col = pid // n, pid % n\n")
OWN_PORT = PORT.replace("    row = tl.program_id(0)\n    col = tl.program_id(1)\n",
                        "    pid = tl.program_id(0)\n    row = pid // n\n    col = pid % n\n").replace(
    "[(triton.cdiv(m, 64), n)]", "[(triton.cdiv(m, 64) * n,)]")


def _kernel(tmp_path, before, port):
    tree = {"ported/matvec.py": port,
            "engine/step.py": "from ported.matvec import matvec\n\n\ndef step(a, x, out):\n"
                              "    return matvec(a, x, out, 4, 4)\n"}
    verdict = classify_commit(tmp_path, {KERNELS: before}, {KERNELS: AFTER}, tree, matrix=MATRIX, message="tiles")
    return next(s for s in verdict.symbols if s.symbol == "_mv_kernel")


def test_a_decomposition_inlined_from_an_unseen_helper_is_for_a_reader(tmp_path):
    kernel = _kernel(tmp_path, BEFORE, PORT)
    assert kernel.verdict == NEEDS_REVIEW, kernel.reason


def test_a_port_decomposing_the_id_the_old_way_is_still_behind(tmp_path):
    kernel = _kernel(tmp_path, OWN_BEFORE, OWN_PORT)
    assert kernel.verdict == REAL_GAP, kernel.reason
    assert "program-decomposition" in kernel.rules, kernel.rules

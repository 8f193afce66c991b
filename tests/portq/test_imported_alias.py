"""Names bound by module-level ``from M import N as x`` imports, renamed
consistently with every read of them (rule ``imported-alias``): two imports
trading their aliases, and the branches reading them trading their calls with
them, leave each branch calling the same object. A definition whose reads of
such names, each written out as the ``from M import N`` that binds it, give
the same program on both sides is cosmetic. It holds only where each name is
bound once, by that import, and nothing else in the module binds it; a swap
of the aliases alone, or of the calls alone, or a name rebound elsewhere,
stays flagged."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from portq.classifier.rules.form import same_modulo_imported_names
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "SCALE"
title    = "Row scaling"
upstream = "vllm"
paths    = ["lib/*.py"]
tree     = ["kernels/", "engine/"]
tests    = ["tests/"]
"""

MODULE = '''\
import torch
from .plain_impl import forward as {plain}
from .masked_impl import forward as {masked}
{extra}

def scale(x, masked=False):
    y = torch.empty_like(x)
    if masked:
        o = {first}(x, y, block=64)
    else:
        o = {second}(x, y, block=64)
    return o
'''

BEFORE = MODULE.format(plain="run_true", masked="run_false", extra="", first="run_false", second="run_true")
SWAPPED = MODULE.format(plain="run_false", masked="run_true", extra="", first="run_true", second="run_false")
# Unsound neighbours: only one side of the swap, or a name rebound elsewhere.
ALIASES_ONLY = MODULE.format(plain="run_false", masked="run_true", extra="", first="run_false", second="run_true")
CALLS_ONLY = MODULE.format(plain="run_true", masked="run_false", extra="", first="run_true", second="run_false")
REBOUND = MODULE.format(plain="run_false", masked="run_true",
                        extra="if torch.version.hip:\n    run_true = torch.ops.other.forward\n",
                        first="run_true", second="run_false")

IMPL = "def forward(x, y, block=64):\n    return y.copy_(x)\n"

TREE = {
    "kernels/scale.py": '''\
import torch


def _plain(x, y, block):
    return y.copy_(x)


def _masked(x, y, block):
    return y.copy_(x)


# portq: ports vllm:lib/scale.py::scale
def scale_rows(x, masked=False):
    y = torch.empty_like(x)
    if masked:
        return _masked(x, y, 64)
    return _plain(x, y, 64)
''',
    "engine/model.py": "from kernels.scale import scale_rows\n\n\ndef run(x):\n    return scale_rows(x)\n",
}


def _scale(tmp_path, after: str):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"lib/scale.py": BEFORE, "lib/plain_impl.py": IMPL, "lib/masked_impl.py": IMPL}),
        CommitSpec("swap", files={"lib/scale.py": after}),
    ], TREE, matrix=MATRIX)
    return next(s for s in verdicts[1].symbols if s.symbol == "scale")


def test_aliases_swapped_with_every_read_of_them_are_cosmetic(tmp_path):
    entry = _scale(tmp_path, SWAPPED)
    assert entry.verdict == NOT_APPLICABLE and entry.justification == "cosmetic", entry.reason
    assert "imported-alias" in entry.rules


def test_calls_swapped_without_the_aliases_stay_flagged(tmp_path):
    entry = _scale(tmp_path, CALLS_ONLY)
    assert entry.verdict in FLAGGED and "imported-alias" not in entry.rules, entry.reason


def test_an_alias_rebound_elsewhere_in_the_module_stays_flagged(tmp_path):
    entry = _scale(tmp_path, REBOUND)
    assert entry.verdict in FLAGGED and "imported-alias" not in entry.rules, entry.reason


def test_reads_written_out_as_their_imports():
    def body(text):
        return text[text.index("def scale"):]

    assert same_modulo_imported_names(body(BEFORE), body(SWAPPED), BEFORE, SWAPPED) == ["run_false", "run_true"]
    assert same_modulo_imported_names(body(BEFORE), body(ALIASES_ONLY), BEFORE, ALIASES_ONLY) == []
    assert same_modulo_imported_names(body(BEFORE), body(CALLS_ONLY), BEFORE, CALLS_ONLY) == []
    assert same_modulo_imported_names(body(BEFORE), body(REBOUND), BEFORE, REBOUND) == []
    assert same_modulo_imported_names(body(BEFORE), body(BEFORE), BEFORE, BEFORE) == []  # unchanged: not this rule's
    other = SWAPPED.replace("from .masked_impl import", "from .other_impl import")
    assert same_modulo_imported_names(body(BEFORE), body(other), BEFORE, other) == []

"""Wrappers that leave the default path alone (docs/tricky-cases.md): a
registration decorator upstream adds around a ported function whose body is
unchanged, where the decorator provably hands the same function back, is
not the port's change (``registry-decorator``); a decorator that returns a
wrapper of its own is still flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE
from tests.portq.golden.pipeline import classify_commit
from tests.portq.test_form_without_meaning import NORM, NORM_BEFORE, NORM_TREE

REGISTRY = '''

_BACKENDS = {}


def register_backend(name):
    def register(fn):
        _BACKENDS[name] = fn
        return fn
    return register
'''

WRAPPING = '''

def register_backend(name):
    def register(fn):
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs) * 2
        return wrapper
    return register
'''


def _scan(tmp_path, after):
    return classify_commit(tmp_path, {NORM: NORM_BEFORE}, {NORM: after}, NORM_TREE, message="edit")


def _decorated(helpers: str) -> str:
    return NORM_BEFORE.replace("\n\ndef norm_forward(", helpers + "\n\n@register_backend(\"cuda\")\ndef norm_forward(")


def test_a_registration_decorator_around_an_unchanged_body_is_not_the_ports(tmp_path):
    verdict = _scan(tmp_path, _decorated(REGISTRY))
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    ported = next(s for s in verdict.symbols if s.symbol == "norm_forward")
    assert (ported.justification, ported.rules) == ("cosmetic", ["registry-decorator"]), ported.reason


def test_a_decorator_that_returns_a_wrapper_is_still_flagged(tmp_path):
    verdict = _scan(tmp_path, _decorated(WRAPPING))
    assert verdict.verdict == NEEDS_REVIEW, verdict.reason
    assert all("registry-decorator" not in s.rules for s in verdict.symbols)


def test_a_registration_decorator_beside_a_body_change_is_still_flagged(tmp_path):
    verdict = _scan(tmp_path, _decorated(REGISTRY).replace("BLOCK=128)\n    return out", "BLOCK=256)\n    return out"))
    assert verdict.verdict != NOT_APPLICABLE, verdict.reason
    assert all("registry-decorator" not in s.rules for s in verdict.symbols)

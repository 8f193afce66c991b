"""A compile step upstream extracted out of an anchored host function into a
helper of its own, then wrapped in caching (docs/tricky-cases.md, "wrappers
that leave the default path alone"): the helper is followed as the anchored
definition's code (``moved-definition``), but what it carries of that
definition is the statements that came out of it. A later commit that keeps
every one of them and only changes what is around them — the helper's
decorator (``@lru_cache`` → ``@disk_memo``), or the carried statements handed
as a parameterless closure to a cache call with a key built from the
parameters — changes code the port never had: NOT_APPLICABLE/not-ported
(``extracted-scaffold``), the import of the cache included. A carried
statement changed inside the closure, a key statement that rebinds a name the
carried statements read, a closure that takes parameters, a decorator left to
supply a parameter the caller does not pass (an autotuner), and a definition
the port anchors itself stay flagged.

Each runs the real ``portq scan`` over a small synthetic history: base, the
extraction of the compile step into a cached helper, then the edits (the last one is read)."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "NORM"
title    = "Row norm"
upstream = "vllm"
paths    = ["ops/norm.py"]
tree     = ["kernels/", "engine/"]
tests    = ["tests/"]
"""

BASE = '''\
import math

from dsl import compile_kernel, fake, NormKernel


def norm_fwd(x, w, out, eps):
    N = x.shape[1]
    dtype = x.dtype
    key = (dtype, N)
    if key not in norm_fwd.cache:
        div = math.gcd(N, 128 // dtype.width)
        x_fake = fake(dtype, N, div)
        w_fake = fake(dtype, N, div)
        norm_fwd.cache[key] = compile_kernel(
            NormKernel(dtype, N),
            x_fake,
            w_fake,
            options="--fast",
        )
    norm_fwd.cache[key](x, w, out, eps)


norm_fwd.cache = {}
'''

CARRIED = '''\
    div = math.gcd(N, 128 // dtype.width)
    x_fake = fake(dtype, N, div)
    w_fake = fake(dtype, N, div)
    return compile_kernel(
        NormKernel(dtype, N),
        x_fake,
        w_fake,
        options="--fast",
    )
'''

EXTRACTED = '''\
import math
from functools import lru_cache

from dsl import compile_kernel, fake, NormKernel


def norm_fwd(x, w, out, eps):
    N = x.shape[1]
    dtype = x.dtype
    _compile_norm_fwd(dtype, N)(x, w, out, eps)


@lru_cache(maxsize=None)
def _compile_norm_fwd(dtype, N):
''' + CARRIED

WRAPPED = '''\
import math
from functools import lru_cache

from dsl import compile_kernel, fake, NormKernel
from runtime.cache import memoised


def norm_fwd(x, w, out, eps):
    N = x.shape[1]
    dtype = x.dtype
    _compile_norm_fwd(dtype, N)(x, w, out, eps)


@lru_cache(maxsize=None)
def _compile_norm_fwd(dtype, N):
    key = ("norm_fwd", dtype, N)

    def _build():
{closure}
    return memoised(key, _build)
'''

REDECORATED = '''\
import math

from dsl import compile_kernel, fake, NormKernel
from runtime.cache import disk_memo


def norm_fwd(x, w, out, eps):
    N = x.shape[1]
    dtype = x.dtype
    _compile_norm_fwd(dtype, N)(x, w, out, eps)


@disk_memo
def _compile_norm_fwd(dtype, N):
''' + CARRIED

PORT = '''\
import math

from dsl import compile_kernel, fake, NormKernel


# portq: ports vllm:ops/norm.py::{anchored}
def row_norm(x, w, out, eps):
    N = x.shape[1]
    dtype = x.dtype
    key = (dtype, N)
    if key not in _CACHE:
        div = math.gcd(N, 128 // dtype.width)
        _CACHE[key] = compile_kernel(NormKernel(dtype, N), fake(dtype, N, div), fake(dtype, N, div),
                                     options="--fast")
    _CACHE[key](x, w, out, eps)


_CACHE = {{}}
'''


# A definition nothing ports whose unpacking return the syntax reader misreads: the module's import
# lines cannot be compared on their own, so the import of the cache is decided by who reads it.
UNRELATED = '''

def _grads(dx):
    return dx, *([None] * 2)
'''


def _tree(anchored="norm_fwd"):
    return {"kernels/norm.py": PORT.format(anchored=anchored),
            "engine/run.py": "from kernels.norm import row_norm\n\n\n"
                             "def step(x, w, out):\n    row_norm(x, w, out, 1e-6)\n"}


def _closure(carried=CARRIED):
    return "".join("    " + line + "\n" if line else "\n" for line in carried.splitlines())


def _edit(tmp_path, *edits, tree=None):
    """The verdict of the last of ``edits`` (the module's text after each), made after the extraction."""
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE + UNRELATED}),
        CommitSpec("compile in a cached helper", files={"ops/norm.py": EXTRACTED + UNRELATED}),
        *(CommitSpec(f"edit {n}", files={"ops/norm.py": after + UNRELATED}) for n, after in enumerate(edits, 1)),
    ], tree or _tree(), matrix=MATRIX)
    return verdicts[1 + len(edits)]


def _why(verdict):
    return [(s.symbol, s.verdict, s.justification, s.rules, s.reason) for s in verdict.symbols]


def test_the_carried_statements_handed_to_a_cache_unchanged_are_not_the_ports(tmp_path):
    verdict = _edit(tmp_path, WRAPPED.format(closure=_closure()))
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-ported"), _why(verdict)
    assert "extracted-scaffold" in verdict.rules, verdict.rules


def test_a_decorator_swapped_around_the_unwrapped_statements_is_not_the_ports(tmp_path):
    verdict = _edit(tmp_path, WRAPPED.format(closure=_closure()), REDECORATED)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "not-ported"), _why(verdict)
    assert "extracted-scaffold" in verdict.rules, verdict.rules


def test_a_carried_statement_changed_inside_the_closure_stays_flagged(tmp_path):
    changed = CARRIED.replace('options="--fast"', 'options="--fast --fma"')
    verdict = _edit(tmp_path, WRAPPED.format(closure=_closure(changed)))
    assert verdict.verdict in FLAGGED, _why(verdict)
    assert "extracted-scaffold" not in verdict.rules


def test_a_key_statement_rebinding_what_the_carried_statements_read_stays_flagged(tmp_path):
    after = WRAPPED.format(closure=_closure()).replace('    key = ("norm_fwd", dtype, N)\n',
                                                       '    key = ("norm_fwd", dtype, N)\n    N = N * 2\n')
    verdict = _edit(tmp_path, after)
    assert verdict.verdict in FLAGGED, _why(verdict)
    assert "extracted-scaffold" not in verdict.rules


def test_a_closure_that_takes_parameters_stays_flagged(tmp_path):
    after = WRAPPED.format(closure=_closure()).replace("def _build():", "def _build(N):")
    verdict = _edit(tmp_path, after)
    assert verdict.verdict in FLAGGED, _why(verdict)
    assert "extracted-scaffold" not in verdict.rules


def test_a_decorator_that_supplies_a_parameter_the_caller_leaves_out_stays_flagged(tmp_path):
    tuned = EXTRACTED.replace("@lru_cache(maxsize=None)", "@tuned(BLOCK=[64, 128])") \
        .replace("def _compile_norm_fwd(dtype, N):", "def _compile_norm_fwd(dtype, N, BLOCK):") \
        .replace("from functools import lru_cache", "from runtime.tuning import tuned")
    retuned = tuned.replace("@tuned(BLOCK=[64, 128])", "@tuned(BLOCK=[32, 64])")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE + UNRELATED}),
        CommitSpec("compile in a tuned helper", files={"ops/norm.py": tuned + UNRELATED}),
        CommitSpec("retune", files={"ops/norm.py": retuned + UNRELATED}),
    ], _tree(), matrix=MATRIX)
    verdict = verdicts[2]
    assert verdict.verdict in FLAGGED, _why(verdict)
    assert "extracted-scaffold" not in verdict.rules


def test_a_tuning_decorator_changed_stays_flagged_even_when_the_caller_passes_every_parameter(tmp_path):
    # the port carries the tuner too, so a change to what it tunes is the port's to follow (a port without
    # one lacks that interface: ``uncarried-tuner``)
    tree = _tree()
    tree["kernels/norm.py"] = tree["kernels/norm.py"].replace(
        "from dsl import compile_kernel, fake, NormKernel\n",
        "from dsl import compile_kernel, fake, NormKernel\nfrom runtime.tuning import Config, tuned\n").replace(
        "# portq: ports vllm:ops/norm.py::norm_fwd\ndef row_norm(",
        "# portq: ports vllm:ops/norm.py::norm_fwd\n@tuned(configs=[Config(BLOCK=64)])\ndef row_norm(")
    assert "@tuned(" in tree["kernels/norm.py"]
    tuned = EXTRACTED.replace("@lru_cache(maxsize=None)", "@tuned(configs=[Config(BLOCK=64)])") \
        .replace("def _compile_norm_fwd(dtype, N):", "def _compile_norm_fwd(dtype, N, BLOCK):") \
        .replace("_compile_norm_fwd(dtype, N)(x", "_compile_norm_fwd(dtype, N, AUTO)(x") \
        .replace("from functools import lru_cache", "from runtime.tuning import AUTO, Config, tuned")
    retuned = tuned.replace("Config(BLOCK=64)", "Config(BLOCK=32)")
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE + UNRELATED}),
        CommitSpec("compile in a tuned helper", files={"ops/norm.py": tuned + UNRELATED}),
        CommitSpec("retune", files={"ops/norm.py": retuned + UNRELATED}),
    ], tree, matrix=MATRIX)
    verdict = verdicts[2]
    assert verdict.verdict in FLAGGED, _why(verdict)
    assert "extracted-scaffold" not in verdict.rules


def test_a_cached_definition_the_port_anchors_itself_stays_flagged(tmp_path):
    verdict = _edit(tmp_path, WRAPPED.format(closure=_closure()), tree=_tree(anchored="_compile_norm_fwd"))
    assert verdict.verdict in FLAGGED, _why(verdict)
    assert "extracted-scaffold" not in verdict.rules

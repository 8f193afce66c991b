"""Registration of the public kernels as PyTorch custom ops (namespace ``portq``).

An engine compiles its model with ``torch.compile`` (often ``fullgraph=True``)
and captures CUDA graphs; a Triton launch inside plain Python is opaque to
both. Each public op is therefore registered with :func:`register` as
``torch.ops.portq.<name>``: its schema declares the arguments it writes
(``mutates_args``), and a fake implementation gives the shapes and dtypes of
what it returns, so the compiler traces the call as one node without running
it. The friendly Python wrappers keep their signatures and call the op through
:func:`call`, which first checks each argument's Python type against the
schema so that a wrong type gets the one-line message of
``portq_kernels.validation`` rather than the dispatcher's.

The op body (``_name``: host checks, then the launch) is what mirrors
upstream's host function, so it carries the ``# portq: ports`` anchor; the
public wrapper only dispatches to the op, and an audit that compared it with
upstream would find no launch to compare.

This module only registers and dispatches: it launches nothing and checks no
tensor contents (the op implementations do both).
"""
from __future__ import annotations

import operator
from typing import Callable, Iterable

import torch

from . import validation as check

NAMESPACE = "portq"

#: The ops registered so far, by name (the tests walk it).
REGISTERED: dict[str, "torch.library.CustomOpDef"] = {}
_KINDS: dict[str, tuple[tuple[str, str], ...]] = {}


def register(name: str, impl: Callable, *, mutates_args: Iterable[str], fake: Callable):
    """Register ``impl`` (type-annotated) as ``portq::name`` with its fake
    implementation; returns the op packet ``torch.ops.portq.name``."""
    op = torch.library.custom_op(f"{NAMESPACE}::{name}", impl, mutates_args=tuple(mutates_args))
    op.register_fake(fake)
    REGISTERED[name] = op
    packet = getattr(getattr(torch.ops, NAMESPACE), name)
    _KINDS[name] = tuple((arg.name, str(arg.type)) for arg in packet.default._schema.arguments)
    return packet


def _argument(name: str, kind: str, value):
    if value is None and kind.endswith("?"):
        return None
    base = kind.rstrip("?")
    if base == "Tensor":
        return check.tensor(name, value)
    if base in ("int", "SymInt"):
        if isinstance(value, (bool, torch.Tensor)) or not hasattr(value, "__index__"):
            check.fail(name, "an int", type(value).__name__, TypeError)
        return operator.index(value)
    if base == "bool":
        if not isinstance(value, bool):
            check.fail(name, "a bool", type(value).__name__, TypeError)
        return value
    if base == "str":
        if not isinstance(value, str):
            check.fail(name, "a str", type(value).__name__, TypeError)
        return value
    if base == "float":
        if isinstance(value, (bool, torch.Tensor)) or not isinstance(value, (int, float)):
            check.fail(name, "a float", type(value).__name__, TypeError)
        return float(value)
    return value


def call(name: str, *args):
    """Call ``torch.ops.portq.name`` on ``args`` (all of the schema's arguments,
    in order), after checking their Python types (not when compiling: the
    compiler sees the op call alone)."""
    packet = getattr(getattr(torch.ops, NAMESPACE), name)
    if torch.compiler.is_compiling():
        return packet(*args)
    kinds = _KINDS[name]
    checked = [_argument(arg, kind, value) for (arg, kind), value in zip(kinds, args)]
    # A meta tensor among real ones would take the call to the fake
    # implementation (the dispatcher picks one by device): refuse it here;
    # other device mismatches are refused by the op itself.
    tensors = [(arg, value) for (arg, _), value in zip(kinds, checked) if isinstance(value, torch.Tensor)]
    real = [(arg, value.device) for arg, value in tensors if value.device.type != "meta"]
    if real:
        for arg, value in tensors:
            if value.device.type == "meta":
                check.fail(arg, f"on {real[0][1]} (the device of {real[0][0]})", value.device)
    return packet(*checked)


def no_output(*args, **kwargs) -> None:
    """The fake implementation of an op that only writes its mutated arguments."""
    return None

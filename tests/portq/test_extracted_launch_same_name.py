"""Rule ``extracted-launch``: a launch moved out of a ported definition into a helper it now calls is read
as the definition runs it (``classifier.moves.as_called_source``). An argument passed under the same name
as the helper's parameter (``launch(x=x)``) binds that parameter to the caller's ``x``: where the caller
assigned ``x`` (``x, w = ctx.saved_tensors``), the helper's grid resolves through that assignment as the
caller's grid did, never through a bare parameter. A helper called with another value under the same name,
with an extra argument, or launching another grid still reads differently."""
from __future__ import annotations

from portq.classifier.moves import as_called_source
from portq.language.extraction import signature_of
from portq.language.symbols import symbol_table

OLD = b'''\
class Op:
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        n = x.numel()
        dx = torch.empty_like(x)
        _bwd[(triton.cdiv(n, ctx.block),)](dy, x, w, dx, n, BLOCK=ctx.block)
        return dx, None
'''

HELPER = '''\
def launch_bwd(dy, x, w, dx, BLOCK):
    n = x.numel()
    _bwd[(triton.cdiv(n, BLOCK),)](dy, x, w, dx, n, BLOCK=BLOCK)


class Op:
    def backward(ctx, dy):
{prelude}        dx = torch.empty_like(x)
        launch_bwd({arguments})
        return dx, None
'''

PRELUDE = "        x, w = ctx.saved_tensors\n"
ARGUMENTS = "dy=dy, x=x, w=w, dx=dx, BLOCK=ctx.block"


def _grid(source: bytes, name: str):
    table = symbol_table(source, "ops/op.py")
    definition = next(d for d in table.definitions if d.qualified_name == name)
    launch, = signature_of(definition, table.source, "ops/op.py").launches
    return launch.grid_form, launch.texts


def _as_called(new: str):
    table = symbol_table(new.encode(), "ops/op.py")
    source = as_called_source(table, "Op.backward", table, "launch_bwd")
    assert source is not None
    return _grid(source, "launch_bwd")


def test_an_argument_passed_under_the_parameters_own_name_takes_the_callers_value():
    old_grid, old_texts = _grid(OLD, "Op.backward")
    new_grid, new_texts = _as_called(HELPER.format(prelude=PRELUDE, arguments=ARGUMENTS))
    assert new_grid == old_grid
    assert len(new_texts) == len(old_texts)


def test_a_positional_argument_of_the_same_name_takes_the_callers_value_too():
    old_grid, _ = _grid(OLD, "Op.backward")
    new_grid, _ = _as_called(HELPER.format(prelude=PRELUDE, arguments="dy, x, w, dx, ctx.block"))
    assert new_grid == old_grid


def test_the_same_name_holding_another_value_in_the_caller_reads_differently():
    old_grid, _ = _grid(OLD, "Op.backward")
    new_grid, _ = _as_called(HELPER.format(prelude="        w, x = ctx.saved_tensors\n", arguments=ARGUMENTS))
    assert new_grid != old_grid


def test_a_changed_grid_in_the_helper_reads_differently():
    old_grid, _ = _grid(OLD, "Op.backward")
    new_grid, _ = _as_called(HELPER.format(prelude=PRELUDE, arguments=ARGUMENTS).replace(
        "triton.cdiv(n, BLOCK)", "triton.cdiv(n, 2 * BLOCK)"))
    assert new_grid != old_grid


def test_an_extra_argument_the_helper_passes_reads_differently():
    _, old_texts = _grid(OLD, "Op.backward")
    _, new_texts = _as_called(HELPER.format(prelude=PRELUDE, arguments=ARGUMENTS).replace(
        "(dy, x, w, dx, n, BLOCK=BLOCK)", "(dy, x, w, dx, n, x.stride(0), BLOCK=BLOCK)"))
    assert new_texts != old_texts


def test_a_caller_value_that_reads_a_name_the_helper_binds_otherwise_is_not_carried_over():
    # the caller's `x` is read from its own `w`, which the helper's `w` is not (passed another value)
    old = OLD.replace(b"x, w = ctx.saved_tensors", b"w = ctx.saved_tensors[1]\n        x = w.t()")
    old_grid, _ = _grid(old, "Op.backward")
    new_grid, _ = _as_called(HELPER.format(prelude="        w = ctx.saved_tensors[1]\n        x = w.t()\n",
                                           arguments=ARGUMENTS.replace("w=w", "w=dy")))
    assert new_grid != old_grid


def test_a_value_the_caller_assigns_on_one_path_only_is_not_carried_over():
    old_grid, _ = _grid(OLD, "Op.backward")
    new_grid, _ = _as_called(HELPER.format(
        prelude="        x, w = ctx.saved_tensors\n        if ctx.flip:\n            x = w\n", arguments=ARGUMENTS))
    assert new_grid != old_grid

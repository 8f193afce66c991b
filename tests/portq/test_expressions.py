"""Canonical launch expressions (portq.language.expressions): equal for spellings that
mean the same grid in either language, different otherwise, never a crash."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from portq.language.expressions import canonical_form
from portq.language.signatures import normalise_name
from portq.language.symbols import parse


def _python(expression: str, bindings: str = ""):
    root = parse(f"{bindings}\ngrid = {expression}\n".encode(), "python").root_node
    assignments = {}
    for statement in root.named_children:
        assignment = statement.named_children[0] if statement.named_children else None
        if assignment is not None and assignment.type == "assignment":
            assignments.setdefault(assignment.child_by_field_name("left").text.decode(),
                                   assignment.child_by_field_name("right"))
    grid = assignments.pop("grid", None)  # None: the text did not even parse as an assignment
    return canonical_form(grid, assignments.get, normalise_name, grid=True) if grid is not None else None


def _cpp(expression: str, bindings: str = ""):
    root = parse(f"void f() {{ {bindings} dim3 grid({expression}); }}".encode(), "cpp").root_node
    assignments = {}
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type == "init_declarator":
            assignments.setdefault(node.child_by_field_name("declarator").text.decode(), node.child_by_field_name("value"))
    grid = assignments.pop("grid", None)
    return canonical_form(grid, assignments.get, normalise_name, grid=True) if grid is not None else None


names = st.sampled_from(["n", "num_tokens", "block_size", "num_reqs", "heads", "B", "H"])
literals = st.integers(min_value=2, max_value=4096)


@given(names, literals)
def test_ceiling_division_is_one_operator_in_both_languages(name, divisor):
    forms = {
        _python(f"(triton.cdiv({name}, {divisor}),)").text,
        _python(f"(({name} + {divisor} - 1) // {divisor},)").text,
        _python(f"(({name} + {divisor - 1}) // {divisor},)").text,
        _cpp(f"({name} + {divisor - 1}) / {divisor}").text,
        _cpp(f"ceil_div({name}, {divisor})").text,
    }
    assert len(forms) == 1, forms


@given(names, names, literals)
def test_sums_and_products_compare_in_any_order(a, b, k):
    assert _python(f"({a} * {b} + {k},)").text == _cpp(f"{k} + {b} * {a}").text


@given(names)
def test_the_sm_count_read_from_the_device_is_one_leaf_whatever_the_local_is_called(local):
    python = _python(f"(min(triton.cdiv(n, 256), 4 * {local}_sms),)",
                     f"{local}_sms = torch.cuda.get_device_properties(x.device).multi_processor_count")
    cpp = _cpp("std::min((n + 255) / 256, 4 * num_sms)",
               "const int num_sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;")
    assert python.text == cpp.text and "$sms" in python.leaves


def test_a_different_grid_is_a_different_form():
    assert _python("(triton.cdiv(n, 256),)").text != _python("(triton.cdiv(n, 128),)").text
    assert _python("(B * H,)").text != _python("(B * H * C,)").text


def test_trailing_unit_axes_and_casts_do_not_matter():
    assert _cpp("static_cast<unsigned>(n), 1, 1").text == _python("(int(n),)").text


def test_what_cannot_be_resolved_is_named():
    form = _python("launch_grid(num_tiles, config)")
    assert form.opaque == ("launch_grid(...)",)


@settings(max_examples=200)
@given(st.text(alphabet="ab1()+-*/%,<> ?:", max_size=30))
def test_any_text_gives_a_form_or_names_what_it_could_not_read(text):
    for form in (_python(text or "0"), _cpp(text or "0")):
        assert form is None or (isinstance(form.text, str) and form.text)


def _python_body(source: str):
    """The form of `grid` in a function body, resolved through its unpacking assignments."""
    from portq.language.signatures_python import PythonLocals
    function = parse(source.encode(), "python").root_node.named_children[0]
    body = function.child_by_field_name("body")
    local = PythonLocals(body)
    return canonical_form(local["grid"], local.get, normalise_name, grid=True)


def test_each_target_of_an_unpacked_shape_is_its_own_axis():
    form = _python_body("def f(x):\n    n_rows, n_cols = x.shape\n    grid = (n_rows, n_cols)\n")
    assert form.text == _python("(x.shape[0], x.shape[1])").text
    assert _python_body("def f(x):\n    *lead, n = x.size()\n    grid = (n,)\n").text == _python("(x.size(-1),)").text


def test_an_unpacked_tuple_keeps_each_item_in_its_place():
    form = _python_body("def f(x):\n    a, b = x.shape[1], x.shape[0]\n    grid = (b, a)\n")
    assert form.text == _python("(x.shape[0], x.shape[1])").text


def test_an_unpacked_target_is_walked_as_the_value_it_unpacks():
    # rules that ask which names a local's value reads walk the unpacked value's nodes
    from portq.language.signatures import nodes_of
    from portq.language.signatures_python import PythonLocals
    function = parse(b"def f(self, x):\n    m, n = self.sizes(x)\n", "python").root_node.named_children[0]
    local = PythonLocals(function.child_by_field_name("body"))
    assert [i.text.decode() for i in nodes_of(local["n"], ("identifier",), "python")] == ["self", "sizes", "x"]

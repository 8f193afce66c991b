"""Launch geometry as expression trees compared modulo naming.

A port that re-implements upstream names its locals differently, spells a
ceiling division as ``triton.cdiv(n, 256)`` where upstream writes
``(n + 255) / 256``, and reads the SM count into ``sm_count`` where upstream
has ``num_sms``. A verdict must not turn on any of that, so grids and block
sizes are reduced to one canonical form for both languages:

- identifiers are resolved through their bindings (local assignments, a
  helper's parameters bound to the caller's arguments, a same-module helper's
  ``return``s: one form when they agree, else ``oneof(...)`` of them); what remains are the definition's parameters,
  by normalised name;
- known equivalents become one operator: ``cdiv`` for ``ceil_div``,
  ``triton.cdiv``, ``div_ceil`` and ``(a + b - 1) / b``; ``min``/``max`` for
  ``std::min``/``std::max``; casts (``static_cast<T>``, ``int(x)``,
  ``(unsigned)x``) vanish; C++ ``/`` on integers is Python ``//``;
- the device's SM count, read as ``multi_processor_count``,
  ``multiProcessorCount``, ``get_num_sms()`` or held in a local such as
  ``num_sms``/``sm_count``, is the one leaf ``$sms``;
- sums and products are flattened, constants folded and operands sorted, a
  grid's trailing ``1`` axes are dropped (``dim3(n, 1)`` is ``(n,)``).

Anything not understood stays as an opaque leaf and is listed in
``Form.opaque``, so the caller can say where resolution failed instead of
deciding from a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable


Resolver = Callable[[str], Any]
"""name -> the expression node it is bound to, or None."""
HelperLookup = Callable[[str], Any]
"""callee name -> ``(parameter names, returned expression, its local assignments)`` of a helper (lists of the
last two, one per return, when it has several; ``oneof(...)`` is then the set of forms it returns), or None."""

_CDIV = frozenset({"cdiv", "ceil_div", "ceildiv", "div_ceil", "divup", "div_up", "div_round_up", "ceil_div_int"})
_CASTS = frozenset({"int", "static_cast", "unsigned", "int32_t", "int64_t", "uint32_t", "size_t", "long", "reinterpret_cast"})
_SM_CALLS = frozenset({"get_num_sms", "num_sms", "get_sm_count", "sm_count", "get_num_cus", "getmultiprocessorcount"})
_SM_FIELDS = frozenset({"multi_processor_count", "multiprocessorcount"})
_SM_NAMES = frozenset({"num_sms", "sm_count", "sms", "num_sm", "n_sms", "multi_processor_count", "num_cus", "cu_count",
                       "multiprocessorcount", "num_multiprocessors"})
_POW2 = frozenset({"next_power_of_2", "next_pow2", "_next_pow2", "next_power_of_two"})
_MAX_DEPTH = 12


def node_text(node) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None else ""


@dataclass(frozen=True)
class Form:
    """A canonical expression: ``text`` compares, ``leaves`` are the
    parameter names and ``$sms`` it depends on, ``opaque`` what it could not
    resolve (call names or source text)."""

    text: str
    leaves: tuple[str, ...] = ()
    opaque: tuple[str, ...] = ()
    # The definition's own bindings the form was resolved through, in the
    # order they were followed: (name, the bound value's node). A form that
    # changed while the line that writes it did not changed in one of these.
    bindings: tuple[tuple[str, Any], ...] = ()


@dataclass
class _State:
    resolve: Resolver
    helper: HelperLookup | None
    normalise: Callable[[str], str]
    leaves: set[str] = field(default_factory=set)
    opaque: list[str] = field(default_factory=list)
    terms: dict[str, Any] = field(default_factory=dict)  # a helper's parameters, evaluated in the caller's scope
    bindings: list | None = field(default_factory=list)  # None inside a helper: its locals are not the definition's


class Unpacked:
    """One target of an unpacking assignment whose value is not written as a
    tuple (``n_rows, n_cols = x.shape``, ``y, n = _allocate(x)``): it is bound
    to that element of the value, never to the whole value, or two targets
    would read as equal. Everywhere else (text, lines) it reads as the value's node."""

    def __init__(self, node, index: int):
        self.node, self.index = node, index

    def __getattr__(self, name):
        return getattr(self.node, name)


def canonical_form(node, resolve: Resolver, normalise: Callable[[str], str], helper: HelperLookup | None = None,
                   grid: bool = False) -> Form:
    """The canonical form of ``node`` (a grid when ``grid``: a tuple of axes);
    ``normalise`` is how parameter names compare (``portq.language.signatures``)."""
    state = _State(resolve, helper, normalise)
    term = _term(node, state, frozenset(), 0)
    if grid:
        axes = list(term[1:]) if term[0] == "tuple" else [term]
        while len(axes) > 1 and axes[-1] == ("lit", 1):
            axes.pop()
        term = ("tuple", *axes)
    followed = tuple({name: (name, value) for name, value in state.bindings}.values())
    return Form(_render(term), tuple(sorted(state.leaves)), tuple(dict.fromkeys(state.opaque)), followed)


# --- terms: nested tuples ("op", ...) -------------------------------------------------


def _lit(value: int):
    return ("lit", value)


def _term(node, state: _State, bound: frozenset, depth: int):
    if node is None:
        return ("?", "")
    if depth > _MAX_DEPTH:
        state.opaque.append(node_text(node))
        return ("?", node_text(node))
    if isinstance(node, Unpacked):
        if node.node.type in ("call", "call_expression"):
            return _call(node.node, state, bound, depth + 1, element=node.index)
        return _element(_term(node.node, state, bound, depth + 1), node.index)
    kind = node.type
    text = node_text(node)
    recurse = lambda child, seen=bound: _term(child, state, seen, depth + 1)  # noqa: E731
    if kind in ("integer", "number_literal"):
        literal = int_literal(text)
        if literal is not None:
            return _lit(literal)
        return ("num", text)
    if kind in ("parenthesized_expression", "expression_statement"):
        inner = [c for c in node.named_children if c.type != "comment"]
        return recurse(inner[0]) if len(inner) == 1 else ("tuple", *(recurse(c) for c in inner))
    if kind in ("identifier", "type_identifier"):
        return _name(text, state, bound, depth)
    if kind == "parameter_declaration":  # `dim3 grid(n)` read as a declaration of parameter n
        return _name(text.strip(), state, bound, depth) if re.fullmatch(r"[A-Za-z_]\w*", text.strip()) else ("?", text)
    if kind in ("tuple", "list", "expression_list", "initializer_list", "argument_list", "parameter_list"):
        items = [recurse(c) for c in node.named_children if c.type != "comment"]
        if len(items) == 1 and kind in ("initializer_list", "argument_list", "parameter_list"):
            return items[0]  # `dim3 grid(n)`, `int x{n}`: one value, not a tuple
        return ("tuple", *items)
    if kind == "lambda":
        parameters = node.child_by_field_name("parameters")
        names = {node_text(c) for c in (parameters.named_children if parameters else []) if c.type == "identifier"}
        return recurse(node.child_by_field_name("body"), bound | names)
    if kind in ("binary_operator", "binary_expression"):
        operator = node_text(node.child_by_field_name("operator"))
        return _binary(operator, recurse(node.child_by_field_name("left")), recurse(node.child_by_field_name("right")),
                       node.type == "binary_expression")
    if kind in ("unary_operator", "unary_expression"):
        operator = node_text(node.child_by_field_name("operator"))
        argument = recurse(node.child_by_field_name("argument"))
        return _product([_lit(-1), argument]) if operator == "-" else argument if operator == "+" else ("op", operator, argument)
    if kind == "cast_expression":
        return recurse(node.child_by_field_name("value"))
    if kind == "conditional_expression":
        if node.child_by_field_name("condition") is not None:  # C++ a ? b : c
            parts = [node.child_by_field_name(f) for f in ("condition", "consequence", "alternative")]
        else:  # Python b if a else c
            named = node.named_children
            parts = [named[1], named[0], named[2]] if len(named) == 3 else []
        if len(parts) == 3:
            return ("cond", *(recurse(p) for p in parts))
    if kind in ("comparison_operator", "boolean_operator", "not_operator"):
        return ("op", re.sub(r"\s+", "", text))
    if kind in ("attribute", "field_expression"):
        attribute = node.child_by_field_name("attribute") or node.child_by_field_name("field")
        base = node.child_by_field_name("object") or node.child_by_field_name("argument")
        name = node_text(attribute)
        if name.lower() in _SM_FIELDS:
            state.leaves.add("$sms")
            return ("sms",)
        return ("attr", _base(base, state, bound, depth), name)
    if kind in ("subscript", "subscript_expression"):
        value = node.child_by_field_name("value") or node.child_by_field_name("argument")
        index = node.child_by_field_name("subscript") or node.child_by_field_name("index") or \
            next((c for c in node.named_children if c is not value), None)
        if value is not None and node_text(value).split(".")[-1] == "shape":
            return ("shape", _base(value.child_by_field_name("object"), state, bound, depth), recurse(index))
        if value is not None and value.type == "identifier" and node_text(value) in bound:
            return ("meta", node_text(index).strip("'\""))  # META["BLOCK"] inside a grid lambda
        return ("index", recurse(value), recurse(index))
    if kind in ("call", "call_expression"):
        return _call(node, state, bound, depth)
    state.opaque.append(text)
    return ("?", re.sub(r"\s+", "", text))


def _base(node, state: _State, bound: frozenset, depth: int):
    """The object of ``x.shape``/``x.size(0)``: a parameter by normalised
    name, resolved through bindings like any other term."""
    if node is not None and node.type == "identifier":
        return _name(node_text(node), state, bound, depth, as_object=True)
    return _term(node, state, bound, depth + 1)


def _name(text: str, state: _State, bound: frozenset, depth: int, as_object: bool = False):
    if text in bound:
        return ("meta", text)
    if text in state.terms:
        return state.terms[text]
    value = state.resolve(text)
    if value is not None and node_text(value) != text and not _passes_through(value, text):
        if state.bindings is not None:
            state.bindings.append((text, value))
        return _term(value, state, bound | {text}, depth + 1)
    normalised = state.normalise(text)
    if not as_object and normalised in _SM_NAMES:
        state.leaves.add("$sms")
        return ("sms",)
    state.leaves.add(normalised)
    return ("name", normalised)


def _call(node, state: _State, bound: frozenset, depth: int, element: int | None = None):
    """``element``: the call's value is unpacked and this is the element read
    (of a helper's returned tuple, only that item is evaluated)."""
    if element is None:
        return _whole_call(node, state, bound, depth)
    found = _helper_of(node, state)
    if found is None:
        return _element(_whole_call(node, state, bound, depth), element)
    return _inlined(node, state, bound, depth, found, element)


def _helper_of(node, state: _State):
    function = node.child_by_field_name("function")
    if state.helper is None or function is None or function.type not in ("identifier", "qualified_identifier"):
        return None
    return state.helper(re.split(r"::", node_text(function))[-1])


def _inlined(node, state: _State, bound: frozenset, depth: int, found, element: int | None = None):
    """A same-module helper's returned expression in the caller's scope: its
    parameters bound to the call's arguments, its own locals its own (the
    caller's names in resolution do not reach into it)."""
    arguments = node.child_by_field_name("arguments")
    args = [a for a in (arguments.named_children if arguments else []) if a.type not in ("comment", "keyword_argument")]
    names, returned, assignments = found
    terms = {name: _term(arg, state, bound, depth + 1) for name, arg in zip(names, args) if name}
    if not isinstance(returned, list):
        inner = _State(assignments.get, state.helper, state.normalise, state.leaves, state.opaque, terms, None)
        return _term(_item(returned, element), inner, frozenset(), depth + 1)
    # Several returns: equal forms are one; else the set of forms it can return.
    forms = {}
    for value, local in zip(returned, assignments):
        inner = _State(local.get, state.helper, state.normalise, state.leaves, state.opaque, terms, None)
        term = _term(_item(value, element), inner, frozenset(), depth + 1)
        forms.setdefault(_render(term), term)
    if len(forms) == 1:
        return next(iter(forms.values()))
    return ("oneof", *(forms[key] for key in sorted(forms)))


def _item(value, element: int | None):
    """The ``element``-th item of a returned ``a, b`` (the whole value when
    ``element`` is None, or when the value is not written as a tuple)."""
    if element is None or value is None:
        return value
    while value.type == "parenthesized_expression" and value.named_child_count == 1:
        value = value.named_children[0]
    items = [c for c in value.named_children if c.type != "comment"] if value.type in ("expression_list", "tuple") else []
    return items[element] if -len(items) <= element < len(items) else Unpacked(value, element)


def _whole_call(node, state: _State, bound: frozenset, depth: int):
    function = node.child_by_field_name("function")
    arguments = node.child_by_field_name("arguments")
    args = [a for a in (arguments.named_children if arguments else []) if a.type not in ("comment", "keyword_argument")]
    callee = node_text(function)
    short = re.split(r"::|\.", re.sub(r"<.*>$", "", callee))[-1].lower()
    if short in _CASTS and len(args) == 1:
        return _term(args[0], state, bound, depth + 1)
    if function is not None and function.type == "attribute" and short in ("size", "stride") and len(args) <= 1:
        base = _base(function.child_by_field_name("object"), state, bound, depth)
        index = _term(args[0], state, bound, depth + 1) if args else ("all",)
        return ("shape" if short == "size" else "stride", base, index)
    if function is not None and function.type == "field_expression" and short in ("size", "stride") and len(args) <= 1:
        base = _base(function.child_by_field_name("argument"), state, bound, depth)
        index = _term(args[0], state, bound, depth + 1) if args else ("all",)
        return ("shape" if short == "size" else "stride", base, index)
    if function is not None and function.type in ("attribute", "field_expression") and short == "numel" and not args:
        base = function.child_by_field_name("object") or function.child_by_field_name("argument")
        return ("numel", _base(base, state, bound, depth))
    if short in _SM_CALLS:
        state.leaves.add("$sms")
        return ("sms",)
    found = _helper_of(node, state)
    if found is not None:
        return _inlined(node, state, bound, depth, found)
    terms = [_term(a, state, bound, depth + 1) for a in args]
    if short in _CDIV and len(terms) == 2:
        return ("cdiv", *terms)
    if short in ("min", "max") and terms:
        flat = []
        for term in terms:
            flat.extend(term[1:] if term[0] == short else [term])
        return (short, *sorted(set(flat), key=_render))
    if short in _POW2 and len(terms) == 1:
        return ("pow2", terms[0])
    if short == "dim3":
        return ("tuple", *terms)
    state.opaque.append(f"{callee}(...)")
    return ("call", callee, *terms)


def _element(term, index: int):
    """The ``index``-th element of ``term`` (negative counts from the end):
    an item of a tuple (a helper's ``return y, n``), an axis of a shape."""
    if term[0] == "tuple" and -len(term) < index < len(term) - 1:
        return term[1:][index]
    if term[0] == "attr" and term[2] == "shape":
        return ("shape", term[1], _lit(index))
    if term[0] == "shape" and term[2] == ("all",):
        return ("shape", term[1], _lit(index))
    if term[0] == "oneof":
        forms = {_render(item): item for item in (_element(t, index) for t in term[1:])}
        return next(iter(forms.values())) if len(forms) == 1 else ("oneof", *(forms[key] for key in sorted(forms)))
    return ("index", term, _lit(index))


def _passes_through(value, name: str) -> bool:
    """``n = check.integer("n", n)``: a validating call that hands its own
    argument back is the parameter itself, not a new value."""
    if value.type not in ("call", "call_expression"):
        return False
    arguments = value.child_by_field_name("arguments")
    return any(a.type == "identifier" and node_text(a) == name for a in (arguments.named_children if arguments else []))


def _binary(operator: str, left, right, cpp: bool):
    if operator == "+":
        return _sum([(1, left), (1, right)])
    if operator == "-":
        return _sum([(1, left), (-1, right)])
    if operator == "*":
        return _product([left, right])
    if operator == "//" or (operator == "/" and cpp):
        return _floordiv(left, right)
    if operator == "%":
        return ("mod", left, right)
    return (operator, left, right)


def _terms_of_sum(term) -> list[tuple[int, Any]]:
    if term[0] == "sum":
        return list(term[1:])
    if term[0] == "lit":
        return [(term[1], ("lit", 1))] if term[1] else []
    if term[0] == "prod" and term[1][0] == "lit":
        rest = term[2:]
        return [(term[1][1], rest[0] if len(rest) == 1 else ("prod", *rest))]
    return [(1, term)]


def _sum(signed: list[tuple[int, Any]]):
    coefficients: dict[Any, int] = {}
    for sign, term in signed:
        for coefficient, part in _terms_of_sum(term):
            coefficients[part] = coefficients.get(part, 0) + sign * coefficient
    parts = sorted(((c, t) for t, c in coefficients.items() if c), key=lambda ct: (_render(ct[1]), ct[0]))
    if not parts:
        return _lit(0)
    if len(parts) == 1:
        coefficient, part = parts[0]
        return _lit(coefficient) if part == ("lit", 1) else part if coefficient == 1 else _product([_lit(coefficient), part])
    return ("sum", *parts)


def _product(factors: list):
    constant, rest = 1, []
    for factor in factors:
        for part in factor[1:] if factor[0] == "prod" else [factor]:
            if part[0] == "lit":
                constant *= part[1]
            else:
                rest.append(part)
    if constant == 0:
        return _lit(0)
    if constant != 1 and len(rest) == 1 and rest[0][0] == "sum":  # 2 * (x - 1) is 2 * x - 2
        return _sum([(constant, _product([_lit(c), part])) for c, part in rest[0][1:]])
    rest.sort(key=_render)
    if not rest:
        return _lit(constant)
    if constant == 1 and len(rest) == 1:
        return rest[0]
    return ("prod", *(([_lit(constant)] if constant != 1 else []) + rest))


def _floordiv(numerator, divisor):
    """``(a + b - 1) // b`` is ``cdiv(a, b)``, also with a literal ``b``."""
    terms = _terms_of_sum(numerator)
    if divisor[0] == "lit" and divisor[1] > 1:
        for coefficient, part in terms:
            if part == ("lit", 1) and coefficient == divisor[1] - 1:
                return ("cdiv", _sum([(c, p) for c, p in terms if p != ("lit", 1)]), divisor)
    else:
        parts = dict((p, c) for c, p in terms)
        if parts.get(divisor) == 1 and parts.get(("lit", 1)) == -1:
            return ("cdiv", _sum([(c, p) for c, p in terms if p not in (divisor, ("lit", 1))]), divisor)
    return ("floordiv", numerator, divisor)


_SHAPES = {  # head -> format of its rendered operands
    "floordiv": "({0} // {1})", "mod": "({0} % {1})", "index": "{0}[{1}]", "cond": "({1} if {0} else {2})",
    "numel": "{0}.numel", "shape": "{0}.shape[{1}]", "stride": "{0}.stride[{1}]",
}
_LEAVES = {"lit": "{0}", "name": "{0}", "num": "{0}", "meta": "META[{0}]", "?": "?{0}", "attr": None}


def _render(term) -> str:
    head = term[0]
    if head == "sms":
        return "$sms"
    if head == "all":
        return ":"
    if head in _LEAVES and head != "attr":
        return _LEAVES[head].format(term[1])
    if head == "attr":
        return f"{_render(term[1])}.{term[2]}"
    if head == "tuple":
        inner = ", ".join(_render(t) for t in term[1:])
        return f"({inner},)" if len(term) == 2 else f"({inner})"
    if head == "sum":
        out = ""
        for coefficient, part in term[1:]:
            body = _render(part) if part != ("lit", 1) else str(abs(coefficient))
            scaled = body if abs(coefficient) == 1 or part == ("lit", 1) else f"{abs(coefficient)} * {body}"
            sign = "-" if coefficient < 0 else "+"
            out += (f" {sign} " if out else ("-" if sign == "-" else "")) + scaled
        return f"({out})"
    if head == "prod":
        return " * ".join(_render(t) for t in term[1:])
    if head in _SHAPES:
        return _SHAPES[head].format(*(_render(t) for t in term[1:]))
    if head in ("op", "call"):
        if head == "op" and len(term) == 2:
            return str(term[1])
        return f"{term[1]}({', '.join(_render(t) for t in term[2:])})"
    return f"{head}({', '.join(_render(t) for t in term[1:])})"


def int_literal(text: str) -> int | None:
    """An integer literal of either language (``256``, ``0x100``, ``256u``), or None."""
    text = text.strip().rstrip("uUlL")
    try:
        return int(text, 0)
    except ValueError:
        return None

"""Signatures of C/C++/CUDA definitions (``portq.language.signatures`` holds the
records): parameters with template parameters as constexpr, dead and
out-parameters, ``<<<grid, block, smem, stream>>>`` launches (also inside
function-like macros of the file or of a header it includes) with their grid
and block as canonical expressions, and ``blockIdx``/``gridDim`` use (also by the same-file
``__device__`` helpers a kernel calls)."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import Any

from portq.language.expressions import Form, canonical_form
from portq.language.signatures import (
    _CPP_NON_VARIABLES,
    Decomposition,
    Launch,
    Param,
    ReachingLocals,
    Signature,
    Use,
    _closure_identifiers,
    _form_fields,
    _line_of,
    _Lines,
    _resolve_literal,
    _root,
    _text,
    _walk,
    bind_arguments,
    bindings_quoted,
    file_definitions,
    kernel_params_in_file,
    normalise_kernel_name,
    normalise_name,
    normalised_text,
    returns_of,
)
from portq.language.symbols import KIND_CUDA_KERNEL, KIND_DEVICE_FUNCTION, KIND_FUNCTION, function_declarator, parse


def _function_macros(root):
    """(definition node, body node) of each function-like macro of a file (its
    root node) that has a body, in source order."""
    for node in _walk(root):
        if node.type == "preproc_function_def":
            value = node.child_by_field_name("value")
            if value is not None:
                yield node, value


@lru_cache(maxsize=16)
def _file_launch_macros(root) -> tuple[tuple[str, str], ...]:
    """(name, body text) of each function-like macro of a file (its root node)
    whose body holds a ``<<<`` launch, in source order: the whole file is
    walked once, not once per signature of it, and not at all when its text
    holds no ``define`` or no ``<<<``."""
    text = root.text or b""
    if b"<<<" not in text or b"define" not in text:
        return ()
    return tuple((_text(node.child_by_field_name("name")), _text(value))
                 for node, value in _function_macros(root) if "<<<" in _text(value))


@lru_cache(maxsize=16)
def _file_macro_reads(root) -> tuple[tuple[str, frozenset[str]], ...]:
    """(name, identifiers its body names other than its own parameters) of each
    function-like macro of a file (its root node): an invocation of the macro
    in a function's body reads those names in that function's scope, as its
    expansion would (``#define inst(v) if (n == v) return k<v>`` reads ``n``)."""
    text = root.text or b""
    if b"define" not in text:
        return ()
    found = []
    for node, value in _function_macros(root):
        parameters = node.child_by_field_name("parameters")
        own = {_text(p) for p in parameters.named_children} if parameters is not None else set()
        names = frozenset(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", _text(value))) - own
        found.append((_text(node.child_by_field_name("name")), names))
    return tuple(found)


@lru_cache(maxsize=64)
def _parsed_macro(value: str):
    """A launch macro's body parsed as the body of a function (continuation lines joined)."""
    body_text = value.replace("\\\n", "\n")
    return parse(("void __portq_macro() {\n" + body_text + "\n;}\n").encode(), "cpp").root_node


class _CppExtractor:
    def __init__(self, node, signature: Signature, lines: _Lines, imported=None) -> None:
        self.imported = imported  # helpers and macro roots of the headers the file includes (portq.tree.tree_index)
        self.outer = node
        self.signature = signature
        self.lines = lines
        self.function = node
        if node.type == "template_declaration":
            self.function = next((c for c in node.named_children if c.type == "function_definition"), node)
        self.body = self.function.child_by_field_name("body")

    def run(self) -> None:
        self._template_params()
        self._params()
        if self.body is None:
            return
        self._dead_params()
        self._out_params()
        self._launches()
        self._program_ids()

    def _out_params(self) -> None:
        """Non-const pointer/reference parameters the body only writes through
        (``out->f = v``, ``(*out).f = v``, ``*out = v``, ``ref = v``): a
        Triton port returns these values instead of taking the parameter."""
        candidates = {}
        for declaration in self._parameter_nodes():
            declarator = declaration.child_by_field_name("declarator")
            if declarator is None or declarator.type not in ("pointer_declarator", "reference_declarator"):
                continue
            if any(c.type == "type_qualifier" and _text(c) == "const" for c in declaration.children):
                continue
            name = self._declarator_name(declarator)
            if name:
                candidates[name] = []
        for node in _walk(self.body):
            if node.type != "identifier" or _text(node) not in candidates or candidates[_text(node)] is None:
                continue
            written = _cpp_written_through(node)
            if written is None:
                candidates[_text(node)] = None  # read or passed on: not an out-parameter
            else:
                candidates[_text(node)].append(written)
        for name, fields in candidates.items():
            if fields:
                self.signature.out_params[normalise_name(name)] = tuple(
                    dict.fromkeys(normalise_name(f) for f in fields))

    def _parameter_nodes(self) -> list:
        declarator = function_declarator(self.function.child_by_field_name("declarator"))
        parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
        return [c for c in (parameters.named_children if parameters else [])
                if c.type in ("parameter_declaration", "optional_parameter_declaration")]

    def _template_params(self) -> None:
        if self.outer.type != "template_declaration":
            return
        parameters = self.outer.child_by_field_name("parameters")
        for child in parameters.named_children if parameters else []:
            if child.type in ("parameter_declaration", "optional_parameter_declaration"):
                name = self._declarator_name(child.child_by_field_name("declarator"))
                if name:
                    self._add_param(name, child, constexpr=True,
                                    has_default=child.type == "optional_parameter_declaration")

    def _params(self) -> None:
        declarator = function_declarator(self.function.child_by_field_name("declarator"))
        parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
        for child in parameters.named_children if parameters else []:
            if child.type not in ("parameter_declaration", "optional_parameter_declaration",
                                  "variadic_parameter_declaration"):
                continue
            name = self._declarator_name(child.child_by_field_name("declarator"))
            if name:
                self._add_param(name, child, constexpr=False,
                                has_default=child.type == "optional_parameter_declaration")

    def _add_param(self, name: str, node, constexpr: bool, has_default: bool) -> None:
        line = _line_of(node)
        self.signature.params.append(
            Param(name, normalise_name(name), len(self.signature.params), constexpr, has_default,
                  line, self.lines.quote(line))
        )

    @staticmethod
    def _declarator_name(node) -> str | None:
        while node is not None:
            if node.type in ("identifier", "field_identifier"):
                return _text(node)
            inner = node.child_by_field_name("declarator")
            if inner is None:
                inner = next((c for c in node.named_children if c.type == "identifier"), None)
                if inner is None:
                    return None
            node = inner
        return None

    def _dead_params(self) -> None:
        wanted = {p.name: p for p in self.signature.params}
        uses: dict[str, list[int]] = {}
        mentions: dict[str, int] = {}
        for node in _walk(self.body):
            if node.type in ("identifier", "type_identifier"):
                mentions[_text(node)] = mentions.get(_text(node), 0) + 1
        for node in _walk(self.body):
            if node.type not in ("identifier", "type_identifier") or _text(node) not in wanted:
                continue
            if self._is_void_cast(node) or self._into_unread_local(node, mentions):
                continue
            uses.setdefault(_text(node), []).append(_line_of(node))
        # Uses inside a launch macro the body names count as uses (cited at the mention).
        for _, macro_root, mention in self._launch_macros():
            for node in _walk(macro_root):
                if node.type in ("identifier", "type_identifier") and _text(node) in wanted:
                    uses.setdefault(_text(node), []).append(_line_of(mention))
        # So do the names any function-like macro of the file reads, where the body invokes it.
        invoked = {}
        for node in _walk(self.body):
            if node.type == "call_expression":
                function = node.child_by_field_name("function")
                if function is not None and function.type == "identifier":
                    invoked.setdefault(_text(function), node)
        for name, reads in _file_macro_reads(_root(self.outer)):
            if name in invoked:
                for read in reads & set(wanted):
                    uses.setdefault(read, []).append(_line_of(invoked[name]))
        for param in self.signature.params:
            found = uses.get(param.name)
            if found:
                line = min(found)
                self.signature.first_use[param.normalised] = Use(line, self.lines.quote(line))
            elif not param.constexpr:
                self.signature.dead_params.append(param.normalised)

    @staticmethod
    def _into_unread_local(node, mentions: dict[str, int]) -> bool:
        """Whether ``node`` lies in the initializer of a local the body never mentions again, an initializer of
        names and arithmetic only (``int off = b * mp + head;`` and no other ``off``): that read feeds nothing the
        definition computes. An initializer with a call, a subscript or a member access is left as a read (any
        ``-`` is taken for a possible ``->``, so a subtraction is left as a read too)."""
        parent = node.parent
        while parent is not None and parent.type not in ("init_declarator", "compound_statement"):
            parent = parent.parent
        if parent is None or parent.type != "init_declarator":
            return False
        declared = parent.child_by_field_name("declarator")
        value = parent.child_by_field_name("value")
        if declared is None or declared.type != "identifier" or value is None:
            return False
        if not (value.start_byte <= node.start_byte and node.end_byte <= value.end_byte):
            return False
        declaration = parent.parent
        if declaration is None or declaration.type != "declaration" or any(c in _text(value) for c in "([-"):
            return False  # a call, a subscript, a `->` (or a `-`): more than plain arithmetic on names, left as a read
        return mentions.get(_text(declared), 0) == 1

    @staticmethod
    def _is_void_cast(node) -> bool:
        parent = node.parent
        if parent is None or parent.type != "cast_expression":
            return False
        type_node = parent.child_by_field_name("type")
        return _text(type_node).replace(" ", "") == "void" and parent.parent is not None and \
            parent.parent.type == "expression_statement"

    # -- launches

    @staticmethod
    def _assignments_in(scope) -> "CppLocals":
        return CppLocals(scope)

    def _helper(self, name: str):
        """A single-return function of this file, else of an included header, for grids computed there."""
        if not hasattr(self, "_functions"):
            self._functions = {d.name: d for d in file_definitions(_root(self.outer), "cpp")
                               if d.kind in (KIND_FUNCTION, KIND_DEVICE_FUNCTION)}
        found = self._functions.get(name)
        if found is not None and found.node is not None:
            node = found.node
            if node.type == "template_declaration":
                node = next((c for c in node.named_children if c.type == "function_definition"), None)
            return cpp_single_return(node)
        return self.imported(name) if self.imported is not None else None

    def _launch_macros(self) -> list:
        """Function-like macros, defined in the same file, that contain a
        ``<<<`` launch and whose name the body mentions (vLLM's
        ``DISPATCH_BY_KV_CACHE_DTYPE(..., CALL_GATHER_CACHE)`` style), as
        ``(name, parsed body, the mentioning node)``."""
        if hasattr(self, "_macros"):
            return self._macros
        self._macros = []
        if self.body is None:
            return self._macros
        root = self.outer
        while root.parent is not None:
            root = root.parent
        mentions = {}
        for node in _walk(self.body):
            if node.type == "identifier":
                mentions.setdefault(_text(node), node)
        roots = [root] + list(getattr(self.imported, "roots", ()))  # macros of included headers too
        for name, value in (m for r in roots for m in _file_launch_macros(r)):
            if name in mentions:
                self._macros.append((name, _parsed_macro(value), mentions[name]))
        return self._macros

    def _launches(self) -> None:
        assignments = self._assignments_in(self.body)
        for node in _walk(self.body):
            if node.type == "call_expression" and any(c.type == "kernel_call_syntax" for c in node.children):
                self._add_launch(node, assignments, None, node)
        for name, macro_root, mention in self._launch_macros():
            for node in _walk(macro_root):
                if node.type == "call_expression" and any(c.type == "kernel_call_syntax" for c in node.children):
                    self._add_launch(node, assignments, name, mention)

    def _add_launch(self, node, assignments, via_macro: str | None, cite) -> None:
        assignments = assignments.at(cite)  # a macro's launch reads the locals where the body expands it
        function = node.child_by_field_name("function")
        config = next(c for c in node.children if c.type == "kernel_call_syntax")
        config_args = [c for c in config.named_children]
        arguments = node.child_by_field_name("arguments")
        grid_node = config_args[0] if config_args else None
        grid_expression, shape = self._resolve_grid(grid_node, assignments)
        identifiers = _closure_identifiers(grid_expression, assignments, _cpp_identifiers)
        block, block_form = None, Form("")
        if len(config_args) > 1:
            block_expression, _ = self._resolve_grid(config_args[1], assignments)
            block = _resolve_literal(block_expression, assignments, _cpp_identifiers)
            block_form = canonical_form(config_args[1], assignments.get, normalise_name, self._helper)
        grid_form = canonical_form(grid_node, assignments.get, normalise_name, self._helper, grid=True) \
            if grid_node is not None \
            else Form("")
        unsettled = sorted(n for n in assignments.ambiguous if normalise_name(n) in identifiers)
        if unsettled and grid_form.text:  # which assignment reaches the launch depends on the path taken
            reasons = tuple(f"{name} (assigned on more than one path to the launch)" for name in unsettled)
            grid_form = replace(grid_form, text=f"?{grid_form.text}", opaque=grid_form.opaque + reasons)
        argument_nodes = [a for a in (arguments.named_children if arguments else []) if a.type != "comment"]
        argument_ids = tuple(normalise_name(i) for a in argument_nodes for i in _cpp_identifiers(a)[:1])
        line = _line_of(cite)
        kernel = self._picked_kernel(function, assignments) or _text(function)
        slots = tuple(f"#{index}" for index in range(len(argument_nodes)))
        params = kernel_params_in_file(_root(self.outer), kernel, "cpp", _CppExtractor)
        self.signature.launches.append(
            Launch(
                kernel=kernel,
                kernel_normalised=normalise_kernel_name(kernel),
                arguments=argument_ids,
                keywords=(),
                grid_text=_text(grid_expression) if grid_expression is not None else "",
                grid_identifiers=tuple(sorted(identifiers)),
                grid_shape=shape,
                block=block,
                line=line,
                quote=self.lines.quote(line),
                via_macro=via_macro,
                **_form_fields(grid_form, grid_expression, line, via_macro is None, self.lines),
                block_form=block_form.text,
                block_bindings=bindings_quoted(block_form, self.lines),
                slots=slots,
                texts=tuple(normalised_text(a) for a in argument_nodes),
                bound=bind_arguments(slots, params) if params is not None else None,
            )
        )

    def _picked_kernel(self, function, assignments) -> str | None:
        """The kernel a launch through a local pointer launches (``picked-kernel``):
        ``fp k = pick(...); k<<<g, b>>>(...)`` where ``pick`` is a function of
        this file every ``return`` of which returns an instance of one kernel
        template of this file (``return K<true>;``), as ``K``. A picker that
        can return another kernel, or anything but a kernel, resolves nothing."""
        if function is None or function.type != "identifier" or _text(function) not in assignments:
            return None
        value = assignments[_text(function)]
        callee = value.child_by_field_name("function") if value is not None and value.type == "call_expression" \
            else None
        if callee is None or callee.type != "identifier":
            return None
        definitions = file_definitions(_root(self.outer), "cpp")
        kernels = {d.name for d in definitions if d.kind == KIND_CUDA_KERNEL}
        picker = next((d for d in definitions if d.name == _text(callee) and d.kind == KIND_FUNCTION
                       and d.node is not None and d.node.type == "function_definition"), None)
        body = picker.node.child_by_field_name("body") if picker is not None else None
        if body is None:
            return None
        returned = set()
        for node in _walk(body):
            if node.type != "return_statement":
                continue
            value = next((c for c in node.named_children if c.type != "comment"), None)
            if value is not None and value.type == "template_function":
                value = value.child_by_field_name("name")
            if value is None or value.type != "identifier" or _text(value) not in kernels:
                return None
            returned.add(_text(value))
        return next(iter(returned)) if len(returned) == 1 else None

    @staticmethod
    def _resolve_grid(node, assignments):
        """The expression a grid/block argument stands for, and its dim3 arity."""
        if node is None:
            return None, None
        seen = set()
        while node is not None and node.type in ("identifier", "type_identifier") \
                and _text(node) in assignments and _text(node) not in seen:
            seen.add(_text(node))
            node = assignments[_text(node)]
        shape = None
        if node is not None and node.type in ("parameter_list", "argument_list"):
            shape = len(node.named_children)
        elif node is not None and node.type == "call_expression" and _text(node.child_by_field_name("function")) == "dim3":
            arguments = node.child_by_field_name("arguments")
            shape = len(arguments.named_children) if arguments else None
        elif node is not None and node.type == "initializer_list":
            shape = len(node.named_children)
        elif node is not None:
            shape = 1
        return node, shape

    def _program_ids(self) -> None:
        for node in self._program_id_scopes():
            if node.type == "field_expression":
                base = _text(node.child_by_field_name("argument"))
                field_name = _text(node.child_by_field_name("field"))
                axis = {"x": 0, "y": 1, "z": 2}.get(field_name)
                if axis is None:
                    continue
                if base == "blockIdx" and axis not in self.signature.program_id_axes:
                    self.signature.program_id_axes.append(axis)
                elif base == "gridDim" and axis not in self.signature.num_programs_axes:
                    self.signature.num_programs_axes.append(axis)
        if self.signature.is_kernel and self.body is not None:
            self._decompositions()

    def _program_id_scopes(self):
        """The kernel's body, then the bodies of the ``__device__`` functions of
        the same file it calls, transitively: a block index a device helper
        reads is the calling kernel's (the helper runs in the kernel's block),
        so a body moved into a helper keeps its axes."""
        yield from _walk(self.body)
        if not self.signature.is_kernel:
            return
        helpers = {}
        for definition in file_definitions(_root(self.outer), "cpp"):
            if definition.kind == KIND_DEVICE_FUNCTION and definition.node is not None:
                node = definition.node
                if node.type == "template_declaration":
                    node = next((c for c in node.named_children if c.type == "function_definition"), None)
                body = node.child_by_field_name("body") if node is not None else None
                if body is not None:
                    helpers.setdefault(definition.name.split("::")[-1], body)
        seen: set[str] = set()
        pending = [self.body]
        while pending:
            for node in _walk(pending.pop()):
                if node.type != "call_expression":
                    continue
                function = node.child_by_field_name("function")
                if function is not None and function.type == "template_function":
                    function = function.child_by_field_name("name")
                name = _text(function).split("::")[-1] if function is not None else ""
                if name in helpers and name not in seen and len(seen) < 8:
                    seen.add(name)
                    pending.append(helpers[name])
                    yield from _walk(helpers[name])

    def _decompositions(self) -> None:
        """How the block index is decomposed (``item / H``, ``item % H``), as
        the Triton side reads ``program_id``: locals derived from
        ``blockIdx`` are followed in source order, and C++ integer ``/`` is
        ``//``. Only the block's work index counts: a value with
        ``threadIdx`` in it is a thread's, one read through a subscript is
        data, and a block index multiplied into a value is an offset."""
        derived: dict[str, int] = {}
        local_values = CppLocals(self.body)
        for node in _walk(self.body):
            if node.type == "init_declarator" or (node.type == "assignment_expression"
                                                  and _text(node.child_by_field_name("operator")) == "="):
                target = node.child_by_field_name("declarator" if node.type == "init_declarator" else "left")
                axis = _block_axis(node.child_by_field_name("value" if node.type == "init_declarator" else "right"),
                                   derived)
                if target is not None and target.type == "identifier" and axis is not None:
                    derived.setdefault(_text(target), axis)
            if node.type != "binary_expression":
                continue
            operator = _text(node.child_by_field_name("operator"))
            if operator not in ("/", "%"):
                continue
            axis = _block_axis(node.child_by_field_name("left"), derived)
            if axis is None:
                continue
            operand = canonical_form(node.child_by_field_name("right"), local_values.at(node).get, normalise_name).text
            line = _line_of(node)
            found = Decomposition(axis, "//" if operator == "/" else "%", operand, line, self.lines.quote(line))
            if found not in self.signature.decomposition:
                self.signature.decomposition.append(found)


def _cpp_written_through(identifier) -> str | None:
    """The field (or the name itself) a plain ``=`` writes through
    ``identifier``, or None when this occurrence is anything but such a write."""
    node, field_name = identifier, None
    parent = node.parent
    if parent is not None and parent.type == "pointer_expression":
        node, parent = parent, parent.parent
        if parent is not None and parent.type == "parenthesized_expression":
            node, parent = parent, parent.parent
    if parent is not None and parent.type == "field_expression" and parent.child_by_field_name("argument") is not None \
            and parent.child_by_field_name("argument").id == node.id:
        field_name = _text(parent.child_by_field_name("field"))
        node, parent = parent, parent.parent
    if parent is None or parent.type != "assignment_expression":
        return None
    left, operator = parent.child_by_field_name("left"), parent.child_by_field_name("operator")
    if left is None or left.id != node.id or _text(operator) != "=":
        return None
    return field_name or _text(identifier)


def _block_axis(node, derived: dict[str, int]) -> int | None:
    """The ``blockIdx`` axis the per-block value ``node`` derives from, or None
    (see ``_CppExtractor._decompositions``)."""
    if node is None:
        return None
    axis = None
    for current in _walk(node):
        if current.type == "subscript_expression":
            return None
        if current.type == "field_expression":
            base = _text(current.child_by_field_name("argument"))
            if base == "threadIdx":
                return None
            if base == "blockIdx" and axis is None:
                axis = {"x": 0, "y": 1, "z": 2}.get(_text(current.child_by_field_name("field")))
        elif current.type == "identifier" and _text(current) in derived and axis is None:
            axis = derived[_text(current)]
        elif current.type == "binary_expression" and _text(current.child_by_field_name("operator")) == "*" and any(
                _block_axis(side, derived) is not None
                for side in (current.child_by_field_name("left"), current.child_by_field_name("right"))):
            return None  # `block * stride` addresses memory; it does not pack work into the index
    return axis


def _cpp_identifiers(node) -> list[str]:
    """Variable-like identifiers in a C++ expression: callees, namespaces,
    field names and types are left out."""
    if node is None:
        return []
    found: list[str] = []
    for current in _walk(node):
        if current.type not in ("identifier", "type_identifier"):
            continue
        parent = current.parent
        if parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") is not None \
                and parent.child_by_field_name("function").id == current.id:
            continue
        if parent is not None and parent.type in ("template_function", "qualified_identifier", "template_type"):
            continue
        text = _text(current)
        if text in _CPP_NON_VARIABLES:
            continue
        found.append(text)
    return found


class CppLocals(ReachingLocals):
    """Simple local declarations and assignments of a C++ body (``dim3
    grid(n)``, ``auto g = x;``, ``g = x;``), each resolved where it is read:
    the last one every path to the use runs; one that only some paths run
    leaves the name unresolved there."""

    loops = ("for_statement", "while_statement", "do_statement", "for_range_loop")

    def __init__(self, scope):
        super().__init__()
        for node in _walk(scope):
            name = value = None
            if node.type == "init_declarator":
                name, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
            elif node.type == "declaration":
                declarator = node.child_by_field_name("declarator")
                # The most vexing parse: `dim3 grid(num_tokens);` is a function declarator.
                if declarator is not None and declarator.type == "function_declarator":
                    name, value = declarator.child_by_field_name("declarator"), \
                        declarator.child_by_field_name("parameters")
            elif node.type == "assignment_expression":
                name, value = node.child_by_field_name("left"), node.child_by_field_name("right")
                operator = node.child_by_field_name("operator")
                if operator is not None and _text(operator) != "=":
                    value = None  # `g += x` updates, it binds no plain value
            if name is None or name.type != "identifier" or (value is None and node.type != "assignment_expression"):
                continue
            self.definitions.setdefault(_text(name), []).append((_statement_of(node), value))
        self.settle()


def _statement_of(node):
    """The statement a declarator or assignment belongs to (its block is the holder)."""
    while node.parent is not None and node.type not in ("declaration", "expression_statement", "for_statement",
                                                         "condition_clause"):
        node = node.parent
    return node


@lru_cache(maxsize=256)
def cpp_single_return(node):
    """``(parameter names, returned expression, local assignments)`` of the
    C++ function ``node`` for a grid computed there; None unless it has
    exactly one ``return`` of a value."""
    found = returns_of(node)
    if found is None:
        return None
    function, body, returns = found
    if len(returns) != 1:
        return None
    declarator = function.child_by_field_name("declarator")
    parameters = declarator.child_by_field_name("parameters") if declarator.type == "function_declarator" else None
    names = [_CppExtractor._declarator_name(p.child_by_field_name("declarator")) or ""
             for p in (parameters.named_children if parameters else []) if p.type.endswith("parameter_declaration")]
    return names, returns[0].named_children[0], _CppExtractor._assignments_in(body).at(returns[0])

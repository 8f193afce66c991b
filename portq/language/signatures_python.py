"""Signatures of Python/Triton definitions (``portq.language.signatures`` holds the
records): parameters with ``tl.constexpr``, dead parameters and returned
names, ``kernel[grid](...)`` launches (pre-bound, aliased, or inside
same-module helpers) with their grid as a canonical expression, and how a
``@triton.jit`` kernel decomposes its program id, helpers included."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any

from portq.language.expressions import Form, Unpacked, canonical_form
from portq.language.signatures import (
    _CPP_NON_VARIABLES,
    _DROPPED_PARAMS,
    Decomposition,
    Launch,
    Param,
    ReachingLocals,
    Signature,
    Use,
    _closure_identifiers,
    _form_fields,
    _int_literal,
    _line_of,
    _Lines,
    _resolve_literal,
    _root,
    _text,
    _walk,
    ancestors,
    bare_name,
    bind_arguments,
    bindings_quoted,
    file_definitions,
    kernel_params_in_file,
    normalise_kernel_name,
    normalise_name,
    normalised_text,
    nodes_of,
    returns_of,
)
from portq.language.symbols import KIND_FUNCTION, KIND_TRITON_KERNEL


class _PythonExtractor:
    def __init__(self, node, signature: Signature, lines: _Lines, imported=None) -> None:
        self.imported = imported  # name -> single_return() of a helper imported from a sibling module
        self.outer = node
        self.signature = signature
        self.lines = lines
        self.function = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
        self.body = self.function.child_by_field_name("body") if self.function is not None else None

    def run(self) -> None:
        if self.function is None:
            return
        if self.function.type == "class_definition":
            self._fields()
            return
        self._params()
        if self.body is None:
            return
        self._dead_params()
        self.signature.heuristic_reads = tuple(sorted(_heuristic_reads(self.outer)))
        if self.signature.kind == KIND_TRITON_KERNEL:
            self.signature.tuner_reads = _tuner_named_unread(self.signature, self.outer)
            self.signature.hint_only = self._hint_only()
            self.signature.body_lines = tuple(sorted(set(_plain_lines(_text(self.body)))))
            self.signature.selector_defaults = self._selector_defaults()
        self._returned()
        assignments = self._local_assignments()
        self._launches(assignments)
        if self.signature.launches:
            self._forwarded_unread()
        self._program_ids(assignments)

    def _forwarded_unread(self) -> None:
        """``unread-kernel-parameter``: the parameters whose every read hands them, as the whole argument,
        to a launch ``K[grid](...)`` at a parameter the kernel ``K`` (defined in this file) never reads."""
        names = {p.name: p.normalised for p in self.signature.params if not p.name.startswith("*")}
        reads: dict[str, list] = {}
        for node in nodes_of(self.body, ("identifier",), "python"):
            if _text(node) in names and _is_python_read(node) and not _is_discard(node):
                reads.setdefault(_text(node), []).append(node)
        self.signature.forwarded_unread = tuple(sorted(
            names[name] for name, nodes in reads.items() if all(self._fills_unread(n) for n in nodes)))

    def _fills_unread(self, node) -> bool:
        parent, keyword = node.parent, None
        if parent is not None and parent.type == "keyword_argument":
            value = parent.child_by_field_name("value")
            if value is None or value.start_byte != node.start_byte or value.end_byte != node.end_byte:
                return False
            keyword, parent = _text(parent.child_by_field_name("name")), parent.parent
        call = parent.parent if parent is not None and parent.type == "argument_list" else None
        function = call.child_by_field_name("function") if call is not None and call.type == "call" else None
        kernel = function.child_by_field_name("value") if function is not None and function.type == "subscript" \
            else None
        if kernel is None:
            return False
        params = kernel_params_in_file(_root(self.outer), _text(kernel), "python", _PythonExtractor)
        if params is None:
            return False
        if keyword is not None:
            target = normalise_name(keyword)
        else:
            before = [a for a in parent.named_children if a.type != "comment" and a.start_byte < node.start_byte]
            if any(a.type in ("list_splat", "dictionary_splat", "keyword_argument") for a in before) \
                    or len(before) >= len(params):
                return False
            target = params[len(before)]
        return target in _unread_kernel_params(_root(self.outer), _text(kernel))

    def _returned(self) -> None:
        """Names the function returns (``return a, b`` → ``a, b``), nested
        definitions left out."""
        names: list[str] = []
        stack = list(self.body.children)
        while stack:
            node = stack.pop()
            if node.type in ("function_definition", "lambda", "class_definition", "decorated_definition"):
                continue
            if node.type == "return_statement":
                value = next(iter(node.named_children), None)
                if value is not None and value.type == "parenthesized_expression" and value.named_child_count == 1:
                    value = value.named_children[0]
                parts = value.named_children if value is not None and value.type in ("expression_list", "tuple") \
                    else ([value] if value is not None else [])
                names.extend(normalise_name(_text(p)) for p in parts if p.type == "identifier")
                continue
            stack.extend(node.children)
        self.signature.returned = tuple(dict.fromkeys(names))

    def _params(self) -> None:
        parameters = self.function.child_by_field_name("parameters")
        derived = _heuristic_names(self.outer)
        supplied = autograd_context(self.outer)
        for child in parameters.named_children if parameters else []:
            name, constexpr, has_default = None, False, False
            if supplied:  # autograd's context, which ``apply`` passes: no parameter a caller binds
                supplied = False
                continue
            if child.type == "identifier":
                name = _text(child)
            elif child.type == "typed_parameter":
                name_node = next((c for c in child.named_children if c.type == "identifier"), None)
                splat = next((c for c in child.named_children
                              if c.type in ("list_splat_pattern", "dictionary_splat_pattern")), None)
                if name_node is None and splat is not None:  # ``*args: Any`` is the splat ``*args``, annotated
                    inner = next((c for c in splat.named_children if c.type == "identifier"), None)
                    name_node = inner
                    name = ("**" if splat.type == "dictionary_splat_pattern" else "*") + _text(inner) \
                        if inner is not None else None
                else:
                    name = _text(name_node) if name_node is not None else None
                constexpr = "constexpr" in _text(child.child_by_field_name("type"))
            elif child.type in ("default_parameter", "typed_default_parameter"):
                name = _text(child.child_by_field_name("name"))
                constexpr = "constexpr" in _text(child.child_by_field_name("type"))
                has_default = True
            elif child.type in ("list_splat_pattern", "dictionary_splat_pattern"):
                inner = next((c for c in child.named_children if c.type == "identifier"), None)
                name = _text(child)[: len(_text(child)) - len(_text(inner))] + _text(inner) if inner is not None else None
            if not name or name in _DROPPED_PARAMS:
                continue
            line = _line_of(child)
            bare = name.lstrip("*")
            self.signature.params.append(
                Param(name, normalise_name(bare), len(self.signature.params), constexpr, has_default,
                      line, self.lines.quote(line), heuristic=bare in derived)
            )

    def _fields(self) -> None:
        """A class's annotated fields (dataclass style) stand for its parameters."""
        for statement in self.body.named_children if self.body is not None else []:
            if statement.type != "expression_statement" or not statement.named_children:
                continue
            assignment = statement.named_children[0]
            if assignment.type != "assignment" or assignment.child_by_field_name("type") is None:
                continue
            left = assignment.child_by_field_name("left")
            if left is None or left.type != "identifier":
                continue
            name = _text(left)
            line = _line_of(statement)
            self.signature.params.append(
                Param(name, normalise_name(name), len(self.signature.params),
                      "ClassVar" in _text(assignment.child_by_field_name("type")),
                      assignment.child_by_field_name("right") is not None, line, self.lines.quote(line))
            )

    def _dead_params(self) -> None:
        wanted = {p.name.lstrip("*"): p for p in self.signature.params}
        uses: dict[str, list[int]] = {}
        for node in nodes_of(self.body, ("identifier",), "python"):
            if _text(node) not in wanted:
                continue
            if not _is_python_read(node) or _is_discard(node):
                continue
            uses.setdefault(_text(node), []).append(_line_of(node))
        for param in self.signature.params:
            found = uses.get(param.name.lstrip("*"))
            if found:
                line = min(found)
                self.signature.first_use[param.normalised] = Use(line, self.lines.quote(line))
            elif not param.name.startswith("*"):
                self.signature.dead_params.append(param.normalised)

    _HINTS = frozenset({"eviction_policy", "cache_modifier"})
    """Keywords of a Triton load or store that say how memory is cached, never which values are computed."""

    def _hint_only(self) -> tuple[str, ...]:
        """``hint-parameter``: the parameters whose every read in the body is the whole value of a memory hint
        keyword (``tl.load(p, eviction_policy=EVICT)``)."""
        wanted = {p.name.lstrip("*"): p for p in self.signature.params}
        hint: dict[str, bool] = {}
        for node in nodes_of(self.body, ("identifier",), "python"):
            if _text(node) not in wanted or not _is_python_read(node) or _is_discard(node):
                continue
            parent = node.parent
            as_hint = parent is not None and parent.type == "keyword_argument" \
                and parent.child_by_field_name("value") == node \
                and _text(parent.child_by_field_name("name")) in self._HINTS
            hint[_text(node)] = hint.get(_text(node), True) and as_hint
        return tuple(wanted[name].normalised for name, only in hint.items() if only)

    _FALSE = frozenset({"False", "0", "None", "''", '""'})
    _TRUE = frozenset({"True", "1"})

    def _selector_defaults(self) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
        """``default-selector-parameter``: each parameter with a literal default (``False``, ``0``, ``None``,
        ``''``, ``True``, ``1``) whose every read in the body is the whole condition of an ``if`` statement
        without ``elif`` (``if FLAG:``, ``if(FLAG):``), with the lines of the branches its default selects and
        of those it does not (``_plain_lines``). A parameter read anywhere else, or one a string literal of the
        file names (an autotuner's config or a pruner may set it to another value), is left out."""
        parameters = self.function.child_by_field_name("parameters")
        defaults: dict[str, bool] = {}
        for parameter in parameters.named_children if parameters is not None else ():
            if parameter.type in ("default_parameter", "typed_default_parameter"):
                name, value = parameter.child_by_field_name("name"), parameter.child_by_field_name("value")
                if name is not None and value is not None and _text(value) in self._FALSE | self._TRUE:
                    defaults[_text(name)] = _text(value) in self._TRUE
        found: dict[str, list] = {}
        spoiled: set[str] = set()
        for node in nodes_of(self.body, ("identifier",), "python"):
            name = _text(node)
            if name not in defaults or not _is_python_read(node):
                continue
            condition = node.parent if node.parent is not None and node.parent.type == "parenthesized_expression" \
                else node
            statement = condition.parent
            if statement is None or statement.type != "if_statement" \
                    or statement.child_by_field_name("condition") is None \
                    or statement.child_by_field_name("condition").id != condition.id \
                    or any(c.type == "elif_clause" for c in statement.children):
                spoiled.add(name)
                continue
            found.setdefault(name, []).append(statement)
        chosen = []
        tuned = _file_strings(_root(self.outer))  # a tuning config or pruner naming it may set another value
        for name, statements in found.items():
            if name in spoiled or name in tuned:
                continue
            kept: list[str] = []
            dropped: list[str] = []
            for statement in statements:
                then = statement.child_by_field_name("consequence")
                other = next((c.child_by_field_name("body") for c in statement.children if c.type == "else_clause"),
                             None)
                then_lines = _plain_lines(_text(then)) if then is not None else []
                other_lines = _plain_lines(_text(other)) if other is not None else []
                kept += then_lines if defaults[name] else other_lines
                dropped += other_lines if defaults[name] else then_lines
            normalised = next((p.normalised for p in self.signature.params if p.name.lstrip("*") == name), name)
            chosen.append((normalised, tuple(kept), tuple(dropped)))
        return tuple(chosen)

    def _local_assignments(self) -> dict[str, Any]:
        return _python_assignments(self.body)

    MAX_HELPER_DEPTH = 2
    """How deep launches and program-id use are followed into same-module helpers."""

    def _module(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The file's top-level functions (name -> Definition) and simple
        module-level assignments (name -> value node), computed once."""
        if not hasattr(self, "_module_cache"):
            root = _root(self.outer)
            functions = {d.name: d for d in file_definitions(root, "python")
                         if d.qualified_name == d.name and d.kind in (KIND_FUNCTION, KIND_TRITON_KERNEL)}
            assignments: dict[str, Any] = {}
            for statement in root.named_children:
                if statement.type == "expression_statement" and statement.named_children \
                        and statement.named_children[0].type == "assignment":
                    left = statement.named_children[0].child_by_field_name("left")
                    right = statement.named_children[0].child_by_field_name("right")
                    if left is not None and left.type == "identifier" and right is not None:
                        assignments.setdefault(_text(left), right)
            self._module_cache = (functions, assignments)
        return self._module_cache

    def _launches(self, assignments) -> None:
        self._collect_launches(self.body, assignments, None, 0, {}, {self.signature.name})
        unique: dict[tuple[str, int], Launch] = {}
        grids: dict[tuple[str, int], set[str]] = {}
        for launch in self.signature.launches:  # one launch site reached through two helpers is one launch
            unique.setdefault((launch.kernel, launch.line), launch)
            grids.setdefault((launch.kernel, launch.line), set()).add(launch.grid_form)
        for site, forms in grids.items():
            launch = unique[site]
            if len(forms) > 1 and not launch.grid_form.startswith("?"):
                # Calls that pass the helper different values reach one launch site: which grid it gets
                # depends on the path, as with a local several assignments reach.
                reason = f"{launch.via_helper}'s arguments (passed differently at the calls that reach the launch)"
                unique[site] = replace(launch, grid_form=f"?{launch.grid_form}", grid_opaque=launch.grid_opaque + (reason,))
        self.signature.launches = list(unique.values())

    def _collect_launches(self, body, assignments, via: str | None, depth: int, substitution: dict[str, Any],
                          seen: set[str]) -> None:
        """Launches in ``body``: ``k[grid](...)``, a pre-bound ``launch = k[grid]``
        called later (local or module-level), and those inside same-module
        helper functions it calls, ``MAX_HELPER_DEPTH`` levels deep, with the
        helper's parameters replaced by the caller's arguments."""
        for node in nodes_of(body, ("call",), "python"):
            function = node.child_by_field_name("function")
            if function is None:
                continue
            target = self._launch_target(function, assignments, substitution)
            if target is not None:
                self._add_launch(node, target[0], target[1], assignments, via, substitution)
                continue
            helper = self._called_helper(function, KIND_FUNCTION, seen) if depth < self.MAX_HELPER_DEPTH else None
            if helper is None:
                continue
            name, helper_function, helper_body = helper
            bindings = _bind_call(helper_function, node, substitution)
            self._collect_launches(helper_body, _python_assignments(helper_body), f"{via} > {name}" if via else name,
                                   depth + 1, bindings, seen | {name})

    def _called_helper(self, function, kind: str, seen: set[str]):
        """``(name, function node, body)`` of the same-module function of
        ``kind`` that a call of ``function`` (an identifier) reaches, unless
        it is one of ``seen`` (recursion)."""
        if function.type != "identifier":
            return None
        functions, _ = self._module()
        helper = functions.get(_text(function))
        if helper is None or helper.kind != kind or helper.name in seen:
            return None
        helper_function = helper.node.child_by_field_name("definition") \
            if helper.node.type == "decorated_definition" else helper.node
        body = helper_function.child_by_field_name("body")
        return (helper.name, helper_function, body) if body is not None else None

    def _launch_target(self, function, assignments, substitution):
        """``(kernel node, grid node)`` when calling ``function`` launches a kernel."""
        if function.type == "subscript":
            value = function.child_by_field_name("value")
            base = value
            while base is not None and base.type == "subscript":  # a field of a stored record: cache[key]["run"]
                base = base.child_by_field_name("value")
            if base is not None and _text(base) in self._module_dictionaries():
                return None  # a lookup of a cached callable (``cache[key](x)``), no kernel launched on a grid
            return value, function.child_by_field_name("subscript")
        if function.type != "identifier":
            return None
        functions, module_assignments = self._module()
        name = _text(function)
        value = substitution.get(name) or assignments.at(function).get(name)
        if value is None and name not in functions:
            value = module_assignments.get(name)
        if value is not None and value.type == "subscript":
            return value.child_by_field_name("value"), value.child_by_field_name("subscript")
        return None

    def _module_dictionaries(self) -> frozenset[str]:
        """Names (``cache``, ``host.cache``) every module-level binding of which is a dictionary literal
        (``{}``, ``dict()``): a table of values looked up by key, never a kernel launched on a grid."""
        if not hasattr(self, "_dictionaries_cache"):
            bound: dict[str, bool] = {}
            for statement in _root(self.outer).named_children:
                if statement.type != "expression_statement" or not statement.named_children \
                        or statement.named_children[0].type != "assignment":
                    continue
                left = statement.named_children[0].child_by_field_name("left")
                right = statement.named_children[0].child_by_field_name("right")
                if left is None or left.type not in ("identifier", "attribute"):
                    continue
                literal = right is not None and (right.type == "dictionary" or (
                    right.type == "call" and _text(right.child_by_field_name("function")) == "dict"))
                bound[_text(left)] = bound.get(_text(left), True) and literal
            self._dictionaries_cache = frozenset(name for name, literal in bound.items() if literal)
        return self._dictionaries_cache

    def _kernel_name(self, kernel_node, substitution) -> str:
        """The launched kernel as written, through a helper parameter bound to
        it and through module-level aliases (``_fast = _kernel``)."""
        _, module_assignments = self._module()
        seen = set()
        while kernel_node is not None and kernel_node.type == "identifier" and _text(kernel_node) not in seen:
            seen.add(_text(kernel_node))
            replacement = substitution.get(_text(kernel_node)) or module_assignments.get(_text(kernel_node))
            if replacement is None or replacement.type not in ("identifier", "attribute"):
                break
            kernel_node = replacement
        return _text(kernel_node)

    def _add_launch(self, node, kernel_node, grid_node, assignments, via, substitution) -> None:
        reaching = assignments
        assignments = assignments.at(node)
        kernel = self._kernel_name(kernel_node, substitution)
        grid_expression, shape = self._resolve_grid(grid_node, assignments)
        grid_form = canonical_form(grid_node, self._resolver(assignments, substitution), normalise_name,
                                   self._single_return_helper, grid=True) if grid_node is not None else Form("")
        identifiers = _closure_identifiers(grid_expression, assignments, _python_identifiers)
        unsettled = sorted(n for n in assignments.ambiguous if normalise_name(n) in identifiers)
        paths: tuple[str, ...] = ()
        if unsettled:  # which assignment reaches the launch depends on the path taken
            reasons = tuple(f"{name} (assigned on more than one path to the launch)" for name in unsettled)
            grid_form = replace(grid_form, text=f"?{grid_form.text}", opaque=grid_form.opaque + reasons)
            paths = self._path_conditions(reaching, node, unsettled)
        arguments = node.child_by_field_name("arguments")
        positional, keywords, options = [], [], {}
        slots, texts = [], []
        values: list[tuple[str, str]] = []  # a local passed positionally, with the one value reaching the launch

        def local_value(element) -> None:
            value = assignments.get(_text(element)) if element.type == "identifier" else None
            if value is not None and _text(element) not in assignments.ambiguous and value.type != "identifier":
                values.append((normalise_name(_text(element)), normalised_text(value)))
        after_splat = False  # positional indices are unknown past a *args splat
        for argument in arguments.named_children if arguments else []:
            if argument.type == "comment":
                continue
            if argument.type == "keyword_argument":
                key = _text(argument.child_by_field_name("name"))
                value = argument.child_by_field_name("value")
                if key in ("num_warps", "num_stages"):
                    options[key] = _resolve_literal(value, assignments, _python_identifiers)
                    through = canonical_form(value, self._resolver(assignments, substitution), normalise_name)
                    options[f"{key}_bindings"] = bindings_quoted(through, self.lines)
                    continue
                keywords.append(key)
                ids = _python_identifiers(value)
                positional.append(normalise_name(ids[0]) if ids else normalise_name(key))
                slots.append(normalise_name(key))
                texts.append(normalised_text(value))
            elif argument.type in ("list_splat", "dictionary_splat"):
                spread = _literal_sequence(argument, assignments, substitution)
                if spread is not None and not after_splat:
                    for element in spread:  # *(a, b, c) or *views with views = (a, b, c)
                        local_value(element)
                        ids = _python_identifiers(element)
                        positional.append(normalise_name(ids[0]) if ids else _text(element))
                        slots.append(f"#{sum(1 for slot in slots if slot.startswith('#'))}")
                        texts.append(normalised_text(element))
                    continue
                after_splat = after_splat or argument.type == "list_splat"
                slots.append("*" if argument.type == "list_splat" else "**")
                texts.append(normalised_text(argument))
            else:
                local_value(argument)
                ids = _python_identifiers(argument)
                positional.append(normalise_name(ids[0]) if ids else _text(argument))
                slots.append("-" if after_splat else f"#{sum(1 for slot in slots if slot.startswith('#'))}")
                texts.append(normalised_text(argument))
        # Positions after the last splat are known only from the end
        # (bind_arguments); those between two splats not at all ("?").
        last = max((i for i, slot in enumerate(slots) if slot == "*"), default=-1)
        slots = ["?" if slot == "-" and i < last else slot for i, slot in enumerate(slots)]
        behind = sum(1 for slot in slots if slot == "-")
        slots = [f"-{behind - i}" if slot == "-" else slot
                 for i, slot in zip(_running_count(slots, "-"), slots)]
        params = kernel_params_in_file(_root(self.outer), kernel, "python", _PythonExtractor)
        renamed = _substituted_names(substitution)
        line = _line_of(node)
        self.signature.launches.append(
            Launch(
                kernel=kernel,
                kernel_normalised=normalise_kernel_name(kernel),
                arguments=tuple(renamed.get(a, a) for a in positional),
                keywords=tuple(keywords),
                grid_text=_text(grid_expression) if grid_expression is not None else "",
                grid_identifiers=tuple(sorted({renamed.get(i, i) for i in identifiers})),
                grid_shape=shape,
                num_warps=options.get("num_warps"),
                num_stages=options.get("num_stages"),
                num_warps_bindings=options.get("num_warps_bindings", ()),
                num_stages_bindings=options.get("num_stages_bindings", ()),
                line=line,
                quote=self.lines.quote(line),
                slots=tuple(slots),
                texts=tuple(texts),
                argument_values=tuple(values),
                bound=bind_arguments(slots, params) if params is not None else None,
                unread=_unread_kernel_params(_root(self.outer), kernel) if params is not None else (),
                via_helper=via,
                **_form_fields(grid_form, grid_expression, line, True, self.lines),
                path_conditions=paths,
                asserted=self._asserted(reaching, node),
            )
        )

    def _parameter_test(self, node, reaching) -> str | None:
        """``excluded-path``: ``node`` as ``x.dim() == 1`` when it is one comparison of a parameter's
        attribute or method call (no arguments) with an integer literal, the parameter not reassigned
        before ``node`` other than by a conversion that keeps its shape; None otherwise."""
        if node is None or node.type != "comparison_operator" or len(node.named_children) != 2:
            return None
        left, right = node.named_children
        operators = [c.type for c in node.children if not c.is_named]
        value = _int_literal(_text(right)) if right.type == "integer" else None
        if len(operators) != 1 or operators[0] not in _COMPARISONS or value is None:
            return None
        root = left
        if root.type == "call":
            arguments = root.child_by_field_name("arguments")
            if arguments is None or arguments.named_child_count:
                return None
            root = root.child_by_field_name("function")
        if root is None or root.type != "attribute":
            return None
        owner = root.child_by_field_name("object")
        if owner is None or owner.type != "identifier" \
                or normalise_name(_text(owner)) not in {p.normalised for p in self.signature.params}:
            return None
        for statement, assigned in getattr(reaching, "definitions", {}).get(_text(owner), []):
            if statement.start_byte < node.start_byte and not _keeps_shape(assigned, _text(owner)):
                return None
        return f"{_text(left).replace(' ', '')} {operators[0]} {value}"

    def _path_conditions(self, reaching, node, unsettled) -> tuple[str, ...]:
        """``excluded-path``: the conditions of the ``if``s holding the assignments of ``unsettled`` that
        reach the launch ``node`` on some paths only; empty unless each such name is a parameter (or
        assigned on every path too) and each such assignment lies directly in the consequence of an ``if``
        of the function's own body, with no ``elif`` or ``else``, before the launch, its condition a
        parameter test (``_parameter_test``), or a local bound to one once on every path."""
        if not isinstance(reaching, ReachingLocals) or self.body is None:
            return ()
        parameters = {p.normalised for p in self.signature.params}
        conditions: list[str] = []
        for name in unsettled:
            found, always = reaching.reaching(name, node)
            if not always and normalise_name(name) not in parameters:
                return ()
            for statement, _ in found:
                block = reaching.holder(statement)
                if block is not None and any(a.id == block.id for a in ancestors(node)):
                    continue  # the one that runs on every path
                branch = block.parent if block is not None else None
                if branch is None or branch.type != "if_statement" or branch.parent is None \
                        or branch.parent.id != self.body.id or statement.end_byte > node.start_byte \
                        or branch.child_by_field_name("consequence") is None \
                        or branch.child_by_field_name("consequence").id != block.id \
                        or branch.child_by_field_name("alternative") is not None:
                    return ()
                condition = branch.child_by_field_name("condition")
                if condition is not None and condition.type == "identifier":
                    condition = reaching.at(branch).get(_text(condition))
                test = self._parameter_test(condition, reaching)
                if test is None:
                    return ()
                conditions.append(test)
        return tuple(sorted(set(conditions)))

    def _asserted(self, reaching, node) -> tuple[str, ...]:
        """``excluded-path``: the parameter tests (``_parameter_test``) the function's own body asserts in
        statements of its own before the launch ``node``."""
        if self.body is None or not isinstance(reaching, ReachingLocals):
            return ()
        tests = []
        for statement in self.body.named_children:
            if statement.start_byte >= node.start_byte:
                break
            if statement.type == "assert_statement" and statement.named_children:
                test = self._parameter_test(statement.named_children[0], reaching)
                if test is not None:
                    tests.append(test)
        return tuple(tests)

    def _resolver(self, assignments, substitution):
        """name -> bound value: a helper parameter's argument, a local, then a module-level constant."""
        _, module_assignments = self._module()
        return lambda name: substitution.get(name) or assignments.get(name) or module_assignments.get(name)

    def _single_return_helper(self, name: str):
        """``(function node, returned expression)`` of the function a grid
        helper call reaches: same-module first, then one imported from a
        sibling module of the same package (``imported``)."""
        functions, _ = self._module()
        helper = functions.get(name)
        if helper is not None and helper.kind == KIND_FUNCTION:
            return python_single_return(helper.node)
        return self.imported(name) if self.imported is not None else None

    @staticmethod
    def _resolve_grid(node, assignments):
        seen = set()
        while node is not None and node.type == "identifier" and _text(node) in assignments and _text(node) not in seen:
            seen.add(_text(node))
            node = assignments[_text(node)]
        if node is not None and node.type == "lambda":
            node = node.child_by_field_name("body")
        if node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
            node = node.named_children[0]
        if node is None:
            return None, None
        if node.type in ("tuple", "list", "expression_list"):
            return node, len(node.named_children)
        return node, None

    def _program_ids(self, assignments) -> None:
        self._scan_program_ids(self.body, {}, 0, {self.signature.name}, "")
        for node in self.body.named_children:
            if node.type == "if_statement":
                consequence = node.child_by_field_name("consequence")
                if consequence is not None and any(c.type == "return_statement" for c in consequence.named_children):
                    line = _line_of(node)
                    self.signature.early_exits.append(Use(line, self.lines.quote(line)))
                    for name in _python_identifiers(node.child_by_field_name("condition")):
                        normalised = normalise_name(name)
                        if normalised not in self.signature.early_exit_guards:
                            self.signature.early_exit_guards.append(normalised)

    def _scan_program_ids(self, body, derived: dict[str, int], depth: int, seen: set[str], via: str) -> None:
        """Program-id and num_programs axes read in ``body``, the variables
        derived from a program id (``derived``: name -> axis, seeded with a
        helper's parameters that receive one), and how they are decomposed
        (``// H``, ``% H``); then the same inside the ``@triton.jit`` helpers
        of this file that ``body`` calls, ``MAX_HELPER_DEPTH`` levels deep."""
        local_values = _python_assignments(body)
        calls = nodes_of(body, ("call",), "python")
        for node in calls:
            if node.type == "call":
                found = _program_id_call(node)
                if found:
                    kind, axis = found
                    target = self.signature.program_id_axes if kind == "program_id" else self.signature.num_programs_axes
                    if axis not in target:
                        target.append(axis)
        # Variables derived from a program id, in source order.
        for node in nodes_of(body, ("assignment", "for_statement", "binary_operator"), "python"):
            if node.type in ("assignment", "for_statement"):
                left = node.child_by_field_name("left")
                right = node.child_by_field_name("right")
                if left is None or right is None:
                    continue
                targets = [left] if left.type == "identifier" else \
                    [c for c in left.named_children if c.type == "identifier"] \
                    if left.type in ("pattern_list", "tuple_pattern") else []
                axis = self._derived_axis(right, derived) if targets else None
                if axis is not None:
                    for target in targets:  # row_tile, col_tile = _tile_of_item(pid, ...)
                        derived.setdefault(_text(target), axis)
            if node.type == "binary_operator":
                operator = _text(node.child_by_field_name("operator"))
                if operator not in ("//", "%"):  # ``/`` is true division in Python and Triton: no packing
                    continue
                left = node.child_by_field_name("left")
                axis = self._derived_axis(left, derived)
                if axis is None:
                    continue
                # The divisor as a canonical expression through the body's
                # bindings: `pid // H` with `H = num_heads` is `pid // num_heads`.
                operand = canonical_form(node.child_by_field_name("right"), local_values.at(node).get,
                                         normalise_name).text
                line = _line_of(node)
                found = Decomposition(axis, operator, operand, line, self.lines.quote(line), via)
                if found not in self.signature.decomposition:  # a helper called twice is read once
                    self.signature.decomposition.append(found)
        if depth >= self.MAX_HELPER_DEPTH:
            return
        for node in calls:
            function = node.child_by_field_name("function") if node.type == "call" else None
            helper = self._called_helper(function, KIND_TRITON_KERNEL, seen) if function is not None else None
            if helper is None:
                continue
            name, helper_function, helper_body = helper
            seeded = {}
            for parameter, value in _bind_call(helper_function, node, {}).items():
                axis = self._derived_axis(value, derived)
                if axis is not None:
                    seeded[parameter] = axis
            self._scan_program_ids(helper_body, seeded, depth + 1, seen | {name}, f"{via} > {name}" if via else name)

    @staticmethod
    def _scales_work_index(node, derived) -> bool:
        """Is a program-id value multiplied inside ``node`` (an offset, not a decomposition)?"""
        for current in _walk(node):
            if current.type == "binary_operator" and _text(current.child_by_field_name("operator")) == "*" and any(
                    _mentions_work_index(side, derived)
                    for side in (current.child_by_field_name("left"), current.child_by_field_name("right"))):
                return True
        return False

    @staticmethod
    def _derived_axis(node, derived) -> int | None:
        """The program-id axis the per-program value ``node`` derives from.

        Only the program's work index counts: a value read from memory
        (``tl.load(... pid ...)``) is data, and anything with ``tl.arange``
        is a vector of lanes, so ``tokens // BLOCK`` over a lane vector is an
        offset computation, not a decomposition of ``program_id``."""
        if node is None:
            return None
        if node.type == "identifier":
            return derived.get(_text(node))
        axis = None
        if _PythonExtractor._scales_work_index(node, derived):
            return None  # `pid_head * 2 * D // S` addresses memory; it does not pack work into the id
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "call":
                short = _text(current.child_by_field_name("function")).split(".")[-1]
                if short == "arange":
                    return None
                if short in _MEMORY_READS:
                    continue
                found = _program_id_call(current)
                if found and found[0] == "program_id":
                    axis = found[1] if axis is None else axis
                    continue
            if current.type == "identifier" and _text(current) in derived and axis is None:
                axis = derived[_text(current)]
            stack.extend(current.children)
        return axis


def _mentions_work_index(node, derived) -> bool:
    for current in _walk(node):
        if current.type == "identifier" and _text(current) in derived:
            return True
        if current.type == "call" and _program_id_call(current):
            return True
    return False


_MEMORY_READS = frozenset({"load", "atomic_add", "atomic_cas", "atomic_xchg", "atomic_max", "atomic_min",
                           "atomic_and", "atomic_or", "atomic_xor"})


def _program_id_call(call) -> tuple[str, int] | None:
    """``("program_id" | "num_programs", axis)`` for ``tl.program_id(axis)`` calls."""
    function = _text(call.child_by_field_name("function"))
    short = function.split(".")[-1]
    if short not in ("program_id", "num_programs"):
        return None
    arguments = call.child_by_field_name("arguments")
    axis = 0
    for argument in arguments.named_children if arguments else []:
        value = argument.child_by_field_name("value") if argument.type == "keyword_argument" else argument
        literal = _int_literal(_text(value))
        if literal is not None:
            axis = literal
    return short, axis


# Calls a heuristic may make and still be computed from its arguments alone.
_HEURISTIC_CALLS = frozenset({"triton.cdiv", "cdiv", "triton.next_power_of_2", "min", "max", "int", "bool", "abs",
                              "math.ceil", "math.floor", "math.log2", "math.log", "math.sqrt", "math.prod"})


def _heuristic_names(outer) -> set[str]:
    """Names a ``@triton.heuristics({NAME: lambda args: ...})`` decorator (the
    table passed by position or as ``values=``) computes from the kernel's
    arguments alone (``args[...]``, literals and the calls above, pure
    arithmetic of ``math`` among them); a lambda that reads anything else is
    left out."""
    if outer.type != "decorated_definition":
        return set()
    names: set[str] = set()
    for decorator in outer.children:
        call = next((c for c in decorator.named_children if c.type == "call"), None) \
            if decorator.type == "decorator" else None
        callee = call.child_by_field_name("function") if call is not None else None
        if callee is None or _text(callee).split(".")[-1] != "heuristics":
            continue
        arguments = call.child_by_field_name("arguments")
        table = next((a for a in arguments.named_children if a.type == "dictionary"), None) if arguments else None
        if table is None and arguments is not None:  # heuristics(values={...})
            table = next((k.child_by_field_name("value") for k in arguments.named_children
                          if k.type == "keyword_argument" and _text(k.child_by_field_name("name")) == "values"
                          and k.child_by_field_name("value") is not None
                          and k.child_by_field_name("value").type == "dictionary"), None)
        for pair in table.named_children if table is not None else ():
            key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
            if pair.type == "pair" and key is not None and key.type == "string" and value is not None \
                    and value.type == "lambda" and _reads_only_its_arguments(value):
                names.add(_text(key).strip("\"'"))
    return names


def _heuristic_reads(outer) -> set[str]:
    """Normalised names a ``@triton.heuristics`` decorator of ``outer`` reads
    from the kernel's arguments: every string literal in the decorator (the
    ``args["NAME"]`` subscripts and the table's keys), read generously so that
    a parameter feeding a derived constexpr is never taken for an unread one."""
    if outer is None or outer.type != "decorated_definition":
        return set()
    names: set[str] = set()
    for decorator in outer.children:
        if decorator.type != "decorator" or "heuristics" not in _text(decorator):
            continue
        names.update(normalise_name(_text(n).strip("\"'")) for n in nodes_of(decorator, ("string",), "python"))
    return names


def _tuner_named_unread(signature: Signature, outer) -> tuple[str, ...]:
    """The normalised parameters of a Triton kernel's ``signature`` (its dead parameters read) that its body
    never reads and a string literal of its file names (``_file_strings``): what only tuning code reads."""
    named = _file_strings(_root(outer))
    return tuple(p.normalised for p in signature.params
                 if p.normalised in signature.dead_params and p.name.lstrip("*") in named)


@lru_cache(maxsize=64)
def _unread_kernel_params(root, kernel: str) -> tuple[str, ...]:
    """``unread-kernel-parameter``: the parameters of the one Triton kernel named
    ``kernel`` that the file under ``root`` defines which its body never reads
    and no ``@triton.heuristics`` lambda of it reads (only an autotuner's key or
    pruner can): normalised; empty where the kernel is not one such definition."""
    kernels = [d for d in file_definitions(root, "python")
               if d.name == bare_name(kernel) and d.kind == KIND_TRITON_KERNEL]
    if len(kernels) != 1 or kernels[0].node is None:
        return ()
    signature = Signature(kernels[0].name, kernels[0].qualified_name, kernels[0].kind, "python")
    extractor = _PythonExtractor(kernels[0].node, signature, _Lines(b""))
    if extractor.function is None or extractor.body is None:
        return ()
    extractor._params()
    extractor._dead_params()
    reads = _heuristic_reads(extractor.outer)
    return tuple(p for p in _tuner_named_unread(signature, extractor.outer) if p not in reads)


@lru_cache(maxsize=16)
def _file_strings(root) -> frozenset[str]:
    """The contents of the file's plain string literals (``'M'`` in ``key=['M', 'N']``, ``nargs['M']``): what
    names a kernel parameter to an autotuner's key, pruner or hook, which read it by name."""
    return frozenset(_text(n).strip("\"'") for n in nodes_of(root, ("string",), "python")
                     if not _text(n).startswith(('"""', "'''")))


def _reads_only_its_arguments(function) -> bool:
    parameters = function.child_by_field_name("parameters")
    own = {_text(p) for p in parameters.named_children if p.type == "identifier"} if parameters else set()
    body = function.child_by_field_name("body")
    stack = [body] if body is not None else []
    while stack:
        node = stack.pop()
        if node.type == "call":
            callee = node.child_by_field_name("function")
            if callee is None or _text(callee) not in _HEURISTIC_CALLS:
                return False
            stack.extend(node.children_by_field_name("arguments"))
            continue
        if node.type == "identifier" and _text(node) not in own:
            return False
        if node.type in ("lambda", "attribute"):
            return False
        stack.extend(node.children)
    return True


_SCOPES = ("function_definition", "lambda", "class_definition")


_COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">="})
# ``excluded-path``: methods that, called without arguments, give a tensor of the same shape.
_SHAPE_KEEPING = frozenset({"contiguous", "clone", "detach", "float", "half", "bfloat16", "cuda", "cpu"})


def _keeps_shape(value, name: str) -> bool:
    """``value`` is ``name.m()`` with ``m`` a conversion that keeps the shape (``_SHAPE_KEEPING``)."""
    if value is None or value.type != "call":
        return False
    arguments, function = value.child_by_field_name("arguments"), value.child_by_field_name("function")
    if arguments is None or arguments.named_child_count or function is None or function.type != "attribute":
        return False
    owner, attribute = function.child_by_field_name("object"), function.child_by_field_name("attribute")
    return owner is not None and owner.type == "identifier" and _text(owner) == name \
        and attribute is not None and _text(attribute) in _SHAPE_KEEPING


class PythonLocals(ReachingLocals):
    """The simple local assignments of a Python body. As a mapping it holds
    only names assigned once (a value that does not depend on where it is
    read); ``at(use)`` resolves every name to the assignment that reaches
    ``use``, because a later ``grid = ...`` must not be read as an earlier one."""

    loops = ("for_statement", "while_statement")

    def __init__(self, body):
        super().__init__()
        for node in nodes_of(body, ("assignment", "augmented_assignment"), "python"):
            if node.type == "augmented_assignment":
                left = node.child_by_field_name("left")
                if left is not None and left.type == "identifier" and self._in_body(node, body):
                    self.definitions.setdefault(_text(left), []).append((node, None))
            if node.type != "assignment" or not self._in_body(node, body):
                continue
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is None or right is None:
                continue
            if left.type == "identifier":
                self.definitions.setdefault(_text(left), []).append((node, right))
            elif left.type in ("pattern_list", "tuple_pattern"):
                positions = list(left.named_children)
                splat = next((p for p, c in enumerate(positions) if c.type == "list_splat_pattern"), None)
                values = right.named_children if right.type in ("expression_list", "tuple") else []
                for position, target in enumerate(positions):
                    if target.type != "identifier":
                        continue
                    index = position if splat is None or position < splat else position - len(positions)
                    value = values[position] if len(values) == len(positions) and splat is None \
                        else Unpacked(right, index)
                    self.definitions.setdefault(_text(target), []).append((node, value))
        self.settle()

    @staticmethod
    def _in_body(node, body) -> bool:
        """False for assignments inside a nested function, lambda or class (another scope)."""
        for ancestor in ancestors(node.parent):
            if ancestor.id == body.id:
                return True
            if ancestor.type in _SCOPES:
                return False
        return True

    @staticmethod
    def holder(statement):
        holder = statement.parent
        while holder is not None and holder.type in ("expression_statement",):
            holder = holder.parent
        return holder


def _python_assignments(body) -> PythonLocals:
    return PythonLocals(body)


def _running_count(items, wanted) -> list[int]:
    """For each item, how many ``wanted`` items come before it."""
    counts, seen = [], 0
    for item in items:
        counts.append(seen)
        seen += item == wanted
    return counts


def _literal_sequence(splat, assignments, substitution) -> list | None:
    """The elements of ``*X`` when X is, or names, a tuple/list literal."""
    if splat.type != "list_splat" or not splat.named_children:
        return None
    value = splat.named_children[0]
    seen = set()
    while value is not None and value.type == "identifier" and _text(value) not in seen:
        seen.add(_text(value))
        value = substitution.get(_text(value)) or assignments.get(_text(value))
    if value is not None and value.type in ("tuple", "list"):
        return [c for c in value.named_children if c.type != "comment"]
    return None


def _python_parameter_names(function) -> list[str]:
    """Parameter names of a Python function node, as written (no ``*``)."""
    names = []
    parameters = function.child_by_field_name("parameters")
    for child in parameters.named_children if parameters else []:
        if child.type == "identifier":
            names.append(_text(child))
        elif child.type in ("typed_parameter", "list_splat_pattern", "dictionary_splat_pattern"):
            inner = next((c for c in child.named_children if c.type == "identifier"), None)
            names.append(_text(inner) if inner is not None else "")
        elif child.type in ("default_parameter", "typed_default_parameter"):
            names.append(_text(child.child_by_field_name("name")))
        else:
            names.append("")  # the bare * or / separators keep positions honest
    return [n for n in names]


def _bind_call(function, call, outer_substitution: dict[str, Any]) -> dict[str, Any]:
    """helper parameter name -> the caller's argument node, for a call of
    ``function`` (positional by index, keywords by name), seen through the
    caller's own substitution when it is itself a helper."""
    params = [n for n in _python_parameter_names(function)]
    positional_params = [n for n in params if n and n not in ("self", "cls")]
    bindings: dict[str, Any] = {}
    arguments = call.child_by_field_name("arguments")
    index = 0
    for argument in arguments.named_children if arguments else []:
        if argument.type == "keyword_argument":
            name = _text(argument.child_by_field_name("name"))
            value = argument.child_by_field_name("value")
        elif argument.type in ("list_splat", "dictionary_splat", "comment"):
            if argument.type == "list_splat":
                index = len(positional_params)  # later positions are unknown
            continue
        else:
            name = positional_params[index] if index < len(positional_params) else None
            value = argument
            index += 1
        if name and value is not None:
            if value.type == "identifier" and _text(value) in outer_substitution:
                value = outer_substitution[_text(value)]
            bindings[name] = value
    return bindings


def _substituted_names(substitution: dict[str, Any]) -> dict[str, str]:
    """normalised helper parameter -> normalised first identifier of the
    caller's argument, for renaming a helper's launch into the caller's names."""
    renamed = {}
    for name, value in substitution.items():
        ids = _python_identifiers(value)
        if ids:
            renamed[normalise_name(name)] = normalise_name(ids[0])
    return renamed


def is_field_or_keyword(node) -> bool:
    """Whether an identifier names an attribute (``obj.NAME``) or a keyword argument (``f(NAME=...)``)
    rather than a variable."""
    parent = node.parent
    if parent is None:
        return False
    field = "attribute" if parent.type == "attribute" else "name" if parent.type == "keyword_argument" else None
    named = parent.child_by_field_name(field) if field is not None else None
    return named is not None and named.id == node.id


def _plain_lines(text: str) -> list[str]:
    """``default-selector-parameter``: the non-blank lines of ``text`` without whitespace or a trailing
    ``#`` comment (a line that is only a comment is left out)."""
    found = []
    for line in text.splitlines():
        plain = "".join(line.split("#", 1)[0].split())
        if plain:
            found.append(plain)
    return found


def _is_python_read(node) -> bool:
    """False for names that are not reads of a variable: attribute fields,
    keyword names, assignment targets."""
    parent = node.parent
    if parent is None:
        return True
    if is_field_or_keyword(node):
        return False
    if parent.type == "assignment" and parent.child_by_field_name("left") is not None \
            and parent.child_by_field_name("left").id == node.id:
        return False
    return True


def _is_discard(node) -> bool:
    """``del x`` and ``_ = x``: a parameter kept only to be discarded."""
    parent = node.parent
    if parent is not None and parent.type == "delete_statement":
        return True
    if parent is not None and parent.type == "assignment":
        left = parent.child_by_field_name("left")
        right = parent.child_by_field_name("right")
        return left is not None and _text(left) == "_" and right is not None and right.id == node.id
    return False


def _python_identifiers(node) -> list[str]:
    """Variable-like identifiers in a Python expression: callees and
    attribute fields are left out (``triton.cdiv(n, B)`` → ``n, B``;
    ``q.shape[0]`` → ``q``)."""
    if node is None:
        return []
    found: list[str] = []
    for current in _walk(node):
        if current.type != "identifier":
            continue
        parent = current.parent
        if parent is not None and parent.type == "attribute":
            if parent.child_by_field_name("attribute") is not None and parent.child_by_field_name("attribute").id == current.id:
                continue
        if parent is not None and parent.type == "call" and parent.child_by_field_name("function").id == current.id:
            continue
        if parent is not None and parent.type == "keyword_argument" and parent.child_by_field_name("name").id == current.id:
            continue
        if parent is not None and parent.type == "lambda_parameters":
            continue
        text = _text(current)
        if text in _CPP_NON_VARIABLES:
            continue
        found.append(text)
    return found


@lru_cache(maxsize=256)
def python_single_return(node):
    """``(parameter names, returned expression, local assignments)`` of the
    Python function ``node`` (possibly decorated) for a grid computed there.
    With several ``return``s, the second and third items are lists, one entry
    per return; None when nothing is returned."""
    found = returns_of(node)
    if found is None:
        return None
    function, body, returns = found
    names = _python_parameter_names(function)
    locals_ = _python_assignments(body)
    if len(returns) == 1:
        return names, returns[0].named_children[0], locals_.at(returns[0])
    return names, [r.named_children[0] for r in returns], [locals_.at(r) for r in returns]


def autograd_context(node) -> bool:
    """Whether the first parameter of the Python function ``node`` (or its decorated definition) is the
    context autograd passes: ``forward`` of a class deriving from ``Function``
    (``torch.autograd.Function``) whose ``forward`` takes the context, i.e. the class defines no
    ``setup_context`` (PyTorch's two forms: ``forward(ctx, *inputs)``, or ``forward(*inputs)`` with
    ``setup_context(ctx, inputs, output)``). ``Function.apply(*inputs)`` supplies it, so it is no parameter
    a caller binds and no part of the interface callers see (``backward`` takes it in both forms alike)."""
    function = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
    if function is None or function.type != "function_definition":
        return False
    name = function.child_by_field_name("name")
    if name is None or _text(name) != "forward":
        return False
    block = node.parent
    owner = block.parent if block is not None and block.type == "block" else None
    if owner is None or owner.type != "class_definition":
        return False
    bases = owner.child_by_field_name("superclasses")
    if bases is None or not any(_text(b).split(".")[-1] == "Function" for b in bases.named_children):
        return False
    for statement in block.named_children:
        member = statement.child_by_field_name("definition") if statement.type == "decorated_definition" \
            else statement
        if member is not None and member.type == "function_definition" \
                and _text(member.child_by_field_name("name")) == "setup_context":
            return False
    return True

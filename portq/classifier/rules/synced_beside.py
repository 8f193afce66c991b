"""Synced-beside rule: a definition whose parameter or launch change the port already has is IN_SYNC only when
every other changed line of its body is part of that change (DESIGN §5, §6).

A parameter item in sync decides the parameter, never the body beside it. A changed body line is the
parameter change's when its statement reads a changed parameter, directly or through a local every assignment
of which reads one (transitively, in the same body), and, against the statement it replaces, only adds such
names (an operator beside one, a call argument reading one) in place of names or literals: a line that reads
the parameter AND changes unrelated arithmetic (an operator, a constant) is not the parameter change. A
statement in a branch on such a name is that name's; a line of braces goes with the statement it opens or
closes; a line kept, only re-indented, out of a removed guard on a changed name is that guard's. With a launch
item in sync, a launch statement, the assignments of the locals it reads, and an early return or check on its
geometry added or removed whole are the launch change's. Any other changed line needs review unless the port
already has it in its new form (locals spelled alike) and not its old.

Only a definition whose items in sync are all signature items is read so (``DefinitionRules._from_items``): a
launch or grid the port already has is often reached through helpers, headers or program-id decompositions that
this line-by-line reading does not follow, so a launch item in sync still decides its definition; and a body or
parameter list that cannot be parsed is left IN_SYNC (the rule flags only lines it has read).

Example diff (NEEDS_REVIEW; the port already takes ``scale`` and multiplies by it, and does not divide the sum)::

    -__global__ void k(T* out, const T* x, int n) {
    +__global__ void k(T* out, const T* x, int n, float scale) {
    -    acc += x[i] * x[i];
    +    acc += x[i] * x[i] / n;
    -    out[0] = acc;
    +    out[0] = acc * scale;

The code: ``undecided_line`` reads both sides' syntax trees through ``portq.language.signatures.walk`` and the
parameter readers of ``cosmetic``; it imports nothing after the classifier.
"""

from __future__ import annotations

import difflib
import re

from portq.classifier.rules import Rule
from portq.classifier.rules.cosmetic import (_cpp_parameter_identifier, _function_node, _is_name_use,
                                            _python_parameters, _target_identifiers, cpp_parameter_declarations,
                                            local_names)
from portq.language.signatures import is_docstring, node_text, walk

RULES = (
    Rule("synced-beside", ("NEEDS_REVIEW",),
         "A definition whose parameter or launch change the port already has (the items IN_SYNC) is IN_SYNC only "
         "when every other changed line of its body is that change's: a line whose statement reads a changed "
         "parameter, directly or through a local each assignment of which reads one (transitively, in the same "
         "body), and against the statement it replaces only adds such names, an operator beside one, or call "
         "arguments reading them, in place of names or literals (a line reading the parameter AND changing an "
         "operator or constant is not the parameter change); a statement in a branch on such a name; a brace "
         "line of such a statement; a line only re-indented out of a removed guard on one; with a launch item in "
         "sync, a launch statement, an assignment of a local the launch reads, and an early return or check on "
         "the launch's geometry added or removed whole. Any other changed line needs review (NEEDS_REVIEW) unless "
         "the port already has it in its new form, locals spelled alike, and not its old. Read only where every "
         "item in sync is a signature item.",
         "-__global__ void k(T* out, const T* x, int n) {\n+__global__ void k(T* out, const T* x, int n, float s) {\n"
         "-    acc += x[i];\n+    acc += x[i] / n;\n-    out[0] = acc;\n+    out[0] = acc * s;   (the port takes s, "
         "never divides by n)",
         "classifier.rules.synced_beside.undecided_line, classifier.rules.definitions.DefinitionRules._from_items"),
)

_BODIES = ("block", "compound_statement")
_NAMES = ("identifier", "type_identifier")
_WORD = re.compile(r"[A-Za-z_]\w*|[\d.]+[A-Za-z]*|\"[^\"]*\"|'[^']*'")
_BRANCHES = ("else_clause", "elif_clause", "except_clause", "finally_clause", "case_clause")
_STRUCTURAL = frozenset("(){}[];,:") | {"if", "elif", "else", "\\"}
_ERASABLE = frozenset({"+", "-", "*", "/", "%", "&&", "||", "and", "or", "&", "|", "^", ",", "<<", ">>", "//", "**"})


def _parameters(node, language: str) -> dict[str, str] | None:
    """name -> declaration text of the definition's parameters; None where they cannot be read."""
    function = _function_node(node)
    if language == "python":
        params = function.child_by_field_name("parameters") if function is not None else None
        if params is None:
            return None
        names = _python_parameters(function)
        found = {}
        for child in params.named_children:
            text = node_text(child)
            name = next((n for n in names if text == n or text.startswith((n + ":", n + "=", n + " ", "*" + n,
                                                                          "**" + n))), None)
            if name is not None:
                found[name] = " ".join(text.split())
        return found
    declarations = cpp_parameter_declarations(node)
    if declarations is None:
        return None
    found = {}
    templates = node.child_by_field_name("parameters") if node.type == "template_declaration" else None
    for declaration in declarations + ([c for c in templates.named_children if c.type == "parameter_declaration"]
                                       if templates is not None else []):
        name = _cpp_parameter_identifier(declaration)
        if name is not None:
            found[node_text(name)] = " ".join(node_text(declaration).split())
    return found


def _body(node):
    function = _function_node(node)
    if function is None:
        return None
    body = function.child_by_field_name("body")
    return body if body is not None and body.type in _BODIES else None


def _is_statement(node) -> bool:
    return node.type not in _BODIES and (node.type.endswith(("_statement", "_clause")) or node.type == "declaration")


def _header_end(statement) -> int:
    """The byte where a statement's own text ends: before its first nested body."""
    first = next((c for c in statement.children if c.type in _BODIES or c.type in _BRANCHES), None)
    return first.start_byte if first is not None else statement.end_byte


def _reads(statement, names: set[str], language: str) -> bool:
    """The statement's own text reads one of ``names``; an ``else`` or ``elif`` branch also by the condition of
    the ``if`` it belongs to."""
    if statement.type in _BRANCHES and statement.parent is not None and _reads(statement.parent, names, language):
        return True
    end = _header_end(statement)
    return any(n.start_byte < end and n.type in _NAMES and (n.type != "identifier" or _is_name_use(n, language))
               and node_text(n) in names for n in walk(statement))


def _assignments(body, language: str):
    """(target identifiers, value) of each assignment or initialised declaration in ``body``."""
    for node in walk(body):
        if language == "python" and node.type in ("assignment", "augmented_assignment"):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and right is not None:
                yield [node_text(i) for i in _target_identifiers(left)], right
        elif language == "cpp" and node.type == "declaration" \
                and (node.child_by_field_name("declarator") or node).type == "function_declarator":
            declarator = node.child_by_field_name("declarator")  # `dim3 grid(n);`: a constructor's arguments
            name, value = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("parameters")
            if name is not None and name.type == "identifier" and value is not None:
                yield [node_text(name)], value
        elif language == "cpp" and node.type in ("init_declarator", "assignment_expression"):
            left = node.child_by_field_name("declarator" if node.type == "init_declarator" else "left")
            right = node.child_by_field_name("value" if node.type == "init_declarator" else "right")
            if left is not None and right is not None:
                while left is not None and left.type != "identifier":
                    left = left.child_by_field_name("declarator")
                yield ([node_text(left)] if left is not None else []), right


def _derived(body, changed: set[str], language: str) -> set[str]:
    """``changed`` and the locals of ``body`` each assignment of which reads one of them (transitively)."""
    values: dict[str, list] = {}
    for targets, value in _assignments(body, language):
        for target in targets:
            values.setdefault(target, []).append({node_text(n) for n in walk(value) if n.type in _NAMES})
    found = set(changed)
    grew = True
    while grew:
        grew = False
        for name, reads in values.items():
            if name not in found and all(r & found for r in reads):
                found.add(name)
                grew = True
    return found


class _Side:
    def __init__(self, node, names: set[str], language: str):
        self.language = language
        self.body = _body(node)
        self.function = _function_node(node)
        self.names = _derived(self.body, names, language) if self.body is not None else set(names)
        self.statements = [n for n in walk(self.body) if _is_statement(n)] if self.body is not None else []

    def innermost(self, line: int, edge: bool = False):
        """The innermost statement of the body covering 0-based ``line`` (with ``edge``, starting or ending on
        it)."""
        found = None
        for statement in self.statements:
            first, last = statement.start_point[0], statement.end_point[0]
            if (first == line or last == line) if edge else first <= line <= last:
                found = statement if found is None or statement.start_byte >= found.start_byte else found
        return found

    def guards(self, line: int) -> list[str]:
        """The headers of the statements enclosing ``line`` that read no changed name, outermost first: each one's
        text up to its first nested body or statement."""
        return [" ".join(self.text(s, min([_header_end(s)] + [t.start_byte for t in self.statements
                                                               if s.start_byte < t.start_byte < s.end_byte])).split())
                for s in self.statements
                if s.start_point[0] < line <= s.end_point[0] and not _reads(s, self.names, self.language)]

    def text(self, statement, end: int) -> str:
        return statement.text[:end - statement.start_byte].decode("utf-8", errors="replace")

    def leaves(self, line: int) -> list:
        return [n for n in walk(self.function) if not n.children and n.start_point[0] == line
                and n.type != "comment" and "comment" not in n.type]

    def governed(self, line: int) -> bool:
        """``line`` lies in a branch of a statement whose own text reads a changed name."""
        return any(s.start_point[0] < line <= s.end_point[0] and _reads(s, self.names, self.language)
                   for s in self.statements)

    def tokens(self, statement, collapse: bool = False) -> list[str]:
        """The statement's own tokens (its nested bodies, comments and commas aside); with ``collapse``, each
        call argument that reads a changed name as one token ``<arg>``."""
        end = _header_end(statement)
        found: list[str] = []
        stack = [statement]
        while stack:
            node = stack.pop()
            if node.start_byte >= end or "comment" in node.type:
                continue
            if collapse and node.parent is not None and node.parent.type == "argument_list" and node.is_named \
                    and any(n.type == "identifier" and node_text(n) in self.names for n in walk(node)):
                found.append("<arg>")
                continue
            if not node.children:
                if node_text(node) != ",":
                    found.append(node_text(node))
                continue
            stack.extend(reversed(node.children))
        return found


def _launches(body, language: str) -> list:
    """The launch calls of ``body``: ``k<<<grid, block>>>(...)`` in C/C++, ``k[grid](...)`` in Python."""
    if language == "cpp":
        return [n for n in walk(body) if n.type == "call_expression"
                and any(c.type == "kernel_call_syntax" for c in n.children)]
    return [n for n in walk(body) if n.type == "call" and n.child_by_field_name("function") is not None
            and n.child_by_field_name("function").type == "subscript"]


def _launch_statements(side: "_Side") -> set[int]:
    """The ids of the statements holding a launch, and of those assigning a local a launch reads
    (transitively): a launch change's own lines."""
    found: set[int] = set()
    reads: set[str] = set()
    for call in _launches(side.body, side.language):
        holder = call
        while holder is not None and not _is_statement(holder):
            holder = holder.parent
        if holder is not None:
            found.add(holder.id)
        reads |= {node_text(n) for n in walk(call) if n.type in _NAMES}
    assigning = [(s, [t for targets, _ in _assignments(s, side.language) for t in targets],
                  {node_text(n) for n in walk(s) if n.type in _NAMES})
                 for s in side.statements if s.type in ("declaration", "expression_statement")]
    grew = True
    while grew:
        grew = False
        for statement, targets, words in assigning:
            if statement.id not in found and set(targets) & reads:
                found.add(statement.id)
                reads |= words
                grew = True
    return found


def _geometry(side: "_Side") -> set[str]:
    """The names a launch's geometry (its ``<<<...>>>`` configuration, its ``[grid]``) reads, directly or through
    the locals assigned before it (transitively)."""
    reads: set[str] = set()
    for call in _launches(side.body, side.language):
        if side.language == "cpp":
            parts = [c for c in call.children if c.type == "kernel_call_syntax"]
        else:
            function = call.child_by_field_name("function")
            parts = [c for c in function.named_children[1:]] if function is not None else []
        reads |= {node_text(n) for part in parts for n in walk(part) if n.type in _NAMES}
    values = list(_assignments(side.body, side.language))
    grew = True
    while grew:
        grew = False
        for targets, value in values:
            if set(targets) & reads:
                more = {node_text(n) for n in walk(value) if n.type in _NAMES} - reads
                if more:
                    reads |= more
                    grew = True
    return reads


def _is_guard(statement, language: str) -> bool:
    """An early return (`if (c) return;` with nothing else in its branch, no else) or a check that stops on a
    false condition (`assert c`, an all-caps `..._CHECK(...)` or `..._ASSERT(...)` call)."""
    if statement.type == "if_statement":
        if any(c.type in _BRANCHES for c in statement.children):
            return False
        body = statement.child_by_field_name("consequence")
        inner = [c for c in body.named_children if c.type != "comment"] if body is not None and body.type in _BODIES \
            else ([body] if body is not None else [])
        return len(inner) == 1 and inner[0].type == "return_statement" and inner[0].named_child_count == 0
    if statement.type == "assert_statement":
        return True
    if statement.type == "expression_statement" and statement.named_child_count == 1:
        call = statement.named_children[0]
        function = call.child_by_field_name("function") if call.type in ("call", "call_expression") else None
        name = node_text(function) if function is not None else ""
        return name.isupper() and ("CHECK" in name or "ASSERT" in name)
    return False


def undecided_line(old_node, new_node, language: str, hunks, extra: set[str], launch: bool = False,
                   port_node=None, port_language: str | None = None) -> str | None:
    """Rule ``synced-beside``: the first changed line of the definition's body that its parameter change does
    not account for (the text, stripped); None when each is accounted for. ``hunks`` lists, per hunk, its
    (1-based line, text) pairs removed and added inside the definition; ``extra`` names changed otherwise (removed
    parameters the port never took, declared-out-of-scope names); with ``launch`` (a launch item in sync), the
    launch statements and the assignments of the locals they read are the launch change's. Parameters or a body
    that cannot be read give None: the rule flags only what it reads. With ``port_node``, lines the port already
    has in their new form (and not their old) are decided too."""
    olds, news = _parameters(old_node, language), _parameters(new_node, language)
    if olds is None or news is None:
        return None  # parameters that cannot be read: nothing here to tell the change's lines from the rest
    changed = {n for n in set(olds) | set(news) if olds.get(n) != news.get(n)} | set(extra)
    sides = (_Side(old_node, changed, language), _Side(new_node, changed, language))
    if sides[0].body is None or sides[1].body is None:
        return None
    launched = (_launch_statements(sides[0]), _launch_statements(sides[1])) if launch else (set(), set())
    geometry = (_geometry(sides[0]) | _geometry(sides[1])) if launch else set()
    lines = ({n - 1: t for removed, _ in hunks for n, t in removed}, {n - 1: t for _, added in hunks for n, t in added})
    side_lines = tuple(_source_lines(node) for node in (old_node, new_node))
    # each changed line's unit: the innermost statement covering it (a compound statement's own text only)
    units: list[dict] = [{}, {}]
    loose: list[list] = [[], []]
    governed: list[list] = [[], []]
    for index in (0, 1):
        side = sides[index]
        body_first = side.body.start_point[0]
        for line, text in sorted(lines[index].items()):
            if line < body_first or (line == body_first and language == "cpp" and not text.strip().startswith("{")):
                continue  # the signature: the parameter items decide it
            words = [w for w in _tokens(text) if w not in _STRUCTURAL]
            statement = side.innermost(line, edge=not words)
            if statement is None:
                loose[index].append((line, text))
                continue
            if any(is_docstring(c) for c in statement.children) or statement.id in launched[index]:
                continue  # a docstring is no code; a launch change's line is the launch item's
            if side.governed(line) and not _reads(statement, side.names, language):
                governed[index].append((line, text))  # in a branch on a changed name: that name's change
                continue
            units[index].setdefault(statement.id, (statement, []))[1].append((line, text))
    spent: set[tuple[int, int]] = set()
    reading = [[], []]
    guarded: list[list] = [[], []]
    alone: list[list] = [[], []]  # reading statements added or removed whole
    for index in (0, 1):
        side = sides[index]
        for statement, own in units[index].values():
            if _reads(statement, side.names, side.language):
                reading[index].append((statement, own))
            elif geometry and _is_guard(statement, language) and _reads(statement, geometry, language) \
                    and _whole(statement, lines[index], side_lines[index]):
                guarded[index].append(statement)  # a guard or check on the launch's geometry, added or removed
                continue                           # whole: the launch change's
            else:
                loose[index].extend(own)
    for index in (0, 1):
        inside = [(g.start_point[0], g.end_point[0]) for g in guarded[index]]
        reading[index] = [(t, own) for t, own in reading[index]
                          if not any(a <= t.start_point[0] and t.end_point[0] <= b for a, b in inside)]
        loose[index] = [(n, t) for n, t in loose[index] if not any(a <= n <= b for a, b in inside)]
    # a reading statement paired with a statement of the other side (a changed one first) it only adds changed
    # names to; one added or removed whole needs no pair
    for index in (0, 1):
        other = 1 - index
        order = sorted(reading[index], key=lambda r: _whole(r[0], lines[index], side_lines[index]))
        for statement, own in order:
            matches = [t for t, _ in units[other].values() if (other, t.id) not in spent
                       and _replaces(sides[index], statement, sides[other], t)] \
                or [t for t in sides[other].statements if t.id not in units[other] and t.type == statement.type
                    and _replaces(sides[index], statement, sides[other], t)]
            if matches:
                twin = max(matches, key=lambda t: difflib.SequenceMatcher(
                    None, sides[index].tokens(statement), sides[other].tokens(t), autojunk=False).ratio())
                spent |= {(index, statement.id), (other, twin.id)}
                if twin.id in units[other]:
                    gone = {x for x, _ in units[other][twin.id][1]}
                    loose[other] = [(n, t) for n, t in loose[other] if n not in gone]
                continue
            if _whole(statement, lines[index], side_lines[index]):
                alone[index].extend(own)
            elif not any(statement.start_byte < t.start_byte and t.end_byte <= statement.end_byte
                         for t in sides[index].statements):
                loose[index].extend(own)
            # else a wrapper on a changed name (a guard, a switch binding it) around statements of its own: its
            # opening and closing lines are that name's change, what it wraps is read line by line
    # a line only re-indented out of (or into) a guard on a changed name, its other guards the same
    for index in (0, 1):
        for line, text in list(loose[index]):
            twin = next(((n, t) for n, t in loose[1 - index] + governed[1 - index]
                         if _unqualified(t) == _unqualified(text)
                         and sides[index].guards(line) == sides[1 - index].guards(n)), None)
            if twin is not None:
                loose[index].remove((line, text))
                if twin in loose[1 - index]:
                    loose[1 - index].remove(twin)
    if not loose[0] and not loose[1]:
        return None
    if port_node is not None and port_language == language and (loose[1] or alone[1]) \
            and _port_has_lines(port_node, language, new_node, [t for _, t in loose[1] + alone[1]], old_node,
                                [t for _, t in loose[0]]):
        return None
    return sorted(loose[0] or loose[1])[0][1].strip()


def _placed(node, language: str, text: str | None = None) -> list[str]:
    """Tokens of ``text`` (else the definition's own), comments aside, each of the definition's locals spelled
    as one placeholder: what reads the same whatever the locals are called."""
    locals_ = local_names(node, language)
    words = _tokens(text) if text is not None else [node_text(n) for n in walk(node) if not n.children
                                                     and "comment" not in n.type]
    return ["\x00" if w in locals_ else w for w in words]


def _port_has_lines(port_node, language: str, new_node, new_lines: list[str], old_node, old_lines: list[str]) -> bool:
    """Each changed new-side line no other reading decides (its brackets and commas at either end aside) reads,
    locals spelled alike, as a run of the port's tokens, and no such old-side line does: the port already has
    the new form of what the change did beside its parameters."""
    mine = _placed(port_node, language)

    def holds(node, text) -> bool | None:
        tokens = _placed(node, language, text)
        while tokens and tokens[0] in _STRUCTURAL:
            tokens = tokens[1:]
        while tokens and tokens[-1] in _STRUCTURAL:
            tokens = tokens[:-1]
        if len([t for t in tokens if t != "\x00" and t not in _STRUCTURAL]) < 2:
            return None  # too little to tell
        return any(mine[i:i + len(tokens)] == tokens for i in range(len(mine) - len(tokens) + 1))

    return all(holds(new_node, t) for t in new_lines) and all(holds(old_node, t) is False for t in old_lines)


def _unqualified(text: str) -> list[str]:
    """A line's tokens, a `const` qualifier aside (a local that the change now updates loses it)."""
    return [t for t in _tokens(text) if t != "const"]


def _replaces(side: "_Side", statement, other: "_Side", twin) -> bool:
    """``statement`` (reading a changed name) is ``twin`` of the other side with only changed names, derived
    locals and call arguments reading them added or put in place of names or literals: each differing run of
    ``statement``'s tokens is changed names (an operator beside one) or such arguments, and ``twin``'s run at the
    same place names and literals only. A run bringing any other token is unrelated arithmetic."""
    allowed = side.names | _ERASABLE | {"<arg>"}
    for collapse in (False, True):
        mine, theirs = side.tokens(statement, collapse), other.tokens(twin, collapse)
        runs = difflib.SequenceMatcher(None, mine, theirs, autojunk=False).get_opcodes()
        if all(tag == "equal" or (all(t in allowed for t in mine[i1:i2]) and any(t not in _ERASABLE
                                                                                 for t in mine[i1:i2])
                                  and all(_WORD.fullmatch(t) for t in theirs[j1:j2]))
               for tag, i1, i2, j1, j2 in runs):
            return True
    return False


def _source_lines(node) -> list[str]:
    root = node
    while root.parent is not None:
        root = root.parent
    return root.text.decode("utf-8", errors="replace").split("\n")


def _whole(statement, changed: dict, source: list[str]) -> bool:
    """Every line of the statement's own text that holds a word is a changed line: it was added or removed
    whole."""
    return all(n in changed for n in range(statement.start_point[0], _header_line_end(statement))
               if n < len(source) and any(w not in _STRUCTURAL for w in _tokens(source[n])))


def _header_line_end(statement) -> int:
    """One past the last 0-based line of a statement's own text (its nested bodies aside), its closing line kept."""
    first = next((c for c in statement.children if c.type in _BODIES or c.type in _BRANCHES), None)
    return statement.end_point[0] + 1 if first is None else first.start_point[0] + 1


def _tokens(text: str) -> list[str]:
    return re.findall(r"[A-Za-z_]\w*|\d+\.?\d*|\S", text)

"""Build rules: a same-named definition the default build does not compile is a sibling, not the port's (DESIGN §5, §6).

A C/C++ file may define one name twice, once per build, under a
preprocessor conditional (``#if USE_GPU_B`` … ``#else`` … ``#endif``). The
diff pairs same-named definitions by their order in the file, so a commit
that adds a copy of a definition for the other build *above* the one the
default build compiles pairs the old definition with the new copy and reads
a rewrite of a ported definition where none happened:

* ``other-build-sibling``: a touched definition whose one side sits in a
  branch the default build does not compile (the innermost conditional that
  drops it tests only macros no source of the file defines, no file of the
  port's tree sets and no compiler or platform predefines, read as
  ``default-build`` reads them), in a file that, with those macros off and
  every other macro left undecided, has the same tokens before and after
  (include lines aside): what the default build compiles of the file,
  the same-named definition it keeps included, is unchanged, and the changed
  code is a sibling for the other build that nothing in the tree ports:
  NOT_APPLICABLE/``not-ported``. The lines outside definitions of such a file
  (the directives opening and closing the other build's branch) are decided
  with it. A macro the tree sets, a condition the rule cannot evaluate, a
  definition whose default-build tokens change, or a sibling the tree
  declares (its declaration decides) keep the usual comparison.

* ``other-build-lines``: the file's changed lines outside definitions, each a
  directive of a conditional testing only such macros (named by the changed
  directives), a line in a branch the default build drops with them off, or
  blank, where every unchanged line is compiled (or dropped) alike on both
  sides and no added or removed line sits in the branch such a conditional
  takes: they open and close code for another build, so not-ported. Both
  rules read the conditionals from the text (``build_lines``): real CUDA
  sources declare helpers through macros tree-sitter cannot parse.

* ``other-build-stub``: the same lines where the branch the default build
  takes adds only whole definitions, each new under a name the old file never
  used, defined again by the commit in the branch the default build drops,
  named nowhere else in the file (comments and strings aside), and ported or
  declared by nothing in the tree (``#else`` ``void convert(…) { throw …; }``
  beside the other build's new ``convert``): the default build's counterpart
  of the other build's new function, a sibling like it, so not-ported. A lone
  new definition in the taken branch, a name the file already had, a ported
  name, or a stub another definition calls (a warp-size query a launcher now
  reads) stays flagged.

* ``other-build-includes``: the lines of ``other-build-lines`` where some are
  ``#include`` lines the default build compiles (removed, or added in the
  branch it takes: a file's includes moved under ``#ifndef USE_GPU_B``, the
  ``#else`` holding the other build's headers and a namespace alias): that
  build compiles the same lines outside definitions, its includes aside, so
  cosmetic. Any other line added to or removed from the taken branch stays
  flagged.

* ``equal-alternatives``: a C/C++ file whose tokens, comments dropped, are
  the same before and after once each conditional with one ``#else`` and no
  ``#elif`` whose branches have the same tokens (read through the type
  aliases their library documents as one type: torch's deprecated
  ``at::IntList`` is ``at::IntArrayRef``) is replaced by one branch: every
  build compiled the same code whether the macro was set or not, so dropping
  (or adding) the alternative is cosmetic for every touched definition of the
  file, also where a parameter list split by the directives does not parse.
  Branches that differ, or a file changed in anything else, stay flagged.

The code: ``BuildRules`` holds the method of the verdict table
(``portq.classifier.verdicts.SymbolClassifier``, which is built from it) that
applies the rule; the preprocessor reading is ``portq.classifier.rules.branches``'.
It must not import the verdict table or anything after it, and a rule never
names a corpus symbol, path or commit.
"""

from __future__ import annotations

import re
from typing import Callable

from portq.classifier.reading import _walk_nodes
from portq.classifier.rules import Rule, branches
from portq.core.evidence import Evidence, Kind
from portq.core.model import NOT_APPLICABLE, EntryChanges, SymbolVerdict, TouchedSymbol
from portq.language.signatures import node_text
from portq.language.symbols import language_for_path, parse

RULES = (
    Rule("other-build-sibling", ("NOT_APPLICABLE",),
         "A touched C/C++ definition whose one side sits in a preprocessor branch the default build does not "
         "compile (the innermost conditional dropping it tests only macros no source of the file defines and no "
         "file of the port's tree sets), in a file whose tokens, with those macros off and every other macro left "
         "undecided, are the same before and after (include lines aside), is a same-named sibling for another "
         "build, paired with the ported definition only by its place in the file: the definition the default "
         "build compiles is unchanged, so not-ported. The file's lines outside definitions are decided with it. "
         "A macro the tree sets, a default-build change or a declared sibling keeps the usual comparison.",
         "+#if defined(USE_GPU_B)\n+__global__ void k(float* x, int n) { /* wave-64 body */ }\n+#else\n"
         " __global__ void k(float* x, int n) { /* unchanged */ }\n+#endif",
         "classifier.rules.builds.build_tokens, classifier.rules.builds.BuildRules._other_build_sibling"),
    Rule("other-build-lines", ("NOT_APPLICABLE",),
         "A C/C++ file's changed lines outside definitions, otherwise flagged, that are each a directive of a "
         "conditional testing only macros no source of the file defines and no file of the port's tree sets "
         "(named by the changed directives), or a line in a branch the default build drops with them off, where "
         "every line that build drops on each side is one the commit adds (or removes): they open and close code "
         "for another build around new definitions, and the default build compiles what it did: not-ported. "
         "Wrapping an unchanged line in such a branch, unwrapping one, or a macro the tree sets stays flagged.",
         "+#if defined(USE_GPU_B)\n+__global__ void convert_k(float* x) { /* other build only */ }\n+#endif",
         "classifier.rules.builds.build_lines, classifier.rules.builds.BuildRules._other_build_lines"),
    Rule("other-build-stub", ("NOT_APPLICABLE",),
         "The changed lines outside definitions of `other-build-lines`, where the branch the default build takes "
         "adds only whole definitions, each new under a name the file never used before, defined again by the same "
         "commit in the branch the default build drops, named nowhere else in the file and ported or declared by "
         "nothing in the tree: the default build's counterpart (a stub that refuses, say) of the other build's new "
         "function, a sibling for each build like the definitions themselves: not-ported. A default-build "
         "definition with no counterpart in the other build's branch, a name the file already had, one the tree "
         "ports, or one another definition of the file calls stays flagged.",
         "+#if defined(USE_GPU_B)\n+void convert(float* x) { convert_k<<<1, 64>>>(x); }\n+#else\n"
         "+void convert(float* x) { throw_unsupported(); }\n+#endif",
         "classifier.rules.builds.BuildRules._other_build_lines, classifier.rules.builds.BuildRules._other_build_stubs"),
    Rule("other-build-includes", ("NOT_APPLICABLE",),
         "The changed lines outside definitions of `other-build-lines` where some are `#include` lines the default "
         "build compiles (removed, or added in the branch it takes): with the macros off, the default build "
         "compiles the same lines outside definitions, its include lines aside (`cosmetic-includes`), and the rest "
         "is code for another build: cosmetic. Any other line added or removed in the branch the default build "
         "takes, an unchanged line wrapped in the branch it drops, or a macro the tree sets stays flagged.",
         "-#include <blk/load.h>\n+#ifndef USE_GPU_B\n+    #include <blk/load.h>\n+#else\n"
         "+    #include <b_blk/blk.h>\n+    namespace blk = b_blk;\n+#endif",
         "classifier.rules.builds.BuildRules._other_build_lines"),
    Rule("equal-alternatives", ("NOT_APPLICABLE",),
         "A C/C++ file whose tokens, comments dropped, are the same before and after once each preprocessor "
         "conditional with one `#else` and no `#elif` whose two branches have the same tokens, read through the "
         "type aliases their library documents as one type (`at::IntList` is torch's deprecated alias of "
         "`at::IntArrayRef`, both `ArrayRef<int64_t>`), is replaced by one branch, changed only such a "
         "conditional: every build, the macro set or not, compiled the same code, so removing (or adding) the "
         "alternative changes nothing any port runs: cosmetic, for every touched definition of the file, also "
         "where tree-sitter cannot parse a parameter list the directives split. Branches that differ in anything "
         "else, or a file that changes in anything else too, stay with the other rules.",
         "-#ifdef VERSION_NEW\n     at::IntArrayRef shape,\n-#else\n-    at::IntList shape,\n"
         "-#endif",
         "classifier.rules.builds.alternatives_collapsed, classifier.rules.builds.BuildRules._equal_alternatives"),
)

_IDENTIFIER = re.compile(rb"\b[A-Za-z_]\w*\b")
def _span(node) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def dropping_macros(node, defined: set[str]) -> set[str] | None:
    """The macros the innermost preprocessor conditional around ``node`` tests when that conditional, read
    as the default build reads it (``branches``), does not compile the branch ``node`` is in; None when
    ``node`` is compiled by every conditional around it that the rule can decide."""
    child, parent = node, node.parent
    while parent is not None:
        conditional = parent.parent if parent.type in ("preproc_else", "preproc_elif", "preproc_elifdef") else parent
        if conditional is not None and conditional.type in ("preproc_if", "preproc_ifdef"):
            taken = branches.default_branch(conditional, defined)
            on_path = child if parent is conditional else parent
            if taken is not None and _span(on_path) not in {_span(n) for n in taken} \
                    and not any(n.start_byte <= child.start_byte and child.end_byte <= n.end_byte for n in taken):
                head = conditional.child_by_field_name("name") or conditional.child_by_field_name("condition")
                names = {node_text(n) for n in _walk_nodes(head) if n.type == "identifier"}
                if parent is not conditional:  # a nested #elif adds its own test
                    test = parent.child_by_field_name("condition") or parent.child_by_field_name("name")
                    names |= {node_text(n) for n in _walk_nodes(test) if n.type == "identifier"} if test else set()
                return names - {"defined"}
        child, parent = parent, parent.parent
    return None


_LEXEME = re.compile(rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/|\w+|[^\s\w]', re.DOTALL)
_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")
_INCLUDE = re.compile(rb"^[ \t]*#[ \t]*include\b")


def _logical_lines(source: bytes) -> list[tuple[int, int, bytes]]:
    """``(first, last, text)``: the source's 1-based lines with backslash continuations joined."""
    found: list[tuple[int, int, bytes]] = []
    pending: list[bytes] = []
    first = 1
    for number, line in enumerate(source.split(b"\n"), start=1):
        if not pending:
            first = number
        if line.rstrip(b"\r").endswith(b"\\"):
            pending.append(line.rstrip(b"\r")[:-1])
            continue
        found.append((first, number, b" ".join(pending + [line])))
        pending = []
    if pending:
        found.append((first, first + len(pending) - 1, b" ".join(pending)))
    return found


def _tested_names(test: bytes) -> set[str]:
    """The macro names a preprocessor test's text reads, comments aside (``defined`` is the operator)."""
    test = re.sub(rb"//.*|/\*.*?\*/", b"", test)
    return {m.group(0).decode() for m in _IDENTIFIER.finditer(test)} - {"defined"}


def _decide(kind: bytes, rest: bytes, off: set[str]) -> bool | None:
    """The value of an ``#if``/``#ifdef``/``#ifndef``/``#elif`` test when every name it reads is in ``off``
    (each read as off, ``branches``' reading); None when it reads another name or cannot be evaluated."""
    rest = re.sub(rb"//.*|/\*.*?\*/", b"", rest)
    names = _tested_names(rest)
    if not names or not names <= off:
        return None
    if kind in (b"ifdef", b"ifndef"):
        return kind == b"ifndef"
    root = parse(b"#if " + rest.strip() + b"\n#endif\n", "cpp").root_node
    node = next((n for n in _walk_nodes(root) if n.type == "preproc_if"), None)
    if root.has_error or node is None:
        return None
    return branches.default_build_value(node.child_by_field_name("condition"), set())


KEPT, TAKEN, DROPPED, DECIDED = "kept", "taken", "dropped", "decided"
"""What ``build_lines`` says of a line: compiled outside every conditional the build decides (or a directive
of a conditional left whole), compiled in the branch such a conditional takes, in a branch the build drops,
or a directive of a conditional the build decides."""


def build_lines(source: bytes, off: set[str]) -> dict[int, str] | None:
    """Each 1-based line of a C/C++ source: ``KEPT``, ``TAKEN``, ``DROPPED`` or ``DECIDED`` once every conditional whose
    tests read only macros of ``off`` is decided with them off; a conditional reading anything else is kept
    whole, its directives included. Read from the text, so a file tree-sitter cannot parse is read too;
    None when the conditionals do not nest or a test of a decided chain cannot be evaluated."""
    status: dict[int, str] = {}
    stack: list[tuple[bool, bool, bool]] = []  # (decided, this branch compiled, a branch taken already)
    for first, last, line in _logical_lines(source):
        directive = _DIRECTIVE.match(line)
        live = all(compiled for _, compiled, _ in stack)
        mark = (TAKEN if any(decided for decided, _, _ in stack) else KEPT) if live else DROPPED
        if directive is not None:
            kind, rest = directive.group(1), directive.group(2)
            if kind in (b"if", b"ifdef", b"ifndef"):
                value = _decide(kind, rest, off)
                stack.append((value is not None, value is not False, value is True))
                mark = (DECIDED if value is not None else mark) if live else DROPPED
            elif not stack:
                return None
            else:
                decided, _, taken = stack.pop()
                outer = all(compiled for _, compiled, _ in stack)
                within = TAKEN if any(d for d, _, _ in stack) else KEPT
                mark = (DECIDED if decided else within) if outer else DROPPED
                if kind != b"endif":
                    if not decided:
                        stack.append((False, True, False))
                    else:
                        value = True if kind == b"else" else _decide(b"if", rest, off)
                        if value is None:
                            return None
                        stack.append((True, value and not taken, taken or value))
        for number in range(first, last + 1):
            status[number] = mark
    return None if stack else status


def build_tokens(source: bytes, off: set[str]) -> list[bytes] | None:
    """The tokens of a C/C++ source, comments dropped, of the lines ``build_lines`` keeps; None when it
    cannot read the conditionals."""
    status = build_lines(source, off)
    if status is None:
        return None
    kept = b"\n".join(line for number, line in enumerate(source.split(b"\n"), start=1) if status.get(number) in (KEPT, TAKEN))
    return [t for t in _LEXEME.findall(kept) if not t.startswith((b"//", b"/*"))]


def _names_in(*nodes) -> set[str]:
    """Every identifier of the files ``nodes`` belong to (the names a conditional there may test)."""
    names: set[str] = set()
    for node in nodes:
        root = node
        while root.parent is not None:
            root = root.parent
        names |= {m.group(0).decode() for m in _IDENTIFIER.finditer(root.text or b"")}
    return names


class BuildRules:
    """Verdict-table methods applying ``other-build-sibling`` (mixed into ``SymbolClassifier``)."""

    def _other_build_side(self, symbol: TouchedSymbol, defined: set[str]) -> set[str] | None:
        """The macros that keep exactly one side of a modified definition out of the default build (the other
        side compiled once they are off and every other macro is left undecided), or None."""
        if symbol.change != "modified" or symbol.name in ("<toplevel>", "<lines>"):
            return None
        nodes = []
        for blob, path, lines in ((symbol.old_blob, symbol.old_path or symbol.path, symbol.old_lines),
                                  (symbol.new_blob, symbol.path, symbol.new_lines)):
            definition = self._definition(blob, path, symbol.qualified_name, lines)
            if definition is None or definition.node is None:
                return None
            nodes.append(definition.node)
        for dropped, other in ((nodes[1], nodes[0]), (nodes[0], nodes[1])):
            off = dropping_macros(dropped, defined)
            if not off or any(branches.undecided_macro(name, defined) for name in off):
                continue
            undecided = _names_in(dropped, other) - off
            if dropping_macros(dropped, undecided) is not None and dropping_macros(other, undecided) is None:
                return off
        return None

    def _other_build_sibling(self, entry: EntryChanges, symbol: TouchedSymbol, paths: set[str],
                             ports) -> SymbolVerdict | None:
        """``other-build-sibling`` (see the module): a same-named definition for another build, paired with the
        ported one the default build compiles. None otherwise (and for a definition nothing ports, which is
        not-ported anyway: no symbol table is built for it)."""
        if not ports or language_for_path(symbol.path) != "cpp" or symbol.change != "modified" \
                or not symbol.old_blob or not symbol.new_blob:
            return None
        if self.index.not_carried_for(self.upstream, paths, symbol.name, symbol.qualified_name):
            return None  # a declaration decides what it covers
        tables = self._side_tables(symbol)
        if any(t is None or t.source is None for t in tables):
            return None
        defined = branches.defined_macros(*(t.source for t in tables))
        off = self._other_build_side(symbol, defined) or set()
        if not off or branches.set_in_tree(off, self.index.tree_sources()):
            return None
        before, after = build_tokens(tables[0].source, off), build_tokens(tables[1].source, off)
        if before is None or before != after:
            return None
        names = ", ".join(sorted(off)[:3])
        reason = (f"the {symbol.name} this commit changes is a same-named sibling compiled only with {names} set, "
                  "which no source of the file defines and no file of the tree sets; with it off the file has "
                  f"the same tokens before and after, so the {symbol.name} the default build compiles is "
                  "unchanged and the sibling is not-ported")
        return self._base("other-build-sibling", symbol, NOT_APPLICABLE, "not-ported", "body", reason,
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    line=symbol.new_lines[0] if symbol.new_lines else None,
                                    subject=sorted(off)[0],
                                    message=f"the same default-build tokens once {names} is off; the changed "
                                            "definition is that build's sibling")])

    def _other_build_lines(self, entry: EntryChanges, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """``other-build-lines`` (see the module): a C/C++ file's changed lines outside definitions that only
        open, switch and close conditionals on macros the tree never sets, or sit in the branches those drop,
        where every unchanged line keeps what the default build does with it. None otherwise."""
        if language_for_path(symbol.path) != "cpp" or symbol.name != "<toplevel>" or symbol.change != "modified" \
                or not symbol.old_blob or not symbol.new_blob:
            return None
        found = self._toplevel_changes(entry, symbol)
        if found is None:
            return None
        change, tables, changed = found
        off: set[str] = set()
        for _, _, text in changed:
            directive = _DIRECTIVE.match(text.encode())
            if directive is not None and directive.group(1) not in (b"else", b"endif"):
                if text.rstrip().endswith("\\"):
                    return None
                off |= _tested_names(directive.group(2))
        defined = branches.defined_macros(*(t.source for t in tables))
        if not off or any(branches.undecided_macro(name, defined) for name in off) \
                or branches.set_in_tree(off, self.index.tree_sources()):
            return None
        status = (build_lines(tables[0].source, off), build_lines(tables[1].source, off))
        if status[0] is None or status[1] is None:
            return None
        included = False  # an #include line the default build compiles changed (``other-build-includes``)
        for side, line, text in changed:
            if _blank(text.encode()):
                continue
            if status[side == "new"].get(line) not in (DROPPED, DECIDED):
                if not _INCLUDE.match(text.encode()):
                    return None
                included = True
        removed = {line for hunk in change.hunks for line in hunk.removed_lines}
        added = {line for hunk in change.hunks for line in hunk.added_lines}
        lines = [t.source.split(b"\n") for t in tables]
        stubs = self._other_build_stubs(entry, symbol, tables, status[1])
        for which, touched in enumerate((removed, added)):
            if any(status[which].get(n) == TAKEN and not _blank(lines[which][n - 1])
                   and not _INCLUDE.match(lines[which][n - 1])
                   and (which == 0 or n not in stubs) for n in touched):
                return None  # the default build gains (or loses) code in the branch such a conditional takes
        stubbed = sorted({stubs[n] for n in added if n in stubs and status[1].get(n) == TAKEN})
        if included and stubbed:
            return None
        kept_old = [n for n in range(1, len(lines[0]) + 1) if n not in removed]
        kept_new = [n for n in range(1, len(lines[1]) + 1) if n not in added]
        if len(kept_old) != len(kept_new):
            return None
        for before, after in zip(kept_old, kept_new):
            if _compiled(status[0].get(before)) != _compiled(status[1].get(after)) and not _blank(lines[1][after - 1]):
                return None  # an unchanged line the default build compiled (or dropped) is dropped (or compiled) now
        names = ", ".join(sorted(off)[:3])
        if included:
            return self._base("other-build-includes", symbol, NOT_APPLICABLE, "cosmetic", "body",
                              f"the lines outside definitions are #include lines, or open, switch and close "
                              f"conditionals on {names}, which no source of the file defines and no file of the "
                              "tree sets, or sit in the branches the default build drops with it off, and every "
                              "unchanged line is compiled or dropped alike on both sides: the default build compiles "
                              "the same lines outside definitions, its include lines aside, so cosmetic rather than "
                              "a change to what the port runs",
                              [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                        subject=sorted(off)[0],
                                        message=f"the changed top-level lines are #include lines or {names}-only: "
                                                "the default build drops them or decides by them")])
        if stubbed:
            return self._base("other-build-stub", symbol, NOT_APPLICABLE, "not-ported", "body",
                              f"the lines outside definitions only open, switch and close conditionals on {names}, "
                              "which no source of the file defines and no file of the tree sets, and the branch the "
                              f"default build takes adds only {', '.join(stubbed)}, new under a name the file never "
                              "used, the counterpart of the other build's new definition, which nothing in the tree "
                              "ports or declares: a sibling for each build, so not-ported rather than a change to "
                              "what the port runs",
                              [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                        subject=stubbed[0],
                                        message=f"the default build's new {stubbed[0]} stands for the other "
                                                f"build's; the changed top-level lines are {names}-only")])
        return self._base("other-build-lines", symbol, NOT_APPLICABLE, "not-ported", "body",
                          f"the lines outside definitions only open, switch and close conditionals on {names}, "
                          "which no source of the file defines and no file of the tree sets, or sit in the branches "
                          "the default build drops with it off, and every unchanged line is compiled or dropped "
                          "alike on both sides: code for another build, so not-ported rather than a change to what the port runs",
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    subject=sorted(off)[0],
                                    message=f"the changed top-level lines are {names}-only: the default build drops "
                                            "them or decides by them")])

    def _other_build_stubs(self, entry: EntryChanges, symbol: TouchedSymbol, tables, status: dict[int, str]) \
            -> dict[int, str]:
        """``other-build-stub`` (see the module): line -> name for the lines of each definition the commit adds to
        the file under a name its old side never named, defined again by the commit in a branch the default build
        drops, and that nothing in the tree ports or declares."""
        old_names = {m.group(0).decode() for m in _IDENTIFIER.finditer(tables[0].source)}
        added = [s for s in entry.symbols if s.path == symbol.path and s.change == "added" and s.new_lines
                 and s.name not in ("<toplevel>", "<lines>")]
        found: dict[int, str] = {}
        for stub in added:
            first, last = stub.new_lines
            if status.get(first) != TAKEN or stub.name in old_names:
                continue
            siblings = [o for o in added if o.name == stub.name]
            if not any(o is not stub and status.get(o.new_lines[0]) == DROPPED for o in siblings):
                continue
            if _named_outside(tables[1].source, stub.name, [o.new_lines for o in siblings]):
                continue  # something else in the file calls it: the default build may now run it
            paths = {symbol.path}
            if self.index.ports_for(self.upstream, paths, stub.name, stub.qualified_name) \
                    or self.index.not_carried_for(self.upstream, paths, stub.name, stub.qualified_name):
                continue
            found.update({n: stub.name for n in range(first, last + 1)})
        return found

    def _equal_alternatives(self, symbol: TouchedSymbol, ports: Callable[[], list[str]]) -> SymbolVerdict | None:
        """``equal-alternatives`` (see the module): the symbol's C/C++ file changed only conditionals whose
        branches are one program (``ports`` gives the symbol's in-tree ports, cited). None otherwise."""
        if language_for_path(symbol.path) != "cpp" or not symbol.old_blob or not symbol.new_blob \
                or symbol.old_blob == symbol.new_blob:
            return None
        tables = self._side_tables(symbol)
        if any(t is None or t.source is None for t in tables):
            return None
        before, after = alternatives_collapsed(tables[0].source), alternatives_collapsed(tables[1].source)
        if before is None or after is None or before[0] != after[0] or not (before[1] | after[1]):
            return None
        names = ", ".join(sorted(before[1] | after[1])[:3])
        return self._base("equal-alternatives", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"{symbol.path} has the same tokens before and after once each conditional on {names} "
                          "whose two branches are the same code (read through the type aliases their library "
                          "documents as one type) is replaced by one branch: every build compiled the same, so "
                          "cosmetic rather than a change the port must follow",
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    subject=sorted(before[1] | after[1])[0],
                                    message=f"the conditionals on {names} choose between the same code")],
                          ports=ports())


_COMMENT = re.compile(rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TYPE_ALIASES = {(b"at", b"IntList"): b"IntArrayRef", (b"c10", b"IntList"): b"IntArrayRef"}
"""``(namespace, alias) -> name`` of the types their library documents as one (torch's ``IntList``, deprecated,
and ``IntArrayRef`` are both ``ArrayRef<int64_t>``)."""


def _aliases_resolved(tokens: list[bytes]) -> list[bytes]:
    """``tokens`` with each ``NS::ALIAS`` of ``_TYPE_ALIASES`` written as the name it stands for."""
    return [_TYPE_ALIASES.get((tokens[i - 3], t), t) if i >= 3 and tokens[i - 2:i] == [b":", b":"] else t
            for i, t in enumerate(tokens)]


def alternatives_collapsed(source: bytes) -> tuple[list[bytes], set[str]] | None:
    """``(tokens, macros)``: the source's tokens, comments dropped and aliases resolved, with each conditional
    of one ``#else`` and no ``#elif`` whose branches have the same tokens replaced by them (innermost first),
    and the macros such conditionals tested; None when the conditionals do not nest."""
    text = _COMMENT.sub(lambda m: m.group(0) if m.group(0)[:1] in (b'"', b"'") else b"\n" * m.group(0).count(b"\n"),
                        source)
    top: list[bytes] = []
    frames: list[tuple[list[bytes], list[list[bytes]], list[list[bytes]]]] = []  # (enclosing, directives, branches)
    tested: set[str] = set()
    for _, _, line in _logical_lines(text):
        directive = _DIRECTIVE.match(line)
        tokens = _aliases_resolved(_LEXEME.findall(line))
        target = frames[-1][2][-1] if frames else top
        if directive is None:
            target.extend(tokens)
            continue
        kind = directive.group(1)
        if kind in (b"if", b"ifdef", b"ifndef"):
            frames.append((target, [tokens], [[]]))
            continue
        if not frames:
            return None
        enclosing, directives, branches_seen = frames[-1]
        if kind != b"endif":
            directives.append(tokens)
            branches_seen.append([])
            continue
        frames.pop()
        if len(branches_seen) == 2 and directives[1][-1:] == [b"else"] and branches_seen[0] == branches_seen[1]:
            enclosing.extend(branches_seen[0])
            tested |= _tested_names(directive_text(directives[0]))
            continue
        for opening, branch in zip(directives, branches_seen):
            enclosing.extend(opening)
            enclosing.extend(branch)
        enclosing.extend(tokens)
    return None if frames else (top, tested)


def directive_text(tokens: list[bytes]) -> bytes:
    """The test of a conditional's opening directive, from its tokens (``#`` and the keyword left out)."""
    return b" ".join(tokens[2:])


def _named_outside(source: bytes, name: str, spans: list[tuple[int, int]]) -> bool:
    """True when a token of ``source`` outside comments, string literals and the 1-based line ``spans`` is
    ``name``."""
    wanted = name.encode()
    for number, line in enumerate(_COMMENT.sub(lambda m: m.group(0) if m.group(0)[:1] in (b'"', b"'") else
                                               b"\n" * m.group(0).count(b"\n"), source).split(b"\n"), start=1):
        if wanted in line and not any(first <= number <= last for first, last in spans) \
                and wanted in _LEXEME.findall(line):
            return True
    return False


def _compiled(mark: str | None) -> str | None:
    """``KEPT`` for a line the build compiles, in a taken branch or not; the mark otherwise."""
    return KEPT if mark == TAKEN else mark


def _blank(line: bytes) -> bool:
    """A line holding only whitespace, a comment, or one brace."""
    text = line.strip()
    return not text or text.startswith((b"//", b"/*", b"* ", b"*/")) or text == b"*" or text in (b"{", b"}", b"};")

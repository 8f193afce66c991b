"""Preprocessed-form rules: C/C++ text that the compiler reads as the same tokens (DESIGN §5, form without meaning).

The C++ standard and the preprocessor both say that some different texts are
one program. A change between two such texts is form, not meaning:

* ``alternative-tokens`` (C++/CUDA): ``and``, ``or``, ``not``, ``bitand``,
  ``bitor``, ``xor``, ``compl``, ``and_eq``, ``or_eq``, ``xor_eq`` and
  ``not_eq`` are, by the language standard ([lex.digraph]), the same tokens
  as ``&&``, ``||``, ``!``, ``&``, ``|``, ``^``, ``~``, ``&=``, ``|=``,
  ``^=`` and ``!=`` (a compiler that lacks them reads them from
  ``<iso646.h>`` as macros for those tokens). Two sides of a definition
  whose tokens are equal once each is spelled the primary way are one
  program: cosmetic. A string literal is one token and is never respelled;
  a C source (``.c``), where the words are plain identifiers, is compared as
  before.

* ``default-build-macro-call`` (C/C++/CUDA): each call ``M(args)`` of a
  function-like macro the file (or a header it includes with quotes) defines
  exactly once in the branches the default build compiles (conditionals
  decided as ``default-build`` decides them: a macro no source defines is
  off) is replaced by its replacement list with the arguments put in for
  its parameters, and a call that expands to nothing, standing as a
  statement, is dropped with its ``;`` (an empty statement does nothing).
  Two sides of a definition whose tokens, so expanded and with every
  conditional the default build decides replaced by the branch it compiles,
  are equal compile to the same code in that build: cosmetic. It compares
  tokens, not trees, so it holds where tree-sitter cannot parse a call
  (``M((void *)) kernel``, a macro that expands to nothing in one build and
  to a cast in another), and the reason says so. A macro with a ``#``,
  ``##`` or ``...``, a replacement or argument that names another such
  macro, a macro ``#undef``'d, defined twice or under a conditional the rule
  cannot decide, and a flag the port's tree sets or the port's own file
  names keep the usual comparison.

* ``new-macro-lines`` (C/C++/CUDA): a source file's changed lines outside
  definitions that only add ``#define`` lines (and blank lines) for macro
  names that appear nowhere in the file at the parent nor in the headers it
  includes with quotes, in a file that is not itself a header. Every use of
  such a name is a line the commit adds to this file, inside the definition
  it is used in, and is decided there (by the rule above, for instance): the
  definitions alone change nothing the port runs. A header, a name the
  parent already used or defined, a name a header the file includes at the
  commit names, or any other changed line keeps the usual comparison.

* ``forwarding-helper-call`` (C/C++/CUDA): a class's (or file's) lines outside
  its methods whose only change calls a helper where they called a qualified
  function, the same arguments, the helper being the one file-scope
  definition of its name the default build compiles in the file or its
  quoted headers, whose body is one ``return CALLEE(p1, ..., pn);`` over its
  parameters in order. With each argument keeping its type (a deduced
  template parameter, a ``sizeof`` for ``size_t``, a braced list of them for
  an initializer list of ``size_t``), the call computes what it did:
  cosmetic. A helper computing more, one only another build compiles or
  defined twice, another argument, or one a parameter type may convert keeps
  the usual comparison.

Example diffs (each NOT_APPLICABLE/cosmetic)::

    -    TORCH_CHECK(x.stride(2) % 8 == 0 and x.stride(0) % 8 == 0, "...");
    +    TORCH_CHECK(x.stride(2) % 8 == 0 && x.stride(0) % 8 == 0, "...");

    +#ifndef USE_GPU_B
    +#define GPU_B_ONLY(x)
    +#else
    +#define GPU_B_ONLY(x) x
    +#endif
     ...
    -    #ifndef USE_GPU_B
    -    set_attribute(kernel, n);
    -    #else
    -    set_attribute((void *) kernel, n);
    -    #endif
    +    set_attribute(GPU_B_ONLY((void *)) kernel, n);

The code: ``PreprocessedRules`` holds the methods of the verdict table
(``portq.classifier.verdicts.SymbolClassifier``, which is built from it) that
apply these rules; the token work is plain functions here. It reads the
upstream side through the table it is part of; it must not import the verdict
table or anything after it, and a rule never names a corpus symbol, path or
commit.
"""

from __future__ import annotations

import re

from portq.classifier.reading import _changed_lines, _file_change, new_side_evidence
from portq.classifier.rules import Rule, branches
from portq.classifier.rules.cosmetic import closing_bracket, split_arguments
from portq.classifier.rules.wrappers import included_sources
from portq.core.evidence import Evidence, Kind
from portq.core.model import NOT_APPLICABLE, EntryChanges, SymbolVerdict, TouchedSymbol
from portq.language.signatures import comment_free_tokens
from portq.language.symbols import KIND_CLASS, language_for_path, parse

RULES = (
    Rule("alternative-tokens", ("NOT_APPLICABLE",),
         "A C++/CUDA definition whose tokens are the same before and after once each alternative token (`and`, "
         "`or`, `not`, `bitand`, `bitor`, `xor`, `compl`, `and_eq`, `or_eq`, `xor_eq`, `not_eq`) is spelled as the "
         "primary token the language standard makes it (`&&`, `||`, `!`, ...) is one program: cosmetic. String "
         "literals are single tokens and never respelled; a C source is compared as before.",
         "-    TORCH_CHECK(a % 8 == 0 and b % 8 == 0);\n+    TORCH_CHECK(a % 8 == 0 && b % 8 == 0);",
         "classifier.rules.preprocessed.primary_spelling, "
         "classifier.rules.preprocessed.PreprocessedRules._preprocessed_only"),
    Rule("dependent-name-disambiguator", ("NOT_APPLICABLE",),
         "A C++/CUDA definition whose tokens are the same before and after once each `typename` introducing a "
         "qualified name (`typename Traits::Load(smem)`) and each `template` after `.`, `->` or `::` is dropped "
         "changed only how a template is parsed: where both sides compile, the dependent name is the same entity, "
         "so cosmetic. Read from tokens, so it holds where tree-sitter cannot parse the disambiguated expression.",
         "-            Traits::BlockLoadT(smem).Load(x, vals, n);\n"
         "+            typename Traits::BlockLoadT(smem).Load(x, vals, n);",
         "classifier.rules.preprocessed.without_disambiguators, "
         "classifier.rules.preprocessed.PreprocessedRules._preprocessed_only"),
    Rule("equivalent-device-guard", ("NOT_APPLICABLE",),
         "A C++ binding whose tokens are the same before and after once each guard of the current CUDA device on "
         "a tensor `X` the binding checks first, unconditionally, to be a CUDA tensor (`TORCH_CHECK(X.is_cuda())` "
         "in the body itself) is read as one guard of `X`'s device, whether spelled `at::cuda::CUDAGuard "
         "g{(char)X.get_device()}`, `at::cuda::CUDAGuard g{X.device()}` or `c10::DeviceGuard g(X.device())` (PyTorch "
         "documents each as setting the current device to the tensor's, restored at scope exit), sets the same "
         "device: cosmetic. For a port in another language, which has no C++ build, a preprocessor conditional "
         "whose every branch so reads the same (a torch version test choosing between them) is read as that "
         "branch too; a copy of the C++ code must still compile in each build, so there it stays flagged, as do "
         "a guard on another tensor, one without the unconditional CUDA check, and any other change.",
         "-    at::cuda::CUDAGuard device_guard{(char)x.get_device()};\n"
         "+    at::cuda::CUDAGuard device_guard{x.device()};   (after TORCH_CHECK(x.is_cuda());)",
         "classifier.rules.preprocessed.guard_tokens, classifier.rules.preprocessed.PreprocessedRules._preprocessed_only"),
    Rule("default-build-macro-call", ("NOT_APPLICABLE",),
         "A C/C++ definition whose tokens, with each call of a function-like macro that the file or a header it "
         "includes defines exactly once in the branches the default build compiles replaced by the macro's "
         "expansion (a call expanding to nothing as a statement dropped with its `;`) and every conditional the "
         "default build decides replaced by the branch it compiles, are the same before and after compiles the "
         "same code in that build: cosmetic. Read from tokens, so it holds where tree-sitter cannot parse a call. "
         "`#`, `##`, variadic or nested macros, a macro defined twice, `#undef`'d or under an undecided "
         "conditional, and a flag the tree sets or the port's file names keep the usual comparison.",
         "+#ifndef USE_GPU_B\n+#define GPU_B_ONLY(x)\n+#else\n+#define GPU_B_ONLY(x) x\n+#endif\n"
         "-    #ifndef USE_GPU_B\n-    set_attribute(kernel, n);\n-    #else\n-    set_attribute((void *) kernel, n);\n"
         "-    #endif\n+    set_attribute(GPU_B_ONLY((void *)) kernel, n);",
         "classifier.rules.preprocessed.default_build_function_macros, "
         "classifier.rules.preprocessed.expand_calls, classifier.rules.preprocessed.PreprocessedRules._macro_calls_only"),
    Rule("conditional-includes", ("NOT_APPLICABLE",),
         "A C/C++ file's changed lines outside definitions that are each an `#include` line, a blank line, or a "
         "directive of a conditional (`#if`, `#ifdef`, `#ifndef`, `#elif`, `#else`, `#endif`) whose branches hold "
         "only `#include` lines name files in whichever build, as `cosmetic-includes` reads include lines: "
         "cosmetic. A conditional around any other line stays flagged.",
         "+#if TORCH_VERSION_MAJOR > 2\n+#include <c10/core/DeviceGuard.h>\n+#else\n #include <c10/cuda/CUDAGuard.h>\n"
         "+#endif",
         "classifier.rules.preprocessed.include_only_conditionals, "
         "classifier.rules.preprocessed.PreprocessedRules._conditional_includes"),
    Rule("forwarding-helper-call", ("NOT_APPLICABLE",),
         "A C/C++ class's (or file's) changed lines outside its methods whose only change calls a helper where "
         "they called a qualified function, the same arguments, where the helper is the one file-scope "
         "definition of its name the default build compiles in the file or the headers it includes with quotes "
         "(at the commit), its body one `return CALLEE(p1, ..., pn);` over its parameters in order, and each "
         "argument keeps its type (a deduced template parameter, or a `sizeof` for a `size_t`, a braced list "
         "of them for an initializer list of `size_t`), the return type deduced or `size_t`: the call computes "
         "what it did, cosmetic. A helper that computes anything more, one only another build compiles or "
         "defined twice, another argument, or one the helper's parameter type may convert stays flagged.",
         "-    static constexpr int kBytes = std::max({sizeof(float), sizeof(int)});\n"
         "+    static constexpr int kBytes = widest({sizeof(float), sizeof(int)});\n"
         "  (the header: constexpr size_t widest(std::initializer_list<size_t> s) { return std::max(s); })",
         "classifier.rules.preprocessed.forwarding_helpers, classifier.rules.preprocessed.forwarded_respelling, "
         "classifier.rules.preprocessed.PreprocessedRules._forwarding_helper_calls"),
    Rule("new-macro-lines", ("NOT_APPLICABLE",),
         "A C/C++ source file's (not a header's) changed lines outside definitions that only add `#define` lines, "
         "or blank ones, for macro names that appear nowhere in the file at the parent nor in the headers it "
         "includes with quotes define names whose every use is a line the commit adds inside a definition, "
         "decided there: cosmetic. A header, a name the parent knew, or any other changed line stays flagged.",
         "+#ifndef USE_GPU_B\n+#define GPU_B_ONLY(x)\n+#else\n+#define GPU_B_ONLY(x) x\n+#endif",
         "classifier.rules.preprocessed.PreprocessedRules._new_macro_lines"),
)

_ALTERNATIVES = {"and": "&&", "or": "||", "not": "!", "bitand": "&", "bitor": "|", "xor": "^", "compl": "~",
                 "and_eq": "&=", "or_eq": "|=", "xor_eq": "^=", "not_eq": "!="}
_C_SOURCES = (".c",)
_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inc", ".inl", ".ipp", ".tcc")
_DIRECTIVE = re.compile(r"\s*#\s*(ifdef|ifndef|if|elif|else|endif|define|undef)\b\s*(.*)")
_FUNCTION_MACRO = re.compile(r"([A-Za-z_]\w*)\(([^)]*)\)(.*)")
_PP_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|[A-Za-z_]\w*|\d[\w.]*|\.\.\.|::|->|<<=|>>=|<<|>>'
                       r'|&&|\|\||##|[-+*/%&|^!=<>]=|\+\+|--|\S')
_NAME = re.compile(r"[A-Za-z_]\w*")


def primary_spelling(tokens: list[str]) -> list[str]:
    """``tokens`` with each C++ alternative token spelled as its primary token (``and`` -> ``&&``)."""
    return [_ALTERNATIVES.get(token, token) for token in tokens]


def without_disambiguators(tokens: list[str]) -> list[str]:
    """``tokens`` less each ``typename`` that introduces a qualified name (``typename A::B``, ``typename ::A::B``)
    and each ``template`` after ``.``, ``->`` or ``::`` (``x.template f<T>()``): the disambiguators of dependent
    names."""
    kept: list[str] = []
    for index, token in enumerate(tokens):
        after = tokens[index + 1:index + 3]
        if token == "typename" and (after[:1] == ["::"] or (len(after) == 2 and _NAME.fullmatch(after[0])
                                                             and after[0] not in ("typename", "template")
                                                             and after[1] == "::")):
            continue
        if token == "template" and kept and kept[-1] in (".", "->", "::"):
            continue
        kept.append(token)
    return kept


_GUARD_OPEN = {"{": "}", "(": ")"}


def _guard_at(tokens: list[str], at: int) -> tuple[int, str, str] | None:
    """``(end, name, tensor)`` of a device guard declared at ``tokens[at]`` (see ``equivalent-device-guard``),
    ``end`` just past its ``;``; None when none starts there."""
    def match(pattern: list[str], start: int) -> dict[str, str] | None:
        bound: dict[str, str] = {}
        for offset, want in enumerate(pattern):
            if start + offset >= len(tokens):
                return None
            got = tokens[start + offset]
            if want.startswith("$"):
                if not _NAME.fullmatch(got) or bound.get(want, got) != got:
                    return None
                bound[want] = got
            elif want != got:
                return None
        bound["$end"] = str(start + len(pattern))
        return bound

    for scope in (["at", "::", "cuda", "::", "CUDAGuard"], ["c10", "::", "cuda", "::", "CUDAGuard"],
                  ["c10", "::", "DeviceGuard"]):
        for open_, close in _GUARD_OPEN.items():
            forms = [[*scope, "$g", open_, "$x", ".", "device", "(", ")", close, ";"]]
            if scope[-1] == "CUDAGuard":
                forms += [[*scope, "$g", open_, "(", "char", ")", "$x", ".", "get_device", "(", ")", close, ";"],
                          [*scope, "$g", open_, "$x", ".", "get_device", "(", ")", close, ";"]]
            else:
                forms += [["c10", "::", "Device", "$d", "=", "$x", ".", "device", "(", ")", ";",
                           *scope, "$g", open_, "$d", close, ";"]]
            for form in forms:
                found = match(form, at)
                if found is not None:
                    if "$d" in found and sum(t == found["$d"] and (i == 0 or tokens[i - 1] not in (".", "->"))
                                             for i, t in enumerate(tokens)) != 2:
                        continue  # the local device is read elsewhere too
                    return int(found["$end"]), found["$g"], found["$x"]
    return None


def guard_tokens(tokens: list[str], checking: bool = True) -> list[str] | None:
    """``tokens`` with each device guard of a tensor the body checks before it, at its own level, to be a
    CUDA tensor (``TORCH_CHECK(X.is_cuda());``) read as ``<device-guard> NAME X``; None when a guard's
    tensor is not so checked (``checking`` False: a branch compared with its siblings, left unchecked)."""
    out: list[str] = []
    checked: set[str] = set()
    depth, index = 0, 0
    while index < len(tokens):
        token = tokens[index]
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
        if depth == 1 and token == "TORCH_CHECK" and tokens[index + 1:index + 2] == ["("] \
                and tokens[index + 3:index + 9] == [".", "is_cuda", "(", ")", ")", ";"] \
                and out and out[-1] in ("{", ";", "}"):
            checked.add(tokens[index + 2])
        guard = _guard_at(tokens, index) if out and out[-1] in ("{", ";", "}") else None
        if guard is not None:
            end, name, tensor = guard
            if checking and (tensor not in checked or depth != 1):
                return None
            out += ["<device-guard>", name, tensor]
            index = end
            continue
        out.append(token)
        index += 1
    return out


def _same_branches_tokens(node):
    """``comment_free_tokens`` of ``node`` with each preprocessor conditional whose every branch reads the same
    (``guard_tokens``) replaced by its first branch."""
    def branch_nodes(conditional) -> list[list] | None:
        found: list[list] = []
        current = conditional
        while current is not None:
            if current.type == "preproc_else":
                found.append(branches._branch(current, set()))
                return found
            if current.type not in ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef"):
                return None
            head = current.child_by_field_name("name") or current.child_by_field_name("condition")
            alternative = current.child_by_field_name("alternative")
            found.append(branches._branch(current, {head, alternative}))
            current = alternative
        return None  # no #else: some build compiles nothing here

    def expand(current):
        if current.type not in ("preproc_if", "preproc_ifdef"):
            return None
        bodies = branch_nodes(current)
        if not bodies:
            return None
        read = [guard_tokens(["{", *[t for n in body for t in comment_free_tokens(n)], "}"], checking=False)
                for body in bodies]  # the definition's own reading checks the tensor of the branch kept
        if any(r is None for r in read) or any(r != read[0] for r in read[1:]):
            return None
        return bodies[0]
    return comment_free_tokens(node, expand=expand)


_INCLUDE_LINE = re.compile(r"\s*#\s*include\b")
_OPENS, _CLOSES, _SWITCHES = ("if", "ifdef", "ifndef"), ("endif",), ("elif", "else")


def include_only_conditionals(source: bytes) -> set[int] | None:
    """The 1-based lines of ``source`` that are directives of a conditional whose every branch holds only
    ``#include`` lines, blank lines, comments or such conditionals; None when the text cannot be read."""
    lines = source.decode("utf-8", errors="replace").split("\n")
    stack: list[tuple[list[int], bool]] = []  # (its directive lines, only includes so far)
    found: set[int] = set()
    for number, line in enumerate(lines, start=1):
        match = _DIRECTIVE.match(line)
        word = match.group(1) if match is not None else None
        if word in _OPENS:
            stack.append(([number], True))
        elif word in _SWITCHES and stack:
            stack[-1][0].append(number)
        elif word in _CLOSES and stack:
            directives, only = stack.pop()
            if only:
                found.update(directives + [number])
            if stack and not only:
                stack[-1] = (stack[-1][0], False)
        elif stack:
            text = line.strip()
            if text and not _INCLUDE_LINE.match(line) and not text.startswith(("//", "/*", "*")):
                stack[-1] = (stack[-1][0], False)
    return found


def default_build_function_macros(sources: list[bytes], defined: set[str]) \
        -> tuple[dict[str, tuple[list[str], list[str]]], set[str]]:
    """``(NAME -> (parameters, replacement tokens), flags)``: each function-like
    macro of ``sources`` defined exactly once in the branches the default
    build compiles (every enclosing ``#ifdef``/``#ifndef`` decided as
    ``default-build`` decides it and on; a definition in a branch it drops
    is not compiled), never ``#undef``'d and never defined where the build
    is not known; and the flags those enclosing conditionals test. A macro
    with ``#``, ``##`` or ``...`` is left out."""
    found: dict[str, list] = {}
    flags: dict[str, set[str]] = {}
    for source in sources:
        stack: list[tuple[bool | None, str]] = []
        text = source.decode("utf-8", errors="replace").replace("\\\n", " ")
        for line in text.splitlines():
            match = _DIRECTIVE.match(line)
            if match is None:
                continue
            word, rest = match.groups()
            name = rest.split()[0] if rest.split() else ""
            if word in ("ifdef", "ifndef"):
                known = not branches.undecided_macro(name, defined)
                stack.append((None if not known else word == "ifndef", name))
            elif word == "if":
                stack.append((None, ""))
            elif word == "elif" and stack:
                stack[-1] = (None, "")
            elif word == "else" and stack:
                value, flag = stack[-1]
                stack[-1] = (None if value is None else not value, flag)
            elif word == "endif" and stack:
                stack.pop()
            elif word in ("define", "undef") and name:
                name = _NAME.match(name).group(0) if _NAME.match(name) else name
                values = [value for value, _ in stack]
                if any(value is False for value in values):
                    continue  # a branch the default build drops
                definition = _FUNCTION_MACRO.match(rest.strip()) if word == "define" else None
                if word == "undef" or None in values or definition is None:
                    found.setdefault(name, []).append(None)
                    continue
                parameters = [p.strip() for p in definition.group(2).split(",")] if definition.group(2).strip() else []
                body = re.sub(r"//.*|/\*.*?\*/", " ", definition.group(3))
                replacement = _PP_TOKEN.findall(body)
                if any(p == "..." or not _NAME.fullmatch(p) for p in parameters) \
                        or "#" in replacement or "##" in replacement:
                    found.setdefault(name, []).append(None)
                    continue
                found.setdefault(name, []).append((parameters, replacement))
                flags.setdefault(name, set()).update(flag for _, flag in stack if flag)
    macros = {name: found[0] for name, found in found.items() if len(found) == 1 and found[0] is not None}
    return macros, {flag for name in macros for flag in flags.get(name, ())}


def expand_calls(tokens: list[str], macros: dict[str, tuple[list[str], list[str]]]) \
        -> tuple[list[str], list[str]] | None:
    """``(tokens, names)``: ``tokens`` with each call of one of ``macros``
    replaced by its expansion (a call expanding to nothing that stands as a
    statement, after ``;``, ``{`` or ``}``, dropped with the ``;`` after it)
    and the names of the macros called; None where a call cannot be expanded
    exactly (an unbalanced call, a wrong number of arguments, an argument or
    replacement naming one of ``macros``)."""
    out: list[str] = []
    used: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token not in macros or index + 1 >= len(tokens) or tokens[index + 1] != "(":
            out.append(token)
            index += 1
            continue
        depth, close = 0, None
        arguments: list[list[str]] = [[]]
        for at in range(index + 1, len(tokens)):
            current = tokens[at]
            if current == "(":
                depth += 1
                if depth == 1:
                    continue
            elif current == ")":
                depth -= 1
                if depth == 0:
                    close = at
                    break
            elif current == "," and depth == 1:
                arguments.append([])
                continue
            arguments[-1].append(current)
        if close is None:
            return None
        parameters, replacement = macros[token]
        if arguments == [[]] and not parameters:
            arguments = []
        if len(arguments) != len(parameters) or any(t in macros for argument in arguments for t in argument) \
                or any(t in macros for t in replacement):
            return None
        bound = dict(zip(parameters, arguments))
        expansion = [piece for t in replacement for piece in bound.get(t, [t])]
        used.append(token)
        index = close + 1
        if not expansion and index < len(tokens) and tokens[index] == ";" and (not out or out[-1] in (";", "{", "}")):
            index += 1  # an empty statement does nothing
        out.extend(expansion)
    return out, list(dict.fromkeys(used))


class PreprocessedRules:
    """The preprocessed-form rules, as methods of the verdict table (``verdicts.SymbolClassifier``)."""

    def _preprocessed_only(self, entry: EntryChanges, symbol: TouchedSymbol, ports=()) -> tuple[str, str] | None:
        """``(rule id, what changed)`` when a modified C/C++ definition changed only in
        the spelling of alternative tokens (``alternative-tokens``) or in calls of
        default-build function-like macros (``default-build-macro-call``); None otherwise."""
        sides = self._modified_sides(symbol, "cpp")
        if sides is None:
            return None
        before, after = sides
        if before.node is None or after.node is None:
            return None
        old, new = comment_free_tokens(before.node), comment_free_tokens(after.node)
        if old == new:
            return None
        if not symbol.path.endswith(_C_SOURCES) and not before.node.has_error and not after.node.has_error \
                and primary_spelling(old) == primary_spelling(new):
            respelled = sorted({t for t in old + new if t in _ALTERNATIVES})
            return "alternative-tokens", "only spells " + ", ".join(f"`{t}` as `{_ALTERNATIVES[t]}`" if t in old
                                                                      else f"`{_ALTERNATIVES[t]}` as `{t}`"
                                                                      for t in respelled[:4]) + \
                " (the same tokens by the language standard)"
        if without_disambiguators(old) == without_disambiguators(new):
            added = sum(t in ("typename", "template") for t in new) - sum(t in ("typename", "template") for t in old)
            broken = " (read from tokens: tree-sitter cannot parse the disambiguated name)" \
                if before.node.has_error or after.node.has_error else ""
            return "dependent-name-disambiguator", f"only {'adds' if added >= 0 else 'drops'} `typename` or " \
                                                   "`template` before dependent qualified names, which say how a " \
                                                   f"template is parsed, not which entity the name is{broken}"
        if "guard" in " ".join(old + new).lower():  # read from tokens: a misread line elsewhere does not stop it
            # a build-compatibility choice between spellings matters to a copy of the C++ code, which must still
            # compile; a port in another language has no such build, so only there are those branches read as one
            read = _same_branches_tokens if ports and branches.cross_language(symbol.path, ports) \
                else comment_free_tokens
            guarded = [guard_tokens(read(side)) for side in (before.node, after.node)]
            if guarded[0] is not None and guarded[0] == guarded[1] and "<device-guard>" in guarded[0]:
                return "equivalent-device-guard", "only respells the guard of the current device on a tensor it " \
                                                  "checks first to be a CUDA tensor (CUDAGuard from the device or its " \
                                                  "index, or DeviceGuard; for a port in another language also a " \
                                                  "version test choosing between them): the same device is set"
        called = self._macro_calls_only(entry, symbol, before.node, after.node, ports)
        if called:
            broken = " (read from tokens: tree-sitter cannot parse a call as written)" \
                if before.node.has_error or after.node.has_error else ""
            return "default-build-macro-call", f"compiles the same tokens in the default build once the calls of " \
                                               f"{', '.join(called[:4])} are expanded as the file defines " \
                                               f"{'them' if len(called) > 1 else 'it'} there{broken}"
        return None

    def _macro_calls_only(self, entry: EntryChanges, symbol: TouchedSymbol, before, after, ports) -> list[str] | None:
        """``default-build-macro-call``: the macros (``NAME(params) = replacement``) whose calls, expanded,
        make the two sides' default-build tokens equal; None otherwise."""
        if not entry.commit.parents:
            return None
        tables = self._side_tables(symbol)
        if any(t is None or not t.source for t in tables):
            return None
        old_path = symbol.old_path or symbol.path
        parent, commit = entry.commit.parents[0], entry.commit.sha
        seen_old = included_sources(old_path, lambda p: tables[0].source if p == old_path
                                    else self._upstream_file(parent, p))
        seen_new = included_sources(symbol.path, lambda p: tables[1].source if p == symbol.path
                                    else self._upstream_file(commit, p))
        defined = branches.defined_macros(*(s for _, s in seen_old + seen_new))
        old_macros, old_flags = default_build_function_macros([s for _, s in seen_old], defined)
        new_macros, new_flags = default_build_function_macros([s for _, s in seen_new], defined)
        if not old_macros and not new_macros:
            return None
        old = expand_calls(branches.default_build_tokens(before, defined), old_macros)
        new = expand_calls(branches.default_build_tokens(after, defined), new_macros)
        if old is None or new is None or old[0] != new[0] or not (old[1] or new[1]):
            return None
        names = list(dict.fromkeys(old[1] + new[1]))
        flags = old_flags | new_flags | branches.decided_macros(before, defined) | branches.decided_macros(after, defined)
        if branches.set_in_tree(flags, self.index.tree_sources()):
            return None
        for port in ports:  # a flag the port's own file names is one the port may be built with
            own = self.index.source(port.definition.file)
            if own and any(re.search(rb"\b" + re.escape(flag.encode()) + rb"\b", own) for flag in flags):
                return None
        macros = {**old_macros, **new_macros}
        return [f"{name}({', '.join(macros[name][0])}) = {' '.join(macros[name][1]) or '(nothing)'}"
                for name in names]

    def _preprocessed_verdict(self, entry: EntryChanges, symbol: TouchedSymbol, ports, evidence: list,
                              broken=None) -> SymbolVerdict | None:
        """The cosmetic verdict of ``_preprocessed_only`` for a ported definition, or None; with ``broken``
        (a parse-failure verdict) its evidence says where the parse failed."""
        if not ports:
            return None
        found = self._preprocessed_only(entry, symbol, ports)
        if found is None:
            return None
        rule, what = found
        where = next((e.message for e in broken.evidence if e.kind == Kind.PARSE_FAILURE), None) if broken else None
        kept = [e for e in broken.evidence if e.kind != Kind.HUNK] if broken is not None else evidence
        return self._base(rule, symbol, NOT_APPLICABLE, "cosmetic", "body",
                          (f"{where}, but " if where else "") + f"{symbol.name} {what}, so cosmetic rather than a "
                          "change the port must follow",
                          kept + [new_side_evidence(symbol, Kind.COSMETIC, what)])

    def _conditional_includes(self, entry: EntryChanges, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """``conditional-includes`` (see the rule): changed lines outside definitions that are includes, blank, or
        directives of conditionals holding only includes; None otherwise."""
        if language_for_path(symbol.path) != "cpp" or symbol.name != "<toplevel>" or symbol.change != "modified":
            return None
        found = self._toplevel_changes(entry, symbol)
        if found is None or not all(t.source for t in found[1]):
            return None
        _, tables, changed = found
        allowed = {"old": include_only_conditionals(tables[0].source), "new": include_only_conditionals(tables[1].source)}
        directives = False
        for side, line, text in changed:
            if not text.strip() or _INCLUDE_LINE.match(text):
                continue
            if line not in allowed[side]:
                return None
            directives = True
        if not directives:
            return None  # include lines alone are ``cosmetic-includes``'
        return self._base("conditional-includes", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          "the changed lines outside definitions are #include lines and the directives of "
                          "conditionals that hold only #include lines, which name files in whichever build rather "
                          "than anything a ported definition uses, so cosmetic rather than NEEDS_REVIEW",
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    message="conditional #include lines only")])

    def _forwarding_helper_calls(self, entry: EntryChanges, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """``forwarding-helper-call`` (see the rule): a C/C++ class's or file's lines outside definitions whose
        only change writes calls of a library function as calls of a helper that forwards to it; None otherwise."""
        if language_for_path(symbol.path) != "cpp" or symbol.change != "modified" or not entry.commit.parents \
                or (symbol.name != "<toplevel>" and symbol.kind != KIND_CLASS):
            return None
        change = _file_change(entry, symbol)
        tables = self._side_tables(symbol)
        if change is None or any(t is None or t.source is None for t in tables):
            return None
        changed = _changed_lines(change, symbol, tables[0], tables[1], outside_definitions=symbol.name == "<toplevel>")
        old = _pp_tokens("\n".join(text for side, _, text in changed if side == "old"))
        new = _pp_tokens("\n".join(text for side, _, text in changed if side == "new"))
        if not old or not new:
            return None
        commit = entry.commit.sha
        seen = included_sources(symbol.path, lambda p: tables[1].source if p == symbol.path
                                else self._upstream_file(commit, p))
        sources = [s for _, s in seen]
        helpers = forwarding_helpers(sources, branches.defined_macros(*sources), _parse_cpp)
        used = forwarded_respelling(old, new, helpers) if helpers else None
        if not used:
            return None
        spelled = ", ".join(f"{name} (which returns {''.join(helpers[name][0])} of its parameters)" for name in used)
        return self._base("forwarding-helper-call", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"the changed lines only call {spelled} where they called the function it forwards to, "
                          "the same arguments, each of the parameter's type; the helper is the one definition of "
                          "its name the default build compiles, so the call computes what it did: cosmetic rather "
                          "than NEEDS_REVIEW",
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    subject=used[0], message=f"calls respelled through the forwarding {used[0]}")])

    def _new_macro_lines(self, entry: EntryChanges, symbol: TouchedSymbol) -> SymbolVerdict | None:
        """``new-macro-lines`` (see the module): a source file's changed lines outside definitions that only
        add ``#define``s of names the file and its quoted headers did not know at the parent; None otherwise."""
        if language_for_path(symbol.path) != "cpp" or symbol.name != "<toplevel>" or symbol.change != "modified" \
                or symbol.path.endswith(_HEADERS) or not entry.commit.parents:
            return None
        found = self._toplevel_changes(entry, symbol)
        if found is None or not all(t.source for t in found[1]):
            return None
        _, tables, changed = found
        names: list[str] = []
        for side, _, text in changed:
            if not text.strip() or text.strip().startswith("//"):
                continue
            match = _DIRECTIVE.match(text)
            if side != "new" or match is None or match.group(1) != "define" or text.rstrip().endswith("\\"):
                return None
            name = _NAME.match(match.group(2))
            if name is None:
                return None
            names.append(name.group(0))
        if not names:
            return None
        old_path = symbol.old_path or symbol.path
        parent, commit = entry.commit.parents[0], entry.commit.sha
        known = included_sources(old_path, lambda p: tables[0].source if p == old_path
                                 else self._upstream_file(parent, p))
        # a header the file includes at the commit that names the macro would expand it: its use is not here
        known += [(p, source) for p, source in included_sources(symbol.path, lambda p: tables[1].source
                                                                  if p == symbol.path
                                                                  else self._upstream_file(commit, p))
                  if p != symbol.path]
        for name in names:
            pattern = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
            if any(pattern.search(source) for _, source in known):
                return None
        listed = ", ".join(sorted(set(names))[:4])
        return self._base("new-macro-lines", symbol, NOT_APPLICABLE, "cosmetic", "body",
                          f"the lines outside definitions only define {listed}, which neither the file nor the "
                          "headers it includes named at the parent, so every use is a line this commit adds inside a "
                          "definition and is decided there: cosmetic rather than a change to what the port runs",
                          [Evidence(kind=Kind.COSMETIC, side="upstream-new", path=symbol.path, symbol=symbol.name,
                                    subject=sorted(set(names))[0],
                                    message=f"new macros only: {listed}")])


# ``forwarding-helper-call``: a helper whose body only returns a library function's call on its parameters
_SIZE_TYPES = (["size_t"], ["std", "::", "size_t"])
_SPECIFIERS = {"const", "constexpr", "inline", "static", "__device__", "__host__", "__forceinline__"}


def _pp_tokens(text: str) -> list[str]:
    """The preprocessing tokens of C/C++ ``text``, comments dropped."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return _PP_TOKEN.findall(text)


def _is_sizeof(tokens: list[str]) -> bool:
    """True for a whole ``sizeof(...)`` expression: of type ``size_t`` by the language."""
    return len(tokens) >= 3 and tokens[:2] == ["sizeof", "("] and closing_bracket(tokens, 1) == len(tokens) - 1


def _argument_fits(argument: list[str], kind: list[str], deduced: set[str]) -> bool:
    """True when ``argument`` passed to a parameter of type ``kind`` keeps its type: a deduced template
    parameter, a ``size_t`` given a ``sizeof``, or an initializer list of ``size_t`` given a braced list of
    them. Anything else (a conversion the rule cannot rule out) is False."""
    kind = [t for t in kind if t not in ("const", "&", "&&")]
    if len(kind) == 1 and kind[0] in deduced:
        return True
    if kind in _SIZE_TYPES:
        return _is_sizeof(argument)
    for size in _SIZE_TYPES:
        for spelled in (["std", "::", "initializer_list", "<", *size, ">"], ["initializer_list", "<", *size, ">"]):
            if kind == spelled:
                return len(argument) >= 2 and argument[0] == "{" and closing_bracket(argument, 0) == len(argument) - 1 \
                    and all(_is_sizeof(e) for e in split_arguments(argument[1:-1])) \
                    and bool(split_arguments(argument[1:-1]))
    return False


def _default_build_functions(nodes, defined: set[str], found: list, undecided: set[str], deduced=()) -> None:
    """Collect into ``found`` ``(function node, template parameter names)`` of each file-scope function
    definition among ``nodes`` the default build compiles (conditionals decided as ``default-build`` decides
    them); the names of those under a conditional it cannot decide go to ``undecided``."""
    for node in nodes:
        kind = node.type
        if kind in ("preproc_ifdef", "preproc_if"):
            taken = branches.default_branch(node, defined)
            if taken is None:
                undecided.update(n.text.decode("utf-8", errors="replace") for n in _walk_all(node)
                                 if n.type == "identifier")
                continue
            _default_build_functions(taken, defined, found, undecided)
        elif kind == "template_declaration":
            parameters = node.child_by_field_name("parameters")
            names = tuple(c.text.decode("utf-8", errors="replace") for p in (parameters.named_children
                                                                            if parameters is not None else [])
                          if p.type == "type_parameter_declaration" for c in p.named_children
                          if c.type == "type_identifier")
            _default_build_functions([c for c in node.named_children if c is not parameters], defined, found,
                                     undecided, names)
        elif kind == "function_definition":
            found.append((node, tuple(deduced)))
        elif kind in ("namespace_definition", "linkage_specification", "class_specifier", "struct_specifier"):
            # a definition of the same name in a scope: counted, never a file-scope helper
            nested: list = []
            _default_build_functions(node.named_children, defined, nested, undecided)
            found.extend((n, None) for n, _ in nested)
        elif kind in ("declaration_list", "field_declaration_list"):
            _default_build_functions(node.named_children, defined, found, undecided, deduced)


def _walk_all(node):
    yield node
    for child in node.children:
        yield from _walk_all(child)


def forwarding_helpers(sources: list[bytes], defined: set[str], parse_cpp) -> dict[str, tuple]:
    """``NAME -> (callee tokens, [parameter type tokens], deduced template names)`` for each file-scope function
    of ``sources`` the default build compiles exactly once (and never under an undecided conditional) whose
    body is one ``return CALLEE(p1, ..., pn);`` passing its parameters in order, CALLEE a qualified name
    (``std::max``) and the return type a deduced template parameter or ``size_t``."""
    found: list = []
    undecided: set[str] = set()
    for source in sources:
        tree = parse_cpp(source)
        if tree is None or tree.root_node.has_error:
            continue
        _default_build_functions(tree.root_node.named_children, defined, found, undecided)
    helpers: dict[str, tuple] = {}
    seen: dict[str, int] = {}
    for node, deduced in found:
        declarator = node.child_by_field_name("declarator")
        if declarator is None or declarator.type != "function_declarator":
            continue
        name_node = declarator.child_by_field_name("declarator")
        if name_node is None or name_node.type != "identifier":
            continue
        name = name_node.text.decode("utf-8", errors="replace")
        seen[name] = seen.get(name, 0) + 1
        if deduced is None:
            continue  # defined inside a namespace or class
        returned = [t for t in _pp_tokens(node.child_by_field_name("type").text.decode("utf-8", errors="replace"))
                    if t not in _SPECIFIERS] if node.child_by_field_name("type") is not None else []
        if not (len(returned) == 1 and returned[0] in deduced) and returned not in _SIZE_TYPES:
            continue
        parameters, kinds = [], []
        for parameter in declarator.child_by_field_name("parameters").named_children:
            if parameter.type != "parameter_declaration":
                break
            named = parameter.child_by_field_name("declarator")
            while named is not None and named.type == "reference_declarator":
                named = next((c for c in named.named_children), None)
            kind = parameter.child_by_field_name("type")
            if named is None or named.type != "identifier" or kind is None:
                break
            parameters.append(named.text.decode("utf-8", errors="replace"))
            kinds.append(_pp_tokens(parameter.text.decode("utf-8", errors="replace")
                                    [:named.start_byte - parameter.start_byte]))
        else:
            body = node.child_by_field_name("body")
            statements = body.named_children if body is not None else []
            if len(statements) != 1 or statements[0].type != "return_statement" \
                    or len(statements[0].named_children) != 1 \
                    or statements[0].named_children[0].type != "call_expression":
                continue
            call = statements[0].named_children[0]
            callee = _pp_tokens(call.child_by_field_name("function").text.decode("utf-8", errors="replace"))
            arguments = [a.text.decode("utf-8", errors="replace")
                         for a in call.child_by_field_name("arguments").named_children]
            if arguments != parameters or "::" not in callee or name in callee:
                continue
            helpers[name] = (callee, kinds, set(deduced))
    return {n: h for n, h in helpers.items() if seen.get(n) == 1 and n not in undecided}


def forwarded_respelling(old: list[str], new: list[str], helpers: dict[str, tuple]) -> list[str] | None:
    """The helpers ``new`` calls where ``old`` called their callee, when ``new`` with each such call written
    as the callee's (arguments kept, each of the parameter's type) is ``old`` token for token; else None."""
    rebuilt: list[str] = []
    used: list[str] = []
    index = 0
    while index < len(new):
        token = new[index]
        if token in helpers and index + 1 < len(new) and new[index + 1] == "(" \
                and (index == 0 or new[index - 1] not in (".", "->", "::")):
            end = closing_bracket(new, index + 1)
            if end is None:
                return None
            callee, kinds, deduced = helpers[token]
            arguments = split_arguments(new[index + 2:end])
            if len(arguments) != len(kinds) or not all(_argument_fits(a, k, deduced) for a, k in zip(arguments, kinds)):
                return None
            rebuilt += callee
            rebuilt += new[index + 1:end + 1]
            used.append(token)
            index = end + 1
            continue
        rebuilt.append(token)
        index += 1
    return sorted(set(used)) if used and rebuilt == old else None


def _parse_cpp(source: bytes):
    """The tree-sitter tree of a C/C++ source; None when it cannot be parsed."""
    try:
        return parse(source, "cpp")
    except Exception:  # noqa: BLE001 - an unreadable header decides nothing
        return None

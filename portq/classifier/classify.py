"""The seam between the scan pipeline and the classifier.

``portq.pipeline.scan`` builds a ``ClassifierContext`` once per scan and calls
``build_classifier(context)``; the classifier it returns turns the entries of a
range into verdicts. Range-level facts need every entry, so ``classify_range``
sees the whole list before it decides any one:

* **net-zero** — a commit and a later commit that exactly undoes it (the
  same paths with their blobs swapped, or else the same '-'/'+' lines
  swapped, file by file) are paired and both are NOT_APPLICABLE/``net-zero``.
  Only commits that change the same paths are compared, indexed by blob
  triples and patch fingerprints (read from the diff text, no hunks built),
  so a long history of commits to one file pairs in near-linear time.
  Pairing is greedy in range order, each commit pairs at most once, so in
  "change, revert, byte-identical re-land" the change and the revert pair
  and the re-land is classified on its own merits.
* **partial reverts** — a later commit that only removes lines one earlier
  commit made (its '-' lines among that commit's '+' lines, where that
  commit put them, file by file; no '+' lines) is NOT_APPLICABLE/``net-zero``
  with it (rule ``partial-revert``); the earlier commit is decided on its
  own. A later commit that also puts back part of what the earlier one
  replaced is no inverse of anything the range did (the rest of that
  replacement stays, so the lines compute something neither commit had):
  only an exact inverse of a whole commit (``net-zero``) or of a whole file
  change (``file-revert``) cancels restored text.
* **definition reverts** — a ported definition one commit changes and the next
  commit to touch that change puts back edit for edit (rule
  ``definition-revert``) is NOT_APPLICABLE/``net-zero`` in both, whatever
  else the two commits change.
* **renames** — every ``old → new`` path rename seen in the range links both
  names, so an anchor that still names the old upstream path matches the
  symbol at its new path (the ported symbol keeps its name).

Then each entry is classified symbol by symbol over **all** its touched
symbols (``portq.classifier.verdicts``), including files no matrix row owns when an
in-tree anchor names them (the matrix missed a ported file; never silently
NOT_APPLICABLE), and owned changes that touched no symbol (pure renames,
binary files).

This module must not touch git or the ledger itself: everything it needs comes
through the context.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator

from portq import __version__
from portq.core.evidence import Kind
from portq.core.model import NEEDS_REVIEW, NOT_APPLICABLE, EntryChanges, Evidence, FileChange, SymbolVerdict, Verdict
from portq.language.symbols import language_for_path
from portq.upstream.hunks import change_lines, ensure_hunks


@dataclass
class ClassifierContext:
    """What a classifier may consult, built once per scan."""

    upstream: str  # the upstream's name in the matrix, e.g. "vllm"
    matrix: Any  # portq.tree.matrix.Matrix
    tree_root: Path
    read_blob: Callable[[str], bytes]  # blob SHA -> bytes (git cat-file --batch)
    is_ancestor: Callable[[str, str], bool | None]  # (a, b): a is an ancestor of b; None if unknown
    symbol_tables: Any  # portq.language.symbols.SymbolTableCache
    cache_dir: Path | None = None  # where the in-tree index may cache by content hash
    options: dict[str, Any] = field(default_factory=dict)
    index: Any = None  # portq.tree.tree_index.TreeIndex taken at the start of the scan; built here when None
    signatures: Any = None  # portq.tree.symbol_cache.SignatureStore of earlier scans' upstream signatures, or None
    read_blobs: Callable[[list[str]], dict[str, bytes]] | None = None  # several blobs in one round trip to git
    range_base: str | None = None  # the commit the scanned range starts from: where the tree is taken as in sync


class ProvisionalClassifier:
    """The rule of the scan foundation, before structural classification:
    an entry no row claims is NOT_APPLICABLE/no-row, anything else NEEDS_REVIEW.

    Kept for comparison (``options={"classifier": "provisional"}``) and for the
    classification-cost benchmark."""

    def __init__(self, context: ClassifierContext) -> None:
        self.context = context

    def classify_range(self, entries: list[EntryChanges], pairs=None) -> Iterator[tuple[EntryChanges, Verdict]]:
        for entry in entries:
            yield entry, self.classify(entry)

    def classify(self, entry: EntryChanges) -> Verdict:
        if not entry.rows:
            return Verdict(
                NOT_APPLICABLE,
                "no-row",
                "path",
                reason="no matrix row owns any path or symbol this commit touches",
                version=__version__,
                rules=["provisional-rows"],
            )
        return Verdict(
            NEEDS_REVIEW,
            None,
            "fallback",
            reason="rows are touched; structural classification is not enabled",
            evidence=[
                Evidence(kind=Kind.SYMBOL, message=f"{s.change} {s.name}", path=s.path, symbol=s.name)
                for s in entry.symbols
            ],
            version=__version__,
            rules=["provisional-rows"],
        )


# --- range facts ------------------------------------------------------------------


def _file_changes(entry: EntryChanges) -> list[FileChange]:
    return list(entry.commit.changes) or list(entry.owned_changes)


def _patch_fingerprint(entry: EntryChanges, inverse: bool = False) -> frozenset | None:
    """What a commit does, file by file, as ('-' lines, '+' lines); the
    inverse swaps them (and the rename direction). None for an empty commit.
    Order-independent across files: a revert may list them differently."""
    parts = []
    for change in _file_changes(entry):
        removed_by_hunk, added_by_hunk = change_lines(change)
        removed = "\n".join("\n".join(lines) for lines in removed_by_hunk)
        added = "\n".join("\n".join(lines) for lines in added_by_hunk)
        blobs = (change.old_blob or "", change.new_blob or "") if not removed_by_hunk else ("", "")
        paths = (change.old_path or "", change.new_path or "")
        if inverse:
            removed, added, blobs, paths = added, removed, blobs[::-1], paths[::-1]
        parts.append((paths, removed, added, blobs))
    return frozenset(parts) if parts else None


def _path_key(entry: EntryChanges, inverse: bool = False) -> frozenset | None:
    """The (old path, new path) pairs a commit changes; a revert has the
    inverse (renames swap direction). None for an empty commit."""
    parts = [(change.old_path or "", change.new_path or "") for change in _file_changes(entry)]
    if inverse:
        parts = [(new, old) for old, new in parts]
    return frozenset(parts) if parts else None


def _blob_key(entry: EntryChanges, inverse: bool = False) -> frozenset | None:
    """``(path, old blob, new blob)`` of every change (a revert swaps the
    blobs); None when a change names no blob (hand-built changes)."""
    parts = []
    for change in _file_changes(entry):
        if change.old_blob is None and change.new_blob is None:
            return None
        blobs = (change.old_blob or "", change.new_blob or "")
        parts.append((change.path, blobs[::-1] if inverse else blobs))
    return frozenset(parts) if parts else None


class _Keys:
    """What pairing compares of one entry, each read from it at most once: the
    key a commit undoing it would show is its own key with the sides swapped,
    not a second read of its diff."""

    __slots__ = ("entry", "position", "paths", "blobs", "_fingerprint")

    def __init__(self, entry: EntryChanges) -> None:
        self.entry = entry
        self.position = entry.position
        self.paths = _path_key(entry)
        self.blobs = _blob_key(entry)
        self._fingerprint: frozenset | None | bool = False  # False: not read yet

    def undo_paths(self) -> frozenset | None:
        if self.paths is None or all(old == new for old, new in self.paths):
            return self.paths  # no renames: a revert changes the same pairs
        return frozenset((new, old) for old, new in self.paths)

    def undo_blobs(self) -> frozenset | None:
        return None if self.blobs is None else frozenset((path, blobs[::-1]) for path, blobs in self.blobs)

    def fingerprint(self) -> frozenset | None:
        if self._fingerprint is False:
            self._fingerprint = _patch_fingerprint(self.entry)
        return self._fingerprint

    def undo_fingerprint(self) -> frozenset | None:
        fingerprint = self.fingerprint()
        if fingerprint is None:
            return None
        return frozenset((paths[::-1], added, removed, blobs[::-1]) for paths, removed, added, blobs in fingerprint)


class _OpenChanges:
    """The not-yet-undone commits that change one set of paths, in range
    order, indexed by what a commit undoing them would show: their blob
    triples (byte-identical reverts) and their patch fingerprints, computed
    only when a later commit changes the same paths."""

    def __init__(self) -> None:
        self.members: list[_Keys] = []  # open, in range order
        self.by_blobs: dict[frozenset, list[_Keys]] = {}
        self.by_fingerprint: dict[frozenset, list[_Keys]] = {}
        self.fingerprinted: set[int] = set()  # id() of the open members in by_fingerprint
        self.unfingerprinted: list[_Keys] = []  # open members not in by_fingerprint, in range order

    def add(self, keys: _Keys) -> None:
        self.members.append(keys)
        if keys.blobs is not None:
            self.by_blobs.setdefault(keys.blobs, []).append(keys)
        self.unfingerprinted.append(keys)

    def take_undone_by(self, keys: _Keys) -> EntryChanges | None:
        """The latest open member that ``keys``' entry exactly undoes (its blobs
        swap, or else its '-'/'+' lines swap), removed from the open set."""
        if not self.members:
            return None
        partner = None
        undo_blobs = keys.undo_blobs()
        if undo_blobs is not None and self.by_blobs.get(undo_blobs):
            partner = self.by_blobs[undo_blobs][-1]
        after = partner.position if partner is not None else -1
        if self.members[-1].position > after:  # a later member may undo by lines: compare fingerprints
            self._fingerprint_members_after(after)
            matches = self.by_fingerprint.get(keys.undo_fingerprint())
            if matches and matches[-1].position > after:
                partner = matches[-1]
        if partner is not None:
            self._remove(partner)
        return partner.entry if partner is not None else None

    def _fingerprint_members_after(self, position: int) -> None:
        while self.unfingerprinted and self.unfingerprinted[-1].position > position:
            member = self.unfingerprinted.pop()
            self.fingerprinted.add(id(member))
            same = self.by_fingerprint.setdefault(member.fingerprint(), [])
            index = len(same)
            while index and same[index - 1].position > member.position:
                index -= 1
            same.insert(index, member)

    def _remove(self, keys: _Keys) -> None:
        lists = [self.members, self.unfingerprinted, self.by_blobs.get(keys.blobs) or []]
        if id(keys) in self.fingerprinted:
            self.fingerprinted.discard(id(keys))
            lists.append(self.by_fingerprint[keys.fingerprint()])
        for members in lists:
            index = next((i for i in range(len(members) - 1, -1, -1) if members[i] is keys), None)
            if index is not None:
                del members[index]


def net_zero_pairs(entries: list[EntryChanges]) -> dict[int, tuple[int, str]]:
    """position -> (partner position, partner sha) for each commit that a
    later commit of the range exactly undoes, and for that later commit.

    Only commits that change the same paths (renames inverted) can pair. In
    each such group the open commits are indexed by blob triples and, lazily,
    by patch fingerprint, so pairing costs a few dictionary look-ups per
    commit however many commits touch the same files; diff text is read only
    for groups that a later commit could undo, once per commit, and hunks are
    not built for it. Pairing is greedy in range order, and a commit pairs
    with the latest open commit it undoes.
    """
    pairing = NetZeroPairing()
    for entry in entries:
        pairing.add(entry)
    return pairing.pairs


class NetZeroPairing:
    """``net_zero_pairs``, one entry at a time in range order: a scan pairs each
    commit as git's log delivers it, so when the log ends the pairs are known.
    An entry is paired by its commit's changes alone (not by what mapping made of
    them), so mapping the same commit again later does not change its pair."""

    def __init__(self) -> None:
        self.pairs: dict[int, tuple[int, str]] = {}
        self._open: dict[frozenset, _OpenChanges] = {}

    def add(self, entry: EntryChanges) -> None:
        keys = _Keys(entry)
        if keys.paths is None:
            return
        group = self._open.get(keys.undo_paths())
        partner = group.take_undone_by(keys) if group is not None else None
        if partner is not None:
            self.pairs[partner.position] = (entry.position, entry.commit.sha)
            self.pairs[entry.position] = (partner.position, partner.commit.sha)
            return
        self._open.setdefault(keys.paths, _OpenChanges()).add(keys)


def partial_reverts(entries: list[EntryChanges], pairs: dict[int, tuple[int, str]]) -> dict[int, tuple[int, str]]:
    """position -> (earlier position, its sha) for each commit a row owns, outside ``pairs``, whose every
    change takes back lines one earlier commit of the range (also outside ``pairs``) made: file by file
    (the same path, no rename), its '-' lines are among that commit's '+' lines, as multisets, against what
    that commit made net (a line it only moved was not made by it), and it adds no line: putting back part of
    a replacement whose rest stays is not an inverse (rule ``net-zero`` or ``file-revert`` cancels a whole one).
    The latest such earlier commit; only the later commit is marked (rule ``partial-revert``).

    Diff text is read only for a commit every one of whose paths an earlier commit changed, and for those
    earlier commits, each once."""
    lines: dict[int, dict[str, tuple[Counter, Counter]] | None] = {}

    def changed(entry: EntryChanges) -> dict[str, tuple[Counter, Counter]] | None:
        if entry.position not in lines:
            found: dict[str, tuple[Counter, Counter]] | None = {}
            for change in _file_changes(entry):
                removed_by_hunk, added_by_hunk = change_lines(change)
                removed = Counter(line for hunk in removed_by_hunk for line in hunk)
                added = Counter(line for hunk in added_by_hunk for line in hunk)
                if (change.old_path or change.new_path) != (change.new_path or change.old_path) \
                        or not (removed or added) or change.path in found:
                    found = None  # a rename, a binary or mode-only change: not lines to take back
                    break
                found[change.path] = (removed, added)
            lines[entry.position] = found
        return lines[entry.position]

    earlier_by_path: dict[str, list[EntryChanges]] = {}
    touching_by_path: dict[str, list[EntryChanges]] = {}  # every commit of the range, paired or not
    found: dict[int, tuple[int, str]] = {}
    for entry in entries:
        changes = _file_changes(entry)
        for change in changes:
            touching_by_path.setdefault(change.path, []).append(entry)
        if entry.position not in pairs and changes and entry.rows:  # a change no row owns is no-row, whatever it does
            candidates = None
            for change in changes:
                touching = {e.position for e in earlier_by_path.get(change.path, ())}
                candidates = touching if candidates is None else candidates & touching
            mine = changed(entry) if candidates else None
            for earlier in sorted((e for e in earlier_by_path.get(changes[0].path, ())
                                   if e.position in (candidates or ())), key=lambda e: -e.position):
                theirs = changed(earlier) if mine else None
                # Against what the earlier commit made net (a line it moved was not made by it).
                # Only removals cancel: putting back part of what the earlier commit replaced, the rest of that
                # replacement kept, pieces together a form neither the base nor the earlier commit had.
                if theirs is not None and all(path in theirs and not (removed - (theirs[path][1] - theirs[path][0]))
                                              and not added for path, (removed, added) in mine.items()) \
                        and all(_takes_back_in_place(earlier, entry, path, touching_by_path[path]) for path in mine):
                    found[entry.position] = (earlier.position, earlier.commit.sha)
                    break
        if entry.position not in pairs and entry.position not in found:
            for change in changes:
                earlier_by_path.setdefault(change.path, []).append(entry)
    return found


def _change_on(entry: EntryChanges, path: str) -> FileChange | None:
    return next((c for c in _file_changes(entry) if c.path == path), None)


def _hunks_of(change: FileChange | None):
    if change is None or not change.parsed or (change.old_path or change.path) != (change.new_path or change.path):
        return None  # a rename, a binary or mode-only change: its lines cannot be followed
    try:
        return ensure_hunks(change)
    except ValueError:
        return None


def _across(number: int, gone: list[int], made: list[int]) -> int | None:
    """Line ``number`` on one side of a diff, on the other side: None when the diff removes it (``gone``: the
    side's changed line numbers; ``made``: the other side's)."""
    if number in gone:
        return None
    kept = number - sum(1 for g in gone if g < number)  # its rank among the lines the diff keeps
    other = kept
    for m in sorted(made):
        if m <= other:
            other += 1
        else:
            break
    return other


def _takes_back_in_place(earlier: EntryChanges, later: EntryChanges, path: str,
                         touching: list[EntryChanges]) -> bool:
    """Whether ``later``'s change to ``path`` takes back ``earlier``'s where ``earlier`` made it: each line it
    removes is a line ``earlier`` added, at the place that line has reached (followed through the commits of
    the range between them), and each run of lines it adds is text ``earlier`` removed from that same place.
    The same text elsewhere in the file (a copy in another definition) is not what ``earlier`` made."""
    first, last = _hunks_of(_change_on(earlier, path)), _hunks_of(_change_on(later, path))
    if first is None or last is None:
        return False
    added = {n: t for h in first for n, t in zip(h.added_lines, h.added_text)}
    first_gone = sorted(n for h in first for n in h.removed_lines)
    first_made = sorted(added)
    holes: dict[int, Counter] = {}  # where a run of removed lines was, as the next kept line's number
    for h in first:
        run: list[str] = []
        for i, (n, t) in enumerate(zip(h.removed_lines, h.removed_text)):
            run.append(t)
            if i + 1 == len(h.removed_lines) or h.removed_lines[i + 1] != n + 1:
                at = _across(n + 1, first_gone, first_made)
                if at is None:
                    return False
                holes.setdefault(at, Counter()).update(run)
                run = []
    for between in touching:
        if not earlier.position < between.position < later.position:
            continue
        hunks = _hunks_of(_change_on(between, path))
        if hunks is None:
            return False
        gone = sorted(n for h in hunks for n in h.removed_lines)
        made = sorted(n for h in hunks for n in h.added_lines)
        moved = {_across(n, gone, made): t for n, t in added.items()}
        added = {n: t for n, t in moved.items() if n is not None}
        moved_holes: dict[int, Counter] = {}
        for at, texts in holes.items():
            to = _across(at, gone, made)
            if to is None:
                return False
            moved_holes.setdefault(to, Counter()).update(texts)
        holes = moved_holes
    last_gone = sorted(n for h in last for n in h.removed_lines)
    last_made = sorted(n for h in last for n in h.added_lines)
    for h in last:
        if any(added.get(n) != t for n, t in zip(h.removed_lines, h.removed_text)):
            return False
        run = []
        for i, (n, t) in enumerate(zip(h.added_lines, h.added_text)):
            run.append(t)
            if i + 1 == len(h.added_lines) or h.added_lines[i + 1] != n + 1:
                at = _across(n + 1, last_made, last_gone)
                if at is None or Counter(run) - holes.get(at, Counter()):
                    return False
                run = []
    return True


def file_reverts(entries: list[EntryChanges], taken: set[int] = frozenset(), carried=None,
                 ) -> dict[int, dict[str, tuple[int, str, str]]]:
    """position -> {path: (partner position, partner sha)} for each owned file change that a later commit of
    the range restores hunk for hunk (its '-' lines, hunk by hunk in order, are the earlier change's '+' lines,
    and its '+' lines the earlier change's '-' lines), and for that later change; rule ``file-revert``.
    A change no earlier one mirrors that way pairs with an earlier change it restores byte for byte across
    commits that only edit the lines that change made (``_restores_across_edits``; rule
    ``chained-file-revert``); the value's third element names the rule.
    Commits in ``taken`` (whole or partial reverts, decided as such) are left out; a change with a rename,
    or no lines (binary, mode only), is never paired. Diff text is read only for a path an earlier commit of
    the range changed, each change once; a change pairs with the latest open change it restores.
    ``carried(symbol)``: whether a port carries (or declares) a touched definition; given, a commit between
    may also edit definitions none carries, lines the file had before among them, and is then marked with the
    pair (no port can have followed what it did, and the later commit takes it back)."""
    lines: dict[tuple[int, str], tuple[list, list] | None] = {}

    def hunks(entry: EntryChanges, change: FileChange):
        key = (entry.position, change.path)
        if key not in lines:
            removed, added = change_lines(change)
            lines[key] = (removed, added) if (removed or added) and any(removed + added) else None
        return lines[key]

    open_by_path: dict[str, list[tuple[EntryChanges, FileChange]]] = {}
    touching_by_path: dict[str, list[EntryChanges]] = {}  # every commit of the range, whatever it was decided
    found: dict[int, dict[str, tuple[int, str]]] = {}
    for entry in entries:
        for change in _file_changes(entry):
            touching_by_path.setdefault(change.path, []).append(entry)
        if entry.position in taken or not entry.rows:
            continue
        for change in entry.owned_changes:
            if not change.path or (change.old_path or change.path) != change.path or not change.old_blob \
                    or not change.new_blob:
                continue
            earlier = open_by_path.get(change.path, [])
            mine = hunks(entry, change) if earlier else None
            partner = None
            for index in range(len(earlier) - 1, -1, -1) if mine else ():
                theirs = hunks(*earlier[index])
                if theirs is not None and mine[0] == theirs[1] and mine[1] == theirs[0] \
                        and _takes_back_in_place(earlier[index][0], entry, change.path, touching_by_path[change.path]):
                    partner = earlier.pop(index)[0]
                    break
            rule = "file-revert"
            if partner is None:
                for index in range(len(earlier) - 1, -1, -1):
                    first, made = earlier[index]
                    window = _restores_across_edits(first, entry, change.path, touching_by_path[change.path],
                                                    carried) if made.old_blob == change.new_blob else None
                    if window is not None:
                        partner, rule = earlier.pop(index)[0], "chained-file-revert"
                        for between in window:  # commits between that edited definitions no port carries
                            if between.position in taken:
                                continue
                            found.setdefault(between.position, {})[change.path] = (
                                entry.position, entry.commit.sha, rule)
                            earlier[:] = [e for e in earlier if e[0].position != between.position]
                        break
            if partner is not None:
                found.setdefault(partner.position, {})[change.path] = (entry.position, entry.commit.sha, rule)
                found.setdefault(entry.position, {})[change.path] = (partner.position, partner.commit.sha, rule)
            else:
                open_by_path.setdefault(change.path, []).append((entry, change))
    return found


def _restores_across_edits(earlier: EntryChanges, later: EntryChanges, path: str,
                           touching: list[EntryChanges], carried=None) -> list[EntryChanges] | None:
    """``chained-file-revert``: ``later`` puts ``path`` back byte for byte as it was before ``earlier`` (the
    caller compared the blobs), and at least one commit between changed it, each only outside the file's
    definitions and removing only lines ``earlier`` or a commit between added (followed to where they are
    then); ``later`` removes only lines so made (a line it keeps may be one the diff aligns with the text it
    puts back). What any commit between did to the file is then an edit of ``earlier``'s change, all of
    which ``later`` takes back.

    With ``carried`` (whether a port carries or declares a touched definition), a commit between may also
    edit definitions of the file that no port carries, removing lines they had before ``earlier``: the file
    still ends as it began, and no port can have followed those edits. None when it is no such revert, else
    the commits between that edited such definitions (they are net-zero with the pair)."""
    first, last = _hunks_of(_change_on(earlier, path)), _hunks_of(_change_on(later, path))
    if first is None or last is None:
        return None
    made = {n for h in first for n in h.added_lines}
    between = [t for t in touching if earlier.position < t.position < later.position]
    if not between:
        return None
    window: list[EntryChanges] = []
    for commit in between:
        hunks = _hunks_of(_change_on(commit, path))
        if hunks is None:
            return None
        definitions = [s for s in commit.symbols if s.path == path and s.kind not in ("toplevel", "lines")]
        if definitions and (carried is None or not all(_uncarried_edit(s, carried) for s in definitions)):
            return None
        gone = sorted(n for h in hunks for n in h.removed_lines)
        added = sorted(n for h in hunks for n in h.added_lines)
        # a line the file had that goes must lie inside an uncarried definition the commit edits
        if any(n not in made and not _inside(n, definitions) for n in gone):
            return None
        if definitions:
            window.append(commit)
        made = {_across(n, gone, added) for n in made} - {None} | set(added)
    loose = [s for s in later.symbols if s.path == path and s.kind not in ("toplevel", "lines") and window
             and _uncarried_edit(s, carried)]
    # with the window's edits, a line the diff re-aligns inside a definition no port carries may go and come back
    if any(n not in made and not _inside(n, loose) for h in last for n in h.removed_lines):
        return None
    return window


def _uncarried_edit(symbol, carried) -> bool:
    """A definition modified in place (same path, old lines known) that no port carries or declares."""
    return symbol.change == "modified" and bool(symbol.old_lines) \
        and (symbol.old_path or symbol.path) == symbol.path and not carried(symbol)


def _inside(line: int, definitions) -> bool:
    """True when old-side ``line`` lies inside one of ``definitions``' old spans."""
    return any(s.old_lines[0] <= line <= s.old_lines[1] for s in definitions)


def _paired_net_zero(entry: EntryChanges, symbol, rule: str, message: str, reason: str) -> SymbolVerdict:
    """NOT_APPLICABLE/``net-zero`` for a touched definition whose change another commit of the range cancels
    (``rule`` says which pairing: a whole file's hunks or one definition's edits)."""
    return SymbolVerdict(
        path=symbol.path, symbol=symbol.qualified_name or symbol.name, change=symbol.change,
        verdict=NOT_APPLICABLE, justification="net-zero", decided_by="path",
        evidence=[Evidence(kind=Kind.NET_ZERO, message=message, side="upstream-new", path=symbol.path,
                           symbol=symbol.name)],
        reason=reason, rules=[rule], row=entry.rows[0] if entry.rows else None)


def definition_reverts(entries: list[EntryChanges], taken: set[int], anchored, read_source,
                       ) -> dict[int, dict[tuple[str, str], tuple[int, str]]]:
    """position -> {(path, qualified name): (partner position, partner sha)} for each ported definition
    (``anchored(symbol)``) that a commit changes and the next commit of the range to touch what it made there
    takes back in place (rule ``definition-revert``), and for that later commit; commits in ``taken`` (whole
    or partial reverts) are left out. Each side of a definition pairs at most once, and a definition a commit
    puts back is never the first side of a later pair (a re-land is decided on its own). ``read_source(blob,
    path)``: a blob's bytes (the scan's parsed tables); only definitions a later commit changes again are read."""
    touching_by_path: dict[str, list[EntryChanges]] = {}
    for entry in entries:
        for change in _file_changes(entry):
            touching_by_path.setdefault(change.path, []).append(entry)
    found: dict[int, dict[tuple[str, str], tuple[int, str]]] = {}
    for entry in entries:
        if entry.position in taken or not entry.rows:
            continue
        for symbol in entry.symbols:
            key = (symbol.path, symbol.qualified_name)
            if key in found.get(entry.position, {}) or symbol.change != "modified" or not symbol.old_lines \
                    or not symbol.new_lines or (symbol.old_path or symbol.path) != symbol.path \
                    or symbol.kind in ("toplevel", "lines"):
                continue
            later_ones = [e for e in touching_by_path.get(symbol.path, ()) if e.position > entry.position]
            if not later_ones or not anchored(symbol):
                continue
            earlier_ones = [e for e in touching_by_path.get(symbol.path, ()) if e.position < entry.position]
            if _undoes_some(entry, symbol, earlier_ones, read_source):
                continue  # itself a revert (in part) of an earlier change: what re-lands that is decided on its own
            partner = _definition_taken_back(entry, symbol, later_ones, taken, read_source)
            if partner is not None and key not in found.get(partner.position, {}):
                found.setdefault(entry.position, {})[key] = (partner.position, partner.commit.sha)
                found.setdefault(partner.position, {})[key] = (entry.position, entry.commit.sha)
    return found


def _undoes_some(entry: EntryChanges, symbol, earlier_ones: list[EntryChanges], read_source) -> bool:
    """Whether ``entry``'s change to the definition ``symbol`` names swaps back any edit an earlier commit of
    the range made to it."""
    old = _definition_lines(read_source, symbol.old_blob, symbol.old_lines, symbol.path)
    new = _definition_lines(read_source, symbol.new_blob, symbol.new_lines, symbol.path)
    if old is None or new is None:
        return True
    mine = _edits(old, new)
    for earlier in earlier_ones:
        theirs = next((s for s in earlier.symbols if (s.path, s.qualified_name) == (symbol.path, symbol.qualified_name)
                       and s.change == "modified"), None)
        if theirs is None:
            continue
        before = _definition_lines(read_source, theirs.old_blob, theirs.old_lines, theirs.path)
        after = _definition_lines(read_source, theirs.new_blob, theirs.new_lines, theirs.path)
        if before is None or after is None or any(
                gone == put and (made == removed or (removed and _run_in(removed, made) is not None))
                for removed, put in mine for gone, made in _edits(before, after)):
            return True
    return False


def _definition_lines(read_source, blob: str | None, lines: tuple[int, int] | None, path: str) -> list[str] | None:
    """A definition's lines (``lines``, 1-based, inclusive) of a blob, right-stripped, blank and comment-only
    lines left out (their form, not their meaning); None when it cannot be read."""
    if not blob or not lines:
        return None
    try:
        text = read_source(blob, path).decode("utf-8").splitlines()
    except (UnicodeDecodeError, ValueError, OSError, KeyError):
        return None
    kept = [line.rstrip() for line in text[lines[0] - 1:lines[1]]]
    return [line for line in kept if line.strip() and not line.lstrip().startswith(("#", "//"))]


def _matched(before: list[str], after: list[str]) -> list[tuple[int, int]]:
    """The lines ``before`` and ``after`` share, as index pairs in order: lines unique to both first (a patience
    alignment, so a line repeated in the definition does not pull an edit to another copy of it), then the
    longest common runs between them."""
    from bisect import bisect_left
    from difflib import SequenceMatcher

    pairs: list[tuple[int, int]] = []

    def align(a0: int, a1: int, b0: int, b1: int) -> None:
        while a0 < a1 and b0 < b1 and before[a0] == after[b0]:
            pairs.append((a0, b0))
            a0, b0 = a0 + 1, b0 + 1
        tail = []
        while a0 < a1 and b0 < b1 and before[a1 - 1] == after[b1 - 1]:
            a1, b1 = a1 - 1, b1 - 1
            tail.append((a1, b1))
        if a0 < a1 and b0 < b1:
            seen_a = Counter(before[a0:a1])
            seen_b = Counter(after[b0:b1])
            where_b = {after[j]: j for j in range(b0, b1) if seen_b[after[j]] == 1}
            unique = [(i, where_b[before[i]]) for i in range(a0, a1)
                      if seen_a[before[i]] == 1 and before[i] in where_b]
            # the longest run of them in the same order on both sides
            tails: list[int] = []
            links: list[int] = []
            back: list[int | None] = []
            for k, (_, j) in enumerate(unique):
                at = bisect_left(tails, j)
                back.append(links[at - 1] if at else None)
                if at == len(tails):
                    tails.append(j)
                    links.append(k)
                else:
                    tails[at], links[at] = j, k
            chain = []
            k = links[-1] if links else None
            while k is not None:
                chain.append(unique[k])
                k = back[k]
            chain.reverse()
            if chain:
                i_prev, j_prev = a0, b0
                for i, j in chain:
                    align(i_prev, i, j_prev, j)
                    pairs.append((i, j))
                    i_prev, j_prev = i + 1, j + 1
                align(i_prev, a1, j_prev, b1)
            else:
                for block in SequenceMatcher(None, before[a0:a1], after[b0:b1], autojunk=False).get_matching_blocks():
                    pairs.extend((a0 + block.a + k, b0 + block.b + k) for k in range(block.size))
        pairs.extend(reversed(tail))

    align(0, len(before), 0, len(after))
    return sorted(pairs)


def _edits(before: list[str], after: list[str]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The edits ``before`` → ``after`` (``_matched``'s alignment) as ``(removed lines, added lines)``, in order.
    A keyword argument line (``name=value,``) that only moves within the same call is no edit: the call
    binds the same parameters."""
    found: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = []  # with the edit's place in ``after``
    i = j = 0
    for a, b in _matched(before, after) + [(len(before), len(after))]:
        if a > i or b > j:
            found.append((j, tuple(before[i:a]), tuple(after[j:b])))
        i, j = a + 1, b + 1
    moved = set()
    for k, (at, removed, added) in enumerate(found):
        if added or len(removed) != 1 or not _KEYWORD_ARGUMENT.match(removed[0]):
            continue
        indent = len(removed[0]) - len(removed[0].lstrip())
        other = next((m for m, (there, gone, made) in enumerate(found) if m not in moved and m != k and not gone
                      and made == removed and all(len(line) - len(line.lstrip()) >= indent and line.strip()[0] not in
                                                  ")]}" for line in after[min(at, there):max(at, there)])), None)
        if other is not None:
            moved |= {k, other}
    return [(removed, added) for k, (_, removed, added) in enumerate(found) if k not in moved]


_KEYWORD_ARGUMENT = re.compile(r"\s*[A-Za-z_]\w*=[^=].*,$")


def _takes_back(old: list[str], new: list[str], now: list[str], then: list[str], path: str) -> bool:
    """Whether the change ``now`` → ``then`` takes back the change ``old`` → ``new`` edit for edit (each of its
    edits is one of the earlier commit's with the removed and added lines swapped, or takes back a run of the
    lines an earlier edit added and puts back all it removed), but for lines the earlier commit added that it
    keeps: those must be whole Python bindings nothing else in ``new`` reads but the lines taken back and the
    kept ones (``_kept_bindings``)."""
    made = _edits(old, new)
    undone = _edits(now, then)
    if not undone:
        return False
    remaining = list(made)
    kept: list[str] = []
    for removed, added in undone:
        match = next((k for k, (r, d) in enumerate(remaining) if r == added and d == removed), None)
        if match is None:
            match = next((k for k, (r, d) in enumerate(remaining) if r == added and removed
                          and _run_in(removed, d) is not None), None)
            if match is None:
                return False
            start = _run_in(removed, remaining[match][1])
            kept += remaining[match][1][:start] + remaining[match][1][start + len(removed):]
        del remaining[match]
    if any(removed for removed, _ in remaining):
        return False  # a replacement left in place: the lines compute what neither side had
    kept += [line for _, added in remaining for line in added]
    return not kept or _kept_bindings(new, kept, [line for _, added in made for line in added], path)


def _run_in(run: tuple[str, ...], lines: tuple[str, ...]) -> int | None:
    """Where ``run`` starts inside ``lines`` (a contiguous run of them), or None."""
    return next((k for k in range(len(lines) - len(run) + 1) if lines[k:k + len(run)] == run), None)


def _definition_taken_back(earlier: EntryChanges, symbol, later_ones: list[EntryChanges], taken: set[int],
                           read_source) -> EntryChanges | None:
    """The next commit among ``later_ones`` (in range order) that changes the definition ``symbol`` names and
    takes back ``earlier``'s change to it (``_takes_back``), commits between that change it only by adding
    lines; else None."""
    old = _definition_lines(read_source, symbol.old_blob, symbol.old_lines, symbol.path)
    new = _definition_lines(read_source, symbol.new_blob, symbol.new_lines, symbol.path)
    if old is None or new is None or old == new:
        return None
    for later in later_ones:
        mine = next((s for s in later.symbols if (s.path, s.qualified_name) == (symbol.path, symbol.qualified_name)),
                    None)
        if mine is None:
            continue  # it does not change the definition
        if mine.change != "modified" or (mine.old_path or mine.path) != mine.path:
            return None  # removed, added again or moved: no longer the same definition
        if later.position in taken:
            return None
        now = _definition_lines(read_source, mine.old_blob, mine.old_lines, mine.path)
        then = _definition_lines(read_source, mine.new_blob, mine.new_lines, mine.path)
        if now is None or then is None:
            return None
        if any(removed for removed, _ in _edits(new, now)):
            return None  # a commit between changed or removed lines of the definition
        if _takes_back(old, new, now, then, symbol.path) and not _moved_into_callee(earlier, later, symbol, then):
            return later
    return None


def _moved_into_callee(earlier: EntryChanges, later: EntryChanges, symbol, then: list[str]) -> bool:
    """Whether ``later`` also changes a definition that ``symbol``'s definition calls or launches (``then``,
    its text after ``later``) which ``earlier`` left alone: what the definition stopped doing may have moved
    there, so the pair is no revert."""
    called = set(re.findall(r"([A-Za-z_]\w*)\s*[(\[]", "\n".join(then)))
    theirs = {s.name for s in earlier.symbols}
    return any(s.name in called and s.name not in theirs and s.qualified_name != symbol.qualified_name
               for s in later.symbols)


_BINDING = re.compile(r"\s*(?:def\s+([A-Za-z_]\w*)\s*\(|([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=))")


def _kept_bindings(new: list[str], kept: list[str], made: list[str], path: str) -> bool:
    """Whether the lines ``kept`` (of the ``made`` ones an earlier commit added, ``new`` its side) are whole
    Python bindings that, in ``new``, nothing reads but the lines a later commit took back (the rest of
    ``made``) and the kept lines themselves."""
    if language_for_path(path) != "python":
        return False
    names: set[str] = set()
    indent = None
    for line in kept:
        depth = len(line) - len(line.lstrip())
        if indent is not None and (depth > indent or line.strip()[0] in ")]}"):
            continue  # the rest of a kept binding's statement
        bound = _BINDING.match(line)
        if bound is None:
            return False
        names.add(bound.group(1) or bound.group(2))
        indent = depth
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
    readers = Counter(line for line in new if pattern.search(line.split("#")[0]))
    return not (readers - Counter(made))


def _put_back(put_back: dict[tuple[str, str], tuple[int, str]], symbol):
    """``((path, name), partner)`` of the paired definition that is ``symbol`` or encloses it, or None."""
    for (path, name), partner in put_back.items():
        if path == symbol.path and (symbol.qualified_name == name or symbol.qualified_name.startswith(name + ".")):
            return (path, name), partner
    return None


def _no_row(entry: EntryChanges) -> Verdict:
    """NOT_APPLICABLE/no-row: nothing the commit touches is owned by a row or named by an anchor."""
    return Verdict(NOT_APPLICABLE, "no-row", "path",
                   reason="no matrix row owns any path or symbol this commit touches, and no in-tree "
                          "anchor names any of its files",
                   evidence=[Evidence(kind=Kind.PATH, message="unowned", path=p) for p in entry.unowned_paths[:10]],
                   version=__version__, rules=["path-ownership"])


def _changes_without_symbols(entry: EntryChanges) -> list[FileChange]:
    """Owned changes (a row's path, or a file a port names) that touched no definition: a pure rename, blank lines."""
    covered = {s.path for s in entry.symbols} | {s.old_path for s in entry.symbols if s.old_path}
    return [c for c in entry.owned_changes if c.path not in covered and c.old_path not in covered]


def follow_moves(entries: list[EntryChanges], table_of, anchored):
    """Anchored definitions carried elsewhere in the range (``portq.classifier.moves``)."""
    from portq.classifier.moves import follow_moves as of_entries

    return of_entries(entries, table_of, anchored)


def anchor_losses(entries: list[EntryChanges], named, moves, aliases: dict[str, set[str]]):
    """Ported definitions removed in the range with no move followed (``AnchorLoss``), in range order;
    ``named(symbol)`` gives the in-tree ports of the touched definition itself. A loss ends at the entry
    that defines the lost name again where it was (by any name its file had in the range)."""
    from portq.classifier.reading import AnchorLoss, AnchorLosses

    found = AnchorLosses()
    open_files: list[set[str]] = []  # each loss's files, grown as later commits create files out of them
    for entry in entries:
        changes = entry.commit.changes
        # a definition the commit removes from one file and adds under its name in another is not new
        left = {s.qualified_name: (s.old_path or s.path, s.qualified_name) for s in entry.symbols
                if s.change == "removed"}
        for symbol in entry.symbols:
            if symbol.change == "added" and not symbol.name.startswith("<"):
                key = (symbol.path, symbol.qualified_name)
                if symbol.qualified_name in left:
                    if left[symbol.qualified_name] in found.first_added:
                        found.first_added.setdefault(key, found.first_added[left[symbol.qualified_name]])
                else:
                    found.first_added.setdefault(key, entry.position)
                for index, loss in enumerate(found.losses):
                    if loss.ended is None and loss.lost[1] == symbol.qualified_name \
                            and symbol.path in aliases.get(loss.lost[0], set()) | {loss.lost[0]}:
                        found.losses[index] = replace(loss, ended=entry.position)
        created = {c.new_path for c in changes if c.status in ("added", "renamed", "copied") and c.new_path}
        emptied = {s.old_path or s.path for s in entry.symbols if s.change == "removed"}
        for index, files in enumerate(open_files):
            if any(path in files for path in emptied):  # definitions leave a loss's file for the files made now
                files |= created
            files |= {c.new_path for c in changes if c.status == "renamed" and c.old_path in files and c.new_path}
            found.losses[index] = replace(found.losses[index], files=frozenset(files))
        for symbol in entry.symbols:
            if symbol.change != "removed" or symbol.name.startswith("<"):
                continue
            old_key = (symbol.old_path or symbol.path, symbol.qualified_name)
            if moves.made_by(entry.position, old_key) is not None:
                continue
            ports = named(symbol)
            if not ports:
                continue
            # a definition replaced where it was, its file kept, was compared there (``classifier.moves``)
            files = set(created)
            open_files.append(files)
            found.losses.append(AnchorLoss(entry.position, entry.commit.sha, old_key, tuple(symbol.rows),
                                           tuple(p.anchor for p in ports), frozenset(files), ports=tuple(ports),
                                           kind=symbol.kind, language=symbol.language))
    return found


def rename_aliases(entries: list[EntryChanges]) -> dict[str, set[str]]:
    """upstream path -> every other name it had through renames in the range."""
    from portq.classifier.mapping import rename_aliases as of_commits

    return of_commits(entry.commit for entry in entries)


# --- the structural classifier ---------------------------------------------------------


PREFETCH_ENTRIES = 256
"""Entries whose upstream blobs are read from git in one round trip, ahead of
classifying them (one round trip per blob costs more than its parse)."""


class StructuralClassifier:
    """DESIGN §5: a verdict per touched symbol, then per entry over all symbols."""

    def __init__(self, context: ClassifierContext, index=None) -> None:
        from portq.classifier.verdicts import SymbolClassifier
        from portq.tree.tree_index import TreeIndex, port_roots_of

        self.context = context
        index = index if index is not None else context.index
        self.index = index if index is not None else TreeIndex.build(
            context.tree_root, context.cache_dir, port_roots_of(context.matrix))
        self.symbols = SymbolClassifier(context, self.index)

    def classify_range(self, entries: list[EntryChanges], pairs: dict[int, tuple[int, str]] | None = None,
                       ) -> Iterator[tuple[EntryChanges, Verdict]]:
        """Each entry with its verdict, in order. ``pairs``: ``net_zero_pairs(entries)`` when the caller
        already paired them (``NetZeroPairing``, as the entries arrived)."""
        entries = list(entries)
        pairs = net_zero_pairs(entries) if pairs is None else pairs
        partial = partial_reverts(entries, pairs)
        aliases = rename_aliases(entries)

        def anchored(symbol) -> bool:
            return self.symbols.anchored(symbol, aliases)

        restored = file_reverts(entries, set(pairs) | set(partial), anchored)
        put_back = definition_reverts(entries, set(pairs) | set(partial), anchored, self._source)
        moves = follow_moves([e for e in entries if e.position not in pairs and e.position not in partial],
                             self.symbols._table, anchored)
        losses = anchor_losses([e for e in entries if e.position not in pairs and e.position not in partial],
                               lambda symbol: self.symbols.porting_definitions(symbol, aliases), moves, aliases)
        for start in range(0, len(entries), PREFETCH_ENTRIES):
            window = entries[start:start + PREFETCH_ENTRIES]
            self.symbols.prefetch([e for e in window if e.position not in pairs and e.position not in partial],
                                  aliases)
            for entry in window:
                yield entry, self.classify(entry, pairs.get(entry.position), aliases, moves,
                                           partial.get(entry.position), restored.get(entry.position),
                                           put_back.get(entry.position), losses)

    def classify(self, entry: EntryChanges, net_zero_partner=None, aliases=None, moves=None,
                 taken_back_from=None, restored_files=None, put_back=None, losses=None) -> Verdict:
        from portq.classifier.reading import RangeFacts
        from portq.classifier.verdicts import entry_verdict

        from portq.classifier.moves import Moves

        facts = RangeFacts(net_zero_partner, aliases or {}, moves if moves is not None else Moves(), losses)
        if not entry.rows and not entry.symbols and not entry.owned_changes:
            # Before the pairings: a commit that never touched the port is `no-row`
            # whether or not the range also takes it back.
            return _no_row(entry)
        if net_zero_partner is not None:
            return self._net_zero(entry, net_zero_partner)
        if taken_back_from is not None:
            return self._net_zero(entry, taken_back_from, partial=True)
        restored_files = restored_files or {}
        put_back = put_back or {}
        verdicts = [self._file_revert(entry, symbol, restored_files[symbol.path]) if symbol.path in restored_files
                    else self._definition_revert(entry, symbol, _put_back(put_back, symbol))
                    if _put_back(put_back, symbol) is not None
                    else self.symbols.classify(entry, symbol, facts) for symbol in entry.symbols]
        verdicts += [self.symbols.classify_change(entry, change, facts) for change in _changes_without_symbols(entry)
                     if change.path not in restored_files]
        if not entry.rows and not verdicts:
            return _no_row(entry)
        return entry_verdict(verdicts, "the commit changes no file")

    def _file_revert(self, entry: EntryChanges, symbol, partner: tuple[int, str, str]) -> SymbolVerdict:
        """A touched definition in a file whose change ``partner`` restores (or that restores ``partner``'s)."""
        position, sha, rule = partner
        relation = "restores" if position < entry.position else "is restored by"
        how = "hunk for hunk" if rule == "file-revert" else \
            "byte for byte, the commits between only editing the lines it made,"
        return _paired_net_zero(entry, symbol, rule, f"{symbol.path} {relation} entry {position} {sha}",
                                f"this commit's change to {symbol.path} {relation} entry {position}'s ({sha[:10]}) "
                                f"{how} inside the same range, so the range leaves that file's lines as they "
                                "were: net-zero rather than a change to port")

    def _source(self, blob: str, path: str) -> bytes:
        """A blob's bytes through the scan's symbol tables (mapping parsed the blobs a commit touches)."""
        table = self.symbols._table(blob, path)
        if table is None:
            raise ValueError(f"no symbol table for {path} at {blob}")
        return table.source

    def _definition_revert(self, entry: EntryChanges, symbol, partner: tuple[tuple[str, str], tuple[int, str]],
                           ) -> SymbolVerdict:
        """A touched definition (or one nested in it) that ``partner`` puts back, or that puts back ``partner``'s."""
        (_, name), (position, sha) = partner
        relation = "puts back" if position < entry.position else "is put back by"
        return _paired_net_zero(entry, symbol, "definition-revert", f"{name} {relation} entry {position} {sha}",
                                f"this commit's change to {name} {relation} entry {position}'s ({sha[:10]}) in place "
                                "inside the same range (any line kept is a binding nothing else there read), so the "
                                "range leaves that definition as it was: net-zero rather than a change to port")

    def _net_zero(self, entry: EntryChanges, partner: tuple[int, str], partial: bool = False) -> Verdict:
        position, sha = partner
        if partial:
            return Verdict(
                NOT_APPLICABLE, "net-zero", "path",
                reason=f"every line this commit changes takes back lines entry {position} ({sha[:10]}) made inside "
                       "the same range, so together they leave those lines as they were: net-zero rather than a "
                       f"change to port (entry {position} is decided on its own)",
                evidence=[Evidence(kind=Kind.NET_ZERO, message=f"takes back part of entry {position} {sha}",
                                   side="upstream-new")],
                version=__version__,
                rules=["partial-revert"],
            )
        relation = "is undone by" if position > entry.position else "undoes"
        return Verdict(
            NOT_APPLICABLE, "net-zero", "path",
            reason=f"this commit {relation} entry {position} ({sha[:10]}) inside the same range, so the range "
                   "leaves the files as they were: net-zero rather than a change to port",
            evidence=[Evidence(kind=Kind.NET_ZERO, message=f"{relation} entry {position} {sha}", side="upstream-new")],
            version=__version__,
            rules=["net-zero"],
        )


def build_classifier(context: ClassifierContext):
    """The classifier a scan uses: the structural one, unless
    ``context.options["classifier"] == "provisional"``."""
    if context.options.get("classifier") == "provisional":
        return ProvisionalClassifier(context)
    return StructuralClassifier(context)

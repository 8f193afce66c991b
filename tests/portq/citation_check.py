"""Check a rendered report's citations against the files they cite.

``verify_report(markdown, context, read, matrix_text)`` asserts that every
citation of the report's context holds its quoted text in the file it names
(``read(side, path)`` returns the in-tree file or the upstream blob of that
side), that every ``path:line`` printed in the markdown is one of those
checked citations, printed with its own quote, and that the matrix lines a
report cites are the ``[[row]]`` line of the row it names, and that an
upstream change cited on both sides quotes different lines before and
after (unchanged context is never cited as the change; a launch whose grid
changed only through a local cites that local, the launch as context).
Returns the number of citations printed in the markdown.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from portq.reporting.markdown import md_cite

PRINTED = re.compile(r"`(?P<path>[^`\s:]+):(?P<line>\d+)(?:-(?P<end>\d+))?`")


def verify_report(markdown: str, context: dict, read, matrix_text: str | None = None) -> int:
    by_place = {}
    for citation in context["citations"]:
        text = read(citation["side"], citation["path"])
        assert text is not None, f"{citation['place']} ({citation['side']}) names a file that does not exist"
        assert citation["checked"], f"{citation['place']} was not checked against its file"
        lines = [line.strip() for line in text.splitlines()]
        if citation.get("found") is False:
            assert " ".join(citation["quote"]) not in lines, f"{citation['place']} holds the quote it says is not there"
            by_place.setdefault(citation["place"], []).append(citation)
            continue
        first, last = citation["line"], citation["end_line"] or citation["line"]
        quote = citation["quote"]
        window = lines[first - 1:last]
        if quote:
            assert window[0] == quote[0], f"{citation['place']} holds {window[0]!r}, the report quotes {quote[0]!r}"
            assert window[-1] == quote[-1], f"{citation['place']} ends at {window[-1]!r}, the report quotes {quote[-1]!r}"
            assert all(q in window for q in quote), f"{citation['place']}: a quoted line is outside the range"
        by_place.setdefault(citation["place"], []).append(citation)
    for half in context.get("halves", ()):
        for symbol in half.get("deciding", ()):
            for change in symbol.get("changes", ()):
                was, now = change.get("before"), change.get("after")
                if was and now:
                    assert was["quote"] != now["quote"], \
                        f"{change['fact']}: {was['place']} and {now['place']} quote the same lines, which did not change"
    prose = re.sub(r"(?ms)^\s*(`{3,})text\n.*?^\s*\1$", "", markdown)
    prose = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", prose).replace("\\", "")
    bare = re.findall(r"[\w./-]+\.\w+:\d+", prose)
    assert not bare, f"unchecked citations in the prose: {bare[:3]}"
    printed = 0
    for match in PRINTED.finditer(markdown):
        place = match.group(0).strip("`")
        if context.get("matrix_path") and match["path"] == context["matrix_path"]:
            assert matrix_text is not None
            matrix_lines = matrix_text.splitlines()
            line = int(match["line"])
            assert matrix_lines[line - 1].strip() == "[[row]]", f"{place} is not a [[row]] line"
            assert any(f'"{r["id"]}"' in matrix_lines[line] for r in context["rows"] if r["line"] == line)
            continue
        assert place in by_place, f"{place} is printed in the report but is not a checked citation"
        assert any(md_cite(c) in markdown for c in by_place[place]), f"{place} is printed without its quote"
        printed += 1
    return printed


def reader(tree: Path, upstream: Path, sha: str):
    """``read(side, path)`` over an in-tree directory and an upstream clone at commit ``sha``."""

    def read(side: str, path: str) -> str | None:
        if side == "tree":
            file = tree / path
            return file.read_text() if file.is_file() else None
        revision = f"{sha}^" if side == "upstream-old" else sha
        done = subprocess.run(["git", "-C", str(upstream), "show", f"{revision}:{path}"], capture_output=True, text=True)
        return done.stdout if done.returncode == 0 else None

    return read


def enclosing_definition(tree: Path, path: str, line: int) -> str | None:
    """The innermost definition of the in-tree file ``path`` that contains ``line`` (None: module scope)."""
    from portq.language.symbols import symbol_table

    file = tree / path
    table = symbol_table(file.read_bytes(), path)
    around = [d for d in table.definitions if d.start_line <= line <= d.end_line]
    return min(around, key=lambda d: d.end_line - d.start_line).qualified_name if around else None


def verify_callers(markdown: str, context: dict, tree: Path) -> int:
    """Every reachability hop is named by the definition that encloses it; returns the number of hops."""
    hops = 0
    for group in context["reachability"]["entry_points"]:
        for chain in group["chains"]:
            for hop in chain:
                innermost = enclosing_definition(tree, hop["path"], hop["line"])
                assert hop["enclosing"] == innermost, f"{hop['place']} is in {innermost}, not {hop['enclosing']}"
                assert f"in `{hop['enclosing'] or 'module scope'}`: `{hop['place']}`" in markdown
                hops += 1
    return hops


def main(argv=None) -> int:
    """File every flagged entry of a ledger's newest wave and check its citations and callers.

    ``python -m tests.portq.citation_check --upstream NAME=PATH --tree T --matrix M --ledger L``
    prints one line per report and the totals; it fails on the first wrong citation.
    """
    import argparse
    import io
    import json
    import tempfile
    from contextlib import redirect_stderr, redirect_stdout

    from portq.cli import main as portq
    from portq.core.model import FLAGGED
    from portq.ledger.store import open_ledger
    from portq.reporting.reports import current_verdict

    parser = argparse.ArgumentParser()
    for flag in ("--upstream", "--tree", "--matrix", "--ledger"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args(argv)
    name, _, clone = args.upstream.partition("=")
    flags = ["--upstream", args.upstream, "--tree", args.tree, "--matrix", args.matrix, "--ledger", args.ledger]
    with open_ledger(args.ledger, create=False) as ledger:
        wave = ledger.latest_wave()
        flagged = [(r.position, r.sha) for r in ledger.wave_entries(wave) if current_verdict(r).verdict in FLAGGED]
    totals = [0, 0, 0]
    with tempfile.TemporaryDirectory() as out:
        for position, sha in flagged:
            stdout, stderr = io.StringIO(), io.StringIO()
            with redirect_stdout(stdout), redirect_stderr(stderr):
                code = portq(["file-issue", str(position), "--json", "--out", out, *flags])
            assert code == 0, stderr.getvalue()
            document = json.loads(stdout.getvalue())
            markdown = Path(document["path"]).read_text()
            printed = verify_report(markdown, document, reader(Path(args.tree), Path(clone), sha), Path(args.matrix).read_text())
            hops = verify_callers(markdown, document, Path(args.tree))
            totals = [totals[0] + len(document["citations"]), totals[1] + printed, totals[2] + hops]
            print(f"entry {position} {sha[:10]}: {len(document['citations'])} citations ({printed} printed), {hops} caller hops")
    print(f"{len(flagged)} flagged entries of {wave.name} {wave.range_spec}: {totals[0]} citations checked "
          f"({totals[1]} printed), {totals[2]} caller hops named by their enclosing definition")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``portq scan --format sarif``: valid SARIF 2.1.0 (checked against the OASIS schema, vendored
in tests/portq/schemas/), one result per flagged entry at the port's cited lines; ``--output`` for
every format."""
from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from tests.portq.golden.reports.scenario import scanned

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
WEB = "https://github.com/vllm-project/vllm/commit/{sha}"


def _scanned_with_web(tmp_path):
    (tmp_path / "portq.toml").write_text(f'[upstream.vllm]\npath = "upstream"\nweb = "{WEB}"\n')
    return scanned(tmp_path)


def test_sarif_is_valid_and_locates_the_gap_on_the_ports_lines(tmp_path):
    scenario = _scanned_with_web(tmp_path)
    result = scenario.portq("scan", scenario.range, "--format", "sarif", "--output", str(tmp_path / "portq.sarif"))
    assert result.code == 0, result.err
    assert result.out == ""
    document = json.loads((tmp_path / "portq.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    [run] = document["runs"]
    [gap] = run["results"]
    assert gap["ruleId"] == "REAL_GAP" and gap["level"] == "error"
    assert WEB.replace("{sha}", scenario.shas[1]) in gap["message"]["text"]
    assert gap["properties"]["commit"] == scenario.shas[1]
    entry = scenario.portq("scan", scenario.range, "--json").json()["entries"][0]
    cited = [(item["path"], item["line"]) for item in entry["evidence"] if item["side"] == "tree" and item["line"]]
    located = [(loc["physicalLocation"]["artifactLocation"]["uri"], loc["physicalLocation"]["region"]["startLine"])
               for loc in gap["locations"] + gap.get("relatedLocations", [])]
    assert located == list(dict.fromkeys(cited)) and located
    for uri, line in located:  # each place is a real line of the port
        assert 1 <= line <= len((tmp_path / "tree" / uri).read_text().splitlines())
    assert {rule["id"] for rule in run["tool"]["driver"]["rules"]} >= {"REAL_GAP"}


def test_sarif_with_nothing_new_is_a_valid_empty_run(tmp_path):
    scenario = scanned(tmp_path)
    result = scenario.portq("scan", "--format", "sarif")
    assert result.code == 0, result.err
    document = json.loads(result.out)
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    assert document["runs"][0]["results"] == []


@pytest.mark.parametrize("fmt", ["table", "json", "sarif"])
def test_output_writes_every_format_to_a_file(tmp_path, fmt):
    scenario = scanned(tmp_path)
    target = tmp_path / f"out.{fmt}"
    result = scenario.portq("scan", scenario.range, "--format", fmt, "--output", str(target))
    assert result.code == 0 and result.out == "", result.err
    text = target.read_text(encoding="utf-8")
    if fmt == "table":
        assert "REAL_GAP" in text
    else:
        assert json.loads(text)


def test_output_to_a_fifo_is_refused_before_scanning(tmp_path):
    scenario = scanned(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    result = scenario.portq("scan", scenario.range, "--format", "sarif", "--output", str(tmp_path / "pipe"))
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1 and "FIFO" in result.err


def test_json_and_another_format_together_is_one_line(tmp_path):
    scenario = scanned(tmp_path)
    result = scenario.portq("scan", scenario.range, "--json", "--format", "sarif")
    assert result.code == 2 and "--json and --format sarif" in result.err

"""The standing verdicts of an upstream's ledger: what ``portq status`` lists and ``scan --fail-on`` judges.

An entry stands at its verdict in the newest complete wave that lists it, a
human review winning over any scan; running and interrupted waves are not
counted. Status and the CI gate read it from here, so what status calls
open is exactly what fails the gate.
"""

from __future__ import annotations

from typing import NamedTuple

from portq.reporting import output


class Standing(NamedTuple):
    wave: object  # the ledger's Wave: the newest complete wave that lists the entry
    record: object  # the entry as that wave saw it (``portq.ledger.store.EntryRecord``)
    event: object  # the verdict that stands (``output.standing``)


def complete_waves(ledger, upstream: str) -> list:
    """The complete waves of ``upstream``, oldest first."""
    return [wave for wave in ledger.waves() if wave.upstream == upstream and wave.status == "complete"]


def standing_entries(ledger, waves) -> list[Standing]:
    """Every entry of ``waves`` (oldest first) once, with the wave that lists it last and its standing verdict."""
    newest: dict[int, tuple[object, object]] = {}
    for wave in waves:  # a later wave's record of an entry wins
        for record in ledger.wave_entries(wave):
            newest[record.entry_id] = (wave, record)
    return [Standing(wave, record, event) for wave, record in newest.values()
            if (event := output.standing(record)) is not None]


def entry_label(item: Standing) -> str:
    """``PORTQ-3#12``: an entry by the wave that lists it last and its position there."""
    return f"{item.wave.name}#{item.record.position}"


def earlier_standing(ledger, wave) -> list[Standing]:
    """What the upstream's complete waves before ``wave`` list and ``wave`` does not, as it stands."""
    earlier = [w for w in complete_waves(ledger, wave.upstream) if w.id < wave.id]
    listed = {record.entry_id for record in ledger.wave_entries(wave)}
    return [item for item in standing_entries(ledger, earlier) if item.record.entry_id not in listed]

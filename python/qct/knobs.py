"""A kernel's schedule space (docs/kernel-abi.md, "Schedule knobs"): the product of its knobs'
legal values, less the schedules that break one of its rules (metadata `schedule.rules`, each
`{"if": {"NAME": value}, "then": {"NAME": [values]}}`: a schedule with NAME = value must give the
other knob one of those values). Plain Python on the metadata: no GPU, no runtime."""

from __future__ import annotations

import itertools
from typing import Any, Iterator, Mapping


def broken_rule(meta: Mapping[str, Any], schedule: Mapping[str, int]) -> str | None:
    """The first rule `schedule` breaks, in words, or None."""
    for rule in meta["schedule"].get("rules", []):
        ((if_name, if_value),) = rule["if"].items()
        ((then_name, then_values),) = rule["then"].items()
        if schedule.get(if_name) == if_value and schedule.get(then_name) not in then_values:
            return (f"{if_name}={if_value} needs {then_name} in {then_values} "
                    f"(got {schedule.get(then_name)})")
    return None


def default_schedule(meta: Mapping[str, Any]) -> dict[str, int]:
    """Each knob at its default value (the metadata's `default`)."""
    return {k["name"]: int(k["default"]) for k in meta["schedule"]["knobs"]}


def legal_schedules(meta: Mapping[str, Any]) -> Iterator[tuple[tuple[str, int], ...]]:
    """Every legal schedule of a kernel, as (name, value) pairs in the knobs' order."""
    knobs = meta["schedule"]["knobs"]
    for values in itertools.product(*(k["values"] for k in knobs)):
        schedule = tuple((k["name"], v) for k, v in zip(knobs, values))
        if broken_rule(meta, dict(schedule)) is None:
            yield schedule

"""`echo` (returns its inputs) and `sleep` (waits, reporting progress and writing a line
to its log at each step): for clients and tests."""

from __future__ import annotations

import time
from typing import Any

from process_api.processes.definition import Context, Process
from process_api.processes.sections import RESOURCES


def echo(inputs: dict[str, Any], context: Context) -> dict[str, Any]:
    return {"message": inputs.get("message"), "object": inputs.get("object")}


def sleep(inputs: dict[str, Any], context: Context) -> dict[str, Any]:
    seconds = float(inputs["seconds"])
    steps = max(1, min(100, int(seconds * 4)))
    for step in range(steps):
        time.sleep(seconds / steps)
        done = (step + 1) / steps
        context.progress(int(100 * done), f"slept {seconds * done:.2f}s")
        print(f"slept {seconds * done:.2f}s of {seconds:g}s", flush=True)
    return {"slept": seconds}


ECHO = Process(
    id="echo", version="1.0.0", title="Echo",
    description="Returns its inputs: a string and an object.",
    inputs={"type": "object", "additionalProperties": False,
            "properties": {"message": {"type": "string"}, "object": {"type": "object"},
                           "resources": RESOURCES}},
    outputs={"type": "object", "properties": {"message": {"type": ["string", "null"]},
                                              "object": {"type": ["object", "null"]}}},
    entry="process_api.processes.basic:echo", sync=True,
)

SLEEP = Process(
    id="sleep", version="1.0.0", title="Sleep",
    description="Sleeps the given number of seconds, reporting progress.",
    inputs={"type": "object", "additionalProperties": False, "required": ["seconds"],
            "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 3600},
                           "resources": RESOURCES}},
    outputs={"type": "object", "properties": {"slept": {"type": "number"}}},
    entry="process_api.processes.basic:sleep",
)

"""`qct env`: every environment variable qct reads, with type, default, meaning and value.

The runtime's variables come from its own table through the C ABI (declared once, in
runtime/lib/Env.cpp); the Python package's from qct.env.VARIABLES.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from qct import env


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("env", help="list the environment variables qct reads",
                       description="Every environment variable of the runtime library and the "
                       "Python package: name, type, default, current value and meaning.")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run)


def _runtime_variables() -> tuple[list[dict[str, object]], str]:
    """The runtime's table, or an empty list and why (library not built)."""
    from qct import _ffi

    try:
        lib = _ffi.lib()
    except _ffi.LibraryNotFound as e:
        return [], str(e)
    rows = []
    for i in range(lib.qct_env_count()):
        v = lib.qct_env_at(i).contents
        name = _ffi.text(v.name)
        rows.append({"name": name, "type": _ffi.text(v.type), "default": _ffi.text(v.default_value),
                     "doc": _ffi.text(v.doc), "affects_output": bool(v.affects_output),
                     "value": os.environ.get(name, ""), "owner": "runtime"})
    return rows, ""


def run(args: argparse.Namespace) -> int:
    rows, missing = _runtime_variables()
    for v in env.VARIABLES:
        rows.append({"name": v.name, "type": v.type, "default": v.default, "doc": v.doc,
                     "affects_output": False, "value": os.environ.get(v.name, ""),
                     "owner": "python"})
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            value = r["value"] if r["value"] else "(unset)"
            key = "  [in the cache key]" if r["affects_output"] else ""
            print(f"{r['name']}  ({r['type']}, {r['owner']}){key}")
            print(f"    default: {r['default'] or '(empty)'}")
            print(f"    value:   {value}")
            print(f"    {r['doc']}")
    if missing:
        print(f"qct env: the runtime's variables are not listed: {missing}", file=sys.stderr)
    return 0

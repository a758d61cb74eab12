"""`qct env`: the NVRTC and CUDA driver the runtime loaded (which file, and which source of its
search order had it), then every environment variable qct reads, with type, default, meaning and
value.

The runtime's variables come from its own table through the C ABI (declared once, in
runtime/lib/Env.cpp); the Python package's from qct.env.VARIABLES; the toolchain from
qct_toolchain_info_json (qct.toolchain).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from qct import env

# Not 0: a script that runs `qct env` to see whether qct is usable must learn that it is not.
EXIT_NO_RUNTIME = 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("env", help="show the NVRTC and driver loaded and the variables qct reads",
                       description="The NVRTC and CUDA driver the runtime loaded (path, version, "
                       "which source of the search order found it, what it passed over), then "
                       "every environment variable of the runtime library and the Python package: "
                       "name, type, default, current value and meaning. Exit 0; exit "
                       f"{EXIT_NO_RUNTIME} when the runtime library is not found (the Python "
                       "package's variables are still printed; stderr says what is missing).")
    p.add_argument("--json", action="store_true",
                   help='print JSON instead of text: {"toolchain": ..., "variables": [...]}')
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


def _toolchain() -> dict[str, Any] | None:
    """qct_toolchain_info_json, or None where the runtime library is not there."""
    from qct import _ffi, toolchain

    try:
        return toolchain.info()
    except _ffi.LibraryNotFound:
        return None


def _launch_extension() -> dict[str, Any]:
    """The compiled launch path for torch tensors (python/ext/qct_launch.c): where it is looked
    for and whether it is there."""
    from qct import _fastlaunch

    path = _fastlaunch.extension_path()
    return {"path": path, "built": os.path.isfile(path)}


def _print_toolchain(info: dict[str, Any]) -> None:
    nvrtc, driver = info["nvrtc"], info["driver"]
    if nvrtc["loaded"]:
        print(f"NVRTC   {nvrtc['version']}  {nvrtc['path']}")
        print(f"        found by: {nvrtc['found_by']}")
        print(f"        builtins: {nvrtc['builtins'] or '(left to NVRTC to find)'}")
        if nvrtc["tried"]:
            print(f"        passed over: {', '.join(nvrtc['tried'])}")
    else:
        print(f"NVRTC   {nvrtc['error']}")  # one line that names every source tried
    if driver["loaded"]:
        print(f"driver  {driver['version'] or '?'}  {driver['path']}")
        print(f"        found by: {driver['found_by']}")
        if not driver["usable"]:
            print(f"        not usable: {driver['error']}")
    else:
        print(f"driver  {driver['error']}")
    print()


def run(args: argparse.Namespace) -> int:
    from qct import toolchain

    rows, missing = _runtime_variables()
    for v in env.VARIABLES:
        rows.append({"name": v.name, "type": v.type, "default": v.default, "doc": v.doc,
                     "affects_output": False, "value": os.environ.get(v.name, ""),
                     "owner": "python"})
    info = _toolchain() if not missing else None
    launch = _launch_extension() if not missing else None
    if args.json:
        print(json.dumps({"toolchain": info, "launch_extension": launch, "variables": rows},
                         indent=2))
    else:
        if info is not None:
            _print_toolchain(info)
        if launch is not None:
            print(f"launch  {launch['path']}" if launch["built"] else
                  f"launch  not built ({launch['path']} is missing): torch tensors take the "
                  "ctypes path; build with Python's headers installed")
            print()
        for r in rows:
            value = r["value"] if r["value"] else "(unset)"
            if r["name"] == toolchain.WHEEL_ENV and toolchain.exported:
                value += f"  (set by qct: the installed {toolchain.WHEEL} wheel)"
            key = "  [in the cache key]" if r["affects_output"] else ""
            print(f"{r['name']}  ({r['type']}, {r['owner']}){key}")
            print(f"    default: {r['default'] or '(empty)'}")
            print(f"    value:   {value}")
            print(f"    {r['doc']}")
    if missing:
        print(f"qct env: the runtime's variables and toolchain are not listed: {missing}",
              file=sys.stderr)
        return EXIT_NO_RUNTIME
    return 0

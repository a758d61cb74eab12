"""`qct cache info|list|clear`: the runtime's on-disk kernel cache (through its C ABI)."""

from __future__ import annotations

import argparse
import json
import time

from qct.cli import QctError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cache", help="inspect or clear the runtime's kernel cache",
                       description="The JIT cache of NVRTC-compiled kernels: QCT_CACHE_DIR/v1/<key>.qct "
                       "(see docs/runtime.md). `info` summarizes, `list` shows entries (least "
                       "recently used first), `clear` removes every entry.")
    p.add_argument("action", choices=("info", "list", "clear"))
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run)


def _lib():  # type: ignore[no-untyped-def]
    from qct import _ffi

    return _ffi


def _json_or_raise(raw: bytes | None) -> object:
    ffi = _lib()
    if raw is None:
        raise QctError(ffi.text(ffi.lib().qct_last_error()))
    return json.loads(raw.decode())


def run(args: argparse.Namespace) -> int:
    ffi = _lib()
    lib = ffi.lib()
    if args.action == "info":
        info = _json_or_raise(lib.qct_cache_info_json())
        if args.json:
            print(json.dumps(info, indent=2))
        else:
            assert isinstance(info, dict)
            print(f"folder     {info['dir']}")
            print(f"entries    {info['entries']}")
            print(f"size       {info['bytes']} bytes (bound {info['max_bytes']}, QCT_CACHE_MAX_BYTES)")
            print(f"enabled    {'yes' if info['enabled'] else 'no (QCT_CACHE_DISABLE)'}")
            print(f"writable   {'yes' if info['writable'] else 'no: kernels compile uncached'}")
        return 0
    if args.action == "list":
        entries = _json_or_raise(lib.qct_cache_list_json())
        assert isinstance(entries, list)
        if args.json:
            print(json.dumps(entries, indent=2))
            return 0
        if not entries:
            print("(empty)")
        for e in entries:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e["last_used"]))
            state = "" if e["valid"] else "  INVALID (recompiled on next use)"
            print(f"{e['key'][:16]}  {e['name'] or '?':<44} {e['arch'] or '?':<8} "
                  f"{e['bytes']:>9} B  last used {when}{state}")
        return 0
    import ctypes

    removed = ctypes.c_uint64()
    status = lib.qct_cache_clear(ctypes.byref(removed))
    if status != ffi.OK:
        raise QctError(ffi.text(lib.qct_last_error()))
    print(f"removed {removed.value} entries from {ffi.text(lib.qct_cache_dir())}")
    return 0

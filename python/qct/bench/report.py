"""The benchmark's outputs beside its JSON: a markdown table (docs/perf/bench.md) and a plot
(docs/perf/bench.png; skipped with a message where matplotlib is missing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

HEADLINE = (32768, 7168)  # the shape of the peers and of docs/performance.md's tables
KIND_ORDER = {"qct": 0, "qct-ragged": 1, "qct-chain": 2, "torch-eager": 3, "torch-compile": 4}


def _fmt(value: Any, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def markdown(doc: dict[str, Any]) -> str:
    copy = doc.get("copy_gbps")
    lines = [
        "# qct bench results",
        "",
        f"Written by `qct bench` on {doc.get('date', '?')}: {doc.get('gpu', '?')}, torch "
        f"{doc.get('torch', '?')}, commit `{doc.get('commit', '?')}`"
        + (f", device library `{doc['device_headers'][:12]}`" if doc.get("device_headers") else "")
        + ".",
        "",
        f"Copy bandwidth (1 GiB device-to-device, read + write, median): **{_fmt(copy, 0)} GB/s**. "
        "Bytes are the floor (docs/performance.md): each input byte read once, each output byte "
        "written once, scales included; ragged outputs count the columns the groups own, not the "
        "capacity. `floor µs` is those bytes at the copy bandwidth.",
        "",
        "| kind | kernel | M | K | G | µs | GB/s | % copy | floor µs | schedule | notes |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    rows = sorted(doc.get("rows", []), key=lambda r: (KIND_ORDER.get(r["kind"], 9), r["kernel"],
                                                      r["K"], r["M"], r["groups"]))
    for r in rows:
        floor_us = r["floor_bytes"] / (copy * 1e3) if copy and r["floor_bytes"] else None
        notes = [n for n in (r.get("verified"), r.get("note")) if n]
        extra = r.get("extra", {})
        if "fused_speedup" in extra:
            notes.insert(0, f"fused {extra['fused_speedup']:.2f}× faster")
        if "qct_speedup" in extra:
            notes.insert(0, f"qct {extra['qct_speedup']:.1f}× faster")
        if "vs_dense" in extra:
            notes.insert(0, f"{extra['vs_dense']:.2f}× dense GB/s")
        if "compile_s" in extra:
            notes.append(f"compile {extra['compile_s']} s")
        if extra.get("schedule_origin") == "tuned, stale":
            notes.append("tuned schedule stale: timed on other device code")
        if r.get("host_us") and r.get("median_us") and r["host_us"] > r["median_us"]:
            notes.append(f"launch-bound: host {r['host_us']:.0f} µs/launch")
        sched = ",".join(f"{k.removeprefix('QCT_')}={v}" for k, v in r.get("schedule", {}).items())
        lines.append(
            f"| {r['kind']} | {r['kernel']} | {r['M']} | {r['K']} | {r['groups'] or ''} | "
            f"{_fmt(r.get('median_us'))} | {_fmt(r.get('gbps'), 0)} | {_fmt(r.get('pct_copy'))} | "
            f"{_fmt(floor_us)} | {sched} | {'; '.join(notes).replace('|', '/')} |")
    kernels = doc.get("kernels", {})
    if kernels:
        lines += ["", "## Per kernel: ptxas and SASS", "",
                  "| kernel | registers | spills (B) | local (B) | LDG.128 | other LDG | STG.128 | "
                  "other STG |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name, info in sorted(kernels.items()):
            st, sa = info.get("stats", {}), info.get("sass", {})
            if "skipped" in sa or not sa:
                g = ["—"] * 4
            else:
                g = [str(sa["ldg_128"]), str(sum(v for k, v in sa["LDG"].items() if k != "128")),
                     str(sa["stg_128"]), str(sum(v for k, v in sa["STG"].items() if k != "128"))]
            # ptxas' log gives the spills of a kernel compiled in this run; one loaded from the
            # disk cache has only its cubin (-1 here). Spills live in the stack frame, so a
            # frame of 0 bytes (the local column) means none; else they are unknown.
            spill_values = [st.get("spill_store_bytes", -1), st.get("spill_load_bytes", -1)]
            if st and min(spill_values) >= 0:
                spills: int | str = sum(spill_values)
            elif st and st.get("local_memory_bytes") == 0:
                spills = "0 (no frame)"
            else:
                spills = "?"
            lines.append(f"| {name} | {st.get('registers', '—')} | {spills} | "
                         f"{st.get('local_memory_bytes', '—')} | " + " | ".join(g) + " |")
        skipped = {info.get("sass", {}).get("skipped") for info in kernels.values()} - {None}
        if skipped:
            lines.append(f"\nSASS counts skipped: {'; '.join(sorted(skipped))}.")
    return "\n".join(lines) + "\n"


def plot(doc: dict[str, Any], path: Path) -> str:
    """Writes the plot; returns a message saying what was done."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "plot skipped: matplotlib is not installed (pip install matplotlib)"
    rows = [r for r in doc.get("rows", []) if r.get("pct_copy") is not None]
    if not rows:
        return "plot skipped: no timed rows"
    headline = [r for r in rows if (r["M"], r["K"]) == HEADLINE and not r["groups"]]
    fig, (left, right) = plt.subplots(1, 2, figsize=(15, 6))
    colors = {"qct": "tab:blue", "qct-chain": "tab:purple", "torch-eager": "tab:gray",
              "torch-compile": "tab:orange", "qct-ragged": "tab:green"}
    headline.sort(key=lambda r: (r["kernel"], KIND_ORDER.get(r["kind"], 9)))
    labels = [f"{r['kernel']} [{r['kind']}]" for r in headline]
    left.barh(range(len(headline)), [r["pct_copy"] for r in headline],
              color=[colors.get(r["kind"], "black") for r in headline])
    left.set_yticks(range(len(headline)), labels, fontsize=7)
    left.invert_yaxis()
    left.axvline(100, color="black", linewidth=0.8)
    left.set_xlabel("% of copy bandwidth (floor bytes / time)")
    left.set_title(f"M={HEADLINE[0]}, K={HEADLINE[1]}")
    k_max = max(r["K"] for r in rows)
    dense = [r for r in rows if r["kind"] == "qct" and r["K"] == k_max]
    for name in sorted({r["kernel"] for r in dense}):
        series = sorted((r["M"], r["pct_copy"]) for r in dense if r["kernel"] == name)
        right.plot([m for m, _ in series], [p for _, p in series], marker="o", label=name)
    right.set_xscale("log", base=2)
    right.set_xlabel(f"M (tokens), K={k_max}")
    right.set_ylabel("% of copy bandwidth")
    right.set_title("qct kernels by M")
    if dense:
        right.legend(fontsize=7)
    right.grid(True, alpha=0.3)
    fig.suptitle(f"qct bench: {doc.get('gpu', '?')}, copy {doc.get('copy_gbps', 0):.0f} GB/s")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"plot written to {path}"


def write_all(doc: dict[str, Any], out_dir: Path, with_plot: bool = True) -> list[str]:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "bench.md").write_text(markdown(doc))
    messages = [f"table written to {out_dir / 'bench.md'}"]
    if with_plot:
        messages.append(plot(doc, out_dir / "bench.png"))
    return messages

"""The committed benchmark: every GPU figure in the README and the notebooks' result tables comes from here.

    python -m helpers.bench matmul           # the matmul ladder against NumPy (and cuBLAS if torch is there)
    python -m helpers.bench inference        # 10,000-image forward pass: upload, kernels, readback
    python -m helpers.bench train            # one MNIST epoch of 784-128-10 at batch 128
    python -m helpers.bench fused            # the fused trainers against PyTorch and JAX
    python -m helpers.bench products         # the step's two products: the ladder against cuBLAS
    python -m helpers.bench all --out notebooks/results/bench-mine.json   # then: python -m helpers.report on it

Each benchmark lives in its own module (helpers/bench/<name>.py) with `run(ctx, quick) -> list of row dicts`
and prints its own table. This file makes the context, runs them, and writes one JSON file that records
the device, driver and date beside the rows. QUICK=1 (or --quick) shrinks sizes for a software renderer
(full sizes there take a long time: many minutes for `all`).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import platform
from pathlib import Path

from .. import gl, mode

BENCHES = ("matmul", "inference", "train", "fused", "products")
RESULTS = Path(__file__).resolve().parents[2] / "notebooks" / "results"


def device_record(ctx) -> dict:
    return {"renderer": ctx.info["GL_RENDERER"], "gl_version": ctx.info["GL_VERSION"],
            "describe": gl.describe(ctx), "software": gl.is_software(ctx), "host": platform.node(),
            "date": datetime.date.today().isoformat()}


def software_note(ctx, quick: bool) -> str:
    """A line to print before a full-size run on a software renderer (it then runs for many minutes
    printing nothing), suggesting QUICK=1; '' otherwise."""
    if quick or not gl.is_software(ctx):
        return ""
    return ("full sizes on a software renderer (no GPU): this takes many minutes, and the figures say little "
            "about a GPU. For small sizes, stop it (Ctrl-C) and run it again with QUICK=1 in front (or --quick).")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", nargs="+", choices=BENCHES + ("all",))
    parser.add_argument("--quick", action="store_true", help="small sizes (default: QUICK environment variable)")
    parser.add_argument("--out", type=Path, help="JSON file to write (default: print only)")
    args = parser.parse_args(argv)
    quick = args.quick or mode.is_quick()
    ctx = gl.create_context()
    record = {"device": device_record(ctx), "quick": quick, "benches": {}}
    print(f"device: {record['device']['describe']}   ({'QUICK' if quick else 'full'} sizes)", flush=True)
    note = software_note(ctx, quick)
    if note:
        print(note, flush=True)
    names = BENCHES if "all" in args.which else args.which
    for name in names:
        module = importlib.import_module(f"helpers.bench.{name}")
        print(f"\n== {name}")
        record["benches"][name] = module.run(ctx, quick)
    from .limits import limit_rows, table   # how far from the limits, each measured in this run
    if limit_rows(record):
        print("\n" + table(record))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=1, default=float) + "\n")
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

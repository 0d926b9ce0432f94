"""Full or quick mode. Introduced in notebook 01.

Set QUICK=1 in the environment to shrink every notebook (a few thousand images, one epoch), as the test command does.
Full mode is the default. Every notebook prints the mode it ran in.
"""

from __future__ import annotations

import os


def is_quick() -> bool:
    return os.environ.get("QUICK", "").strip().lower() not in ("", "0", "false", "no")


def pick(full, quick):
    """`full` in full mode, `quick` when QUICK=1."""
    return quick if is_quick() else full


def banner() -> str:
    return "QUICK mode (QUICK=1): small sizes, numbers not representative" if is_quick() else "FULL mode"

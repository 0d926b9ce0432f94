"""compare(): one printed line per tensor, OK or MISMATCH, and a bool. Introduced in notebook 01.

The error measure is relative to the reference's largest magnitude,
    rel = max|got - ref| / max|ref|,
which stays meaningful for entries near zero (an element-wise relative error would not). A NaN or a
shape mismatch is always a MISMATCH, so an output element a shader never wrote (poisoned with NaN) fails.
"""

from __future__ import annotations

import numpy as np


def rel_error(got, ref) -> float:
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape or not np.all(np.isfinite(got)):
        return float("inf")
    scale = np.max(np.abs(ref)) if ref.size else 0.0
    diff = np.max(np.abs(got - ref)) if ref.size else 0.0
    return float(diff / scale) if scale > 0 else float(diff)


def compare(name: str, got, ref, rtol: float = 1e-5, verbose: bool = True) -> bool:
    """Print `name | max abs diff | rel error | OK` (or MISMATCH) and return whether rel error <= rtol.

    verbose=False prints only `name: OK`, a line that never changes between runs (for checked cells).
    """
    got, ref = np.asarray(got), np.asarray(ref)
    if got.shape != ref.shape:
        print(f"{name:<12s} | shape {got.shape} != reference {ref.shape} | MISMATCH")
        return False
    rel = rel_error(got, ref)
    ok = rel <= rtol
    if verbose:
        n_nan = int(np.sum(~np.isfinite(got)))
        diff = np.max(np.abs(got.astype(np.float64) - ref)) if got.size else 0.0
        extra = f" | {n_nan} non-finite" if n_nan else ""
        print(f"{name:<12s} | max abs diff {diff:.3e} | rel error {rel:.2e}{extra} | {'OK' if ok else 'MISMATCH'}")
    else:
        print(f"{name}: {'OK' if ok else 'MISMATCH'}")
    return ok

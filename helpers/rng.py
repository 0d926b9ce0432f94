"""Counter-based random numbers for dropout: the NumPy twin of the hash in glsl/fused_*_2_dropout.comp.
Introduced in notebook 06.

A stateful generator (NumPy's default_rng, which runs PCG64; or a small generator kept by each GPU thread)
hands out numbers in sequence: to know the millionth number you must draw the 999,999 before it, and
thousands of GPU threads would each need their own state, stored and carried from step to step. A counter-based generator is a pure
function: random = hash(key, counter). Here the key is the run's seed and the counters are the step
(since training began), the layer (0 inputs, 1 hidden units), the sample's row in the batch and the
unit. Any thread computes the number it needs from its own indices, in any order, as often as it likes
(the backward pass recomputes the forward pass's input mask instead of storing it), and NumPy computes
the very same bits, so a GPU step can be checked against a NumPy step with the same masks.

The hash: MurmurHash3's 32-bit finaliser `mix32` (Austin Appleby, public domain), a bijection of uint32
in which every input bit flips each output bit with probability close to 1/2. The counters are absorbed
one at a time, h = mix32(h ^ (counter + GOLDEN)), starting from h = 0: each absorption is a bijection of
the counter for a fixed h, so two units of one sample never share a number, and adding the golden-ratio
constant keeps an all-zero input from mapping to zero. The top 24 bits of the result, times 2^-24, are a
float32 in [0, 1) with no rounding; a unit is kept when that uniform is below the keep probability, and
a kept unit is scaled by 1/keep (inverted dropout), so nothing changes at test time.

uint32 arithmetic is done in uint64 and masked to 32 bits (a product of two uint32 fits in uint64).
"""

from __future__ import annotations

import numpy as np

MASK32 = np.uint64(0xFFFFFFFF)
GOLDEN = 0x9E3779B9  # 2^32 / golden ratio, odd
INPUT, HIDDEN = 0, 1  # the layer counter: input pixels, hidden units


def mix32(x) -> np.ndarray:
    """MurmurHash3's fmix32 on uint32 values (any integer array; returned as uint64 holding uint32)."""
    x = np.asarray(x, dtype=np.uint64) & MASK32
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x85EBCA6B)) & MASK32
    x ^= x >> np.uint64(13)
    x = (x * np.uint64(0xC2B2AE35)) & MASK32
    x ^= x >> np.uint64(16)
    return x


def absorb(h, counter) -> np.ndarray:
    """mix32(h ^ (counter + GOLDEN)): one more counter mixed into the running hash h (broadcasts)."""
    counter = (np.asarray(counter, dtype=np.uint64) + np.uint64(GOLDEN)) & MASK32
    return mix32((np.asarray(h, dtype=np.uint64) & MASK32) ^ counter)


def sample_key(seed: int, step: int, layer: int, samples) -> np.ndarray:
    """The hash of (seed, step, layer, sample) for each sample row: computed once per sample, then one
    absorb per unit (what the shaders keep in shared memory)."""
    h = absorb(0, seed)
    h = absorb(h, step)
    h = absorb(h, layer)
    return absorb(h, np.asarray(samples))


def random_bits(seed: int, step: int, layer: int, samples, units) -> np.ndarray:
    """uint32 (len(samples), len(units)): hash(seed, step, layer, sample, unit) for every pair."""
    key = sample_key(seed, step, layer, np.asarray(samples).reshape(-1))
    return absorb(key[:, None], np.asarray(units).reshape(-1)[None, :]).astype(np.uint32)


def uniform(bits) -> np.ndarray:
    """float32 in [0, 1): the top 24 bits of each uint32 times 2^-24 (exact in float32, as in the shaders)."""
    return (np.asarray(bits, dtype=np.uint32) >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)


def dropout_mask(seed: int, step: int, rows: int, n_units: int, keep: float, layer: int) -> np.ndarray:
    """float32 (rows, n_units): 1/keep where a unit is kept (uniform < keep), 0 where dropped, for batch rows
    0..rows-1 of training step `step`; all ones when keep >= 1. The mask the shaders apply."""
    if keep >= 1:
        return np.ones((rows, n_units), np.float32)
    if not 0 < keep:
        raise ValueError(f"keep probability must be in (0, 1], got {keep}")
    keep32 = np.float32(keep)
    kept = uniform(random_bits(seed, step, layer, np.arange(rows), np.arange(n_units))) < keep32
    return np.where(kept, np.float32(1) / keep32, np.float32(0)).astype(np.float32)

"""Benchmark: the 10,000-image test-set forward pass (784-128-10) on the GPU, phase by phase.

    python -m helpers.bench inference        # QUICK=1: 256 images

Random images and He-initialised weights (the timings do not depend on the values; notebook 03 uses
the trained ones). Both layers run through glsl/dense_3_tiled.comp (matmul rung 5 with bias and ReLU in
its epilogue); the uint8 path reads packed pixels through glsl/dense_4_u8.comp. Uploads and readbacks:
wall clock around the call and ctx.finish(); kernels: helpers.timing.Clock (GPU timer queries on a real
GPU). Each row: the median with its 20th and 80th percentiles (seconds, seconds_low, seconds_high,
repeats); things compared (the upload ways, the kernels, the readbacks, the end-to-end passes) are timed
interleaved after one warm-up by time per group (helpers.timing.measure_interleaved). The limit for an upload is the host-to-device ceiling, measured in the same
run as a PyTorch copy of the same bytes from pinned (page-locked) host memory to the GPU (where torch with
CUDA is installed).

The float32 upload is timed several ways (rows "upload float32 ..."), all into a buffer the kernels read
and the CPU never maps (helpers/gpu_array.py says why): one glBufferSubData (buffer.write, what
BatchedForward.upload does), the same in 4 MB pieces, after orphaning the buffer (buffer.orphan: fresh
storage, no wait for the old contents), and through a staging buffer (write it, then a GPU-side copy,
ctx.copy_buffer) made static or dynamic (a usage hint the driver may use to put it in host memory), or
kept mapped by the CPU for its whole life (glBufferStorage, persistent mapping: MappedStaging below), where
the last row copies images that already sit there, as the torch ceiling copies from pinned memory. One more
row fills that mapped buffer with several CPU threads in pieces, the GPU copying each piece while the threads
fill the next (MappedStaging.write_pipelined).
"""

from __future__ import annotations

import ctypes
import os
from concurrent.futures import ThreadPoolExecutor, as_completed
from decimal import Decimal
from time import perf_counter

import numpy as np

from .. import check, data, gl, reference, timing
from ..forward import Forward
from ..inference import BatchedForward

CEILING = "host-to-device ceiling: torch copy from pinned memory"
PAGEABLE = "host-to-device: torch copy from the NumPy array"
CHUNK_BYTES = 4 << 20    # the pieces of the chunked and the pipelined uploads
COPY_THREADS = min(4, os.cpu_count() or 1)   # threads that fill the mapped buffer (write_pipelined): on the
                                             # H100's host, more threads and smaller pieces were slower
KEPT = "GPU copy from a mapped buffer already holding the images"   # the mapped buffer as pinned memory
COPY_ALONE = f"CPU copy alone: NumPy into the mapped buffer, {COPY_THREADS} threads (no GPU work)"


def torch_copy_seconds(X: np.ndarray, repeat: int, pinned: bool = True):
    """A timing.Timing of copying X's bytes host -> GPU with PyTorch (wall clock), synchronised before and
    after; from a pinned (page-locked) host tensor, or from X itself (pageable). None without torch+CUDA."""
    try:
        import torch
    except Exception:
        return None
    if not torch.cuda.is_available():
        return None
    source = torch.from_numpy(np.ascontiguousarray(X).reshape(-1).view(np.uint8))
    if pinned:
        source = source.pin_memory()
    target = torch.empty(source.shape, dtype=torch.uint8, device="cuda")

    def once():
        torch.cuda.synchronize()
        start = perf_counter()
        target.copy_(source, non_blocking=pinned)
        torch.cuda.synchronize()
        return perf_counter() - start
    return timing.measure(once, repeat, warmup=SHORT_WARMUP)


# Ways to put float32 images into the existing input buffer `buffer` (never mapped by the CPU).
def upload_write(ctx, buffer, X, stage=None):
    buffer.write(X)                                     # one glBufferSubData: BatchedForward.upload


def upload_chunked(ctx, buffer, X, stage=None):
    data = memoryview(np.ascontiguousarray(X)).cast("B")
    for start in range(0, len(data), CHUNK_BYTES):      # the driver may send one piece while copying the next
        buffer.write(data[start:start + CHUNK_BYTES], offset=start)


def upload_orphaned(ctx, buffer, X, stage=None):
    buffer.orphan()                                     # new storage: nothing to wait for, nothing kept
    buffer.write(X)


def upload_staged(ctx, buffer, X, stage):
    stage.write(X)                                      # the CPU writes only the staging buffer ...
    ctx.copy_buffer(buffer, stage, size=X.nbytes)       # ... the GPU copies it into place


def upload_mapped(ctx, buffer, X, stage):
    np.copyto(stage.array[:X.nbytes], np.ascontiguousarray(X).reshape(-1).view(np.uint8))   # CPU copy
    stage.copy_to(buffer, X.nbytes)                                                        # GPU copy


def upload_mapped_pipelined(ctx, buffer, X, stage):
    stage.write_pipelined(X, buffer, CHUNK_BYTES)   # threads fill pieces; the GPU copies each one as it is ready


def copy_mapped(ctx, buffer, X, stage):
    stage.copy_to(buffer, X.nbytes)     # the images already sit in the mapped buffer (put there by the row above)


UPLOADS = {   # row name: (function, staging buffer: None, "static", "dynamic" or "mapped")
    "upload float32 into existing buffer": (upload_write, None),
    "upload float32 into existing buffer, 4 MB writes": (upload_chunked, None),
    "upload float32 into existing buffer, orphaned first": (upload_orphaned, None),
    "upload float32 via a staging buffer + GPU copy": (upload_staged, "static"),
    "upload float32 via a dynamic staging buffer + GPU copy": (upload_staged, "dynamic"),
    "upload float32 via a persistently mapped buffer + GPU copy": (upload_mapped, "mapped"),
    f"upload float32 via a persistently mapped buffer, {COPY_THREADS} threads, pipelined + GPU copy":
        (upload_mapped_pipelined, "mapped"),
    KEPT: (copy_mapped, "mapped"),
}


# --- a persistently mapped staging buffer: ModernGL does not make one, so a few GL calls through ctypes ---

_COPY_READ, _COPY_WRITE = 0x8F36, 0x8F37
_MAP_WRITE, _MAP_PERSISTENT, _MAP_COHERENT, _CLIENT_STORAGE = 0x2, 0x40, 0x80, 0x200


class MappedStaging:
    """A staging buffer the CPU keeps mapped for its whole life (glBufferStorage with MAP_PERSISTENT |
    MAP_COHERENT): `array` is a NumPy view of it, and copy_to(buffer) has the GPU copy it into a kernel
    buffer, which stays unmapped. Like torch's pinned host memory: data written once into `array` can be
    sent again with no CPU copy. `pool` holds the CPU threads write_pipelined uses, made once with the buffer
    so that no timed upload pays for starting threads."""

    def __init__(self, ctx, nbytes: int, threads: int = COPY_THREADS):
        u, sz = ctypes.c_uint, ctypes.c_ssize_t
        self.ctx, self.nbytes = ctx, int(nbytes)
        self._bind = gl.function(ctx, "glBindBuffer", None, u, u)
        self._copy = gl.function(ctx, "glCopyBufferSubData", None, u, u, sz, sz, sz)
        self._delete = gl.function(ctx, "glDeleteBuffers", None, ctypes.c_int, ctypes.POINTER(u))
        self._flush = gl.function(ctx, "glFlush", None)
        name = u(0)
        gl.function(ctx, "glGenBuffers", None, ctypes.c_int, ctypes.POINTER(u))(1, ctypes.byref(name))
        self.name = name
        flags = _MAP_WRITE | _MAP_PERSISTENT | _MAP_COHERENT
        self._bind(_COPY_WRITE, name.value)
        gl.function(ctx, "glBufferStorage", None, u, sz, ctypes.c_void_p, u)(_COPY_WRITE, self.nbytes, None,
                                                                             flags | _CLIENT_STORAGE)
        address = gl.function(ctx, "glMapBufferRange", ctypes.c_void_p, u, sz, sz, u)(_COPY_WRITE, 0, self.nbytes,
                                                                                       flags)
        self._bind(_COPY_WRITE, 0)
        if not address:
            raise OSError("glMapBufferRange returned NULL")
        self.array = np.ctypeslib.as_array((ctypes.c_ubyte * self.nbytes).from_address(address))
        self.pool = ThreadPoolExecutor(threads)

    def copy_to(self, buffer, nbytes: int, offset: int = 0) -> None:
        """The GPU copies bytes [offset, offset + nbytes) into the same bytes of `buffer` (a moderngl.Buffer)."""
        self._bind(_COPY_READ, self.name.value)
        self._bind(_COPY_WRITE, buffer.glo)
        self._copy(_COPY_READ, _COPY_WRITE, int(offset), int(offset), int(nbytes))
        self._bind(_COPY_READ, 0)
        self._bind(_COPY_WRITE, 0)

    def write_pipelined(self, array: np.ndarray, buffer, chunk: int = CHUNK_BYTES) -> None:
        """Put `array`'s bytes at the start of `buffer` through the mapped memory, `chunk` bytes at a time.

        Filling the mapped memory with one CPU thread (upload_mapped) is what bounds that upload, and the GPU
        waits until it is all there. Here the pool's threads share the CPU copy (NumPy lets go of Python's
        GIL while it copies a large array), and the GPU copies each piece as soon as it is in place, while the
        threads fill the next. GL calls stay on this thread, the one the context is current on. The mapping
        is coherent: a GL command issued after a write sees it. Returns after ctx.finish(), once the GPU has
        read every piece: the mapped memory is free to be written again. How much the two overlap is what
        the row measures: on the H100 it stayed well short of the pinned-copy ceiling (that card's committed run)."""
        source = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        for piece in as_completed(self._fill(source, chunk)):     # in the order the threads finish them
            start, end = piece.result()
            self.copy_to(buffer, end - start, offset=start)
            self._flush()                           # send the copy to the GPU now, not when the driver's queue fills
        self.ctx.finish()

    def fill(self, array: np.ndarray, chunk: int = CHUNK_BYTES) -> None:
        """write_pipelined's CPU copy alone: `array`'s bytes into the start of the mapped memory by the pool's
        threads, `chunk` bytes a piece, and no GPU work. The pipelined upload cannot be faster than this."""
        source = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        for piece in self._fill(source, chunk):
            piece.result()

    def _fill(self, source: np.ndarray, chunk: int) -> list:
        """Futures, one per `chunk`-byte piece of `source` being copied into the mapped memory by the pool;
        each returns its (start, end)."""
        if source.nbytes > self.nbytes:
            raise ValueError(f"{source.nbytes} bytes do not fit in a {self.nbytes}-byte staging buffer")

        def fill(start: int, end: int):
            np.copyto(self.array[start:end], source[start:end])
            return start, end
        return [self.pool.submit(fill, start, min(start + chunk, source.nbytes))
                for start in range(0, source.nbytes, chunk)]

    def release(self) -> None:
        self.pool.shutdown()
        self.array = None
        self._bind(_COPY_WRITE, self.name.value)
        gl.function(self.ctx, "glUnmapBuffer", ctypes.c_ubyte, ctypes.c_uint)(_COPY_WRITE)
        self._bind(_COPY_WRITE, 0)
        self._delete(1, ctypes.byref(self.name))


SHORT_WARMUP = 0.1   # seconds: the warm-up of a single timing that follows a group's full one


def _wall(fn):
    """A sample() that times one call of fn() by perf_counter, no synchronisation added."""
    return lambda: timing.wall_seconds(fn)


def run(ctx, quick: bool) -> list[dict]:
    n, repeat = (256, 3) if quick else (10_000, 20)
    rng = np.random.default_rng(0)
    params = reference.init_params(seed=0)
    images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    rows = measure(ctx, params, images, repeat)
    print(table(rows))
    return rows


def measure(ctx, params: dict, images: np.ndarray, repeat: int = 20) -> list[dict]:
    """Every phase of the forward pass over `images` (uint8 (n, 28, 28)), validated first; row dicts."""
    n = len(images)
    X, packed = data.normalise(images), data.pack_images(images)
    clock = timing.Clock(ctx)
    fwd = BatchedForward(ctx, params, n)
    fwd8 = BatchedForward(ctx, params, n, packed=True)

    print(f"{n} images, 784-{fwd.H}-{fwd.N}; validate first:")
    ref = reference.forward(params, X)[0]
    ok = check.compare("float32 in", fwd.logits(X), ref) & check.compare("uint8 in", fwd8.logits(packed), ref)
    same = int((fwd.predict(X) == ref.argmax(axis=1)).sum())
    print(f"predictions equal to NumPy's: {same} of {n}")
    if not ok:
        raise RuntimeError("the GPU forward pass does not match NumPy: fix it before timing it")

    rows = []

    def add(what, took, source, nbytes=None):
        row = {"what": what, **took.row("seconds", 1.0), "clock": source, "images": n}
        if nbytes:
            row["bytes"], row["gbps"] = nbytes, nbytes / took.median / 1e9
        rows.append(row)

    wall = timing.WALL_FINISH
    stages = {kind: ctx.buffer(reserve=X.nbytes, dynamic=kind == "dynamic") for kind in ("static", "dynamic")}
    try:
        stages["mapped"] = MappedStaging(ctx, X.nbytes)
    except Exception as exc:     # no EGL/GLX loader found, or no GL 4.4 buffer storage
        print(f"(no persistently mapped buffer here: {exc})")

    def fresh_buffer():
        holder = []
        seconds = clock.wall(lambda: holder.append(ctx.buffer(X)))
        holder[0].release()
        return seconds

    uploads, missing = {}, []
    for what, (upload, stage) in UPLOADS.items():
        if stage is not None and stage not in stages:
            missing.append(what)
            continue
        fwd.X.buffer.write(np.zeros_like(X))
        upload(ctx, fwd.X.buffer, X, stages.get(stage))
        if not np.array_equal(fwd.X.read()[:n], X):          # every way must deliver the same bytes
            raise RuntimeError(f"{what}: the buffer does not hold the images afterwards")
        uploads[what] = (lambda up, st: lambda: clock.wall(lambda: up(ctx, fwd.X.buffer, X, stages.get(st))))(upload, stage)
    uploads["upload uint8-packed into existing buffer"] = lambda: clock.wall(lambda: fwd8.upload(packed))
    uploads["upload float32 into a fresh buffer"] = fresh_buffer
    took = timing.measure_interleaved(uploads, repeat)       # every way in turn: drift falls on all alike
    for what in UPLOADS:
        if what in missing:
            rows.append({"what": what, "seconds": None, "clock": "not available here", "images": n})
        else:
            add(what, took[what], wall, X.nbytes)
        if what == "upload float32 into existing buffer":
            add("upload uint8-packed into existing buffer", took["upload uint8-packed into existing buffer"],
                wall, packed.nbytes)
    if "mapped" in stages:     # what bounds the pipelined upload: its CPU copy, timed with no GPU work at all
        stages["mapped"].array[:X.nbytes] = 0
        stages["mapped"].fill(X)
        if not np.array_equal(stages["mapped"].array[:X.nbytes], np.ascontiguousarray(X).reshape(-1).view(np.uint8)):
            raise RuntimeError(f"{COPY_ALONE}: the mapped buffer does not hold the images afterwards")
        add(COPY_ALONE, timing.measure(_wall(lambda: stages["mapped"].fill(X)), repeat, warmup=SHORT_WARMUP),
            "wall clock", X.nbytes)
    for stage in stages.values():
        stage.release()
    for what, pinned in ((CEILING, True), (PAGEABLE, False)):
        copy = torch_copy_seconds(X, repeat, pinned)
        if copy is None:
            rows.append({"what": what, "seconds": None, "clock": "torch with CUDA not installed", "images": n})
        else:
            add(what, copy, "wall clock around torch.cuda.synchronize()", X.nbytes)
    add("upload float32 into a fresh buffer", took["upload float32 into a fresh buffer"], wall, X.nbytes)
    add("pack_images on the CPU (once per data set)",
        timing.measure(_wall(lambda: data.pack_images(images)), repeat, warmup=SHORT_WARMUP), "wall clock")

    fwd.upload(X), fwd8.upload(packed)
    slow = Forward(ctx, params, max_batch=n)   # notebook 02's one-thread-per-output layer, for scale
    slow.upload(X)
    kernels = timing.measure_interleaved({       # warm-up by time first: an idle GPU starts at low clocks
        "kernels, float32 input (2 dispatches)": lambda: clock.kernel(lambda: fwd.dispatch(n)),
        "kernels, uint8 input (2 dispatches)": lambda: clock.kernel(lambda: fwd8.dispatch(n)),
        "kernels, dense_1_naive (notebook 02)": lambda: clock.kernel(lambda: slow.dispatch(n))},
        repeat, clock=clock.source)
    for what, t in kernels.items():
        add(what, t, clock.source)
    slow.release()

    ctx.finish()
    size = n * fwd.N * 4
    reads = timing.measure_interleaved({"readback into a new array": _wall(lambda: fwd.read_new(n)),
                                        "readback into a preallocated array": _wall(lambda: fwd.read(n))},
                                       repeat, warmup=SHORT_WARMUP)
    for what, t in reads.items():
        add(what, t, "wall clock", size)
    ends = timing.measure_interleaved({
        "end to end, float32: upload+kernels+readback+argmax": _wall(lambda: fwd.predict(X)),
        "end to end, uint8: upload+kernels+readback+argmax": _wall(lambda: fwd8.predict(packed)),
        "NumPy forward + argmax on the CPU": _wall(lambda: reference.forward(params, X)[0].argmax(axis=1))},
        repeat, warmup=SHORT_WARMUP)
    for what, t in ends.items():
        add(what, t, "wall clock")
    fwd.release(), fwd8.release()
    return rows


def timing_of(rows: list[dict], what: str) -> timing.Timing | None:
    """The Timing of one row (by its name) rebuilt from its median and band (seconds); None if it has no time."""
    row = next((r for r in rows if r["what"] == what), None)
    return None if row is None or row.get("seconds") is None else timing.Timing.from_row(row, "seconds", 1.0)


# Section 4's fresh-against-reused pairs: (key, reused row, fresh row, the reused way, the fresh way, what a
# reused way saves). measure() takes each pair in one timing.measure_interleaved group: in turn.
REUSE_PAIRS = (
    ("upload", "upload float32 into existing buffer", "upload float32 into a fresh buffer",
     "writing the float32 images into the existing buffer", "making a fresh buffer of them", "the buffer"),
    ("readback", "readback into a preallocated array", "readback into a new array",
     "reading the logits into the preallocated array", "reading them into a new array", "the array"),
)
NOT_JUDGED = "not judged: no band"   # reuse_verdicts' outcome for rows stored without their 20–80 % band


def reuse_verdicts(rows: list[dict]) -> dict:
    """Fresh against reused buffers, from measure()'s rows: {key: timing.Verdict} for each of REUSE_PAIRS whose
    two rows have a time. Each pair was taken in turn (one measure_interleaved group), so the sentence says so,
    with the images and the clock; then timing.versus from the rows' medians and bands (Timing.from_row,
    timing.MARGIN): the reused way faster ("reusing <it> pays here"), the fresh one faster, or the same (in
    timing.the_same's words: "reusing <it> neither costs nor saves here"), with compare()'s outcome. Where
    either row stores no band, both medians and that the_same cannot be judged, outcome NOT_JUDGED."""
    get = {r["what"]: r for r in rows if r.get("seconds") is not None}
    said = {}
    for key, reused, fresh, reused_name, fresh_name, it in REUSE_PAIRS:
        if reused not in get or fresh not in get:
            continue
        images = get[reused].get("images")
        head = (f"{'for ' + format(images, ',') + ' images, ' if images else ''}taken in turn by "
                f"{get[reused]['clock']}, ")
        if not all("seconds_low" in get[w] and "seconds_high" in get[w] for w in (reused, fresh)):
            a, b = (timing.Timing((get[w]["seconds"],)) for w in (reused, fresh))     # the medians alone
            said[key] = timing.Verdict(
                f"{head}{reused_name} took {a.text()} and {fresh_name} {b.text()}: with no 20–80 % band stored, "
                "whether the two differ beyond the noise cannot be judged", NOT_JUDGED)
            continue
        v = timing.versus(timing_of(rows, reused), timing_of(rows, fresh), reused_name, fresh_name)
        why = {timing.A_FASTER: f"reusing {it} pays here", timing.B_FASTER: "the fresh one is faster here",
               timing.SAME: f"reusing {it} neither costs nor saves here"}[v.outcome]
        said[key] = timing.Verdict(f"{head}{v}: {why}", v.outcome)
    return said


def fastest_upload(rows: list[dict]) -> dict | None:
    """The float32 upload from the NumPy array of highest median rate (rows "upload float32 into existing ..."
    and "upload float32 via ..."): the one set against the pinned-copy ceiling, a bare maximum of the medians,
    not judged (table() names it by that rule; other_uploads judges the ways with timing.lowest). None if no
    such row has a time."""
    uploads = [r for r in rows if r["what"].startswith(("upload float32 into existing", "upload float32 via"))
               and r["seconds"] is not None]
    return max(uploads, key=lambda r: r["gbps"], default=None)


MAIN = ("upload float32 into a fresh buffer", "upload float32 into existing buffer",
        "upload float32 via a staging buffer + GPU copy", "upload uint8-packed into existing buffer", CEILING,
        "kernels, float32 input (2 dispatches)", "kernels, uint8 input (2 dispatches)", "readback into a new array",
        "readback into a preallocated array", "end to end, float32: upload+kernels+readback+argmax",
        "end to end, uint8: upload+kernels+readback+argmax", "NumPy forward + argmax on the CPU")   # notebook 03's rows


def main_rows(rows: list[dict]) -> list[dict]:
    """The rows notebook 03 tabulates (MAIN, in the measured order); the other upload ways are other_uploads."""
    return [r for r in rows if r["what"] in MAIN]


def other_uploads(rows: list[dict]) -> str | None:
    """One sentence on the float32 upload ways beyond buffer.write and the plain staging buffer: each one's GB/s
    and the pinned-copy ceiling's, to two decimals as table() prints them, each with its 20–80 % band
    (gbps_text), and the share of the ceiling as of_ceiling gives it. The fastest is named alone, with its
    share, only where timing.lowest finds it faster than every other float32 upload from the array beyond the
    noise and the margin; ways it calls the same are named with it, as level, and then the range of their
    shares is given, lowest to highest ('they reach 25% to 27% of it'; 'each reaches 27% of it' where the
    shares print the same), never one of them as the quickest. None if the run has none of them."""
    get = {r["what"]: r for r in rows if r.get("seconds")}
    others = [r for r in rows if r["what"].startswith("upload float32") and r["what"] not in MAIN and r.get("seconds")]
    if not others:
        return None
    direct = get["upload float32 into existing buffer"]
    ways = "; ".join(f"{r['what'].removeprefix('upload float32 ')} {gbps_text(r)}" for r in others)
    text = (f"The other float32 uploads reached, in GB/s (median and 20–80 % band): {ways}; against buffer.write's "
            f"{gbps_text(direct)}")
    if CEILING in get:
        ceiling = gbps_text(get[CEILING])
        ways = {r["what"]: timing_of(rows, r["what"]) for r in rows if r.get("seconds")
                and r["what"].startswith(("upload float32 into existing", "upload float32 via"))}
        quickest, tied = timing.lowest(ways)           # the same images' bytes: the lowest time is the highest GB/s
        level = [what.removeprefix("upload float32 ") for what in ways if what == quickest or what in tied]
        text += f" and a copy from pinned memory's {ceiling}, the limit: "
        if not tied:
            share = of_ceiling(get[quickest], get[CEILING])   # the table's share, from the figures as printed
            text += (f"the fastest, {level[0]}, ahead of the others beyond the noise and the "
                     f"{100 * timing.MARGIN:g} % margin, reaches {share} of it")
        else:
            text += (f"the fastest ways are level ({'; '.join(level)}: the same within the noise or the "
                     f"{100 * timing.MARGIN:g} % margin), and {shares_range([get[w] for w in (quickest, *tied)], get[CEILING])}")
    return text + "."


def shares_range(rows: list[dict], ceiling_row: dict) -> str:
    """The range of several rows' shares of the ceiling (of_ceiling, as table() prints them), lowest to highest,
    after 'and': 'they reach 25% to 27% of it', or 'each reaches 27% of it' where every share prints the same."""
    shares = sorted({of_ceiling(r, ceiling_row) for r in rows}, key=lambda share: Decimal(share.rstrip("%")))
    if len(shares) == 1:
        return f"each reaches {shares[0]} of it"
    return f"they reach {shares[0]} to {shares[-1]} of it"


def gbps_text(row: dict) -> str:
    """A row's GB/s as other_uploads prints it: '12.86 (12.41–13.37)', the median to two decimals as table()
    prints it and the 20–80 % band of the rate, from the row's seconds_high (the band's low GB/s: a longer time
    is a lower rate) and seconds_low; up to two more decimals where the band's ends would otherwise print the
    same. A row stored with no band says so, as Timing.text() does."""
    if "seconds_low" not in row or "seconds_high" not in row or row["seconds_low"] == row["seconds_high"]:
        return f"{row['gbps']:.2f} (no spread recorded)"
    low = row["gbps"] * row["seconds"] / row["seconds_high"]    # the same bytes in the band's longer time
    high = row["gbps"] * row["seconds"] / row["seconds_low"]
    for decimals in (2, 3, 4):
        if f"{low:.{decimals}f}" != f"{high:.{decimals}f}":
            break
    return f"{row['gbps']:.{decimals}f} ({low:.{decimals}f}–{high:.{decimals}f})"


def of_ceiling(row: dict, ceiling_row: dict) -> str:
    """A row's GB/s as a share of the ceiling's, in whole percent, from the two figures as table() prints them
    (two decimals), half up: the share a reader gets by dividing the printed GB/s."""
    shown = Decimal(f"{row['gbps']:.2f}") / Decimal(f"{ceiling_row['gbps']:.2f}")
    return f"{timing.times(100 * shown, 0)}%"


def table(rows: list[dict], full: bool = True) -> str:
    """The rows as text: ms (median and 20–80 % band, where the row has one), GB/s and, for the uploads, their
    share of the pinned-copy ceiling (host to device); full=False: no lines after the
    ceiling's note (the float32 upload of highest median rate, the mapped buffer's and the CPU copy's shares of
    the ceiling)."""
    get = {r["what"]: r for r in rows}
    ceiling = get.get(CEILING, {}).get("seconds")       # older runs have none
    width = max([60] + [len(r["what"]) for r in rows])      # the widest row name sets the first column
    lines = [f"{'phase':<{width}s} {'ms (20–80 %)':>30s} {'GB/s':>7s} {'ceiling':>8s}  clock"]
    for r in rows:
        if r["seconds"] is None:
            lines.append(f"{r['what']:<{width}s} {'':>30s} {'':>7s} {'':>8s}  {r['clock']}")
            continue
        gbps = f"{r['gbps']:7.2f}" if "gbps" in r else f"{'':>7s}"
        upward = "gbps" in r and not r["what"].startswith("readback")      # the ceiling is host-to-device
        share = f"{of_ceiling(r, get[CEILING]):>8s}" if ceiling and upward else f"{'':>8s}"
        took = timing.Timing.from_row(r, "seconds", 1.0)    # no band stored: the median alone
        ms = took.text("ms") if "seconds_low" in r else f"{r['seconds'] * 1e3:.3f}"
        lines.append(f"{r['what']:<{width}s} {ms:>30s} {gbps} {share}  {r['clock']}")
    best = fastest_upload(rows)
    if ceiling:
        lines.append(f"(ceiling: each upload's GB/s as a share of the {CEILING}, {get[CEILING]['gbps']:.2f} GB/s, "
                     "the float32 images' bytes, the same run; a readback goes the other way and gets no share)")
    if not full or best is None:
        return "\n".join(lines)
    lines.append(f"float32 upload of highest median rate: {best['what']}, {best['gbps']:.2f} GB/s"
                 + (f", {of_ceiling(best, get[CEILING])} of the ceiling" if ceiling else ""))
    kept, copy = get.get(KEPT, {}), get.get(COPY_ALONE, {})
    if ceiling and kept.get("seconds"):
        lines.append(f"images kept in mapped memory (no CPU copy): {of_ceiling(kept, get[CEILING])} of the ceiling")
    if ceiling and copy.get("seconds"):
        lines.append(f"the pipelined upload's CPU copy alone reaches {of_ceiling(copy, get[CEILING])} of the "
                     "ceiling, before any GPU work: no overlap takes that upload past it")
    return "\n".join(lines)


def phases(rows: list[dict]) -> dict:
    """The rows as {variant: {phase: seconds}} for plots.stacked_bars."""
    get = {r["what"]: r["seconds"] for r in rows}
    return {
        "float32, fresh buffer, new array": {"upload": get["upload float32 into a fresh buffer"],
                                             "kernel": get["kernels, float32 input (2 dispatches)"],
                                             "readback": get["readback into a new array"]},
        "float32, buffers reused": {"upload": get["upload float32 into existing buffer"],
                                    "kernel": get["kernels, float32 input (2 dispatches)"],
                                    "readback": get["readback into a preallocated array"]},
        "uint8 packed, buffers reused": {"upload": get["upload uint8-packed into existing buffer"],
                                         "kernel": get["kernels, uint8 input (2 dispatches)"],
                                         "readback": get["readback into a preallocated array"]},
        "NumPy (CPU)": {"numpy": get["NumPy forward + argmax on the CPU"]},
    }

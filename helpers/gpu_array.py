"""GPU arrays: a storage buffer (or a range of one) that remembers its NumPy shape and dtype, and the one
staging buffer through which the CPU reads and writes them. Introduced in notebook 02; helpers.gl
re-exports everything here (gl.upload, gl.empty, gl.GPUArray), so notebooks use it as part of gl.

    A = gl.upload(ctx, a, "A")                 # a new buffer holding a float32 / uint32 / int32 array
    C = gl.empty(ctx, (M, N), name="C")        # NaN-filled, so an element no kernel wrote shows
    c = C.read()                               # through the staging buffer: a new, writable array
    later = C.read_later(first, count)         # the copy queued, nothing waits; later.result() reads it
"""

from __future__ import annotations

import numpy as np

_ALLOWED_DTYPES = (np.float32, np.uint32, np.int32)


def _extra(ctx) -> dict:
    """ctx.extra as a dict, made one if it is not (where the staging buffer and BoundBuffers are kept)."""
    if not isinstance(getattr(ctx, "extra", None), dict):
        ctx.extra = {}
    return ctx.extra


def staging_buffer(ctx, nbytes: int, which: str = "staging"):
    """One of the context's two staging buffers, at least `nbytes` long: the only buffers the CPU reads or
    writes. which="staging" is the one GPUArray.read and write go through; "read later" is GPUArray.read_later's.

    ModernGL reads a buffer by mapping it into the CPU's address space. After a few such reads the NVIDIA
    driver may move that buffer to memory the CPU reaches easily and the GPU slowly, and every later
    kernel on it runs several times slower (the appendix measures it; notebook 03 states the rule). So
    GPUArray.read and write copy through this buffer on the GPU (ctx.copy_buffer), and the buffers the
    kernels use are never mapped.
    """
    extra = _extra(ctx)
    stage = extra.get(which)
    if stage is None or stage.size < nbytes:
        if stage is not None:
            stage.release()
        stage = extra[which] = ctx.buffer(reserve=max(int(nbytes), 1 << 16))
    return stage


class BoundBuffers:
    """What helpers bound to each storage-buffer binding point of a context ({binding: GPUArray or
    moderngl.Buffer}) and a version that grows with every change, so gl.Kernel.run re-checks a kernel's
    buffers only when one changed. A buffer bound with moderngl's own bind_to_storage_buffer is not seen."""

    __slots__ = ("arrays", "version")

    def __init__(self):
        self.arrays, self.version = {}, 0

    def record(self, binding: int, array) -> None:
        if self.arrays.get(binding) is not array:
            self.arrays[binding] = array
            self.version += 1


def bound_buffers(ctx) -> BoundBuffers:
    """The context's BoundBuffers (made on first use, kept in ctx.extra)."""
    extra = _extra(ctx)
    if "bound" not in extra:
        extra["bound"] = BoundBuffers()
    return extra["bound"]


class GPUArray:
    """A storage buffer (or a range of one: `view`) with a NumPy shape and dtype (float32, uint32 or
    int32), row-major. The CPU reads and writes it only through the context's staging buffer."""

    def __init__(self, ctx, shape, dtype=np.float32, name: str = "array", data=None, *, buffer=None,
                 offset: int = 0):
        self.ctx, self.name = ctx, name
        self.shape = tuple(int(s) for s in np.atleast_1d(shape)) if shape != () else ()
        self.dtype = np.dtype(dtype)
        if self.dtype.type not in _ALLOWED_DTYPES:
            raise TypeError(f"GPUArray {name!r}: dtype {self.dtype.name} is not one a shader reads; "
                            "use float32, uint32 or int32 (convert with .astype(np.float32))")
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.nbytes = self.size * self.dtype.itemsize
        if self.nbytes == 0:
            raise ValueError(f"GPUArray {name!r}: shape {self.shape} has no elements")
        self.offset = int(offset)  # in bytes, where this array starts in `buffer`
        self._bound = bound_buffers(ctx)   # what is bound where: bind_to records itself there
        if buffer is not None:
            self.buffer = buffer
        elif data is not None:
            self.buffer = ctx.buffer(self._checked(data).tobytes())
        else:
            self.buffer = ctx.buffer(reserve=self.nbytes)

    def __repr__(self):
        at = f", offset={self.offset}" if self.offset else ""
        return f"GPUArray({self.name!r}, shape={self.shape}, dtype={self.dtype.name}{at})"

    def view(self, first: int, shape, name: str) -> "GPUArray":
        """Elements [first, first + prod(shape)) of this array as an array of its own (same buffer, no
        copy), e.g. W1 inside a flat parameter buffer. Bound alone, it must start on a multiple of the
        driver's GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT (256 bytes covers common drivers)."""
        view = GPUArray(self.ctx, shape, self.dtype, name, buffer=self.buffer,
                        offset=self.offset + int(first) * self.dtype.itemsize)
        if view.offset + view.nbytes > self.offset + self.nbytes:
            raise ValueError(f"view {name!r} of {view.size} elements at {first} overruns {self.name!r} "
                             f"({self.size} elements)")
        return view

    def bind_to(self, binding: int) -> None:
        """Bind this array (its range of the buffer) to a storage-buffer binding point."""
        self.buffer.bind_to_storage_buffer(binding, offset=self.offset, size=self.nbytes)
        if self._bound.arrays.get(binding) is not self:
            self._bound.record(binding, self)

    def _checked(self, array) -> np.ndarray:
        array = np.asarray(array)
        if array.dtype != self.dtype or array.shape != self.shape:
            hint = f" Convert with .astype(np.{self.dtype.name})." if array.dtype != self.dtype else ""
            raise ValueError(f"GPUArray {self.name!r} holds {self.dtype.name} {self.shape}; "
                             f"got {array.dtype.name} {array.shape}.{hint}")
        return np.ascontiguousarray(array)

    def write(self, array, first: int = 0) -> None:
        """Upload `array` into the existing buffer: the same shape and dtype, or a 1-D array written as a
        flat run of elements starting at element `first` (e.g. the first rows of a batch buffer). It goes to
        the staging buffer, then the GPU copies it into place (ordered after every earlier GPU command)."""
        if first or np.ndim(array) == 1 and np.shape(array) != self.shape:
            array = np.ascontiguousarray(array, dtype=self.dtype).reshape(-1)
            if first < 0 or first + array.size > self.size:
                raise ValueError(f"GPUArray {self.name!r} holds {self.size} elements; cannot write "
                                 f"{array.size} at {first}")
        else:
            array = self._checked(array)
        if array.size == 0:
            return
        stage = staging_buffer(self.ctx, array.nbytes)
        self.ctx.memory_barrier()  # shaders done with the stage's last contents and with this buffer
        stage.write(array)
        self.ctx.copy_buffer(self.buffer, stage, size=array.nbytes,
                             write_offset=self.offset + int(first) * self.dtype.itemsize)

    def read(self, out: np.ndarray | None = None, first: int = 0, count: int | None = None) -> np.ndarray:
        """Read back through the staging buffer: the whole array (a new array, or into `out`, same shape
        and dtype, with no allocation), or with first/count a flat run of `count` elements."""
        if first or count is not None:
            count = self.size - first if count is None else int(count)
            if first < 0 or count < 0 or first + count > self.size:
                raise ValueError(f"GPUArray {self.name!r} holds {self.size} elements; cannot read "
                                 f"{count} at {first}")
            out = np.empty(count, dtype=self.dtype) if out is None else out
        elif out is None:
            out = np.empty(self.shape, dtype=self.dtype)
        else:
            self._checked(out)
        if out.nbytes:
            stage = staging_buffer(self.ctx, out.nbytes)
            self.ctx.memory_barrier()  # shader writes -> the copy
            self.ctx.copy_buffer(stage, self.buffer, size=out.nbytes,
                                 read_offset=self.offset + int(first) * self.dtype.itemsize)
            stage.read_into(out, size=out.nbytes)
        return out

    def read_later(self, first: int = 0, count: int | None = None) -> "PendingRead":
        """Queue the copy of `count` elements from `first` (default: the rest of the array) into the second
        staging buffer and return at once; .result() reads them (one such read in flight at a time). The
        copy comes after every GPU command queued before it, and only those: commands queued after
        read_later keep the GPU busy while the CPU waits in result(). read() queues its copy and waits at
        once, so the GPU has nothing left to do from the end of that copy until the CPU queues more
        (mlp.Trainer.run_epoch reads the losses this way)."""
        count = self.size - first if count is None else int(count)
        if first < 0 or count < 1 or first + count > self.size:
            raise ValueError(f"GPUArray {self.name!r} holds {self.size} elements; cannot read {count} at {first}")
        return PendingRead(self, first, count)

    def fill(self, value) -> None:
        """Set every element to `value` (NaN poisons a float output before a dispatch)."""
        self.write(np.full(self.shape, value, dtype=self.dtype))

    def release(self) -> None:
        if self.offset == 0:  # a view does not own its buffer
            self.buffer.release()


class PendingRead:
    """GPUArray.read_later's copy: elements of an array on their way to the context's second staging buffer
    ("read later": no kernel uses it), read by result() once. A later read_later reuses that buffer, so
    take result() first."""

    def __init__(self, array: GPUArray, first: int, count: int):
        self.ctx, self.dtype, self.nbytes = array.ctx, array.dtype, count * array.dtype.itemsize
        self.stage = staging_buffer(self.ctx, self.nbytes, "read later")
        _extra(self.ctx)["read later by"] = self
        self.ctx.memory_barrier()  # shader writes -> the copy
        self.ctx.copy_buffer(self.stage, array.buffer, size=self.nbytes,
                             read_offset=array.offset + first * array.dtype.itemsize)

    def result(self) -> np.ndarray:
        """The elements, as a new array; waits for the copy (and the commands queued before it) if need be."""
        if _extra(self.ctx).get("read later by") is not self:
            raise RuntimeError("this read's elements are gone: it was taken already, or another read_later "
                               "reused the buffer since. Take result() before queueing the next read_later.")
        _extra(self.ctx)["read later by"] = None
        return np.frombuffer(self.stage.read(size=self.nbytes), dtype=self.dtype).copy()


def upload(ctx, array, name: str = "array") -> GPUArray:
    """A new GPUArray holding `array`, which must already be float32, uint32 or int32."""
    array = np.asarray(array)
    return GPUArray(ctx, array.shape, array.dtype, name=name, data=array)


def empty(ctx, shape, dtype=np.float32, name: str = "array", fill=np.nan) -> GPUArray:
    """A new GPUArray filled with `fill`: NaN by default, which integer dtypes get as their maximum
    (e.g. 0xFFFFFFFF for uint32); None leaves it uninitialised."""
    array = GPUArray(ctx, shape, dtype, name=name)
    if fill is not None:
        array.fill(fill if np.dtype(dtype).kind == "f" or not (isinstance(fill, float) and np.isnan(fill))
                   else np.iinfo(np.dtype(dtype)).max)
    return array

"""MNIST: the four original files, fetched and checksummed by tensorflow-datasets' download manager.

Introduced in notebook 01. No TensorFlow is needed: we take the URLs and sha256 checksums that
tensorflow-datasets registers for its `mnist` builder, let its DownloadManager fetch and verify the
four .gz files, and parse the IDX format ourselves.

Where the files come from, in order:
  1. `MNIST_DIR`, if set: a folder holding the four original .gz files (offline use). Nothing is
     downloaded; each file is checked against the registered size and sha256.
  2. otherwise tensorflow-datasets' cache, `$TFDS_DATA_DIR/downloads` (default
     ~/tensorflow_datasets/downloads), downloading once if needed. The download server is tried first
     with one short connection, so an offline machine gets the error (and the fix) in seconds, not after
     the download manager's ten retries with back-off; a failed download leaves nothing in the cache.

    (X_train, y_train), (X_test, y_test) = load_mnist()   # uint8 (N, 28, 28), uint8 (N,)
    X = normalise(X_train)                                # float32 (N, 784) in [0, 1]
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import os
import shutil
import socket
import urllib.parse
import urllib.request
import zlib
from pathlib import Path

import numpy as np

FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
COUNTS = {"train": 60_000, "test": 10_000}
PROBE_TIMEOUT_S = 5.0   # seconds the one connection to the download server may take before we call it offline


class DatasetError(RuntimeError):
    """A dataset file is missing, truncated or corrupt."""


def registered_files() -> dict[str, tuple[str, int, str]]:
    """{filename: (url, size in bytes, sha256)} as tensorflow-datasets registers them for `mnist`."""
    from tensorflow_datasets.image_classification import mnist

    return {info.filename: (url, int(info.size), info.checksum) for url, info in mnist.MNIST.url_infos.items()}


def cache_dir() -> Path:
    """Where tensorflow-datasets keeps downloads: $TFDS_DATA_DIR/downloads or ~/tensorflow_datasets/downloads."""
    root = os.environ.get("TFDS_DATA_DIR") or os.path.join("~", "tensorflow_datasets")
    return Path(root).expanduser() / "downloads"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _cut_short(path: Path) -> bool:
    """True if `path` is the start of a gzip stream that ends early (a download or copy cut off): it
    decompresses without error up to its last byte, and the stream's end marker never comes. A complete
    gzip file, or one that is not gzip at all, is not cut short: it is another file."""
    stream = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                stream.decompress(chunk)
                if stream.eof:
                    return False
    except zlib.error:
        return False
    return not stream.eof


def problem(path: Path, size: int, sha256: str) -> str | None:
    """None if `path` exists with the registered size and sha256; otherwise one line naming the problem:
    missing; truncated (shorter than registered, and the start of a gzip stream cut off); corrupt (right
    size, wrong checksum); or not the expected file (another size, and not a cut-off copy of it), with the
    expected and found size and checksum."""
    if not path.is_file():
        return f"MNIST file missing: {path}"
    actual = path.stat().st_size
    if actual == size:
        return None if _sha256(path) == sha256 else (
            f"MNIST file corrupt: {path} has the right size but not sha256 {sha256}")
    if actual < size and _cut_short(path):
        return f"MNIST file truncated: {path} has {actual} bytes, expected {size}"
    return (f"MNIST file {path.name} is not the expected file: {path} has {actual} bytes and sha256 "
            f"{_sha256(path)[:16]}..., the registered {path.name} has {size} bytes and sha256 {sha256[:16]}...")


def _fix(folder: Path, names, source: str) -> str:
    it = "them" if len(names) > 1 else "it"
    other = (f"unset MNIST_DIR to download {it}" if source == "MNIST_DIR"
             else f"call load_mnist() without offline_dir (and MNIST_DIR unset) to download {it}")
    files = ", ".join(names)
    return (f"Put a good copy of {files} (from the MNIST page, or the tensorflow-datasets mirror) in "
            f"{folder}, or {other}.")


def verify_folder(folder: Path, source: str = "MNIST_DIR") -> dict[str, Path]:
    """The four files' paths in `folder`, or one DatasetError naming every file that is missing or wrong
    (problem(); all of them at once, not the first alone), and the fix. `source` says where the folder came
    from ("MNIST_DIR" or "offline_dir"), so the fix names it."""
    registry = registered_files()
    missing = [name for name in registry if not (folder / name).is_file()]
    found = {name: problem(folder / name, size, sha) for name, (_url, size, sha) in registry.items()
             if name not in missing}
    wrong = [name for name, line in found.items() if line]
    if missing or wrong:
        lines = ([f"MNIST file{'s' if len(missing) > 1 else ''} missing from {folder}: {', '.join(missing)}"]
                 if missing else [])
        raise DatasetError("\n".join(lines + [found[name] for name in wrong]) + "\n"
                           + _fix(folder, missing + wrong, source))
    return {name: folder / name for name in registry}


def fetch(offline_dir: str | os.PathLike | None = None, quiet: bool = True) -> dict[str, Path]:
    """Paths of the four verified .gz files, from `offline_dir` (or $MNIST_DIR) or tfds' cache."""
    source = "offline_dir" if offline_dir else "MNIST_DIR"
    offline_dir = offline_dir or os.environ.get("MNIST_DIR")
    if offline_dir:
        return verify_folder(Path(offline_dir).expanduser(), source)

    import tensorflow_datasets as tfds
    from tensorflow_datasets.image_classification import mnist

    registry = registered_files()
    urls = {name: url for name, (url, _s, _h) in registry.items()}
    folder = cache_dir()
    offline = _cannot_download(registry)
    if offline:
        raise DatasetError(_download_failed(offline))
    if quiet:
        tfds.disable_progress_bar()
    before = _folders(folder)
    manager = tfds.download.DownloadManager(
        download_dir=folder, url_infos=mnist.MNIST.url_infos, dataset_name="mnist",
        force_checksums_validation=True)
    try:
        downloaded = manager.download(urls)
    except Exception as exc:
        _remove_leftovers(folder, before)
        raise DatasetError(_download_failed(f"{type(exc).__name__}: {exc}")) from None
    return {name: Path(path) for name, path in downloaded.items()}


def unavailable() -> str | None:
    """None if load_mnist() can get MNIST on this machine now: the four good files in MNIST_DIR, or all four
    in tensorflow-datasets' cache, or (MNIST_DIR unset) a download server that answers. Otherwise one line:
    why not, and the fix. (The notebooks' tests skip with that line, notebooks/conftest.py.)"""
    folder = os.environ.get("MNIST_DIR")
    if folder:
        try:
            verify_folder(Path(folder).expanduser())
        except DatasetError as exc:
            *found, fix = str(exc).split("\n")
            return f"{'; '.join(found)}. Fix: {fix[0].lower()}{fix[1:]}"
        return None
    offline = _cannot_download(registered_files())
    if offline:
        return (f"MNIST is not in {cache_dir()} and cannot be downloaded ({offline}). Fix: set MNIST_DIR "
                "to a folder holding the four original .gz files, or connect this machine to the network.")
    return None


def _cannot_download(registry: dict) -> str | None:
    """None if tfds' cache holds all four files or every download server answers (one short connection
    each, reachable()); otherwise the first server's one-line reason."""
    if all(_is_cached(cache_dir(), sha) for _url, _size, sha in registry.values()):
        return None
    for url in sorted({url for url, _size, _sha in registry.values()}):
        offline = reachable(url)
        if offline:
            return offline
    return None


def _download_failed(problem: str) -> str:
    return (f"Could not download MNIST into {cache_dir()}: {problem}\n"
            "Fix: set MNIST_DIR to a folder holding the four original files (train-images-idx3-ubyte.gz, "
            "train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz), "
            "e.g. MNIST_DIR=~/data/mnist python3 -m helpers.quickstart lab; or connect this machine to the network.")


def reachable(url: str, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """None if one TCP connection to `url`'s server (or to the proxy that $https_proxy names) opens
    within `timeout` seconds; otherwise a one-line reason ("cannot reach host:443: ...")."""
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        via = urllib.parse.urlsplit(proxy if "://" in proxy else "http://" + proxy)
        host, port = via.hostname, via.port or 80
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:   # socket.gaierror (no DNS), refused, unreachable, timeout
        reason = exc.strerror or str(exc) or type(exc).__name__
        return f"cannot reach {host}:{port} ({reason})" + (f" for {parts.hostname}" if host != parts.hostname else "")
    return None


def _is_cached(folder: Path, sha256: str) -> bool:
    """True if tfds' cache holds a finished download with this checksum (tfds puts the checksum,
    base64url-encoded, in the file's name, and writes a .INFO file beside it when the download is done)."""
    tag = base64.urlsafe_b64encode(bytes.fromhex(sha256)).decode().rstrip("=")
    return folder.is_dir() and any(Path(f"{p}.INFO").is_file() for p in folder.rglob(f"*{tag}*")
                                   if p.suffix != ".INFO" and ".tmp." not in str(p.relative_to(folder)))


def _folders(folder: Path) -> set[Path]:
    """`folder` and every folder below it (empty if it does not exist)."""
    return {folder, *(p for p in folder.rglob("*") if p.is_dir())} if folder.is_dir() else set()


def _remove_leftovers(folder: Path, before: set[Path]) -> None:
    """Delete the folders a failed download made in tfds' cache: its `*.tmp.*` folders with their partial
    files, and folders that were not there `before` and are now empty (the cache itself included)."""
    for new in sorted(_folders(folder) - before, key=lambda p: -len(p.parts)):   # deepest first
        if ".tmp." in new.name:
            shutil.rmtree(new, ignore_errors=True)
        elif new.is_dir() and not any(new.iterdir()):
            new.rmdir()


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Parse an IDX file (gzipped or not): magic 0x0000 + dtype byte + ndim byte, big-endian sizes, data."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as f:
            raw = f.read()
    except (OSError, EOFError, zlib.error) as exc:   # gzip.BadGzipFile is an OSError
        what = ("is missing or unreadable" if not (path.is_file() and os.access(path, os.R_OK))
                else "is not a complete gzip file" if opener is gzip.open else "cannot be read")
        raise DatasetError(f"MNIST file {path.name} {what} ({type(exc).__name__}: {exc}); it is {path}.\n"
                           f"Fix: replace it with a good copy (the four original .gz files in the folder MNIST_DIR "
                           f"names), or delete it so that it is downloaded again.") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise DatasetError(f"{path} is not an IDX file of unsigned bytes (magic {raw[:4].hex()}).")
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(shape)):
        raise DatasetError(f"{path}: header says {shape}, but it holds {data.size} values.")
    return data.reshape(shape)


def load_mnist(offline_dir: str | os.PathLike | None = None, quiet: bool = True):
    """((X_train, y_train), (X_test, y_test)): uint8 images (N, 28, 28) and uint8 labels (N,)."""
    paths = fetch(offline_dir, quiet=quiet)
    out = []
    for split in ("train", "test"):
        images_file, labels_file = FILES[split]
        images, labels = read_idx(paths[images_file]), read_idx(paths[labels_file])
        if images.shape != (COUNTS[split], 28, 28) or labels.shape != (COUNTS[split],):
            raise DatasetError(f"MNIST {split}: unexpected shapes {images.shape}, {labels.shape}")
        out.append((images, labels))
    return tuple(out)


def normalise(images: np.ndarray) -> np.ndarray:
    """uint8 (N, 28, 28) -> float32 (N, 784) in [0, 1]."""
    return (images.reshape(len(images), -1) / np.float32(255)).astype(np.float32)


def pack_images(images: np.ndarray, n_pixels: int | None = None) -> np.ndarray:
    """uint8 images (N, ...) -> uint32 (N, ceil(P / 4)): four pixels per word, 4x less to upload than float32.

    P is the pixels per image (or `n_pixels`, which must be at least that); each row is zero-padded to a
    multiple of 4 pixels. Pixel p of image i sits in word i * W + p / 4 (W = ceil(P / 4)), byte p % 4
    (little-endian), so a shader reads it as
        float(( packed[i * W + p / 4] >> (8 * (p % 4)) ) & 0xFFu) / 255.0
    Already packed uint32 (N, W) is returned unchanged, so callers can take either. MNIST's 784 pixels
    need no padding, and then packing is a reinterpretation of the same bytes (no copy if contiguous).
    """
    images = np.asarray(images)
    if images.dtype == np.uint32 and images.ndim == 2:
        return images
    if images.dtype != np.uint8:
        raise TypeError(f"pack_images takes the raw uint8 images from load_mnist (or uint32 (N, W) already "
                        f"packed), not {images.dtype.name} {images.shape}; normalise()'s float32 is for the "
                        "float path")
    flat = images.reshape(len(images), -1)
    pixels = flat.shape[1] if n_pixels is None else int(n_pixels)
    if pixels < flat.shape[1]:
        raise ValueError(f"pack_images: n_pixels={pixels} is less than the {flat.shape[1]} pixels per image")
    if pixels == flat.shape[1] and pixels % 4 == 0:
        padded = np.ascontiguousarray(flat)
    else:
        padded = np.zeros((len(flat), -(-pixels // 4) * 4), dtype=np.uint8)
        padded[:, :flat.shape[1]] = flat
    return padded.view("<u4").astype(np.uint32, copy=False)

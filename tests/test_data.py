"""The MNIST loader: registry, checksums, IDX parsing, offline folder, and clear errors for bad files."""

import gzip
import shutil

import numpy as np
import pytest

from helpers import data

SHARED_SHA = {  # ../shared/mnist/README.md
    "train-images-idx3-ubyte.gz": "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
    "t10k-labels-idx1-ubyte.gz": "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
}


def test_registry_comes_from_tensorflow_datasets():
    registry = data.registered_files()
    assert set(registry) == {f for pair in data.FILES.values() for f in pair}
    for name, sha in SHARED_SHA.items():
        assert registry[name][2] == sha
    assert registry["train-images-idx3-ubyte.gz"][1] == 9912422


def test_read_idx_parses_a_handmade_file(tmp_path):
    values = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    header = bytes([0, 0, 0x08, 3]) + b"".join(int(n).to_bytes(4, "big") for n in values.shape)
    path = tmp_path / "x-idx3-ubyte.gz"
    path.write_bytes(gzip.compress(header + values.tobytes()))
    assert np.array_equal(data.read_idx(path), values)


def test_read_idx_rejects_a_short_file(tmp_path):
    header = bytes([0, 0, 0x08, 1]) + (10).to_bytes(4, "big")
    path = tmp_path / "short-idx1-ubyte"
    path.write_bytes(header + bytes(5))
    with pytest.raises(data.DatasetError, match="header says"):
        data.read_idx(path)


def test_offline_folder_loads_all_of_mnist(mnist_dir):
    (X_train, y_train), (X_test, y_test) = data.load_mnist(mnist_dir)
    assert X_train.shape == (60000, 28, 28) and X_train.dtype == np.uint8
    assert y_train.shape == (60000,) and y_train.dtype == np.uint8
    assert X_test.shape == (10000, 28, 28) and y_test.shape == (10000,)
    assert set(np.unique(y_train)) == set(range(10))
    assert y_train[:5].tolist() == [5, 0, 4, 1, 9]   # the well-known first training labels
    X = data.normalise(X_test[:3])
    assert X.dtype == np.float32 and X.shape == (3, 784) and 0 <= X.min() and X.max() <= 1


@pytest.fixture
def copy_of_mnist(mnist_dir, tmp_path):
    for f in mnist_dir.glob("*.gz"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def test_missing_file_names_it_and_where_to_put_it(copy_of_mnist):
    (copy_of_mnist / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(data.DatasetError, match=r"missing.*t10k-labels-idx1-ubyte\.gz(.|\n)*Put a good copy") as err:
        data.load_mnist(copy_of_mnist)
    assert "without offline_dir" in str(err.value)   # the folder came from the argument, not MNIST_DIR


def test_truncated_file_is_reported(copy_of_mnist):
    path = copy_of_mnist / "train-labels-idx1-ubyte.gz"
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(data.DatasetError, match=r"truncated.*train-labels-idx1-ubyte\.gz.*1000 bytes, expected 28881"):
        data.load_mnist(copy_of_mnist)


def test_every_missing_file_is_named_at_once(copy_of_mnist):
    for name in ("t10k-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz"):
        (copy_of_mnist / name).unlink()
    with pytest.raises(data.DatasetError) as err:
        data.load_mnist(copy_of_mnist)
    first = str(err.value).splitlines()[0]
    assert first.startswith(f"MNIST files missing from {copy_of_mnist}: ") and first.count(".gz") == 2, first
    assert "t10k-labels-idx1-ubyte.gz" in first and "train-images-idx3-ubyte.gz" in first, first
    assert "to download them" in str(err.value)


def test_another_file_of_the_wrong_size_is_not_called_truncated(copy_of_mnist):
    """A complete gzip of something else, or a file that is not gzip at all: named as not the expected
    file, with both sizes and checksums; only a cut-off copy (a prefix) is "truncated"."""
    path = copy_of_mnist / "train-labels-idx1-ubyte.gz"
    others = {"another gzip": gzip.compress(bytes([0, 0, 8, 1]) + (60000).to_bytes(4, "big") + bytes(60000)),
              "not gzip": gzip.decompress(path.read_bytes()),   # the labels themselves, never compressed
              "longer": path.read_bytes() + b"extra"}
    for kind, content in others.items():
        path.write_bytes(content)
        with pytest.raises(data.DatasetError) as err:
            data.load_mnist(copy_of_mnist)
        message = str(err.value)
        assert "truncated" not in message, (kind, message)
        assert "train-labels-idx1-ubyte.gz is not the expected file" in message, (kind, message)
        assert f"has {len(content)} bytes and sha256" in message and "has 28881 bytes and sha256 " in message, message


def test_all_problems_come_in_one_message(copy_of_mnist):
    (copy_of_mnist / "t10k-labels-idx1-ubyte.gz").unlink()
    cut = copy_of_mnist / "train-labels-idx1-ubyte.gz"
    cut.write_bytes(cut.read_bytes()[:1000])
    with pytest.raises(data.DatasetError) as err:
        data.load_mnist(copy_of_mnist)
    lines = str(err.value).splitlines()
    assert lines[0].startswith("MNIST file missing from") and "t10k-labels-idx1-ubyte.gz" in lines[0]
    assert lines[1].startswith("MNIST file truncated") and lines[2].startswith("Put a good copy of"), lines


def test_corrupt_file_is_reported(copy_of_mnist):
    path = copy_of_mnist / "t10k-images-idx3-ubyte.gz"
    raw = bytearray(path.read_bytes())
    raw[5000] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(data.DatasetError, match=r"corrupt.*t10k-images-idx3-ubyte\.gz.*sha256"):
        data.load_mnist(copy_of_mnist)


def test_mnist_dir_environment_variable_is_used(copy_of_mnist, monkeypatch):
    monkeypatch.setenv("MNIST_DIR", str(copy_of_mnist))
    paths = data.fetch()
    assert all(p.parent == copy_of_mnist for p in paths.values())


def test_download_manager_path_uses_the_tfds_cache(copy_of_mnist, tmp_path, monkeypatch):
    """Without MNIST_DIR the files come through tfds' DownloadManager into $TFDS_DATA_DIR/downloads.

    We pre-seed nothing and cannot reach the network in CI, so we give the manager its manual_dir
    through the same registry and check it verifies and returns the files.
    """
    import tensorflow_datasets as tfds
    from tensorflow_datasets.image_classification import mnist

    monkeypatch.delenv("MNIST_DIR", raising=False)
    monkeypatch.setenv("TFDS_DATA_DIR", str(tmp_path / "tfds"))
    assert data.cache_dir() == tmp_path / "tfds" / "downloads"
    real = tfds.download.DownloadManager

    def with_manual_dir(**kwargs):
        assert kwargs["url_infos"] is mnist.MNIST.url_infos and kwargs["force_checksums_validation"]
        return real(manual_dir=copy_of_mnist, **kwargs)

    monkeypatch.setattr(tfds.download, "DownloadManager", with_manual_dir)
    monkeypatch.setattr(data, "reachable", lambda url: None)   # as if online: the probe is tested below
    (X_train, _), _ = data.load_mnist()
    assert X_train.shape == (60000, 28, 28)


def test_pack_images_puts_four_pixels_in_a_word():
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (3, 28, 28), dtype=np.uint8)
    packed = data.pack_images(images)
    assert packed.shape == (3, 196) and packed.dtype == np.uint32
    flat = images.reshape(3, -1)
    for i, p in [(0, 0), (1, 401), (2, 783)]:
        assert (int(packed[i, p // 4]) >> (8 * (p % 4))) & 0xFF == flat[i, p]
    assert not hasattr(data, "pack_u8"), "one packing function: pack_images"


def test_pack_images_rejects_normalised_floats():
    images = np.zeros((2, 28, 28), dtype=np.uint8)
    with pytest.raises(TypeError, match="raw uint8 images from load_mnist"):
        data.pack_images(data.normalise(images))


def test_pack_images_pads_rows_and_passes_packed_words_through():
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, size=(3, 5, 3), dtype=np.uint8)   # 15 pixels: 4 words, last one padded
    packed = data.pack_images(images)
    assert packed.shape == (3, 4) and packed.dtype == np.uint32
    flat = images.reshape(3, -1)
    for i in range(3):
        for p in range(16):
            expected = flat[i, p] if p < 15 else 0
            assert (int(packed[i, p // 4]) >> (8 * (p % 4))) & 0xFF == expected
    assert data.pack_images(packed) is packed
    assert data.pack_images(images, n_pixels=20).shape == (3, 5)
    with pytest.raises(ValueError, match="n_pixels=8 is less than the 15"):
        data.pack_images(images, n_pixels=8)
    strided = rng.integers(0, 256, size=(4, 28, 28), dtype=np.uint8)[::2]   # not contiguous
    np.testing.assert_array_equal(data.pack_images(strided), data.pack_images(strided.copy()))


# --- corrupt .gz files given straight to read_idx -------------------------------------------------

def _gz_variants(tmp_path):
    """Three broken .gz files: bad deflate data (zlib.error), cut short (EOFError), not gzip (BadGzipFile)."""
    header = bytes([0, 0, 0x08, 1]) + (4000).to_bytes(4, "big")
    good = gzip.compress(header + bytes(range(250)) * 16)
    flipped = bytearray(good)
    for i in range(20, 60):
        flipped[i] ^= 0x5A
    return {"corrupt-idx1-ubyte.gz": bytes(flipped), "cut-idx1-ubyte.gz": good[: len(good) // 2],
            "plain-idx1-ubyte.gz": header + bytes(10)}


def test_read_idx_wraps_every_gzip_error_with_the_file_and_the_fix(tmp_path):
    for name, raw in _gz_variants(tmp_path).items():
        path = tmp_path / name
        path.write_bytes(raw)
        with pytest.raises(data.DatasetError) as err:
            data.read_idx(path)
        message = str(err.value)
        assert name in message and "not a complete gzip file" in message, message
        assert "replace it with a good copy" in message and "MNIST_DIR" in message, message


# --- no network: the download fails in seconds, with the fix, and leaves nothing behind -----------

OFFLINE_RUN = """
import socket, sys, time
sys.path.insert(0, sys.argv[1])
if sys.argv[2] == "no-dns":
    def no_dns(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    socket.getaddrinfo = no_dns
from helpers import data
start = time.perf_counter()
try:
    data.load_mnist()
    print("LOADED")
except data.DatasetError as exc:
    print(f"SECONDS {time.perf_counter() - start:.2f}")
    print(exc)
"""


def _closed_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]   # nothing listens there once the socket is closed


@pytest.mark.parametrize("how", ["no-dns", "proxy-refuses"])
def test_offline_download_fails_fast_with_the_fix_and_no_leftovers(tmp_path, how):
    """No real download: name resolution is patched to fail, or the https proxy is a closed local port."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("mnist_dir", "https_proxy", "http_proxy",
                                                                     "all_proxy", "no_proxy")}
    env["TFDS_DATA_DIR"] = str(tmp_path / "tfds")
    if how == "proxy-refuses":
        env["https_proxy"] = f"http://127.0.0.1:{_closed_port()}"
        env["NO_PROXY"] = ""
    try:   # importing tensorflow-datasets takes a few seconds; the stall this guards against took 205 s
        run = subprocess.run([sys.executable, "-c", OFFLINE_RUN, str(root), how], env=env, capture_output=True,
                             text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("an offline load_mnist() was still trying after 60 s")
    assert "SECONDS" in run.stdout, run.stdout + run.stderr
    seconds = float(run.stdout.split("SECONDS ")[1].split()[0])
    assert seconds < 15, f"the offline error took {seconds} s"
    message = run.stdout
    assert "Could not download MNIST" in message and "cannot reach" in message, message
    assert "set MNIST_DIR to a folder holding the four original files" in message and "network" in message
    cache = tmp_path / "tfds" / "downloads"
    assert not cache.exists() or not any(cache.rglob("*")), f"left behind: {list(cache.rglob('*'))}"


def test_a_download_that_breaks_off_leaves_no_tmp_folders(tmp_path, monkeypatch):
    """The server answers, then the transfer fails: tfds' `.tmp.*` folders (and partial files) are removed."""
    import contextlib

    from tensorflow_datasets.core.download import downloader

    class Response:
        headers = {}

        def __init__(self, url):
            self.url = url

    @contextlib.contextmanager
    def breaks_off(url, **kwargs):
        def blocks():
            yield b"\x1f\x8b partial"
            raise ConnectionError("connection reset by peer (a test stand-in)")
        yield Response(url), blocks()

    monkeypatch.delenv("MNIST_DIR", raising=False)
    monkeypatch.setenv("TFDS_DATA_DIR", str(tmp_path / "tfds"))
    monkeypatch.setattr(data, "reachable", lambda url: None)
    monkeypatch.setattr(downloader, "_open_url", breaks_off)
    keep = tmp_path / "tfds" / "downloads" / "other_dataset"   # what was there before stays
    keep.mkdir(parents=True)
    with pytest.raises(data.DatasetError, match=r"(?s)ConnectionError.*set MNIST_DIR"):
        data.load_mnist()
    left = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "tfds").rglob("*"))
    assert left == ["tfds/downloads", "tfds/downloads/other_dataset"], left

"""Notebook 10's drawing pad: strokes to pixels (digits.rasterise), MNIST's preprocessing (digits.mnist_like)
against MNIST itself, fused_predict_2_softmax against NumPy's float64 softmax on awkward inputs with its
outputs poisoned by NaN, and the pad's logic (helpers.pad) driven without a browser."""

import numpy as np
import pytest

from helpers import data, digits, reference, timing
from helpers import pad as pads


def numpy_probabilities(params, images):
    """float64 softmax of the forward pass of uint8 images (N, 784)."""
    p64 = {k: np.asarray(v, np.float64) for k, v in params.items()}
    X = np.asarray(images, np.float64).reshape(len(images), -1) / 255
    logits = np.maximum(X @ p64["W1"] + p64["b1"], 0) @ p64["W2"] + p64["b2"]
    z = logits - logits.max(1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(1, keepdims=True)


def random_params(hidden, seed=0, scale=1.0):
    params = reference.init_params(784, hidden, 10, seed=seed)
    rng = np.random.default_rng(seed)
    params["b1"] = rng.normal(0, 0.1, hidden).astype(np.float32)
    params["b2"] = rng.normal(0, 0.1, 10).astype(np.float32)
    return {k: (v * scale).astype(np.float32) for k, v in params.items()}


# --- strokes -> pixels ----------------------------------------------------------------------------

def test_a_dot_is_a_disc_of_the_pen_width():
    image = digits.rasterise([[(50.0, 60.0)]], size=100, width=20)
    assert image.dtype == np.float32 and image.shape == (100, 100)
    assert abs(image.sum() - np.pi * 10 ** 2) < 0.02 * np.pi * 10 ** 2     # area of the pen's disc
    assert image[60, 50] == 1 and image[0, 0] == 0
    assert ((image > 0) & (image < 1)).sum() > 0                            # an anti-aliased edge
    cy, cx = digits.centre_of_mass(image)
    assert abs(cy - 59.5) < 0.1 and abs(cx - 49.5) < 0.1                    # pixel i's centre is at i + 0.5


def test_a_line_covers_its_length_and_stays_inside():
    image = digits.rasterise([[(-30, 50), (130, 50)]], size=100, width=10)  # past both edges: clipped
    rows = np.flatnonzero(image.any(1))
    assert image[:, 0].max() == 1 and image[:, -1].max() == 1
    assert 44 <= rows[0] and rows[-1] <= 55
    with pytest.raises(ValueError, match="finite"):
        digits.rasterise([[(0, 0), (np.nan, 3)]])


# --- MNIST's preprocessing --------------------------------------------------------------------------

def test_blank_gives_a_blank_field():
    assert not digits.mnist_like(np.zeros((280, 280), np.float32)).any()
    assert digits.mnist_like(np.zeros((5, 7), np.uint8)).shape == (28, 28)


def test_the_box_is_20_pixels_and_the_centre_of_mass_is_centred():
    for strokes in ([[(140, 30), (140, 250)]],                      # tall and thin: a "1"
                    [[(20, 140), (260, 140)]],                      # wide and flat
                    [[(100, 100), (180, 120), (120, 200)]]):
        image = digits.mnist_like(digits.rasterise(strokes))
        assert image.dtype == np.uint8 and image.shape == (28, 28) and image.max() > 200
        rows, cols = np.flatnonzero(image.any(1)), np.flatnonzero(image.any(0))
        assert max(rows[-1] - rows[0], cols[-1] - cols[0]) + 1 == digits.BOX
        cy, cx = digits.centre_of_mass(image)
        assert abs(cy - digits.CENTRE) <= 0.5 and abs(cx - digits.CENTRE) <= 0.5


def test_a_tiny_drawing_is_enlarged_and_a_lopsided_one_keeps_its_ink():
    dot = np.zeros((280, 280), np.float32)
    dot[100:103, 200:203] = 1
    assert (digits.mnist_like(dot) == 255).sum() == 400                    # 3×3 pixels of ink -> the 20×20 box
    seven = np.zeros((28, 28), np.uint8)
    seven[0:3, :] = 255                                                     # heavy top bar, thin stem
    seven[3:28, 20] = 255
    out = digits.mnist_like(seven)
    rows = np.flatnonzero(out.any(1))
    assert rows[-1] == 27 and rows[-1] - rows[0] + 1 == digits.BOX         # moved to the edge, not cut off
    assert digits.centre_of_mass(out)[0] < digits.CENTRE - 1               # so its centre of mass sits high


def test_bad_images_are_refused_with_the_fix():
    with pytest.raises(ValueError, match="one 2-D image"):
        digits.mnist_like(np.zeros((2, 28, 28), np.uint8))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        digits.mnist_like(np.full((28, 28), 255.0))


def test_area_weights_keep_the_total_ink():
    for n_in, n_out in ((7, 20), (222, 20), (20, 20), (1, 20), (33, 3)):
        weights = digits.area_weights(n_in, n_out)
        assert weights.shape == (n_out, n_in)
        assert np.allclose(weights.sum(1), 1)                               # each output is a mean
        assert np.allclose(weights.sum(0), n_out / n_in)                    # each input counted in full


def test_mnist_test_digits_change_little_and_read_the_same(mnist_dir):
    (X_train, y_train), (X_test, y_test) = data.load_mnist(mnist_dir)
    remade = digits.mnist_like_all(X_test)
    difference = digits.mean_abs_difference(remade, X_test)
    unchanged = (remade == X_test).all(axis=(1, 2)).mean()
    print(f"mean |difference| {difference:.4f} grey levels; {unchanged:.2%} of 10000 unchanged")
    assert difference < 0.5 and unchanged > 0.99
    params = reference.init_params(seed=0)
    reference.train(params, data.normalise(X_train[:10_000]), y_train[:10_000], epochs=2, batch_size=128,
                    lr=0.1, progress=False)
    before = reference.accuracy(params, data.normalise(X_test), y_test)
    after = reference.accuracy(params, data.normalise(remade), y_test)
    print(f"accuracy {before:.4f} -> {after:.4f}")
    assert before > 0.8 and abs(after - before) <= digits.ONE_POINT


# --- the shader against NumPy ------------------------------------------------------------------------

def awkward_images():
    """A blank canvas, a single dot, ink touching every edge of the 28×28 field, and a drawn digit."""
    blank = np.zeros((28, 28), np.uint8)
    dot = digits.mnist_like(digits.rasterise([[(140, 140)]]))
    edges = np.zeros((28, 28), np.uint8)
    edges[[0, -1], :] = 255
    edges[:, [0, -1]] = 200
    drawn = digits.mnist_like(digits.rasterise(pads.hand(8)))
    return np.stack([blank, dot, edges, drawn])


@pytest.mark.parametrize("hidden", [128, 130, 36])          # VEC4 1; n_hidden % 4 != 0 (VEC4 0); small
def test_shader_probabilities_equal_numpy(ctx, hidden):
    params = random_params(hidden, seed=hidden)
    rng = np.random.default_rng(hidden)
    images = np.concatenate([awkward_images(), rng.integers(0, 256, (33, 28, 28), dtype=np.uint8)])  # 37 images
    net = digits.ShaderNet(ctx, params, capacity=40)
    for count in (1, 3, 4, 37):
        net.out.fill(np.nan)
        got = net.probabilities(images[:count])
        want = numpy_probabilities(params, images[:count])
        assert got.shape == (count, 10) and np.isfinite(got).all()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
        rest = net.out.read()[count:]
        assert np.isnan(rest).all(), "the shader wrote past count"
    net.release()


def test_shader_softmax_is_stable_for_huge_logits(ctx):
    params = random_params(128, seed=3, scale=40.0)          # logits in the thousands: exp would overflow
    images = awkward_images()
    net = digits.ShaderNet(ctx, params, capacity=4)
    net.out.fill(np.nan)
    got = net.probabilities(images)
    want = numpy_probabilities(params, images)
    assert np.isfinite(got).all() and np.allclose(got.sum(1), 1, atol=1e-5)
    assert (got.argmax(1) == want.argmax(1)).all()
    net.release()


def test_a_reading_has_three_times_and_the_shader_answer(ctx):
    params = random_params(128)
    net = digits.ShaderNet(ctx, params)
    image = awkward_images()[3]
    reading = net.read(image)
    assert set(reading.seconds) == {"upload", "kernel", "readback"} and min(reading.seconds.values()) > 0
    assert reading.clock == net.clock.source and not reading.blank
    np.testing.assert_allclose(reading.probabilities, numpy_probabilities(params, image[None])[0], rtol=1e-5, atol=1e-7)
    assert reading.label == int(reading.probabilities.argmax())
    assert "µs" in digits.timings_line(reading)
    assert net.read(np.zeros((28, 28), np.uint8)).blank
    with pytest.raises(TypeError, match="uint8"):
        net.read(image.astype(np.float32))
    with pytest.raises(ValueError, match="1 to 1 images"):
        net.probabilities(np.zeros((2, 28, 28), np.uint8))
    net.release()


# --- the pad, without a browser ---------------------------------------------------------------------

def test_pad_strokes_in_image_and_probabilities_out(ctx):
    params = random_params(128)
    pad = pads.Pad(digits.ShaderNet(ctx, params))
    assert pad.move(10, 10) is None and pad.up() is None               # pen up: nothing happens
    seen = []
    pad.listeners.append(seen.append)
    pad.down(100, 40)
    assert pad.move(110, 150) == ((100.0, 40.0), (110.0, 150.0))
    pad.move(120, 240)
    reading = pad.up()
    assert reading is pad.last and seen == [reading]
    image = digits.mnist_like(digits.rasterise([[(100, 40), (110, 150), (120, 240)]], pads.SIZE, pads.PEN))
    assert (reading.image == image).all()
    np.testing.assert_allclose(reading.probabilities, numpy_probabilities(params, image[None])[0], rtol=1e-5, atol=1e-7)
    assert pads.label_text(reading) == f"prediction: {reading.label}"
    pad.clear()
    assert pad.strokes == [] and pad.last is None and seen[-1] is None
    assert pads.label_text(None).startswith("prediction: none")


def test_the_scripted_hand_draws_every_digit_as_strokes(ctx):
    pad = pads.Pad(digits.ShaderNet(ctx, random_params(128)))
    for digit in range(10):
        strokes = pads.hand(digit)
        assert all(len(stroke) > 5 for stroke in strokes)               # polylines, a point every few pixels
        pad.clear()
        reading = pad.draw(strokes)
        assert reading.image.any() and len(pad.strokes) == len(strokes)
    with pytest.raises(ValueError, match="0 to 9"):
        pads.hand(10)


def test_the_widget_forwards_to_the_pad(ctx):
    pytest.importorskip("ipycanvas")
    pad = pads.Pad(digits.ShaderNet(ctx, random_params(128)))
    box = pad.widget()
    (canvas, clear), (prediction, picture, timings) = box.children[0].children, box.children[1].children
    assert pads.PAD_CLASS in canvas._dom_classes and pads.PREDICTION_CLASS in prediction._dom_classes
    assert prediction.value.startswith("prediction: none")
    pad.draw(pads.hand(1))
    assert prediction.value == f"prediction: {pad.last.label}" and "kernel" in timings.value
    assert picture.value[:4] == b"\x89PNG"
    clear.click()
    assert pad.strokes == [] and prediction.value.startswith("prediction: none")


def test_the_widget_keeps_its_size_when_a_digit_is_drawn_and_says_when_the_net_is_weak(ctx):
    """The picture, the prediction line and the timings line have fixed sizes, so the pad does not jump
    between cleared and drawn; a weak net's caveat stands beside every prediction."""
    pytest.importorskip("ipycanvas")
    from io import BytesIO

    from PIL import Image

    pad = pads.Pad(digits.ShaderNet(ctx, random_params(128)), caveat=digits.caveat(0.87))
    box = pad.widget()
    (canvas, clear), (prediction, picture, timings) = box.children[0].children, box.children[1].children
    sizes = lambda: [(w.layout.width, w.layout.height) for w in (prediction, picture, timings)]   # noqa: E731
    cleared, cleared_pixels = sizes(), Image.open(BytesIO(picture.value)).size
    assert all(width and height for width, height in cleared)
    pad.draw(pads.hand(7))
    assert sizes() == cleared and Image.open(BytesIO(picture.value)).size == cleared_pixels == pads.PICTURE_PIXELS
    assert prediction.value == f"prediction: {pad.last.label} (weak net: 87.0% of test digits right, so often wrong)"
    clear.click()
    assert "weak net" in prediction.value and sizes() == cleared


# --- which net reads the digits, and the split of a prediction (sentences on made-up numbers) ---------------

def test_label_and_figure_carry_the_caveat(ctx):
    assert pads.label_text(None, digits.caveat(0.87)) == \
        "prediction: none (draw a digit) (weak net: 87.0% of test digits right, so often wrong)"
    assert digits.caveat(0.95) == "" and digits.caveat(0.9499).startswith("weak net: 95.0%")


def test_net_verdict_on_both_sides_of_weak():
    strong = digits.net_verdict("the net saved in x.npz", 0.9784, 10_000)
    assert strong.outcome == digits.STRONG_NET and "97.84%" in strong and "10,000 test digits" in strong
    assert "strong net" in strong and "weak" not in strong
    at = digits.net_verdict("x", digits.WEAK, 100)
    assert at.outcome == digits.STRONG_NET
    weak = digits.net_verdict("x", 0.8270, 2_000)
    assert weak.outcome == digits.WEAK_NET and "82.70%" in weak and "misread many of your digits" in weak


def test_net_verdict_just_either_side_of_weak():
    at = digits.net_verdict("x", digits.WEAK, 100)
    assert at.outcome == digits.STRONG_NET and "a strong net (at least 95%)" in at and "weak" not in at
    below = digits.net_verdict("x", digits.WEAK - 1e-4, 10_000)
    assert below.outcome == digits.WEAK_NET and "94.99%" in below and "a weak net (below 95%)" in below


def test_retrain_reason_refuses_a_quick_or_weak_net_in_a_full_run_only():
    quick_net = {"mode": "QUICK", "epochs": 1, "train_images": 20000, "test_accuracy": 0.87, "test_images": 2000,
                 "card": "llvmpipe (LLVM 15.0.6, 256 bits)"}
    full_net = dict(quick_net, mode="FULL", epochs=10, test_accuracy=0.978)
    assert "QUICK mode" in digits.retrain_reason(quick_net, 0.97, quick=False)      # its accuracy aside
    assert digits.retrain_reason(full_net, 0.978, quick=False) == ""
    assert "only 90.00%" in digits.retrain_reason(full_net, 0.90, quick=False)
    assert "only 90.00%" in digits.retrain_reason(None, 0.90, quick=False)         # saved without provenance
    assert digits.retrain_reason(None, 0.978, quick=False) == ""
    assert digits.retrain_reason(quick_net, 0.5, quick=True) == ""                 # QUICK: any net, said if weak
    text = digits.provenance_text(quick_net)
    assert text == ("trained by a QUICK-mode run of 1 epoch on 20,000 training images on llvmpipe (LLVM 15.0.6, "
                    "256 bits), 87.00% right on its 2,000 test images when it was saved")
    assert "10 epochs on" in digits.provenance_text(full_net)
    # the recorded accuracy is left out where this run measured the same, as printed, on as many digits
    assert "right on its" not in digits.provenance_text(full_net, here=(0.97801, 2000))
    assert "97.80% right on its 2,000 test images" in digits.provenance_text(full_net, here=(0.9779, 2000))
    assert "97.80% right on its 2,000 test images" in digits.provenance_text(full_net, here=(0.978, 10_000))
    assert "no record" in digits.provenance_text(None)


def _t(*us, clock=timing.WALL):
    return timing.Timing(tuple(u * 1e-6 for u in us), clock)


def test_split_verdict_on_all_three_sides():
    transfers_longer = digits.split_verdict(_t(70, 72, 74, 76, 78), _t(10, 11, 11, 12, 12, clock="GPU timer query"),
                                            _t(30, 31, 32, 33, 34))
    assert transfers_longer.outcome == digits.TRANSFERS_LONGER
    assert ("upload 74.0 µs (71.6–76.4) by wall clock, kernel 11.0 µs (10.8–12.0) by GPU timer query, readback 32.0 µs "
            "(30.8–33.2) by wall clock" in transfers_longer)
    assert ") (" not in transfers_longer                                   # no label in parentheses after a band
    assert "took longer than the kernel, 9.6× its time" in transfers_longer and "5 repeats" in transfers_longer
    kernel_longer = digits.split_verdict(_t(10, 11, 12), _t(900, 1000, 1100), _t(5, 6, 7))
    assert kernel_longer.outcome == digits.KERNEL_LONGER and "the kernel took longer" in kernel_longer
    same = digits.split_verdict(_t(10, 20, 30), _t(25, 40, 60), _t(5, 10, 15))
    assert same.outcome == timing.SAME and same.endswith("are the same within the noise we measured")
    apart = digits.split_verdict(_t(10, 10, 10), _t(20.6, 20.6, 20.6), _t(10, 10, 10))   # bands apart, 3 % < 5 %
    assert apart.outcome == timing.SAME and apart.endswith("are 1.03× apart, within the 5 % we call the same")
    for v in (transfers_longer, kernel_longer, same, apart):    # the median of each round's sum, named as such
        assert "two transfers together (each round's upload plus its readback: " in v


def test_split_times_each_part_in_turn(ctx):
    net = digits.ShaderNet(ctx, random_params(128))
    parts = net.split(awkward_images()[2], repeat=4, warmup=0.0)
    assert set(parts) == {"upload", "kernel", "readback"}
    assert all(len(t.samples) == 4 and t.median > 0 for t in parts.values())
    assert parts["kernel"].clock == net.clock.source and parts["upload"].clock == timing.WALL
    many = digits.ShaderNet(ctx, random_params(128), capacity=7).split(awkward_images()[:7], repeat=2, warmup=0.0)
    assert len(many["readback"].samples) == 2
    net.release()

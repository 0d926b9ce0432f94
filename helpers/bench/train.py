"""Training benchmark (notebook 05): one MNIST epoch of 784-128-10 at batch 128, SGD lr 0.3, seed 0.

    python -m helpers.bench train            # GLSL epoch, NumPy epoch, the GLSL step taken apart
    python -m helpers.bench.train --tune     # sweep the step shaders' #defines, GPU time per dispatch

GLSL: helpers.gpu_mlp.GPUTrainer, all 60,000 images (QUICK: 4,096), a warm-up, then a few epochs, each
timed by the wall clock with ctx.finish() at both ends (so everything is in it: the order upload, every
dispatch and barrier, the readback every 50 steps). NumPy: reference.train, one epoch on the CPU (its own
per-epoch timer, evaluation excluded).

The GLSL and NumPy epochs are compared, so they are measured in turn (timing.measure_interleaved): the
median with its 20-80 % band. PyTorch eager (torch_eager_epoch: the same model, batch, learning rate and
per-epoch sample order, data resident on the GPU, float32 with TF32 off) is measured by the fused benchmark,
on its own (helpers.bench.fused.torch_contenders), beside this trainer and the fused ones, which that
benchmark takes in turn; committed_epochs reads that one row for every notebook.
"""

from __future__ import annotations

from contextlib import contextmanager
from decimal import Decimal

import numpy as np

from .. import data, gl, reference, timing
from ..inference import HOST_MARGIN
from ..gpu_mlp import STEP, GPUTrainer
from ..mlp import PARAM_NAMES
from .profile import added_up, profile_step, whole_percents

BATCH, LR, SEED = 128, 0.3, 0


def sizes(quick: bool) -> tuple[int, int]:
    """(training images, timed epochs after the warm-up)."""
    return (4096, 2) if quick else (60_000, 5)


@contextmanager
def torch_fp32(torch):
    """While the block runs: float32 matrix products with TF32 off (restored afterwards)."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def torch_eager_epoch(torch, F, images, labels, params: dict, orders):
    """epoch(e): one epoch of PyTorch eager on CUDA (the same model, batch, learning rate, data resident on
    the GPU) in sample order orders[e]; nothing synchronised (the caller times it). The fused benchmark
    measures it beside the GLSL trainers."""
    device = torch.device("cuda")
    X = torch.from_numpy(data.normalise(images)).to(device)
    y = torch.from_numpy(np.asarray(labels, np.int64)).to(device)
    weights = [torch.tensor(params[name], device=device, requires_grad=True) for name in PARAM_NAMES]
    optimizer = torch.optim.SGD(weights, lr=LR)
    drawn = [torch.from_numpy(np.asarray(o, np.int64)).to(device) for o in orders]
    n = len(X)

    def epoch(e):
        order = drawn[e % len(drawn)]
        for i in range(0, n, BATCH):
            batch = order[i:i + BATCH]
            W1, b1, W2, b2 = weights
            logits = torch.relu(X[batch] @ W1 + b1) @ W2 + b2
            loss = F.cross_entropy(logits, y[batch])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    return epoch


EAGER_ROW = "PyTorch eager 784-128-10 SGD"    # benches.fused: the one PyTorch eager epoch the notebooks quote
UNFUSED_ROW = "unfused 784-128-10 SGD"        # benches.fused: GPUTrainer's epoch in the same run (a prefix)


def committed_epochs(record: dict) -> dict:
    """Milliseconds of one epoch of 784-128-10 SGD from a committed benchmark record (bench-<card>.json):
    'GLSL, six dispatches a step' and 'PyTorch eager' from the fused benchmark, timed in the same run
    (EAGER_ROW, the row every notebook quotes), and 'NumPy (CPU)' from this benchmark. Rows not in the
    record are left out."""
    return {name: 1e3 * t.median for name, t in committed_timings(record).items()}


GLSL_LABEL, EAGER_LABEL, NUMPY_LABEL = "GLSL, six dispatches a step", "PyTorch eager", "NumPy (CPU)"


def committed_timings(record: dict) -> dict:
    """committed_epochs' rows as Timings (median and 20-80 % band; a row stored without a band has none)."""
    benches, out = record.get("benches", {}), {}
    for row in benches.get("fused", []):
        name = row.get("name", "")
        if name.startswith(UNFUSED_ROW) and row.get("ms"):
            out[GLSL_LABEL] = timing.Timing.from_row(row)
        elif name == EAGER_ROW and row.get("ms"):
            out[EAGER_LABEL] = timing.Timing.from_row(row)
    for row in benches.get("train", []):
        if row.get("name") == NUMPY_LABEL and row.get("epoch_s"):
            out[NUMPY_LABEL] = (timing.Timing.from_row(row) if "ms" in row else
                                timing.Timing((row["epoch_s"],)))
    return out


NOT_COMPARED = "not compared"
RATIO_ONLY = "ratio only"   # record_account's outcome where both rows exist: a ratio, no faster side named


def record_account(record: dict) -> tuple:
    """What notebook 05 says of the committed benchmark's epochs (committed_timings): (the sentence saying what
    these figures are, PyTorch eager's epoch against NumPy's in the record). The two rows come from different
    benchmarks, not taken in turn, and one is a CPU's epoch, whose pace moves between runs of the benchmark
    by more than any margin a verdict could use (the same card's records gave these two 1.0× apart and 1.5×
    apart), so the sentence gives both figures and the ratio of the printed medians, names no faster side,
    and says why: outcome RATIO_ONLY, whatever the ratio; NOT_COMPARED where a row is missing. The notebook's
    own NumPy epoch is not set against the record's."""
    t = committed_timings(record)
    device = record.get("device", {})
    card = device.get("describe", "an unnamed card").split("/")[0].split(" |")[0]
    when = f" on {device['date']}" if device.get("date") else ""
    intro = (f"These are the benchmark record's epochs, run on the {card}{when}, not in this notebook's run: "
             "the six-dispatch GLSL epoch and PyTorch eager's come from the benchmark of notebook 06's faster "
             "trainers, which takes every GLSL trainer in turn and PyTorch on its own; NumPy's comes from the "
             "training benchmark, taken in turn with GLSL epochs")
    if EAGER_LABEL in t and NUMPY_LABEL in t:
        eager, numpy = t[EAGER_LABEL], t[NUMPY_LABEL]
        said = (f"In the record, PyTorch eager's epoch on the GPU ({eager.text()}) took "
                f"{timing.times(timing.ratio(eager, numpy))}× NumPy's epoch on the CPU ({numpy.text()}), with every "
                "operation of every step issued from Python, one at a time (notebook 06 replays the same step as a "
                "CUDA graph: its launches recorded once and replayed with one call). The two come from different "
                "benchmarks, not taken in turn, and a CPU's pace moves between runs of the benchmark, so the ratio "
                "is this record's and names no faster side")
        eager_numpy = timing.Verdict(said, RATIO_ONLY)
    else:
        eager_numpy = timing.Verdict("The record has no PyTorch eager or no NumPy row to compare", NOT_COMPARED)
    return intro, eager_numpy


def host_margin_named(judged: timing.Verdict, a: timing.Timing, b: timing.Timing) -> str:
    """A verdict of timing.versus(a, b, ..., margin=HOST_MARGIN) on a comparison with a CPU's pace in it, with
    the host margin named: '…; with the CPU's pace in the comparison, either side counts as ahead only beyond
    1.5×', except where its own words name it already (two timings called the same with their bands apart:
    '1.3× apart, within the 50 % we call the same')."""
    if judged.outcome == timing.SAME and not timing.overlap(a, b):
        return str(judged)
    return (f"{judged}; with the CPU's pace in the comparison, either side counts as ahead only beyond "
            f"{1 + HOST_MARGIN:g}×")


def numpy_epoch(images, labels, params: dict) -> float:
    """Seconds of one reference.train epoch on the CPU (its own timer: the step loop only)."""
    copy = {name: value.copy() for name, value in params.items()}
    history = reference.train(copy, data.normalise(images), labels, epochs=1, batch_size=BATCH, lr=LR,
                              seed=SEED, progress=False)
    return history["seconds"][0]


def run(ctx, quick: bool) -> list[dict]:
    (X_train, y_train), (X_test, y_test) = data.load_mnist()
    n, epochs = sizes(quick)
    images, labels = X_train[:n], y_train[:n]
    params = reference.init_params(seed=SEED)
    trainer = GPUTrainer(ctx, params, images, labels, optimizer=reference.SGD(LR), batch_size=BATCH, seed=SEED)
    trainer.add_eval_set("test", X_test, y_test)
    steps = trainer.steps_per_epoch
    from .fused import epoch_sampler   # fused imports this module
    # compared, so measured interleaved: a GLSL epoch, a NumPy epoch, a GLSL epoch, ... after the warm-up
    glsl_epoch, trained = epoch_sampler(trainer), []

    def glsl_counted() -> float:       # the warm-up trains too: count every epoch, for the accuracy's label
        trained.append(1)
        return glsl_epoch()
    measured = timing.measure_interleaved({"GLSL (ModernGL)": glsl_counted,
                                           "NumPy (CPU)": lambda: numpy_epoch(images, labels, params)},
                                          repeat=epochs)
    test_acc = trainer.accuracy("test")
    profile = profile_step(trainer)
    gl_t, np_t = measured["GLSL (ModernGL)"], measured["NumPy (CPU)"]

    clock = "wall clock, ctx.finish() at both ends"
    print(f"one epoch of 784-128-10, batch {BATCH}, {n} images ({steps} steps, last batch {n - (steps - 1) * BATCH}), "
          f"median and 20-80 % of {epochs} epochs each, GLSL and NumPy in turn after a warm-up; {clock}")
    print(f"GLSL step: {trainer.dispatches_per_step} dispatches + {trainer.dispatches_per_step} barriers, "
          f"readback every 50 steps; test accuracy after training: {100 * test_acc:.2f} %")
    rows = [{"name": "GLSL (ModernGL)", **gl_t.row(), "epoch_s": gl_t.median, "epochs_s": list(gl_t.samples),
             "images": n, "batch": BATCH, "steps": steps, "step_us": gl_t.median / steps * 1e6,
             "dispatches_per_step": trainer.dispatches_per_step, "barriers_per_step": trainer.dispatches_per_step,
             "test_acc": test_acc, "epochs_trained": len(trained), "clock": clock}]
    rows.append({"name": "NumPy (CPU)", **np_t.row(), "epoch_s": np_t.median, "epochs_s": list(np_t.samples),
                 "images": n, "batch": BATCH, "steps": steps, "step_us": np_t.median / steps * 1e6,
                 "clock": "wall clock (reference.train, 1 epoch)"})
    print(f"{'':38s} {'epoch (20–80 %)':>26s} {'per step':>10s}")
    for name, t in measured.items():
        print(f"{name:38s} {t.text():>26s} {t.per(steps).text():>10s}")
    print(host_margin_named(timing.versus(gl_t, np_t, "the GLSL epoch", "the NumPy epoch", margin=HOST_MARGIN),
                            gl_t, np_t))
    print(f"\nthe GLSL step taken apart (batch {profile['batch']}; kernels by {profile['clock']}):")
    for name, seconds in profile["kernel"].items():
        print(f"  {name:32s} {seconds * 1e6:8.1f} µs   (dispatch + barrier, back to back)")
    print(f"  {'sum of the six':32s} {profile['kernel_total'] * 1e6:8.1f} µs")
    print(f"  {'empty dispatch + barrier':32s} {profile['empty'] * 1e6:8.1f} µs")
    print(f"  {'step, back to back (wall)':32s} {profile['step'] * 1e6:8.1f} µs   "
          f"(Python issue time {profile['issue'] * 1e6:.1f} µs)")
    print(f"  {'readback of 50 steps of stats':32s} {profile['readback'] * 1e6:8.1f} µs   "
          f"order upload {profile['order_upload'] * 1e6:.1f} µs per epoch")
    rows.append({"name": "GLSL step taken apart", **{k: v for k, v in profile.items()}})
    trainer.release()
    return rows


# ---------------------------------------------------------------------------------------------------
# tuning: each step shader's #defines swept, GPU time of its dispatch at batch 128 on MNIST-sized data
# ---------------------------------------------------------------------------------------------------

CANDIDATES = {
    "forward1": [{"TN": tn, "KS": ks, "RB": rb} for tn in (32, 64, 128) for ks in (2, 4, 8, 16)
                 for rb in (2, 4, 8, 16) if tn * ks <= 1024 and (ks * rb * tn + rb * 196) * 4 <= 48 * 1024],
    "forward2": [{"TN": 16, "KS": ks, "RB": rb} for ks in (8, 16, 32, 64) for rb in (1, 2, 4, 8)],
    "xent": [{"LOCAL": local} for local in (32, 64, 128, 256)],
    "backward2": [{"LX": lx, "BS": bs} for lx in (32, 64, 128, 256) for bs in (1, 2, 4, 8) if lx * bs <= 1024],
    "backward1": [{"LX": lx, "BS": bs} for lx in (32, 64, 128) for bs in (1, 2, 4, 8, 16) if lx * bs <= 1024],
    "update": [{"LOCAL": local} for local in (64, 128, 256, 512)],
}


def tune(ctx, quick: bool, repeat: int = 20) -> dict:
    """For each step shader, time every candidate's dispatch (profile_step) on a trainer built with it;
    print the candidates by median and pick the one of lowest median (a bare minimum of the medians, not a
    noise-aware verdict), then the epoch with the defaults and with each shader's pick."""
    from ..timing import Clock

    (X_train, y_train), _ = data.load_mnist()
    n = 512 if quick else 60_000
    repeat = 2 if quick else repeat
    clock = Clock(ctx)

    def trainer(defines=None):
        return GPUTrainer(ctx, reference.init_params(seed=SEED), X_train[:n], y_train[:n],
                          optimizer=reference.SGD(LR), batch_size=BATCH, seed=SEED, defines=defines)

    best = {}
    for role, candidates in CANDIDATES.items():
        name, results = STEP[role], []
        for defines in candidates[:3] if quick else candidates:
            try:
                t = trainer({name: defines})
            except gl.ShaderError as exc:
                print(f"  {name} {defines}: does not compile ({str(exc).splitlines()[-1].strip()})")
                continue
            results.append((profile_step(t, repeat=repeat)["kernel_timing"][name], defines))
            t.release()
        results.sort(key=lambda item: item[0].median)
        print(f"{name} ({clock.source}):  " + "  ".join(
            f"{' '.join(f'{k}={v}' for k, v in d.items())}: {t.text()}" for t, d in results[:6]))
        best[name] = results[0][1]
    print("lowest median of each (a bare minimum, not a verdict):", best)
    from .fused import interleaved_epochs   # fused imports this module
    tried = {label: trainer(defines) for label, defines in (("defaults", None), ("tuned", best))}
    epochs = interleaved_epochs(tried, repeat=5)   # compared: interleaved, after a warm-up
    for label, t in tried.items():
        profile = profile_step(t, repeat=repeat)
        print(f"{label}: epoch {epochs[label].text()}, step {profile['step_timing'].text()}, "
              f"kernels {added_up(list(profile['kernel_timing'].values()))} (their medians added up), "
              f"issue {profile['issue_timing'].text()}")
        t.release()
    print(timing.versus(epochs["tuned"], epochs["defaults"], "the tuned epoch", "the default one"))
    return best


if __name__ == "__main__":
    import argparse

    from .. import mode

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tune", action="store_true", help="sweep the step shaders' #defines")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    context = gl.create_context()
    print(gl.describe(context))
    quick = args.quick or mode.is_quick()
    tune(context, quick) if args.tune else run(context, quick)


def unaccounted_sentence(parts: dict) -> str:
    """What a negative 'unaccounted' part of profile.epoch_account's epoch means, in words: the parts measured
    apart add up to more than the epoch, by how much (ms, as epoch_bars prints it, and in percent of the
    epoch, as profile.whole_percents rounds it for limits.epoch_shares): whole from 100 ms up ('1,234 ms'), two
    significant digits below with their trailing zeros kept, as timing._g keeps them ('0.60 ms', '2.0 ms'). "" where the rest is zero or above
    (the notebook's markdown says what a positive rest is)."""
    rest, epoch = parts["unaccounted"], sum(parts.values())
    if rest >= 0:
        return ""
    ms = 1e3 * -rest
    figure = f"{ms:,.0f} ms" if ms >= 100 else f"{timing._g(ms, 2)} ms"   # two digits, zeros kept: 0.60, 2.0
    share = -whole_percents({k: v / epoch for k, v in parts.items()})["unaccounted"]   # as epoch_shares prints it
    return (f"The parts measured apart add up to more than the epoch, by {figure} ({share} % "
            "of it), so the unaccounted rest is below zero: within the epoch some parts overlap (a readback is "
            "taken while the GPU runs the next chunk) or take less time than they took apart.")


TRANSFER_HEADER = ("when", "what", "direction", "transfers", "bytes", "time (median, 20–80 %)")


def transfer_table(crossings: list) -> str:
    """What crosses the bus as a table whose columns line up in a monospace print: crossings are (when, what,
    direction, transfers, bytes, time), time a timing.Timing printed with its band (Timing.text) or None
    (not timed: an empty cell). Each column is as wide as its widest cell or its header; words left-aligned,
    counts, bytes and times right-aligned; bytes with thousands separators."""
    cells = [[when, what, direction, f"{count:d}", f"{nbytes:,d}", t.text() if t is not None else ""]
             for when, what, direction, count, nbytes, t in crossings]
    widths = [max(len(row[i]) for row in [list(TRANSFER_HEADER), *cells]) for i in range(len(TRANSFER_HEADER))]
    right = (False, False, False, True, True, True)

    def line(row):
        return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right)).rstrip()
    return "\n".join([line(TRANSFER_HEADER), *(line(row) for row in cells)])


def glsl_here_vs_record(record: dict, here: timing.Timing, steps_here: int) -> str:
    """A sentence, not a verdict, on this notebook's back-to-back epoch of the six-dispatch trainer beside the
    record's epoch of the same trainer (committed_timings' GLSL row): both figures and the ratio of their
    medians, and what differs between the two runs (read from the code): the record's epochs alternate with
    the fused trainers' in a run of the fused benchmark, this notebook's follow one another. Two runs of the
    GPU, so no word that a threshold picks (a CPU's pace moved enough between three H100 runs to flip such a
    word for NumPy's epoch): the ratio holds for this pair of runs only. Epochs of another number of steps
    (QUICK mode) are not compared; "" where the record has no such row."""
    record_t = committed_timings(record).get(GLSL_LABEL)
    if record_t is None:
        return ""
    row = next(r for r in record["benches"]["fused"] if r.get("name", "").startswith(UNFUSED_ROW) and r.get("ms"))
    if row.get("steps") != steps_here:
        return (f"This notebook's epochs ({steps_here} steps) and the record's six-dispatch epochs "
                f"({row.get('steps', 'an unrecorded number of')} steps) are of different sizes, so they are not compared.")
    return (f"This notebook's back-to-back epoch ({here.text()}) took {timing.times(timing.ratio(here, record_t))}× the record's "
            f"six-dispatch epoch ({record_t.text()}), the same trainer by the same clock in another run: there its "
            "epochs alternate with notebook 06's faster trainers' in a run of their benchmark, here they follow one another, "
            "so the ratio holds for this pair of runs only.")

"""Helpers for the series: small modules, one job each. Importing this package does nothing else.

    data         MNIST via tensorflow-datasets' download manager; pack_images (notebook 01)
    reference    the NumPy MLP every notebook and test compares to       (notebook 01)
    check        compare(name, got, ref): one line, OK or MISMATCH        (notebook 01)
    plots        curves, digit grids, transfer-vs-kernel bars, LivePlot   (notebook 01)
    mode         full or quick (QUICK=1) problem sizes                    (notebook 01)
    gl           context, shaders from glsl/, Kernel (bind, groups, run)  (notebook 02)
    gpu_array    GPUArray and the staging buffer (re-exported by gl)      (notebook 02)
    banner       a shader banner as a contract: binding lengths, groups   (notebook 02)
    timing       upload / kernel / readback measured apart                (notebook 02)
    forward      the two-layer forward pass, one sample at a time         (notebook 02)
    matmul       the matmul ladder: rungs, dispatch shapes                (notebook 04)
    inference    batched forward pass on dense_3_tiled, batch sweep       (notebook 03)
    mlp          what both GPU trainers share: the Trainer API, params    (notebook 05)
    gpu_mlp      the training loop on the GPU, six dispatches a step      (notebook 05)
    fused_mlp    the fused trainer, two dispatches a step; momentum, Adam (notebook 06);
                 dropout and max-norm (notebook 07)
    rng          the counter-based random generator, the twin of the shaders' (notebook 07)
    exercises    check a learner's shader on awkward shapes (notebooks 02-06)
    bench/       the benchmarks, one module each (matmul, inference, train, fused): python -m helpers.bench;
                 bench.dropout: notebook 07's validation sweep and final runs
    digits       strokes to MNIST-like 28×28 images; the net's softmax in one dispatch (notebook 10)
    pad          the drawing pad: Pad's logic (no browser needed), its widget, a scripted hand (notebook 10)
    report       README's results table and figure from the benchmark JSON
    quickstart   the README's two commands: make .venv, open JupyterLab / run the tests
"""

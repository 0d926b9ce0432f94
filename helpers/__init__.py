"""Helpers for the series: small modules, one job each. Importing this package does nothing else.

    gl         context, shaders from glsl/, GPU arrays          (notebook 02)
    data       MNIST via tensorflow-datasets' download manager  (notebook 01)
    reference  the NumPy MLP every notebook and test compares to (notebook 01)
    check      compare(name, got, ref): one line, OK or MISMATCH (notebook 01)
    timing     upload / kernel / readback measured apart         (notebook 02)
    plots      curves, digit grids, transfer-vs-kernel bars      (notebook 01)
    mode       full or quick (QUICK=1) problem sizes             (notebook 01)
"""

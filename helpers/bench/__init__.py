"""The committed benchmarks, one module each: matmul, inference, train, fused (`python -m helpers.bench`).

Every GPU figure in the README and in the notebooks' result tables comes from here; __main__.py is the
command line that runs them and writes one JSON file.
"""

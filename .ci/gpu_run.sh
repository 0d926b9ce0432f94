#!/usr/bin/env bash
# On the GPU machine, inside .ci/device.sh: execute notebooks in full and send them back as one archive.
#   bash .ci/device.sh bash .ci/gpu_run.sh NAME notebooks/01_numpy_mlp.ipynb ...
# writes $OUT/NAME.tgz (the executed notebooks, OUT_DIR/verdicts.json, and the results files the notebooks
# rewrote) and $OUT/NAME.log. The device tool returns at most 8 files, hence the archive.
set -o pipefail
name=$1; shift
dir=/tmp/$name
python3 .ci/execute_notebooks.py "$dir" "$@" 2>&1 | tee "$OUT/$name.log"
status=$?
mkdir -p "$dir/results"
cp notebooks/results/*.json "$dir/results/" 2>/dev/null
tar czf "$OUT/$name.tgz" -C "$dir" .
exit $status

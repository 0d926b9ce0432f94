#!/usr/bin/env bash
# Run a command on the lent GPU machine (the `device` tool), which has Python 3.12, numpy, torch and
# pytest but no GL loader, no moderngl and no network. Needs, carried with the call:
#   .gl/   the Debian GL loader packages,  .whl/  the wheels,  .data/mnist/  the four MNIST files
# (see ../shared/device/README.md for how to fill them once). Usage from the device tool:
#   bash .ci/device.sh python3 -m pytest tests -q
set -eo pipefail
shopt -s nullglob
debs=(.gl/*.deb)
if [ ${#debs[@]} -eq 0 ]; then
    echo ".ci/device.sh: no .deb files in $PWD/.gl/: fill .gl/ with the GL loader packages (see" \
         "../shared/device/README.md) and pass carry: [\".gl\", \".whl\", \".data\"] to the device call" >&2
    exit 1
fi
shopt -u nullglob
for f in "${debs[@]}"; do dpkg -x "$f" /; done; ldconfig
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
wheels=$(cat .whl/*.whl | md5sum | cut -d' ' -f1)   # a machine kept warm between calls has these already
if [ "$(cat /tmp/site/.wheels 2>/dev/null)" != "$wheels" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    echo "$wheels" > /tmp/site/.wheels
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 MNIST_DIR=$PWD/.data/mnist MPLBACKEND=Agg
python3 -m ipykernel install --user --name python3 >/dev/null 2>&1 || true
"$@"

# Sourced by scripts/demo, scripts/test and scripts/bench: make a virtualenv and install
# tf1compat with the CPU TensorFlow and the given extras, at the exact versions of
# constraints.txt. With TF1COMPAT_LOWEST=1 (scripts/test --lowest) it uses .venv-lowest
# and constraints-lowest.txt instead: setup.cfg's lower bounds and what pip chose with them
# (scripts/constraints.py). Idempotent: it reinstalls
# only when setup.cfg, the constraints or the extras change (stamp file in the venv).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXTRAS="$1"
PYTHON_BIN="$(command -v python3.11 || command -v python3)"
if [ "${TF1COMPAT_LOWEST:-0}" = 1 ]; then
    VENV="$ROOT/.venv-lowest"
else
    VENV="$ROOT/.venv"
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "tf1compat: creating $VENV with $PYTHON_BIN" >&2
    "$PYTHON_BIN" -m venv "$VENV"
fi
CONSTRAINTS="$VENV/.tf1compat-constraints.txt"
if [ "${TF1COMPAT_LOWEST:-0}" = 1 ]; then
    cp "$ROOT/constraints-lowest.txt" "$CONSTRAINTS"
else
    cp "$ROOT/constraints.txt" "$CONSTRAINTS"
fi
STAMP="$VENV/.tf1compat-install"
WANT="$(cat "$ROOT/setup.cfg" "$ROOT/pyproject.toml" "$CONSTRAINTS" | sha256sum | cut -d' ' -f1) $EXTRAS"
if [ ! -f "$STAMP" ] || ! grep -qxF "$WANT" "$STAMP"; then
    echo "tf1compat: installing .[$EXTRAS] into $VENV (first run takes a few minutes)" >&2
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -c "$CONSTRAINTS" -e "$ROOT[$EXTRAS]"
    if [[ ",$EXTRAS," == *,cpu,* ]]; then
        # Keras 2 for run mode (tf.layers, slim.batch_norm): the tf-keras of the installed
        # TensorFlow's minor, without its dependencies (it names the `tensorflow`
        # distribution, which would land beside tensorflow-cpu: tf1compat/_versions.py)
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
            -c "$CONSTRAINTS" "$("$VENV/bin/python" -c \
            'from tf1compat._versions import keras2_requirement; print(keras2_requirement())')"
    fi
    echo "$WANT" >> "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
cd "$ROOT"

# Sourced by scripts/demo, scripts/test and scripts/bench: make a virtualenv and install
# tf1compat with the CPU TensorFlow and the given extras, at the exact versions of
# constraints.txt. With TF1COMPAT_LOWEST=1 (scripts/test --lowest) it uses .venv-lowest
# and the lowest versions setup.cfg's ranges allow instead. Idempotent: it reinstalls
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
    "$VENV/bin/python" "$ROOT/scripts/constraints.py" lowest "$CONSTRAINTS"
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
        # Keras 2 for run mode (tf.layers, slim.batch_norm): tf-keras requires the
        # `tensorflow` distribution, which would land beside tensorflow-cpu (setup.cfg)
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
            -c "$CONSTRAINTS" "tf-keras~=2.21.0"
    fi
    echo "$WANT" >> "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
cd "$ROOT"

# Sourced by scripts/demo, scripts/test and scripts/bench: make .venv and install
# tf1compat with the CPU TensorFlow and the given extras. Idempotent: it reinstalls
# only when setup.cfg or the extras change (stamp file inside .venv).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
EXTRAS="$1"
PYTHON_BIN="$(command -v python3.11 || command -v python3)"

if [ ! -x "$VENV/bin/python" ]; then
    echo "tf1compat: creating $VENV with $PYTHON_BIN" >&2
    "$PYTHON_BIN" -m venv "$VENV"
fi
STAMP="$VENV/.tf1compat-install"
WANT="$(cat "$ROOT/setup.cfg" "$ROOT/pyproject.toml" | sha256sum | cut -d' ' -f1) $EXTRAS"
if [ ! -f "$STAMP" ] || ! grep -qxF "$WANT" "$STAMP"; then
    echo "tf1compat: installing .[$EXTRAS] into $VENV (first run takes about a minute)" >&2
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT[$EXTRAS]"
    echo "$WANT" >> "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
cd "$ROOT"

"""What is installed beside tf1compat: TensorFlow's, tf-slim's and tf-keras's versions,
read from the distributions' metadata without importing them (TF-free), and the tf-keras
that matches the installed TensorFlow.

tf-keras ``X.Y`` requires TensorFlow ``X.Y`` exactly, and declares it on the
``tensorflow`` distribution: installed beside ``tensorflow-cpu`` with its dependencies,
it would bring a second TensorFlow, so it goes in with ``pip install --no-deps``.
"""

from importlib import metadata

__all__ = ["TENSORFLOW_DISTRIBUTIONS", "installed_version", "tensorflow_version",
           "minor_version", "keras2_requirement", "keras2_install_command", "describe_installed"]

# the distributions that install the `tensorflow` package
TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-macos",
                            "tensorflow-intel")


def installed_version(*distributions):
    """The version of the first of ``distributions`` that is installed, or None."""
    for name in distributions:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def tensorflow_version():
    """The installed TensorFlow's version (whichever distribution brought it), or None."""
    return installed_version(*TENSORFLOW_DISTRIBUTIONS)


def minor_version(version: str) -> str:
    """``"2.16"`` for ``"2.16.2"`` (release candidates too: ``"2.20"`` for ``"2.20.0rc1"``)."""
    return ".".join(version.split(".")[:2])


def keras2_requirement():
    """The tf-keras requirement matching the installed TensorFlow's minor version
    (``tf-keras~=2.16.0`` for TensorFlow 2.16.2); ``tf-keras`` without TensorFlow."""
    version = tensorflow_version()
    if version is None:
        return "tf-keras"
    return f"tf-keras~={minor_version(version)}.0"


def keras2_install_command() -> str:
    """The one command that gives the installed TensorFlow its Keras 2."""
    return f'pip install --no-deps "{keras2_requirement()}"'


def describe_installed():
    """``TensorFlow 2.16.2, tf-slim 1.1.0, tf-keras 2.16.0, numpy 1.26.4, protobuf
    4.25.3`` (``not installed`` for what is missing)."""
    parts = [("TensorFlow", TENSORFLOW_DISTRIBUTIONS), ("tf-slim", ("tf-slim",)),
             ("tf-keras", ("tf-keras",)), ("numpy", ("numpy",)), ("protobuf", ("protobuf",))]
    return ", ".join(f"{label} {installed_version(*names) or 'not installed'}"
                     for label, names in parts)

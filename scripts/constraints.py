"""The version sets scripts/_venv.sh installs with `pip install -c FILE`.

    python scripts/constraints.py freeze          rewrite constraints.txt from this environment
    python scripts/constraints.py freeze-lowest   rewrite constraints-lowest.txt from this one
    python scripts/constraints.py lowest FILE     write the lowest versions of setup.cfg's ranges

`freeze` runs in the environment the suite passed in: it writes the installed version of
everything the extras in EXTRAS pull in (and the tf-keras installed beside TensorFlow), so
CI tests that exact set. `freeze-lowest` does the same in `.venv-lowest` after `scripts/test
--lowest` passed (for the extras it installs), into constraints-lowest.txt; it refuses
when a runtime requirement is not at its lower bound. `lowest` runs before anything is
installed (standard library only): each requirement's lower bound, for tf1compat's own
requirements and the runtime extras; the tools of the `test`, `docs` and `release`
extras keep their constraints.txt pins, so a lint rule or a plugin release cannot fail
the lowest run. It is the seed of a new lowest set (pip resolves the rest; hints such as
`aiobotocore==2.26.0`, `boto3==1.41.5`, `botocore==1.41.5` keep pip from backtracking
for an hour between moto's boto3 and s3fs's aiobotocore).
"""

import configparser
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"
LOWEST_CONSTRAINTS = ROOT / "constraints-lowest.txt"
EXTRAS = ("cpu", "beam", "test", "docs", "release", "bench", "s3", "dask")
RUNTIME_EXTRAS = ("cpu", "beam", "bench", "s3", "dask")
# what `scripts/test --lowest` installs into .venv-lowest
LOWEST_EXTRAS = ("cpu", "beam", "test", "docs", "s3", "dask")
LOWER_BOUND = re.compile(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*(?:[^,;]*,)*?\s*>=\s*([^,;\s]+)")


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_lines(extras):
    """The requirement lines of install_requires and of `extras`, as setup.cfg says."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    sections = [config["options"]["install_requires"]]
    sections += [config["options.extras_require"][extra] for extra in extras]
    return [line.strip() for section in sections for line in section.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def lower_bounds():
    """``{normalized name: lower bound}`` of tf1compat's requirements and runtime extras."""
    bounds = {}
    for line in declared_lines(RUNTIME_EXTRAS):
        match = LOWER_BOUND.match(line)
        if not match:
            raise SystemExit(f"setup.cfg: {line!r} has no lower bound (>=) to test")
        bounds[normalize(match.group(1))] = match.group(2)
    return bounds


def write_lowest(path):
    """Constraints pinning each runtime requirement to its lower bound."""
    pins = lower_bounds()
    tools = {normalize(re.split(r"[\[<>=!~;\s]", line, maxsplit=1)[0])
             for line in declared_lines(("test", "docs", "release"))}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        name, _, version = line.partition("==")
        if normalize(name) in tools and normalize(name) not in pins:
            pins[normalize(name)] = version
    text = "".join(f"{name}=={version}\n" for name, version in sorted(pins.items()))
    pathlib.Path(path).write_text(text, encoding="utf-8")


def installed_closure(lines):
    """Every distribution the requirement `lines` need, with its installed version."""
    from importlib import metadata

    from packaging.markers import default_environment
    from packaging.requirements import Requirement

    found, pending = {}, [Requirement(line) for line in lines]
    while pending:
        requirement = pending.pop()
        dist = metadata.distribution(requirement.name)
        key = normalize(dist.metadata["Name"])
        extras = frozenset(requirement.extras)
        if key in found and extras <= found[key][1]:
            continue
        found[key] = (dist.version, found.get(key, (None, frozenset()))[1] | extras)
        for text in dist.requires or []:
            needed = Requirement(text)
            environment = default_environment()
            if needed.marker is None or any(
                    needed.marker.evaluate({**environment, "extra": extra})
                    for extra in ("", *found[key][1])):
                pending.append(needed)
    return {key: version for key, (version, _) in found.items()}


def frozen_versions(extras):
    """The installed closure of ``extras``, and tf-keras if installed (it goes in with
    --no-deps: scripts/_venv.sh)."""
    from importlib import metadata

    versions = installed_closure(declared_lines(extras))
    try:
        versions["tf-keras"] = metadata.version("tf-keras")
    except metadata.PackageNotFoundError:
        pass
    return versions


def write_constraints(path, versions, extras, what):
    header = (f"# {what} (extras {','.join(extras)}),\n"
              f"# written by `python scripts/constraints.py {sys.argv[1]}` on Python "
              f"{sys.version_info.major}.{sys.version_info.minor}.\n")
    lines = "".join(f"{name}=={version}\n" for name, version in sorted(versions.items()))
    path.write_text(header + lines, encoding="utf-8")


def check_at_lower_bounds(versions):
    """Refuse a lowest set whose runtime requirements are not at their lower bounds."""
    from packaging.version import Version

    off = [f"{name} {versions.get(name)} (lower bound {bound})"
           for name, bound in lower_bounds().items()
           if name in versions and Version(versions[name]) != Version(bound)]
    if off:
        raise SystemExit("not at setup.cfg's lower bounds: " + ", ".join(off))


def main(argv):
    if argv == ["freeze"]:
        write_constraints(CONSTRAINTS, frozen_versions(EXTRAS), EXTRAS,
                          "The exact set scripts/test and CI install")
    elif argv == ["freeze-lowest"]:
        versions = frozen_versions(LOWEST_EXTRAS)
        check_at_lower_bounds(versions)
        write_constraints(LOWEST_CONSTRAINTS, versions, LOWEST_EXTRAS,
                          "The exact lowest set scripts/test --lowest and CI install")
    elif argv[:1] == ["lowest"] and len(argv) == 2:
        write_lowest(argv[1])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

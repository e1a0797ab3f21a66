"""``python -m benchmarks [--suite NAME] [--quick] [--out DIR]`` (what ``scripts/bench``
runs): each suite prints its table and writes it under ``--out``."""

import argparse
import importlib
import sys

SUITES = ("reading", "epochs", "conversion", "service", "pruning", "programs")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="scripts/bench",
        description="measure reading pipelines, CIFAR-10 conversion and whole programs")
    parser.add_argument("--suite", choices=("all", *SUITES), default="all")
    parser.add_argument("--quick", action="store_true",
                        help="tiny data, one round: checks the harness, measures nothing")
    parser.add_argument("--out", default="bench-results",
                        help="directory for the result tables and charts")
    args = parser.parse_args(argv)
    status = 0
    for suite in SUITES if args.suite == "all" else (args.suite,):
        module = importlib.import_module(f"benchmarks.{suite}")
        status = module.run(quick=args.quick, out_dir=args.out) or status
    return status


if __name__ == "__main__":
    sys.exit(main())

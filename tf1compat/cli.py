"""The ``tf1compat`` command. Each subcommand is an ``_add_*`` parser builder plus a
handler returning the exit code; handlers import what they need lazily so that
``inspect`` and ``verify`` start without TensorFlow."""

import argparse
import sys

from tf1compat import __version__


def _add_demo(subparsers):
    p = subparsers.add_parser(
        "demo", help="run the main job: write data, read it the TF1 way, check it")
    p.add_argument("--workdir", default=None,
                   help="where to write the data (default: a temporary directory)")
    p.add_argument("--seed", type=int, default=0, help="seed for the synthetic data")
    p.set_defaults(handler=_run_demo)


def _run_demo(args):
    from tf1compat import demo
    return demo.run(workdir=args.workdir, seed=args.seed)


def _add_bench(subparsers):
    p = subparsers.add_parser(
        "bench", help="measure reading pipelines and CIFAR-10 conversion side by side")
    p.add_argument("--suite", choices=("all", "reading", "conversion"), default="all")
    p.add_argument("--quick", action="store_true",
                   help="tiny data, one round: checks the harness, measures nothing")
    p.add_argument("--out", default="bench-results",
                   help="directory for the result tables and charts")
    p.set_defaults(handler=_run_bench)


def _run_bench(args):
    import importlib
    suites = ("reading", "conversion") if args.suite == "all" else (args.suite,)
    status = 0
    for suite in suites:
        module = importlib.import_module(f"tf1compat.benchmarks.{suite}")
        status = module.run(quick=args.quick, out_dir=args.out) or status
    return status


_COMMANDS = [_add_demo, _add_bench]


def build_parser():
    parser = argparse.ArgumentParser(
        prog="tf1compat",
        description="Legacy TensorFlow 1 input pipelines on TensorFlow 2.")
    parser.add_argument("--version", action="version", version=f"tf1compat {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_command in _COMMANDS:
        add_command(subparsers)
    return parser


def main(argv=None):
    """Run the command line; returns the process exit code."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        print("tf1compat: interrupted", file=sys.stderr)
        return 130

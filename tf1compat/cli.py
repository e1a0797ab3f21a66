"""The ``tf1compat`` command. Each subcommand is an ``_add_*`` parser builder plus a
handler returning the exit code; handlers import what they need lazily so that
``inspect`` and ``verify`` start without TensorFlow."""

import argparse
import contextlib
import os
import signal
import sys

from tf1compat import __version__
from tf1compat._versions import describe_installed


def _add_demo(subparsers):
    p = subparsers.add_parser(
        "demo", help="the three jobs on the demo's own data: run an old program unmodified, "
                     "convert, compare with tf.data")
    p.add_argument("--workdir", default=None,
                   help="folder for the demo's files, kept afterwards (default: demo-output)")
    p.add_argument("--seed", type=int, default=0, help="seed for the synthetic data")
    p.add_argument("--cifar", default=None, metavar="PATH",
                   help="the real CIFAR-10 binary (folder or .tar.gz) instead of the "
                        "synthetic one")
    p.set_defaults(handler=_run_demo)


def _run_demo(args):
    from tf1compat import demo
    return demo.run(workdir=args.workdir, seed=args.seed, cifar=args.cifar,
                    echo=lambda line: print(line, flush=True))


def _add_tfrecord_arguments(p):
    p.add_argument("files", nargs="+", metavar="FILE_OR_GLOB",
                   help="TFRecord files or glob patterns (quote them to keep the shell out)")
    p.add_argument("--compression", type=str.lower, choices=("auto", "none", "gzip", "zlib"),
                   default="auto", help="how the files are compressed (default: detect per file)")


def _expand_files(command, patterns):
    """The paths each pattern names or matches, in order; None (after an error naming
    it) when one matches nothing or names a directory. Dangling symbolic links stay in
    (reading them reports them); what a glob matches that is not a file (a directory,
    a FIFO that would block until written to) is left out with a note. A path named as
    it is, e.g. a FIFO, is read whatever it is. The files of a conversion whose commit
    is unfinished, or that its manifest does not list, are refused (None)."""
    from tf1compat.errors import IncompleteOutputError, display_path
    from tf1compat.records import _fs
    from tf1compat.records.committed import check_committed
    paths = []
    for pattern in patterns:
        if _fs.is_url(pattern):         # an object store: its objects, no FIFOs
            matches = _fs.glob(pattern)
            if not matches:
                print(f"{command}: error: no object matches {pattern!r}", file=sys.stderr)
                return None
        elif os.path.isdir(pattern):
            shown = display_path(pattern)
            print(f"{command}: error: {shown} is a directory; name the files in it, e.g. "
                  f"'{os.path.join(shown, '*.tfrecord')}'", file=sys.stderr)
            return None
        elif os.path.lexists(pattern):
            matches = [pattern]
        else:
            matches = _local_matches(command, pattern)
            if matches is None:
                return None
        try:    # a partial set of a conversion's shards is refused, not read
            check_committed(matches, pattern if matches != [pattern] else None)
        except IncompleteOutputError as e:
            print(f"{command}: error: {e}", file=sys.stderr)
            return None
        paths.extend(matches)
    return list(dict.fromkeys(paths))


def _local_matches(command, pattern):
    """The regular files the glob ``pattern`` matches; None (after an error) if none."""
    import glob
    import stat

    from tf1compat.errors import display_path
    matches = []
    for match in sorted(glob.glob(pattern)):
        mode = os.stat(match).st_mode if os.path.exists(match) else stat.S_IFREG
        if stat.S_ISREG(mode):
            matches.append(match)
        elif stat.S_ISDIR(mode):
            print(f"{command}: skipping directory {display_path(match)}", file=sys.stderr)
        else:
            print(f"{command}: skipping {display_path(match)}: not a regular file (a "
                  "FIFO?); name it without a pattern to read it", file=sys.stderr)
    if not matches:
        print(f"{command}: error: no file matches {pattern!r}", file=sys.stderr)
        return None
    return matches


def _report_unreadable(command, path, error):
    """Say on stderr why ``path`` cannot be read, in one line."""
    from tf1compat.errors import display_path
    if os.path.islink(path) and not os.path.exists(path):
        why = f"dangling symbolic link to {os.readlink(path)!r}"
    else:
        why = error.strerror or str(error)
    print(f"{command}: {display_path(path)}: cannot read ({why})", file=sys.stderr)


def _compression_argument(args):
    return {"auto": "auto", "none": None}.get(args.compression, args.compression)


def _non_negative_int(text):
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return int(text)


def _add_inspect(subparsers):
    p = subparsers.add_parser(
        "inspect",
        help="show record count, size, feature table and keys_to_features of TFRecord files")
    _add_tfrecord_arguments(p)
    p.add_argument("--sample", type=_non_negative_int, default=1000,
                   help="records per file to infer the schema from (0: all; default 1000)")
    p.set_defaults(handler=_run_inspect)


def _run_inspect(args):
    import textwrap

    from tf1compat import example, tfrecord
    from tf1compat.errors import CorruptRecordError, display_path
    from tf1compat.records import _fs
    command = "tf1compat inspect"
    paths = _expand_files(command, args.files)
    if paths is None:
        return 2
    combined, status = example.Schema(), 0
    for path in paths:
        schema = example.Schema()
        try:  # one pass: a FIFO can be read only once
            with tfrecord.iter_records(path, compression=_compression_argument(args)) \
                    as records:
                for record in records:
                    if not args.sample or records.count <= args.sample:
                        schema.add_example(record)
                size = max(_fs.size(path), records.bytes_read)
            compression = records.compression
        except OSError as e:
            _report_unreadable(command, path, e)
            status = 1
            continue
        except CorruptRecordError as e:
            print(f"{command}: {e}", file=sys.stderr)
            status = 1
            continue
        except ValueError as e:  # the record is not an Example
            print(f"{command}: {display_path(path)}: record {records.count - 1:,} at byte "
                  f"{records.record_offset:,}: {e}", file=sys.stderr)
            status = 1
            continue
        packing = f", {compression}-compressed" if compression else ""
        print(f"{display_path(path)}: {records.count:,} records, {size:,} bytes{packing}")
        print(textwrap.indent(schema.to_table(), "  "))
        combined.merge(schema)
    if combined.records:
        print(f"\n# inferred from {combined.records:,} sampled records")
        try:
            print(combined.to_code())
        except ValueError as e:
            print(f"# no keys_to_features: {e}")
            status = 1
    return status


def _add_verify(subparsers):
    p = subparsers.add_parser(
        "verify", help="check every CRC of TFRecord files; exit 1 naming each bad record")
    _add_tfrecord_arguments(p)
    p.set_defaults(handler=_run_verify)


def _run_verify(args):
    from tf1compat import tfrecord
    command = "tf1compat verify"
    paths = _expand_files(command, args.files)
    if paths is None:
        return 2
    bad = unreadable = 0
    for path in paths:
        try:
            report = tfrecord.verify(path, _compression_argument(args))
        except OSError as e:
            _report_unreadable(command, path, e)
            unreadable += 1
            continue
        print(report)
        for error in report.errors:
            print(f"  {error}")
        bad += not report.ok
    print(f"{len(paths):,} file(s) checked, {bad:,} bad"
          + (f", {unreadable:,} unreadable" if unreadable else ""))
    return 1 if bad or unreadable else 0


def _add_compare(subparsers):
    p = subparsers.add_parser(
        "compare", help="compare a queue pipeline with its tf.data version, example by "
                        "example (exit 1 when they differ or it cannot be lowered)")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--pipeline", metavar="MODULE:FUNCTION",
                      help="a function building a queue pipeline and returning its fetches; "
                           "compared with its own tf.data lowering")
    what.add_argument("--dataset", metavar="MODULE:FUNCTION",
                      help="a slim get_split-style factory f(split_name, dataset_dir)")
    p.add_argument("--split", default="train", help="split name passed to the factory")
    p.add_argument("--dataset-dir", default=None, help="dataset_dir passed to the factory")
    p.add_argument("--items", default=None,
                   help="comma-separated items to compare (default: all the decoder's)")
    p.add_argument("--unordered", action="store_true",
                   help="compare as multisets (--dataset: shuffle both pipelines; "
                        "--pipeline: the default when its order changes from run to run)")
    p.add_argument("--num-readers", type=int, default=1,
                   help="readers on the queue side, parallel reads on the tf.data side")
    p.add_argument("--max-examples", type=int, default=None,
                   help="--pipeline: compare the first N examples (needed when it repeats "
                        "forever)")
    p.set_defaults(handler=_run_compare)


def _compare_pipeline(args):
    """The report of ``--pipeline``, after printing the lowering's plan."""
    import tf1compat as tc
    from tf1compat.migrate.comparison import resolve_function

    if os.getcwd() not in sys.path:           # MODULE may live where the command runs
        sys.path.insert(0, os.getcwd())
    build = resolve_function(args.pipeline, "pipeline")
    with tc.legacy_graph():
        fetches = build()
    print(f"tf.data lowering: {tc.describe_lowering(fetches)}")
    return tc.compare(fetches, ordered=False if args.unordered else None,
                      max_examples=args.max_examples)


def _run_compare(args):
    from tf1compat.errors import LoweringError
    from tf1compat.migrate.comparison import compare_split
    items = args.items.split(",") if args.items else None
    misplaced = ([f"--{name}" for name, unset in (("items", None), ("split", "train"),
                  ("dataset-dir", None), ("num-readers", 1))
                  if getattr(args, name.replace("-", "_")) != unset] if args.pipeline
                 else ["--max-examples"] if args.max_examples is not None else [])
    if misplaced:
        print(f"tf1compat compare: error: {', '.join(misplaced)} cannot be used with "
              f"{'--pipeline' if args.pipeline else '--dataset'}", file=sys.stderr)
        return 2
    try:
        if args.pipeline:
            report = _compare_pipeline(args)
        else:
            report = compare_split(args.dataset, args.split, args.dataset_dir, items,
                                   ordered=not args.unordered, num_readers=args.num_readers)
    except LoweringError as e:
        print(f"tf1compat compare: {error_line('compare', e)}", file=sys.stderr)
        return 1
    except (TypeError, ValueError) as e:    # PipelineConfigError, UnknownItemError too
        print(f"tf1compat compare: error: {error_line('compare', e)}", file=sys.stderr)
        return 2
    print(report)
    return 0 if report.equal else 1


def _add_convert_cifar10(subparsers):
    p = subparsers.add_parser(
        "convert-cifar10", help="convert CIFAR-10/100 binary batches to slim's TFRecords "
                                "(cifar10_train.tfrecord, cifar10_test.tfrecord, labels.txt)")
    p.add_argument("source", metavar="SOURCE",
                   help="the extracted cifar-10-batches-bin folder (or its parent) or the .tar.gz")
    p.add_argument("output_dir", metavar="OUTPUT_DIR", help="where to write (created if missing)")
    p.add_argument("--format", dest="image_format", choices=("png", "raw"), default="png",
                   help="image/encoded as PNG (slim's layout, default) or raw HWC bytes")
    p.add_argument("--shards", type=int, default=1,
                   help="files per split: cifar10_train-00000-of-0000N.tfrecord (default 1)")
    p.add_argument("--workers", type=int, default=None,
                   help="encoding processes (default: all cores)")
    p.add_argument("--overwrite", action="store_true",
                   help="convert even when valid outputs already exist")
    _add_runner_arguments(p)
    p.set_defaults(handler=_run_convert_cifar10)


def _add_runner_arguments(p):
    p.add_argument("--runner", choices=("local", "dask", "beam"), default="local",
                   help="local worker processes (default), a Dask cluster (tf1compat[dask]) "
                        "or Apache Beam (tf1compat[beam])")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="the Dask scheduler for --runner dask, e.g. tcp://host:8786")
    p.add_argument("--beam-options", nargs=argparse.REMAINDER, default=None, metavar="FLAG",
                   help="last: Beam's own flags for --runner beam, as Beam users write "
                        "them: --beam-options --runner=FlinkRunner --flink_master=HOST:8081 "
                        "(or as one quoted string)")
    p.add_argument("--wait", action="store_true",
                   help="when another conversion is writing into OUTPUT_DIR, wait for it "
                        "to end (default: stop, naming it)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _runner_kwargs(args):
    import shlex
    options = args.beam_options
    if options is not None and len(options) == 1 and " --" in options[0]:
        options = shlex.split(options[0])          # the flags as one quoted string
    return {"runner": args.runner, "beam_options": options, "scheduler": args.scheduler,
            "wait": args.wait, "quiet": args.quiet}


def _run_converter(command, convert, *args, **kwargs):
    """Run a converter and print its summary; exit 2 naming the problem when the input
    or setup is bad (a missing engine here; bad input and system errors as every
    command, in main)."""
    from tf1compat.errors import Tf1CompatError
    try:
        with _engine_logs_left_out():
            summary = convert(*args, **kwargs)
    except ImportError as e:    # an engine or filesystem without its extra ([beam], [s3] ...)
        print(f"tf1compat {command}: error: {error_line(command, e)}", file=sys.stderr)
        return 2
    except (Tf1CompatError, OSError) as e:      # with the shard task it happened in
        where = "; ".join(getattr(e, "__notes__", ()))
        print(f"tf1compat {command}: error: {error_line(command, e)}"
              f"{f' ({where})' if where else ''}", file=sys.stderr)
        return 2
    print(summary)
    return 0


@contextlib.contextmanager
def _engine_logs_left_out():
    """A conversion's engines (Dask, Beam) log to stderr through ``logging``, tracebacks
    included, what the command says in its one line (a lost scheduler, a failed task):
    while it runs, the root logger gets a handler that drops them (Dask and Beam then
    add no handler of their own), unless ``TF1COMPAT_VERBOSE=1`` or something
    configured logging already."""
    import logging
    root = logging.getLogger()
    if root.handlers or os.environ.get("TF1COMPAT_VERBOSE", "") not in ("", "0"):
        yield
        return
    handler = logging.NullHandler()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


def _run_convert_cifar10(args):
    from tf1compat import cifar10
    return _run_converter(
        "convert-cifar10", cifar10.convert, args.source, args.output_dir,
        image_format=args.image_format, num_shards=args.shards, workers=args.workers,
        overwrite=args.overwrite, **_runner_kwargs(args))


def _add_convert_images(subparsers):
    p = subparsers.add_parser(
        "convert-images", help="convert a folder of images, one subfolder per class, to "
                               "slim's TFRecords (NAME_train_*, NAME_validation_*, labels.txt)")
    p.add_argument("source", metavar="SOURCE", help="the folder of class folders")
    p.add_argument("output_dir", metavar="OUTPUT_DIR", help="where to write (created if missing)")
    p.add_argument("--name", required=True, help="file name prefix, e.g. flowers")
    p.add_argument("--validation-fraction", type=float, default=0.1,
                   help="share of each class for the validation split (default 0.1; 0: none)")
    p.add_argument("--shards", type=int, default=None,
                   help="files per split (default: about 128 MiB of images each)")
    p.add_argument("--seed", type=int, default=0, help="seed of the split and the order")
    p.add_argument("--on-error", choices=("raise", "skip"), default="raise",
                   help="a file that is not a JPEG/PNG/BMP, or is cut off, damaged or "
                        "unreadable: stop naming it (default) or skip it and list it at "
                        "the end")
    p.add_argument("--workers", type=int, default=None,
                   help="processes for --runner local (default: all cores)")
    _add_runner_arguments(p)
    p.set_defaults(handler=_run_convert_images)


def _run_convert_images(args):
    from tf1compat.convert import imagefolder
    return _run_converter(
        "convert-images", imagefolder.convert, args.source, args.output_dir, name=args.name,
        validation_fraction=args.validation_fraction, num_shards=args.shards,
        seed=args.seed, on_error=args.on_error, workers=args.workers, **_runner_kwargs(args))


def _add_run(subparsers):
    p = subparsers.add_parser(
        "run", help="run an unmodified TensorFlow 1 program (TF1's tensorflow and "
                    "tf.contrib for its own files, tf1compat's queue API)",
        description="Run PROGRAM.py (or, with -m, a module) as __main__ with ARGS, its own "
                    "files importing TensorFlow 1's API; exits with the program's status.")
    p.add_argument("-m", dest="module", action="store_true",
                   help="TARGET is a module name, run like `python -m TARGET`")
    _add_settings_flags(p)
    p.add_argument("--quiet", action="store_true",
                   help="no line per input pipeline saying where it runs, no progress bars "
                        "(as TQDM_DISABLE=1)")
    p.add_argument("target", metavar="PROGRAM", help="the program file (or module with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS",
                   help="the program's own arguments")
    p.set_defaults(handler=_run_program)


def _settings_flags():
    """``(field, flag)`` for each of run mode's settings that ``tf1compat run`` sets:
    the fields of :class:`~tf1compat.v1.settings.RunSettings` with a flag's help."""
    import dataclasses

    from tf1compat.v1.settings import RunSettings
    return [(field, "--" + field.name.replace("_", "-"))
            for field in dataclasses.fields(RunSettings) if field.metadata["help"]]


def _add_settings_flags(p):
    for field, flag in _settings_flags():
        off_flag = field.metadata["off_flag"]
        group = p.add_mutually_exclusive_group() if off_flag else p
        if field.metadata["metavar"] is None:     # a switch
            group.add_argument(flag, dest=field.name, action="store_true", default=None,
                               help=field.metadata["help"])
        else:     # the text is checked with the other settings, not by argparse
            group.add_argument(flag, dest=field.name, default=None,
                               metavar=field.metadata["metavar"], help=field.metadata["help"])
        if off_flag:
            group.add_argument(off_flag[0], dest=field.name, action="store_false",
                               help=off_flag[1])


def _run_settings(args):
    """The :class:`~tf1compat.v1.settings.RunSettings` of ``run``'s flags, or None
    after one error line naming the flags as the user typed them."""
    from tf1compat.errors import PipelineConfigError
    from tf1compat.v1.settings import RunSettings
    options, flags, on_flags, turned_off = {}, {}, {}, {}
    for field, flag in _settings_flags():
        value = getattr(args, field.name)
        off_flag = field.metadata["off_flag"]
        flags[field.name] = off_flag[0] if off_flag and value is False else flag
        if off_flag and value is False:
            turned_off[field.name] = off_flag[0]
        on_flags[field.name] = flag
        if value is not None:
            from_text = field.metadata["from_text"]
            options[field.name] = from_text(value) if from_text and isinstance(value, str) \
                else value
    try:
        return RunSettings(**options)
    except PipelineConfigError as e:     # ArgumentTypeError too
        if isinstance(e.expected, str) and e.expected in on_flags and \
                e.expected not in (e.argument, *turned_off):  # the setting it needs, on
            flags[e.expected] = on_flags[e.expected]
        print(f"tf1compat run: error: {error_line('run', e, flags, turned_off)}",
              file=sys.stderr)
        return None


def _run_program(args):
    settings = _run_settings(args)   # before TensorFlow loads
    if settings is None:
        return 2
    from tf1compat.v1.keras2 import use_keras2
    use_keras2()  # TF1 programs' tf.layers, tf.keras, tf.contrib.keras
    from tf1compat.errors import DataServiceError
    from tf1compat.v1 import program
    run = program.run_module if args.module else program.run_path
    try:
        with _pipeline_notices(args.quiet):
            return run(args.target, args.args, settings=settings)
    except DataServiceError as e:   # a wait on the tf.data service ran out of time
        print(f"tf1compat run: error: {error_line('run', e)}", file=sys.stderr)
        _exit_leaving_sessions(2)
    except (program.ProgramNotFoundError, ValueError) as e:
        print(f"tf1compat run: error: {e}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, program.ProgramTerminated) as e:
        interrupted = isinstance(e, KeyboardInterrupt)
        print(f"tf1compat run: {'interrupted' if interrupted else 'terminated'}",
              file=sys.stderr)
        _exit_leaving_sessions(128 + (signal.SIGINT if interrupted else signal.SIGTERM))


def _exit_leaving_sessions(status):
    """End the process now with ``status``. The program has unwound (its finally blocks
    ran), but some of its sessions may still be closing in the background: after an
    interrupted step (a py_func, a reader) or a stalled read on the tf.data service
    (its client waits on the service). Python's own exit would wait for them while it
    frees the sessions. What the program's multiprocessing objects hold is let go first,
    as Python's exit does (a semaphore left registered is a 'leaked semaphore' warning
    from multiprocessing's resource tracker after the error line)."""
    multiprocessing_util = sys.modules.get("multiprocessing.util")
    if multiprocessing_util is not None:
        multiprocessing_util._run_finalizers(0)   # noqa: SLF001 - the first step of its exit
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


@contextlib.contextmanager
def _pipeline_notices(quiet):
    """While the program runs: each :class:`~tf1compat.v1.tf_data_mode.PipelineNotice`
    (where a batching call's pipeline runs) as one line on stderr, ``tf1compat run:
    ...``, or none with ``quiet``; other warnings as the program has them shown."""
    import warnings

    from tf1compat.v1.tf_data_mode import PipelineNotice

    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, PipelineNotice):
                print(f"tf1compat run: {message}", file=sys.stderr, flush=True)
            else:
                shown(message, category, filename, lineno, file, line)
        warnings.showwarning = show
        if quiet:
            warnings.filterwarnings("ignore", category=PipelineNotice)
        yield


def _add_check(subparsers):
    p = subparsers.add_parser(
        "check", help="list, without running anything, the TF1 names in programs that "
                      "`tf1compat run` does not support (exit 1 when there are any)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="program files or folders")
    p.set_defaults(handler=_run_check)


def _run_check(args):
    from tf1compat.v1.check import CheckReport, iter_checked
    report = CheckReport([], [], [])
    try:
        for path, findings, unparsed in iter_checked(args.paths):   # file by file
            for entry in filter(None, [unparsed, *findings]):
                print(entry, flush=True)
            report.add(path, findings, unparsed)
    except FileNotFoundError as e:
        print(f"tf1compat {e}", file=sys.stderr)
        return 2
    print(report.summary())
    return 1 if report.findings or report.unparsed else 0


def _add_port(subparsers):
    p = subparsers.add_parser(
        "port", help="write a TF1 program again for TensorFlow 2, to run without tf1compat "
                     "(exit 1 when some parts could not be ported)",
        usage="%(prog)s PATH --out DIR [--overwrite] [--diff] [--verify] [-- ARGS...]",
        description="Port PATH (a program file, or a folder) into DIR: its TF1 names to their "
                    "TensorFlow 2 homes, tf.contrib to maintained packages, and what else "
                    "TF1-era programs used; every other line as written. ARGS after -- are "
                    "the program's own arguments (the pipeline pass runs the program).")
    p.add_argument("path", metavar="PATH", help="the program file, or its folder")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="the folder to write the ported program to (never over PATH)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace DIR when it exists and is not empty")
    p.add_argument("--diff", action="store_true",
                   help="print the unified diff of the changed files, not only their summary")
    p.add_argument("--verify", action="store_true",
                   help="run the original (tf1compat run) and the port (plain python) with "
                        "ARGS and compare what their ported input pipelines deliver, batch "
                        "by batch (exit 1 when they differ)")
    p.set_defaults(handler=_run_port, program_args=[])


def _run_port(args):
    from tf1compat.port import port_program
    try:
        report = port_program(args.path, args.out, argv=args.program_args,
                              overwrite=args.overwrite)
    except FileNotFoundError as e:
        print(f"tf1compat port: error: {e.strerror or e}", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"tf1compat port: error: {error_line('port', e)}", file=sys.stderr)
        return 2
    for line in report.lines():
        print(line)
    if args.diff:
        print(report.diff(), end="")
    else:
        for line in report.diffstat():
            print(line)
    print(report.summary())
    status = 0 if report.complete else 1
    if args.verify:
        from tf1compat.port.pipelines.verify import verify_pipelines
        if report.entry is None:
            print("tf1compat port: error: --verify runs the program: give a program file, or "
                  "a folder with a __main__.py", file=sys.stderr)
            return 2
        verification = verify_pipelines(
            report.pipelines, report.entry, report.ported_entry, args.program_args,
            report.root, report.out_root, report.program_files)
        for line in verification.lines():
            print(line)
        if not verification.passed:
            status = 1
    return status


def _add_data_service(subparsers):
    p = subparsers.add_parser(
        "data-service", help="start a tf.data service dispatcher or worker (TensorFlow's own "
                             "servers) for run --data-service and to_tf_data(service=...)",
        description="Start one server and run it until Ctrl-C (exit 130) or SIGTERM (143).")
    servers = p.add_subparsers(dest="server", required=True, metavar="SERVER")
    d = servers.add_parser("dispatcher", help="the dispatcher: hands the pipelines' files "
                                              "to the workers")
    d.add_argument("--port", type=_non_negative_int, required=True,
                   help="port to listen on, every interface (0: any free port)")
    d.add_argument("--work-dir", default=None, metavar="DIR",
                   help="journal the dispatcher's state in DIR (fault-tolerant mode): one "
                        "restarted on the same DIR carries on its jobs")
    d.add_argument("--worker-timeout", type=float, default=None, metavar="SECONDS",
                   help="how long a silent worker keeps its tasks before the readers carry "
                        "on without it (default: TensorFlow's)")
    w = servers.add_parser("worker", help="a worker: reads and processes the files the "
                                          "dispatcher hands it")
    w.add_argument("--dispatcher", required=True, metavar="HOST:PORT",
                   help="the dispatcher's address")
    w.add_argument("--port", type=_non_negative_int, default=0,
                   help="port to listen on (default 0: any free port)")
    w.add_argument("--host", default=None,
                   help="the name readers reach this machine by (default: its host name)")
    p.set_defaults(handler=_run_data_service)


def _run_data_service(args):
    import socket
    import threading

    from tf1compat.errors import Tf1CompatError
    from tf1compat.migrate import service_servers
    command = f"tf1compat data-service {args.server}"
    try:
        if args.server == "dispatcher":
            server = service_servers.start_dispatcher(args.port, args.work_dir,
                                                      args.worker_timeout)
            journal = f", journal in {args.work_dir}" if args.work_dir else ""
            where = f"grpc://{socket.gethostname()}:{service_servers.bound_port(server)}{journal}"
        else:
            host = args.host or socket.gethostname()
            server = service_servers.start_worker(args.dispatcher, args.port, host)
            where = f"{host}:{service_servers.bound_port(server)}, dispatcher {args.dispatcher}"
    except (Tf1CompatError, OSError) as e:  # their messages start with the command's name
        print(f"tf1compat {e.strerror if isinstance(e, OSError) and e.strerror else e}",
              file=sys.stderr)
        return 2
    stop, received = threading.Event(), []

    def on_signal(number, frame):
        received.append(number)
        stop.set()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, on_signal)
    print(f"{command}: listening on {where}", flush=True)
    while not stop.wait(1.0):
        pass
    server.stop()
    print(f"{command}: {'interrupted' if received[0] == signal.SIGINT else 'terminated'}",
          file=sys.stderr)
    return 128 + received[0]


_COMMANDS = [_add_demo, _add_run, _add_check, _add_port, _add_inspect, _add_verify, _add_compare,
             _add_data_service, _add_convert_cifar10, _add_convert_images]


class _PrintVersions(argparse.Action):
    """``--version``: tf1compat's version and what it runs on, on one line (argparse's
    own version action wraps it to the terminal's width)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show the versions of tf1compat, TensorFlow, tf-slim, tf-keras, "
                              "numpy and protobuf, and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"tf1compat {__version__} ({describe_installed()})")
        parser.exit()


def build_parser():
    parser = argparse.ArgumentParser(
        prog="tf1compat",
        description="Legacy TensorFlow 1 input pipelines on TensorFlow 2.")
    parser.add_argument("--version", action=_PrintVersions)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_command in _COMMANDS:
        add_command(subparsers)
    for command_parser in subparsers.choices.values():
        if command_parser.get_default("quiet") is None:  # the converters have their own
            command_parser.add_argument("--quiet", action="store_true",
                                        help="no progress bars (as TQDM_DISABLE=1)")
        command_parser.set_defaults(command_parser=command_parser)
    return parser


# the library's argument names -> the flag (or operand) that sets them, per command
_FLAGS = {
    "inspect": {"sample": "--sample", "compression": "--compression"},
    "verify": {"compression": "--compression"},
    "compare": {"max_examples": "--max-examples", "num_readers": "--num-readers",
                "split_name": "--split", "dataset_dir": "--dataset-dir", "items": "--items"},
    "convert-cifar10": {"num_shards": "--shards", "image_format": "--format",
                        "workers": "--workers", "overwrite": "--overwrite",
                        "beam_options": "--beam-options", "runner": "--runner",
                        "scheduler": "--scheduler", "source": "SOURCE",
                        "output_dir": "OUTPUT_DIR"},
    "convert-images": {"num_shards": "--shards", "validation_fraction": "--validation-fraction",
                       "seed": "--seed", "on_error": "--on-error", "name": "--name",
                       "workers": "--workers", "beam_options": "--beam-options",
                       "runner": "--runner", "scheduler": "--scheduler", "source_dir": "SOURCE",
                       "output_dir": "OUTPUT_DIR"},
    "port": {"overwrite": "--overwrite"},
    "demo": {"seed": "--seed", "workdir": "--workdir"},
}


def error_line(command, error, flags=None, turned_off=None):
    """``error``'s message as one line, naming options as ``command``'s user types them
    (``flags``: argument -> flag; default: the command's): ``max_examples=N`` as
    ``--max-examples N``, ``overwrite=True`` as ``--overwrite``, ``tf_data=False`` as
    ``--queues`` (``turned_off``: argument -> the flag that turned it off),
    and the argument a :class:`~tf1compat.errors.PipelineConfigError` is about (and the
    one it needs, :func:`~tf1compat._checks.check_requires`' ``expected``) by its flag."""
    import re
    flags = _FLAGS.get(command.removeprefix("tf1compat "), {}) if flags is None else flags
    text = "; ".join(line.strip() for line in str(error).splitlines() if line.strip())
    for name, flag in (turned_off or {}).items():
        text = re.sub(rf"(?<![\w-]){name}=False\b", flag, text)
    for name, flag in flags.items():
        text = re.sub(rf"(?<![\w-]){name}=True\b", flag, text)
        text = re.sub(rf"(?<![\w-]){name}=(?=\S)", f"{flag} ", text)
    for argument in (getattr(error, "argument", None), getattr(error, "expected", None)):
        if isinstance(argument, str) and argument in flags:
            text = re.sub(rf"(?<![\w/.'-]){argument}\b(?!=)", flags[argument], text, count=1)
    return text


@contextlib.contextmanager
def _environment(quiet):
    """The command's environment: TensorFlow's C++ log without INFO and WARNING lines
    (``Local rendezvous is aborting`` on Ctrl-C) unless the user set
    ``TF_CPP_MIN_LOG_LEVEL`` or ``TF1COMPAT_VERBOSE=1``; with ``quiet``,
    ``TQDM_DISABLE=1`` (it reaches worker processes). Restored afterwards."""
    settings = {"TQDM_DISABLE": "1"} if quiet else {}
    if os.environ.get("TF1COMPAT_VERBOSE", "") in ("", "0") \
            and "TF_CPP_MIN_LOG_LEVEL" not in os.environ:
        settings["TF_CPP_MIN_LOG_LEVEL"] = "2"
    before = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _split_program_arguments(argv):
    """``(argv, ARGS)``: a command taking the program's arguments after ``--``
    (``port``) gets them apart, so a program's ``--flag`` is never read as one of
    ours; ``(argv, None)`` for the others."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    if command == "port" and "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1:]
    return argv, None


def main(argv=None):
    """Run the command line; returns the process exit code.

    Like any Unix tool it ends quietly when its reader goes away
    (``tf1compat inspect ... | head -1``): exit status 141 (SIGPIPE), no traceback.
    An error the user can act on (a tf1compat error, or the system's: a missing or
    unwritable path, a full disk) is one line on stderr and exit status 2.
    """
    from tf1compat.errors import Tf1CompatError
    command = "tf1compat"
    try:
        try:
            argv, program_args = _split_program_arguments(argv)
            args, unknown = build_parser().parse_known_args(argv)
            if program_args is not None:
                args.program_args = program_args
            if unknown:  # with the usage of the command they were given to
                args.command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
            command = f"tf1compat {args.command}"
            with _environment(args.quiet):
                return args.handler(args)
        finally:
            sys.stdout.flush()  # a closed pipe shows here, not as a traceback at exit
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at /dev/null first.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 128 + signal.SIGPIPE
    except (Tf1CompatError, OSError, ImportError) as e:  # ImportError: TensorFlow, an extra
        print(f"{command}: error: {error_line(command, e)}", file=sys.stderr)
        return 2

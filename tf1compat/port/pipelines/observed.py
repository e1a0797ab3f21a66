"""What running a program shows of its input pipelines, as plain data.

The observing child process (:mod:`tf1compat.port.pipelines.observe`) reads each
queue pipeline's plan (:func:`tf1compat.migrate.lowering.read_plan`) and the
program lines that made its ops (``op.traceback``), and hands them to the parent as
JSON: the source rewrite works from these records, never from a graph.
"""

import dataclasses
import json

__all__ = ["Frame", "OpRecord", "Step", "Pipeline", "Observation", "load_observation",
           "dump_observation"]


@dataclasses.dataclass(frozen=True)
class Frame:
    """One frame of the program's own code: a line of one of its files."""

    file: str
    line: int
    function: str


@dataclasses.dataclass(frozen=True)
class OpRecord:
    """A graph op and the program frames that made it (outermost first)."""

    name: str
    type: str
    stack: tuple[Frame, ...]


@dataclasses.dataclass
class Step:
    """One step of a pipeline's plan (:mod:`tf1compat.migrate.lowering.plan`).

    ``kind`` is ``values`` (a producer), ``read``, ``map``, ``shuffle``, ``batch``,
    ``prefetch``, ``interleave`` or ``round_robin``; ``settings`` holds what the step
    does (epochs, seeds, reader arguments, batch size, ...); ``ops`` the ops behind
    it (a producer's, a map's); ``steps`` the chain inside an interleave, one chain
    per branch of a round robin."""

    kind: str
    text: str
    settings: dict = dataclasses.field(default_factory=dict)
    ops: list[OpRecord] = dataclasses.field(default_factory=list)
    steps: list[list["Step"]] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Pipeline:
    """One input pipeline the program built.

    ``api``: the call that ends it (``train.batch``, ``train.shuffle_batch``, ...,
    ``prefetch_queue``, or ``fetch`` for examples a ``sess.run`` fetches with no
    batching call); ``stack``: where that call is (for ``fetch``, the ``sess.run``);
    ``structure``: ``list``, ``tuple``, ``dict`` (with ``keys``) or ``tensor``;
    ``plan``: its steps, or ``error`` saying why it cannot be lowered, at
    ``error_stack``; ``side_ops``: ops outside the pipeline that use its examples,
    ``summaries`` the summary ops among them (of one example).
    ``reads``/``reader``: the read ops and reader ops behind it; ``dequeues`` a
    ``prefetch_queue``'s dequeue ops, ``batch_api``/``batch_stack`` the batching call
    inside it. ``occurrence``: how many calls the program made at its call's line
    before this one (a batching helper's line runs once for each caller).
    """

    api: str
    stack: tuple[Frame, ...]
    structure: str
    keys: list = dataclasses.field(default_factory=list)
    plan: list[Step] = dataclasses.field(default_factory=list)
    text: str = ""
    deterministic: bool = True
    batched: bool = True
    error: str | None = None
    error_stack: tuple[Frame, ...] = ()
    reads: list[OpRecord] = dataclasses.field(default_factory=list)
    readers: list[OpRecord] = dataclasses.field(default_factory=list)
    dequeues: list[OpRecord] = dataclasses.field(default_factory=list)
    side_ops: list[OpRecord] = dataclasses.field(default_factory=list)
    fetched: list[OpRecord] = dataclasses.field(default_factory=list)
    batch_api: str = ""
    batch_stack: tuple[Frame, ...] = ()
    summaries: list[OpRecord] = dataclasses.field(default_factory=list)
    occurrence: int = 0

    @property
    def seeded(self):
        """Whether its order comes from a seeded shuffle (a producer's or a queue's):
        the same seeds give the same order, another seed another."""
        return any(any(step.settings.get("seeds") or ()) for step in _all_steps(self.plan))


def _all_steps(chain):
    for step in chain:
        yield step
        for inner in step.steps:
            yield from _all_steps(inner)


@dataclasses.dataclass
class Observation:
    """Everything one run of the program showed: its pipelines, in the order it
    built them; ``stopped``: where it was stopped (its first ``sess.run`` reading a
    queue), empty when it ended on its own; ``status``: its exit status when it
    ended on its own (or failed); ``output``: the end of what it printed."""

    pipelines: list[Pipeline]
    stopped: tuple[Frame, ...] = ()
    status: int | None = None
    output: str = ""


def _frames(items):
    return tuple(Frame(**item) for item in items)


def _op(item):
    return OpRecord(item["name"], item["type"], _frames(item["stack"]))


def _step(item):
    return Step(item["kind"], item["text"], item["settings"], [_op(o) for o in item["ops"]],
                [[_step(s) for s in chain] for chain in item["steps"]])


def _pipeline(item):
    fields = dict(item)
    fields["stack"] = _frames(item["stack"])
    fields["error_stack"] = _frames(item["error_stack"])
    fields["batch_stack"] = _frames(item["batch_stack"])
    fields["plan"] = [_step(s) for s in item["plan"]]
    for name in ("reads", "readers", "dequeues", "side_ops", "fetched", "summaries"):
        fields[name] = [_op(o) for o in item[name]]
    return Pipeline(**fields)


def dump_observation(observation, path):
    """Write ``observation`` to ``path`` as JSON."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(dataclasses.asdict(observation), f)


def load_observation(path):
    """The :class:`Observation` written to ``path`` by :func:`dump_observation`."""
    with open(path, encoding="utf-8") as f:
        item = json.load(f)
    return Observation([_pipeline(p) for p in item["pipelines"]], _frames(item["stopped"]),
                       item["status"], item["output"])

"""The batching end of a pipeline in the program's source: the batching call written
again as ``shuffle``/``batch``/``prefetch`` and the iterator's ``get_next()``
(:class:`BatchPart`); a batching call in a helper (the CIFAR-10 tutorial's
``_generate_image_and_label_batch``) makes the helper take the dataset.
"""

import libcst as cst

from tf1compat.port.pipelines import codegen
from tf1compat.port.pipelines.region import Region
from tf1compat.port.pipelines.signatures import BATCHING
from tf1compat.port.pipelines.syntax import (
    api_name,
    assignment,
    call_tail,
    calls_in,
    elements,
    innermost,
    name_uses,
    names_in,
    real_path,
    statement_of,
    target_names,
)

__all__ = ["BatchPart"]


class BatchPart:
    """The batching call of a pipeline: in ``F`` (``stack[0]``, statement at ``site``)
    or in a helper ``F`` calls with the example (``stack[1]``)."""

    def __init__(self, porter, pipeline, shape, stack, site, api=None):
        self.porter, self.pipeline, self.shape = porter, pipeline, shape
        self.site, self.source = site, site.source
        self.api = (api or pipeline.api).rpartition(".")[2]
        if self.api not in BATCHING:
            raise porter.fail(site, api_name(pipeline.api), "not ported yet")
        self.in_helper = len(stack) > 1
        self.call_site = porter.site(stack[-1], self.api) if self.in_helper else site
        self.call = porter.call_at(self.call_site, (self.api,), self.api)
        self.bound = porter.bound(self.call, self.api, self.call_site)
        if "tensors" not in self.bound:
            raise porter.fail(self.call_site, self.api, "no tensors given")
        for unsupported in ("shapes", "enqueue_many"):
            value = self.bound[unsupported]
            if value is not None and self.call_site.source.code(value).strip() not in (
                    "None", "False"):
                raise porter.fail(self.call_site, self.api, f"{unsupported}= is not ported "
                                  "yet")
        if self.in_helper:
            self._find_helper_arguments()

    def _find_helper_arguments(self):
        """The helper's parameters the example comes in by, and the expressions the call
        in ``F`` passes for them."""
        porter, source = self.porter, self.call_site.source
        helper = source.function_of(self.call_site.statement)
        self.helper = helper
        items = elements(self.bound["tensors"])
        if items is None or not all(isinstance(e, cst.Name) for e in items):
            raise porter.fail(self.call_site, self.api, "the helper batches something else "
                              "than its parameters")
        parameters = [p.name.value for p in helper.params.params]
        self.example_parameters = [e.value for e in items]
        if any(name not in parameters for name in self.example_parameters):
            raise porter.fail(self.call_site, self.api, "the helper batches something else "
                              "than its parameters")
        outer = [c for c in calls_in(self.site.statement) if call_tail(c) == helper.name.value]
        if len(outer) != 1:
            raise porter.fail(self.site, helper.name.value, "the helper's call is not found")
        self.outer_call = outer[0]
        self.outer_arguments = _bound_to_parameters(helper, self.outer_call)
        if self.outer_arguments is None or any(
                name not in self.outer_arguments for name in self.example_parameters):
            raise porter.fail(self.site, helper.name.value, "the helper's arguments cannot "
                              "be matched to its parameters")

    def examples(self):
        """The expressions of ``F`` the example is batched from."""
        if self.in_helper:
            return [self.outer_arguments[n] for n in self.example_parameters]
        return [self.bound["tensors"]]

    def tensors_code(self, source):
        """What the map function returns: the example, as the batching call took it (a
        list of one tensor: that tensor, as TF1's batch of it is a tensor)."""
        if self.in_helper:
            values = [self.source.code(self.outer_arguments[name]).strip()
                      for name in self.example_parameters]
            return ", ".join(values)
        tensors = self.bound["tensors"]
        items = elements(tensors)
        if items is not None:
            return ", ".join(source.code(e).strip() for e in items)
        return source.code(tensors).strip()

    def names(self):
        """The names the program gives the batches (for the verification's report)."""
        statement = (self.site if not self.in_helper else self.call_site).statement
        assigned = assignment(statement)
        names = target_names(assigned[0]) if assigned else None
        return names or []

    def helper_maps(self):
        """For a batching call in a helper that port rewrote already (for another
        pipeline): whether the helper maps the function it is given after its shuffle;
        else None."""
        if not self.in_helper:
            return None
        taken = self.porter.rewritten_functions.get(self._helper_key())
        return None if taken is None else taken[1] is not None

    def _helper_key(self):
        return (self.call_site.frame.file, self.helper.name.value)

    def write(self, tf, dataset, edits, mapped=None):
        """Write the batching (``mapped``: the function it maps after its shuffle; a
        helper then takes it after the dataset); returns where its iterator is
        (:meth:`Porter.note_iterator`)."""
        if self.in_helper:
            self._write_helper(tf, dataset, mapped)
            return self.porter.iterator_of(self.call_site.source, self.call)
        edits.insert_before(self.site.statement, [edits.generated(
            self._chain(tf, dataset, self.call_site.source, self.bound, mapped=mapped) + "\n",
            self.site.statement)])
        edits.replace_expression(self.call, edits.parse_expression(
            codegen.iterator_next(tf, dataset)))
        return self.porter.note_iterator(self.source, self.call)

    def write_batches(self, tf, dataset, edits, mapped=None):
        """The batching call's statement becomes ``dataset = dataset.batch(...)`` (what
        follows takes the batches: a ``prefetch_queue``); ``mapped`` as for :meth:`write`."""
        if self.in_helper:
            raise self.porter.fail(self.site, self.api, "a batching call in a helper, "
                                   "followed by prefetch_queue, is not ported yet")
        edits.replace(self.site.statement, [edits.generated(self._chain(
            tf, dataset, self.source, self.bound, prefetch=False, mapped=mapped) + "\n",
            self.site.statement)])
        self.porter.rewritten_calls.add((real_path(self.source.path),
                                         self.source.lines(self.call)[0]))

    def _chain(self, tf, dataset, source, bound, api=None, prefetch=True, mapped=None):
        code = lambda node: None if node is None else source.code(node).strip()  # noqa: E731
        allow = code(bound["allow_smaller_final_batch"])
        drop = "True" if allow in (None, "False") else (None if allow == "True"
                                                        else f"not ({allow})")
        shuffle_buffer = seed = None
        if "shuffle" in (api or self.api):
            shuffle_buffer = code(bound["min_after_dequeue"])
            seed = code(bound["seed"])
            if shuffle_buffer in ("0", None):
                shuffle_buffer = code(bound["capacity"])
        padded = code(bound["dynamic_pad"]) == "True"
        return codegen.batching_statement(tf, dataset, code(bound["batch_size"]), drop, padded,
                                          shuffle_buffer, seed, prefetch, mapped)

    def _write_helper(self, tf, dataset, mapped):
        """The helper takes the dataset instead of the example (and, with ``mapped``, the
        function it maps after its shuffle: ``dataset, parse``); each of its batching
        calls of that example batches the dataset."""
        porter, source = self.porter, self.call_site.source
        helper, key = self.helper, self._helper_key()
        edits = porter.edits[self.call_site.frame.file]
        calls = porter.helper_calls(self.call_site.frame.file, helper)
        handled = {(self.source.path, self.site.frame.line)}
        if key not in porter.rewritten_functions:
            porter.analogs += [c for c in calls if c not in handled]
        if key not in porter.rewritten_functions:
            chooser = porter.chooser(source, helper)
            parameter = chooser.choose("dataset", "examples", "data")
            function = None if mapped is None else chooser.choose(mapped, "parse",
                                                                   "map_function")
            first = self.example_parameters[0]
            parameters = []
            for p in helper.params.params:
                if p.name.value == first:
                    parameters.append(p.with_changes(name=cst.Name(parameter)))
                    if function is not None:
                        parameters.append(cst.Param(cst.Name(function), comma=_next_comma(
                            helper.params.params, p, lambda q: q.name.value
                            in self.example_parameters)))
                elif p.name.value not in self.example_parameters:
                    parameters.append(p)
            uses = [n for name in self.example_parameters
                    for n in name_uses(source, helper, name)]
            batching = self._helper_batching_calls(source, helper)
            inside = {node for call in batching for node in names_in(source, call)}
            if any(node not in inside for node in uses):
                raise porter.fail(self.call_site, helper.name.value, "the helper uses the "
                                  "example for more than batching it")
            edits.replace_parameters(helper, helper.params.with_changes(params=parameters))
            for call in batching:
                statement = statement_of(source, call)
                bound = porter.bound(call, call_tail(call), self.call_site)
                edits.insert_before(statement, [edits.generated(
                    self._chain(tf, parameter, source, bound, call_tail(call),
                                mapped=function) + "\n", statement)])
                edits.replace_expression(call, edits.parse_expression(
                    codegen.iterator_next(tf, parameter)))
                porter.note_iterator(source, call)
            porter.rewritten_functions[key] = (parameter, function)
        arguments = []
        example_arguments = {self.outer_arguments[n] for n in self.example_parameters}
        placed = False
        for argument in self.outer_call.args:
            if argument.value in example_arguments:
                if not placed:
                    arguments.append(argument.with_changes(
                        value=cst.Name(dataset), keyword=None,
                        equal=cst.MaybeSentinel.DEFAULT))
                    if mapped is not None:
                        arguments.append(cst.Arg(cst.Name(mapped), comma=_next_comma(
                            self.outer_call.args, argument,
                            lambda a: a.value in example_arguments)))
                    placed = True
                continue
            arguments.append(argument)
        porter.edits[real_path(self.source.path)].replace_expression(
            self.outer_call, self.outer_call.with_changes(args=arguments))

    def _helper_batching_calls(self, source, helper):
        """The helper's batching calls of the example (one per branch)."""
        found = []
        for call in calls_in(helper):
            if call_tail(call) not in BATCHING:
                continue
            bound = self.porter.bound(call, call_tail(call), self.call_site)
            items = elements(bound["tensors"])
            if items and [getattr(e, "value", None) for e in items] == \
                    self.example_parameters:
                found.append(call)
        return found


def _next_comma(items, first, is_example):
    """The comma after the second of the example's parameters (or arguments) in
    ``items``, ``first`` the first (else its own): the function taken after the dataset
    goes where the example's second part was, line break included."""
    following = [item for item in items[items.index(first) + 1:] if is_example(item)]
    return (following[0] if following else first).comma


def _bound_to_parameters(function, call):
    """``{parameter name: argument expression}`` of ``call`` to ``function``, or None."""
    parameters = [p.name.value for p in function.params.params]
    bound = {}
    for position, argument in enumerate(call.args):
        if argument.star:
            return None
        if argument.keyword is None:
            if position >= len(parameters):
                return None
            bound[parameters[position]] = argument.value
        else:
            bound[argument.keyword.value] = argument.value
    return bound


class PrefetchPart:
    """slim's ``prefetch_queue(batches)`` after a batching call in ``F``: the code
    between them (per batch) becomes a map over the batches, the queue the iterator
    of the batches prefetched, its ``dequeue()`` the iterator's ``get_next()``."""

    def __init__(self, porter, pipeline, batch, stack):
        self.porter, self.pipeline, self.batch = porter, pipeline, batch
        self.site = site = porter.site(stack[-1], "prefetch_queue")
        self.source = site.source
        if site.source is not batch.source or site.source.function_of(
                site.statement) is not site.source.function_of(batch.site.statement):
            raise porter.fail(site, "prefetch_queue", "the prefetch queue is made in another "
                              "function than the batch it holds")
        self.call = porter.call_at(site, ("prefetch_queue",), "prefetch_queue")
        self.bound = porter.bound(self.call, "prefetch_queue", site)
        assigned = assignment(batch.site.statement)
        names = target_names(assigned[0]) if assigned else None
        if not names or "_" in names:
            raise porter.fail(batch.site, batch.api, "the batches are not assigned to names")
        self.batch_names = names
        self.dequeues = []
        for record in pipeline.dequeues:
            dequeue_site = porter.site(innermost(record.stack), "dequeue")
            call = porter.call_at(dequeue_site, ("dequeue",), "dequeue")
            self.dequeues.append((dequeue_site, call))
        if not self.dequeues:
            raise porter.fail(site, "prefetch_queue", "its queue is never dequeued")

    def write(self, tf, dataset, edits, chooser, mapped=None):
        """Write it (``mapped`` as for :meth:`BatchPart.write`); returns where its
        iterator is."""

        self.batch.write_batches(tf, dataset, edits, mapped)
        region = Region(self.porter, _PerBatch(self), self.site,
                        returned=[self.bound["tensors"]])
        region.check()
        items = elements(self.bound["tensors"])
        source = self.source
        outputs = (", ".join(source.code(e).strip() for e in items) if items is not None
                   else source.code(self.bound["tensors"]).strip())
        region.write_map(chooser, tf, edits, dataset, self.batch_names, outputs, None,
                         names=("process_batch", "prepare_batch", "batch_function"))
        capacity = (source.code(self.bound["capacity"]).strip()
                    if self.bound["capacity"] is not None else "8")
        edits.replace_expression(self.call, edits.parse_expression(
            f"{tf}.compat.v1.data.make_one_shot_iterator({dataset}.prefetch({capacity}))"))
        for site, call in self.dequeues:
            self.porter.edits[real_path(site.source.path)].replace_expression(
                call.func, call.func.with_changes(attr=cst.Name("get_next")))
        return self.porter.note_iterator(source, self.call)


class _PerBatch:
    """The start of the per-batch code, as :class:`~.region.Region` reads it."""

    forced_first = False
    in_helper = False
    shape = None

    def __init__(self, prefetch):
        self.prefetch = prefetch
        self.site, self.source = prefetch.batch.site, prefetch.source

    def start(self):
        return self.prefetch.batch.site.statement

    def taint(self):
        return set(self.prefetch.batch_names)

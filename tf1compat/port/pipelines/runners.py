"""``tf.train.start_queue_runners`` in a program whose pipelines are all tf.data.

With every queue pipeline written as tf.data there is no queue runner left to
start, and TensorFlow says so at each call ("start_queue_runners() was called when
no queue runners were defined", with a deprecation notice). The call goes: as a
statement of its own it is removed (``pass`` where it was a block's only one); as a
value (``threads = tf.train.start_queue_runners(sess=sess, coord=coord)``) it
becomes the empty list of threads it would now return, so ``coord.join(threads)``
and the rest of the program's ``Coordinator`` code, which work on TensorFlow 2,
stay as written; the loop still ends on ``OutOfRangeError`` from the iterator.
"""

import libcst as cst

from tf1compat.port.findings import Change
from tf1compat.port.pipelines.source import SourceFile
from tf1compat.port.pipelines.syntax import call_tail, calls_in, shown_path

__all__ = ["drop_runner_starts", "NAME"]

NAME = "tf.train.start_queue_runners"
_WHY = "every pipeline is tf.data: no queue runner to start"


def _starts(module):
    """The ``start_queue_runners`` calls of the queue API in ``module``, in order."""
    return [call for call in calls_in(module) if call_tail(call) == "start_queue_runners"
            and (isinstance(call.func, cst.Name) or isinstance(call.func.value, cst.Attribute)
                 and call.func.value.attr.value == "train")]


class _Drop(cst.CSTTransformer):
    def __init__(self, calls):
        super().__init__()
        self.calls = set(calls)
        self.removed = set()     # calls that were whole statements

    def leave_SimpleStatementLine(self, original_node, updated_node):
        kept = []
        for original, updated in zip(original_node.body, updated_node.body, strict=True):
            if isinstance(original, cst.Expr) and original.value in self.calls:
                self.removed.add(original.value)
            else:
                kept.append(updated)
        if len(kept) == len(updated_node.body):
            return updated_node
        if not kept:
            return cst.RemoveFromParent()
        kept[-1] = kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(body=kept)

    def leave_Call(self, original_node, updated_node):
        return cst.List([]) if original_node in self.calls else updated_node

    def leave_IndentedBlock(self, original_node, updated_node):
        if not updated_node.body:
            return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated_node


def drop_runner_starts(originals, rewritten):
    """The texts of ``originals`` (``{path: text}`` as the user wrote them; those the
    rewrite changed in ``rewritten``) without their ``start_queue_runners`` calls:
    ``({path: new text} of the files changed, [Change at the user's lines])``."""
    texts, changes = {}, []
    for path, original in originals.items():
        text = rewritten.get(path, original)
        try:
            before, source = SourceFile(path, original), SourceFile(path, text)
        except cst.ParserSyntaxError:
            continue
        calls, lines = _starts(source.module), [before.lines(call)[0]
                                                for call in _starts(before.module)]
        if not calls or len(calls) != len(lines):
            continue
        drop = _Drop(calls)
        texts[path] = source.module.visit(drop).code
        changes += [Change(shown_path(path), line, NAME, f"removed ({_WHY})"
                           if call in drop.removed else f"[] ({_WHY})")
                    for call, line in zip(calls, lines, strict=True)]
    return texts, changes

"""The TF1 names fixer: before/after pairs, and what it leaves alone."""

import pytest
from port_programs import fix as fix_all

from tf1compat.port.fixers.tf_names import TF2Names

pytestmark = pytest.mark.tf


def fix(source):
    return fix_all(source, fixers=(TF2Names,))

CASES = {
    "v1 only -> tf.compat.v1": (
        "import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 3])  # input\n",
        "import tensorflow as tf\nx = tf.compat.v1.placeholder(tf.float32, [None, 3])  # input\n"),
    "same function in a TF2 module": (
        "import tensorflow as tf\nok = tf.gfile.Exists(path)\nr = tf.random_uniform([2])\n",
        "import tensorflow as tf\nok = tf.io.gfile.exists(path)\nr = tf.random.uniform([2])\n"),
    "keywords renamed": (
        "import tensorflow as tf\ns = tf.reduce_sum(x, reduction_indices=1, keep_dims=True)\n",
        "import tensorflow as tf\ns = tf.reduce_sum(x, axis=1, keepdims=True)\n"),
    "positional arguments whose place TF2 changed become keywords": (
        "import tensorflow as tf\ni = tf.argmax(x, 1, 'best')\n",
        "import tensorflow as tf\ni = tf.argmax(x, 1, name='best')\n"),
    "a positional argument made a keyword by its TF2 name": (
        "import tensorflow as tf\np = tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], 'SAME')\n",
        "import tensorflow as tf\np = tf.nn.max_pool2d(input=x, ksize=[1, 3, 3, 1], "
        "strides=[1, 2, 2, 1], padding='SAME')\n"),
    "TF2's function lacks an argument of TF1's: the TF1 function": (
        "import tensorflow as tf\ny = tf.image.resize_images(x, [4, 4])\n",
        "import tensorflow as tf\ny = tf.compat.v1.image.resize_images(x, [4, 4])\n"),
    "a TF2 name that is another function: the TF1 function": (
        "import tensorflow as tf\nv = tf.Variable(0)\ns = tf.summary.scalar('loss', v)\n"
        "d = tf.data.Dataset.range(3).make_one_shot_iterator()\n",
        "import tensorflow as tf\nv = tf.compat.v1.Variable(0)\n"
        "s = tf.compat.v1.summary.scalar('loss', v)\n"
        "d = tf.compat.v1.data.Dataset.range(3).make_one_shot_iterator()\n"),
    "TF1's datasets in a file using a member only they have: TF1's": (
        "import tensorflow as tf\nd = tf.data.TFRecordDataset(['a'])\nprint(d.output_types)\n",
        "import tensorflow as tf\nd = tf.compat.v1.data.TFRecordDataset(['a'])\n"
        "print(d.output_types)\n"),
    "an argument TF2 dropped: the TF1 function": (
        "import tensorflow as tf\ny = tf.image.resize_images(x, [4, 4], align_corners=True)\n",
        "import tensorflow as tf\ny = tf.compat.v1.image.resize_images(x, [4, 4], "
        "align_corners=True)\n"),
    "a call tf_upgrade_v2 rewrites with code: the TF1 function": (
        "import tensorflow as tf\ny = tf.nn.dropout(x, keep_prob=0.5)\n",
        "import tensorflow as tf\ny = tf.compat.v1.nn.dropout(x, keep_prob=0.5)\n"),
    "any alias of tensorflow": (
        "import tensorflow as T\nT.Session()\n",
        "import tensorflow as T\nT.compat.v1.Session()\n"),
    "the API object inside a longer chain": (
        "import tensorflow as tf\nn = tf.app.flags.FLAGS.batch_size\n",
        "import tensorflow as tf\nn = tf.compat.v1.app.flags.FLAGS.batch_size\n"),
    "from tensorflow import a renamed object": (
        "from tensorflow import placeholder\nx = placeholder('float')\n",
        "from tensorflow.compat.v1 import placeholder\nx = placeholder('float')\n"),
    "from a module: the object under its new name, bound to the old": (
        "from tensorflow.python_io import TFRecordWriter\n",
        "from tensorflow.io import TFRecordWriter\n"),
    "a TF1 module as a value: TF1's module; an alias's uses are renamed through it": (
        "import tensorflow as tf\nnn = tf.nn\nopt = getattr(tf.train, name)\n"
        "classes = [tf.train]\ny = nn.relu(x)\n",
        "import tensorflow as tf\nnn = tf.nn\nopt = getattr(tf.compat.v1.train, name)\n"
        "classes = [tf.compat.v1.train]\ny = nn.relu(x)\n"),
    "from tensorflow import a module TF2 lacks, even when unused (YouTube-8M's files)": (
        "import tensorflow as tf\nfrom tensorflow import gfile, logging\n"
        "from tensorflow import train\nlogging.info('%s', train.AdamOptimizer)\n",
        "import tensorflow as tf\nfrom tensorflow.compat.v1 import gfile, logging\n"
        "from tensorflow import train\ntf.compat.v1.logging.info('%s', "
        "tf.compat.v1.train.AdamOptimizer)\n"),
}

LEFT_ALONE = {
    "TF1's datasets in a file using none of the members TF2's lack (port's tf.data code)": (
        "import tensorflow as tf\nd = tf.data.Dataset.from_tensor_slices(['a']).repeat(2)\n"
        "d = d.flat_map(tf.data.TFRecordDataset).batch(2).prefetch(tf.data.AUTOTUNE)\n"
        "x = tf.compat.v1.data.make_one_shot_iterator(d).get_next()\n"),
    "names TF2 has as TF1 had them": "import tensorflow as tf\ny = tf.nn.relu(tf.matmul(x, w))\n",
    "a user's own tf": "tf = load_config()\nx = tf.placeholder\n",
    "a parameter named tf": (
        "import tensorflow as tf\n\n\ndef f(tf):\n    return tf.placeholder()\n"),
    "a local shadowing tensorflow": (
        "import tensorflow as tf\n\n\ndef f():\n    tf = Config()\n    return tf.Session\n"),
    "strings and comments": "import tensorflow as tf\n# tf.placeholder\ns = 'tf.placeholder'\n",
    "tensorflow.compat.v1 programs": (
        "import tensorflow.compat.v1 as tf\nx = tf.placeholder(tf.float32)\n"),
    "TF1 names of other fixers": "import tensorflow as tf\nslim = tf.contrib.slim\n",
}


@pytest.mark.parametrize("case", CASES)
def test_before_after(case):
    before, after = CASES[case]
    assert fix(before)[0] == after


@pytest.mark.parametrize("case", LEFT_ALONE)
def test_left_alone(case):
    text, ported = fix(LEFT_ALONE[case])
    assert text == LEFT_ALONE[case]
    assert ported.changes == []


def test_changes_name_the_line_and_both_names():
    _, ported = fix("import tensorflow as tf\n\nx = tf.placeholder(tf.float32)\n")
    assert [str(change) for change in ported.changes] == [
        "program.py:3: tf.placeholder -> tf.compat.v1.placeholder"]


def test_a_name_tensorflow_2_lacks_is_a_finding_with_checks_reason():
    text, ported = fix("import tensorflow as tf\ntf.no_such_op(1)\n")
    assert text == "import tensorflow as tf\ntf.no_such_op(1)\n"
    [finding] = ported.findings
    assert (finding.line, finding.name) == (2, "tf.no_such_op")
    assert "not in TensorFlow 2's tf.compat.v1" in finding.reason


def test_running_twice_changes_nothing_more():
    once = fix("".join(before for before, _ in CASES.values()))[0]
    assert fix(once)[0] == once


def test_tensorflow_still_has_the_tables_port_reads():
    from tf1compat.port.tf_upgrade import SPEC_TABLES, upgrade_spec

    spec = upgrade_spec()
    for table in SPEC_TABLES:
        assert isinstance(getattr(spec, table), dict) and getattr(spec, table), table
    assert spec.symbol_renames["tf.placeholder"] == "tf.compat.v1.placeholder"

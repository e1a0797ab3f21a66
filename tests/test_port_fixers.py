"""Before/after pairs of the port's fixers beyond TF1 names (tests/test_port_tf_names.py),
with the cases each must leave alone."""

import importlib

import pytest
from port_programs import fix

from tf1compat.port.fixers.contrib import Contrib
from tf1compat.port.fixers.graph_mode import GraphMode
from tf1compat.port.fixers.keras2 import Keras2Names
from tf1compat.port.fixers.mnist import MnistTutorial
from tf1compat.port.fixers.numpy1 import NumPy1
from tf1compat.port.fixers.scipy_misc import ScipyMisc
from tf1compat.port.fixers.tf1_flags import AbslLoggingFlags
from tf1compat.port.fixers.tf_version import CannotJudge, TFVersion, judge

pytestmark = pytest.mark.tf

HIDDEN_MODULE = "contrib: a base's module a program cannot reach by its package's attributes"
PAIRS = {
    # NumPy 1.x
    "numpy: a type alias": (NumPy1, "import numpy as np\nx = np.zeros(3, np.float_)\n",
                            "import numpy as np\nx = np.zeros(3, np.float64)\n"),
    "numpy: a builtin alias": (NumPy1, "import numpy as np\nn = np.int(3.5)  # int\n",
                               "import numpy as np\nn = int(3.5)  # int\n"),
    "numpy: a call form": (NumPy1, "import numpy as np\nv = np.asscalar(a + b)\n",
                           "import numpy as np\nv = (a + b).item()\n"),
    "numpy: a call form with its arguments": (
        NumPy1, "import numpy as np\nm = np.in1d(a, [1, 2], invert=True)\n",
        "import numpy as np\nm = np.isin(a, [1, 2], invert=True).ravel()\n"),
    "numpy: a negative constant in an expression": (
        NumPy1, "import numpy as np\nlow = 2 * np.NINF\nbest = np.NINF\n",
        "import numpy as np\nlow = 2 * (-np.inf)\nbest = -np.inf\n"),
    "numpy: a module alias other than np": (
        NumPy1, "import numpy\nx = numpy.product([2, 3])\n",
        "import numpy\nx = numpy.prod([2, 3])\n"),
    "numpy: from numpy import": (
        NumPy1, "from numpy import float_\n\nx = float_(1)\n",
        "import numpy as np\n\nx = np.float64(1)\n"),
    "numpy: a re-exported module": (
        NumPy1, "import numpy as np\ny = np.math.sqrt(2)\n",
        "import numpy as np\nimport math\n\ny = math.sqrt(2)\n"),
    "numpy: array methods": (
        NumPy1, "data = image.tostring()\nspread = x.ptp(axis=0)\n",
        "import numpy as np\n\ndata = image.tobytes()\nspread = np.ptp(x, axis=0)\n"),
    "numpy: run mode's function where no spelling fits": (
        NumPy1, "import numpy as np\nx = np.fromstring(raw, np.uint8)\narr.itemset(0, 5)\n",
        "import numpy as np\nfrom tf1_legacy import numpy1\n\nx = numpy1.fromstring(raw, "
        "np.uint8)\nnumpy1.itemset(arr, 0, 5)\n"),
    # a flag named like one of absl.logging's
    "flags: absl.logging's names": (
        AbslLoggingFlags, "import tensorflow as tf\nflags = tf.app.flags\n"
                          "flags.DEFINE_string('log_dir', 'logs', 'where')\n"
                          "tf.flags.DEFINE_integer(name='v', default=0, help='-v')\n",
        "import tensorflow as tf\nfrom tf1_legacy import tf1_flags\n\nflags = tf.app.flags\n"
        "tf1_flags.define_over_absl_logging(flags.DEFINE_string)('log_dir', 'logs', 'where')\n"
        "tf1_flags.define_over_absl_logging(tf.flags.DEFINE_integer)(name='v', default=0, "
        "help='-v')\n"),
    # SciPy's image functions
    "scipy: from scipy import misc": (
        ScipyMisc, "from scipy import misc\nimg = misc.imread(path)\n",
        "from tf1_legacy import scipy_misc as misc\nimg = misc.imread(path)\n"),
    "scipy: from scipy.misc import": (
        ScipyMisc, "from scipy.misc import imread, imresize\n",
        "from tf1_legacy.scipy_misc import imread, imresize\n"),
    "scipy: through import scipy.misc": (
        ScipyMisc, "import scipy.misc\n\nscipy.misc.imsave(path, image)\n",
        "from tf1_legacy import scipy_misc\n\nscipy_misc.imsave(path, image)\n"),
    # the MNIST tutorial
    "mnist: input_data": (
        MnistTutorial, "from tensorflow.examples.tutorials.mnist import input_data\n"
                       "data = input_data.read_data_sets('MNIST_data', one_hot=True)\n",
        "from tf1_legacy import mnist_tutorial as input_data\n"
        "data = input_data.read_data_sets('MNIST_data', one_hot=True)\n"),
    "mnist: a name from the module": (
        MnistTutorial,
        "from tensorflow.contrib.learn.python.learn.datasets.mnist import read_data_sets\n",
        "from tf1_legacy.mnist_tutorial import read_data_sets\n"),
    "mnist: through tf.contrib.learn": (
        MnistTutorial,
        "import tensorflow as tf\nd = tf.contrib.learn.datasets.mnist.load_mnist()\n",
        "import tensorflow as tf\nfrom tf1_legacy import mnist_tutorial\n\n"
        "d = mnist_tutorial.load_mnist()\n"),
    # tf.contrib
    "contrib: import slim": (
        Contrib,
        "import tensorflow.contrib.slim as slim  # layers\nnet = slim.conv2d(x, 8, [3, 3])\n",
        "import tf_slim as slim  # layers\nnet = slim.conv2d(x, 8, [3, 3])\n"),
    "contrib: slim as an alias": (
        Contrib,
        "import tensorflow as tf\nslim = tf.contrib.slim\nnet = slim.fully_connected(x, 2)\n",
        "import tensorflow as tf\nimport tf_slim\n\nslim = tf_slim\n"
        "net = slim.fully_connected(x, 2)\n"),
    "contrib: from tensorflow.contrib import": (
        Contrib, "from tensorflow.contrib import slim\nfrom tensorflow.contrib import metrics\n",
        "import tf_slim as slim\nfrom tf_slim import metrics\n"),
    "contrib: tf.contrib.layers' names one by one (tf_slim.layers is tf-slim's layers.layers)": (
        Contrib, "from tensorflow.contrib import layers\nr = layers.l2_regularizer(0.1)\n",
        "import tf_slim\n\nr = tf_slim.l2_regularizer(0.1)\n"),
    "contrib: slim's nets": (
        Contrib, "from tensorflow.contrib.slim.nets import resnet_v1\n",
        "from tf_slim.nets import resnet_v1\n"),
    "contrib: a name with a TF2 home of its own": (
        Contrib,
        "import tensorflow as tf\nstep = tf.contrib.framework.get_or_create_global_step()\n",
        "import tensorflow as tf\nstep = tf.compat.v1.train.get_or_create_global_step()\n"),
    "contrib: through the contrib module's base": (
        Contrib, "import tensorflow as tf\ninit = tf.contrib.layers.xavier_initializer()\n"
                 "step = tf.contrib.metrics.streaming_accuracy\n",
        "import tensorflow as tf\nimport tf_slim\nimport tf_slim.metrics\n\n"
        "init = tf_slim.xavier_initializer()\nstep = tf_slim.metrics.streaming_accuracy\n"),
    "contrib: a base's public name, not a module it imported under that name": (
        Contrib, "import tensorflow as tf\narg_scope = tf.contrib.framework.arg_scope\n",
        "import tensorflow as tf\nimport tf_slim\n\narg_scope = tf_slim.arg_scope\n"),
    HIDDEN_MODULE: (
        Contrib, "import tensorflow as tf\nev = tf.contrib.training.evaluate_repeatedly\n",
        "import tensorflow as tf\nfrom tf_slim.training import evaluation as "
        "tf_slim_training_evaluation\n\nev = tf_slim_training_evaluation.evaluate_repeatedly\n"),
    "contrib: run mode's own HParams, written beside the program": (
        Contrib, "import tensorflow as tf\nhparams = tf.contrib.training.HParams(a=1)\n",
        "import tensorflow as tf\nimport tf1_legacy.hparam\n\n"
        "hparams = tf1_legacy.hparam.HParams(a=1)\n"),
    "contrib: HParams imported from tf.contrib.training": (
        Contrib, "from tensorflow.contrib.training import HParams, train  # config\n",
        "from tf1_legacy.hparam import HParams\nfrom tf_slim.training.training "
        "import train  # config\n"),
    "contrib: TensorFlow's own rename": (
        Contrib,
        "import tensorflow as tf\nr = tf.contrib.cluster_resolver.TPUClusterResolver()\n",
        "import tensorflow as tf\nr = tf.distribute.cluster_resolver.TPUClusterResolver()\n"),
    # TensorFlow version checks, decided with TF1's version (1.15.5) as run mode shows it
    "version: pix2pix's refusal of TF 2 goes": (
        TFVersion, 'import tensorflow as tf\n\ndef main():\n    # TF1 only\n'
                   '    if tf.__version__.split(\'.\')[0] != "1":\n'
                   '        raise Exception("Tensorflow version 1 required")\n    run()\n',
        "import tensorflow as tf\n\ndef main():\n    run()\n"),
    "version: the branch TF1 takes is kept, its comments too": (
        TFVersion, "import tensorflow as tf\n# old or new\nif tf.VERSION < '1.4': x = 1\n"
                   "else:\n    x = 2\n",
        "import tensorflow as tf\n# old or new\nx = 1\n"),
    "version: an elif chain, parsed versions": (
        TFVersion, "import tensorflow as tf\nfrom packaging import version\n"
                   "if version.parse(tf.__version__) >= version.parse('2.0'):\n    y = 2\n"
                   "elif tf.version.VERSION.startswith('1.15'):\n    y = 1\nelse:\n    y = 0\n",
        "import tensorflow as tf\nfrom packaging import version\ny = 1\n"),
    "version: an assert and a conditional expression": (
        TFVersion, "import tensorflow as tf\nassert int(tf.__version__[0]) < 2\n"
                   "def f():\n    return 'a' if tf.__version__ >= '2' else 'b'\n",
        "import tensorflow as tf\ndef f():\n    return 'b'\n"),
    "version: a block left empty gets pass": (
        TFVersion, "import tensorflow as tf\nfor _ in range(2):\n"
                   "    if tuple(map(int, tf.__version__.split('.')[:2])) > (2, 0):\n"
                   "        raise SystemExit('too new')\n",
        "import tensorflow as tf\nfor _ in range(2):\n    pass\n"),
}

LEFT_ALONE = {
    "numpy: np that is not numpy": (NumPy1, "np = Calculator()\nx = np.int(3)\n"),
    "numpy: names NumPy 2 has": (NumPy1, "import numpy as np\nx = np.float64(np.inf)\n"),
    "numpy: a module function named like a method": (
        NumPy1, "import numpy as np\nr = np.ptp(x)\n"),
    "numpy: strings and comments": (NumPy1, "import numpy as np\n# np.int\ns = 'np.float_'\n"),
    "flags: other names, and absl's own define": (
        AbslLoggingFlags, "import tensorflow as tf\nfrom absl import flags\n"
                          "tf.app.flags.DEFINE_string('train_dir', 'train', 'where')\n"
                          "flags.DEFINE_string('log_dir', 'logs', 'absl as TF 2 has it')\n"),
    "scipy: other scipy modules": (ScipyMisc, "from scipy import ndimage\nndimage.zoom(x, 2)\n"),
    "contrib: a user's own contrib": (Contrib, "contrib = load()\nx = contrib.slim.conv2d\n"),
    "version: printed or logged": (
        TFVersion, "import tensorflow as tf\nprint('TF', tf.__version__)\n"
                   "tf.logging.info('TF %s', tf.VERSION)\n"),
    "version: a user's own __version__": (
        TFVersion, "import mylib as tf\nif tf.__version__ < '2':\n    x = 1\n"),
    "graph mode: a program that chooses": (
        GraphMode, "import tensorflow as tf\ntf.enable_eager_execution()\n"),
}


@pytest.mark.parametrize("case", PAIRS)
def test_before_after(case):
    fixer, before, after = PAIRS[case]
    assert fix(before, fixers=(fixer,))[0] == after


@pytest.mark.parametrize("case", LEFT_ALONE)
def test_left_alone(case):
    fixer, source = LEFT_ALONE[case]
    text, ported = fix(source, fixers=(fixer,), entry=fixer is GraphMode)
    assert text == source
    assert ported.changes == [] and ported.findings == []


def test_running_each_fixer_twice_changes_nothing_more():
    for fixer, before, _ in PAIRS.values():
        once = fix(before, fixers=(fixer,))[0]
        assert fix(once, fixers=(fixer,))[0] == once, before


@pytest.mark.parametrize("source, line, name, reason", [
    ("import tensorflow as tf\nif tf.__version__ == wanted():\n    x = 1\n", 2,
     "tf.__version__ == wanted()", "version check port cannot judge"),
    ("import tensorflow as tf\nassert tf.__version__.startswith('2.')\n", 2,
     "assert tf.__version__.startswith('2.')", "fails with TF1's version 1.15.5 too"),
    ("import tensorflow as tf\n\nmajor = tf.__version__[0]\n", 3, "tf.__version__",
     "read outside a check port can judge"),
    ("import tensorflow as tf\nwhile tf.VERSION < '2':\n    break\n", 2, "tf.VERSION",
     "read outside a check port can judge"),
])
def test_version_checks_port_cannot_judge_are_findings(source, line, name, reason):
    text, ported = fix(source, fixers=(TFVersion,))
    [finding] = ported.findings
    assert text == source and ported.changes == []
    assert (finding.line, finding.name) == (line, name) and reason in finding.reason


def test_version_checks_are_judged_as_python_compares_the_version_run_mode_shows():
    assert judge("__tf1_version__ < '1.10'") is False          # strings compare as strings
    assert judge("LooseVersion(__tf1_version__) >= LooseVersion('1.10')") is True
    assert judge("__tf1_version__.split('.')[1] == '15'") is True
    for unjudged in ("__tf1_version__ < os.environ['V']",   # reads more than the version
                     "LooseVersion(__tf1_version__) < LooseVersion('2.0.0rc1')",
                     "version.parse(__tf1_version__) == version.parse('1.15.5.0')"):
        with pytest.raises(CannotJudge):   # the version parsers disagree on those
            judge(unjudged)


def test_a_ported_version_check_is_reported_at_its_line():
    _, ported = fix("import tensorflow as tf\n\nif tf.__version__[0] != '1':\n"
                    "    raise Exception('TF 1 required')\n", fixers=(TFVersion,))
    [change] = ported.changes
    assert (change.line, change.name) == (3, "tf.__version__[0] != '1'")
    assert change.replacement == "removed (false with TF 1.15.5)"


@pytest.mark.parametrize("source, name, reason", [
    ("import tensorflow as tf\ntf.contrib.quantize.create_training_graph()\n",
     "tf.contrib.quantize.create_training_graph", "use tensorflow_model_optimization"),
    ("import tensorflow as tf\ntf.contrib.layers.real_valued_column('x')\n",
     "tf.contrib.layers.real_valued_column", "use tf.feature_column"),
    ("import tensorflow.contrib.slim as slim\nslim.no_such_layer(x)\n",
     "tf.contrib.slim.no_such_layer", "has no attribute 'no_such_layer'"),
])
def test_contrib_names_without_counterpart_are_findings(source, name, reason):
    text, ported = fix(source, fixers=(Contrib,))
    [finding] = ported.findings
    assert (finding.line, finding.name) == (2, name) and reason in finding.reason


def test_other_imports_of_tensorflow_examples_are_findings():
    source = "from tensorflow.examples.tutorials import mnist\n"
    text, ported = fix(source, fixers=(MnistTutorial,))
    [finding] = ported.findings
    assert text == source and finding.name == "tensorflow.examples.tutorials"


def test_graph_mode_goes_right_after_the_tensorflow_import():
    text, ported = fix('"""Doc."""\nimport os\nimport tensorflow as tf\n\nx = 1\n',
                       fixers=(), entry=True)
    assert text.splitlines()[3].startswith("tf.compat.v1.disable_v2_behavior()")
    [change] = ported.changes
    assert change.line == 3


def test_keras2_names_make_the_entry_choose_tf_keras_first():
    source = '"""Doc."""\nimport tensorflow as tf\ny = tf.layers.dense(x, 3)\n'
    text, ported = fix(source, fixers=(Keras2Names,))
    assert text == source and ported.requirements == {"tf-keras"}
    text, ported = fix(source, fixers=(Keras2Names,), entry=True)
    assert text.splitlines()[1:3] == [
        "import os", 'os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # Keras 2 (tf-keras), '
        "as TF1 had"]
    assert fix(text, fixers=(Keras2Names,), entry=True)[0] == text


def test_a_tf_slim_program_calls_the_repair_after_the_graph_mode_line():
    from tf1compat.port.fixers.tf_slim import TfSlimNames

    source = "import tensorflow as tf\nimport tf_slim as slim\n\nnet = slim.conv2d(x, 4, [3, 3])\n"
    text, ported = fix(source, fixers=(TfSlimNames,), entry=True)
    assert text.splitlines()[1:4] == [
        "tf.compat.v1.disable_v2_behavior()  # TF1's graph mode, shapes, variables and control "
        "flow", "from tf1_legacy.tf_slim_repair import repair_tf_slim",
        "repair_tf_slim()  # tf-slim's names that TensorFlow moved"]
    assert ported.requirements == {"tf-slim"}
    assert fix(text, fixers=(TfSlimNames,), entry=True)[0] == text


@pytest.mark.parametrize("module, names", [
    ("tf1compat.v1.numpy1", ["fromstring", "itemset", "asfarray", "newbyteorder"]),
    ("tf1compat.v1.scipy_misc", ["imread", "imsave", "imresize"]),
    ("tf1compat.v1.mnist_tutorial", ["read_data_sets", "inference"]),
    ("tf1compat.v1.hparam", ["HParams"]),
    ("tf1compat.v1.tf1_flags", ["define_over_absl_logging"]),
])
def test_support_modules_hold_run_modes_definitions_and_import_no_tf1compat(module, names):
    import ast
    import importlib

    from tf1compat.port.support import support_source

    text = support_source(module, names)
    imported = {alias.name for node in ast.walk(ast.parse(text))
                if isinstance(node, ast.Import) for alias in node.names} | {
        node.module for node in ast.walk(ast.parse(text)) if isinstance(node, ast.ImportFrom)}
    assert not any(name.startswith("tf1compat") for name in imported), imported
    namespace = {}
    exec(compile(text, f"tf1_legacy/{module}.py", "exec"), namespace)  # noqa: S102
    runtime = importlib.import_module(module)
    for name in names:
        assert namespace[name].__doc__ == getattr(runtime, name).__doc__


def test_hparams_asks_for_run_modes_class_in_every_form():
    for source in ("import tensorflow as tf\nh = tf.contrib.training.HParams\n",
                   "from tensorflow.contrib import training\nh = training.HParams(a=1)\n",
                   "from tensorflow.contrib.training import HParams as H\n"):
        text, ported = fix(source, fixers=(Contrib,))
        assert ported.support == {("tf1compat.v1.hparam", "HParams")}, source
        assert ported.findings == [] and "tf1_legacy.hparam" in text
        assert [change.replacement for change in ported.changes][-1] == \
            "tf1_legacy.hparam.HParams"


def test_the_support_numpy1_acts_as_run_modes():
    import numpy as np

    from tf1compat.port.support import support_source
    from tf1compat.v1 import numpy1

    namespace = {}
    exec(support_source("tf1compat.v1.numpy1", ["fromstring", "asfarray"]), namespace)  # noqa: S102
    raw = np.arange(6, dtype=np.int16).tobytes()
    np.testing.assert_array_equal(namespace["fromstring"](raw, np.int16),
                                  numpy1.fromstring(raw, np.int16))
    assert namespace["asfarray"]([1, 2], np.int32).dtype == numpy1.asfarray([1, 2], np.int32).dtype


def test_a_module_its_package_hides_is_imported_from_its_parent_and_runs():
    """What port writes for ``tf.contrib.training.evaluate_repeatedly`` runs and is
    tf-slim's function; ``tf_slim.training.evaluation.evaluate_repeatedly`` written out
    raises AttributeError (tf_slim.training is tf-slim's training.training module)."""
    namespace = {}
    exec(PAIRS[HIDDEN_MODULE][2], namespace)
    evaluation = importlib.import_module("tf_slim.training.evaluation")
    assert namespace["ev"] is evaluation.evaluate_repeatedly
    with pytest.raises(AttributeError):
        exec("import tf_slim.training.evaluation\n"
             "tf_slim.training.evaluation.evaluate_repeatedly", {})

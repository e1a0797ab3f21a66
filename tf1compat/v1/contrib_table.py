"""``tensorflow.contrib`` in run mode, as a table: each TF 1.15 contrib module mapped
to what provides it on TensorFlow 2, or to the alternative to use instead.

TF-free, so ``tf1compat check`` reads it without TensorFlow; run mode builds its
``tf.contrib`` from it (:mod:`tf1compat.v1.contrib`). The README's contrib tables
show the same entries (compared by a test).
"""

import dataclasses

__all__ = ["CONTRIB", "ContribModule", "unknown_contrib_message", "missing_module_message"]


@dataclasses.dataclass(frozen=True)
class ContribModule:
    """One ``tf.contrib.<name>``: ``maps_to`` says in words what provides it (None:
    nothing, see ``alternative``); ``bases`` are ``extras`` more names, each as a reference
    (``"tf.nest"``: TensorFlow 2's ``tf.nest``; ``"v1.lookup"``: ``tf.compat.v1.lookup``;
    ``"tf_slim.layers"``: that module; ``"module:name"``: that module's attribute, run
    mode's own definition when the module is tf1compat's, which ``port`` writes beside
    the program), so this table imports nothing; ``unsupported`` TF1 names
    without counterpart -> alternative; ``keras2`` names TensorFlow 2 gives only with Keras 2
    (the tf-keras package) -> reference, placeholders of ``unsupported`` under Keras 3;
    ``constants`` class name -> its constants (name -> TF1 value), kept on the placeholder
    class."""

    maps_to: str | None
    alternative: str = ""
    bases: tuple = ()
    extras: dict = dataclasses.field(default_factory=dict)
    unsupported: dict = dataclasses.field(default_factory=dict)
    keras2: dict = dataclasses.field(default_factory=dict)
    constants: dict = dataclasses.field(default_factory=dict)


_KERAS_CELLS = ("tf.keras.layers.LSTMCell / GRUCell / SimpleRNNCell with tf.keras.layers.RNN, "
                "or tf.compat.v1.nn.rnn_cell with the tf-keras package installed "
                "(TF_USE_LEGACY_KERAS=1)")
_FEATURE_COLUMNS = "tf.feature_column (e.g. tf.feature_column.numeric_column)"
# TensorFlow's module of the KMeans that tf.contrib.factorization gave in TF 1.x (a
# contract test checks it still holds those names)
_CLUSTERING_OPS = "tensorflow.python.ops.clustering_ops"
# tf.contrib.rnn's names that tf.compat.v1.nn.rnn_cell has under Keras 2
_KERAS2_CELLS = ("RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell",
                 "MultiRNNCell", "DropoutWrapper", "ResidualWrapper", "DeviceWrapper",
                 "LSTMStateTuple")

CONTRIB = {
    "slim": ContribModule(
        "tf-slim 1.1.0 (`tf_slim`), its data API fixed by tf1compat; `slim.nets` is "
        "`tf_slim.nets`; `slim.prefetch_queue.prefetch_queue` is tf1compat's",
        bases=("tf_slim",), extras={"nets": "tf_slim.nets"}),
    "framework": ContribModule(
        "tf-slim's variables and `arg_scope` helpers; `nest`, `is_tensor`, `sort`, "
        "`argsort`, checkpoint readers from `tf` / `tf.train`",
        bases=("tf_slim.ops.variables", "tf_slim.ops.arg_scope"),
        extras={"get_or_create_global_step": "v1.train.get_or_create_global_step",
                "get_global_step": "v1.train.get_global_step",
                "nest": "tf.nest", "is_tensor": "tf.is_tensor",
                "sort": "tf.sort", "argsort": "tf.argsort",
                "load_checkpoint": "tf.train.load_checkpoint",
                "load_variable": "tf.train.load_variable",
                "list_variables": "tf.train.list_variables",
                "init_from_checkpoint": "v1.train.init_from_checkpoint",
                "get_name_scope": "v1.get_name_scope"},
        unsupported={"CriticalSection": "tf.CriticalSection",
                     "with_shape": "tf.debugging.assert_shapes, or tf.ensure_shape",
                     "with_same_shape": "tf.debugging.assert_shapes"}),
    "layers": ContribModule(
        "tf-slim's layers, initializers, regularizers, optimizers and summaries "
        "(`tf_slim.layers`)",
        bases=("tf_slim.layers",),
        unsupported={name: _FEATURE_COLUMNS for name in (
            "real_valued_column", "sparse_column_with_keys", "sparse_column_with_hash_bucket",
            "sparse_column_with_integerized_feature", "sparse_column_with_vocabulary_file",
            "embedding_column", "one_hot_column", "bucketized_column", "crossed_column",
            "weighted_sparse_column", "input_from_feature_columns",
            "weighted_sum_from_feature_columns", "create_feature_spec_for_parsing",
            "parse_feature_columns_from_examples")} | {
            "embed_sequence": "tf.nn.embedding_lookup on a tf.compat.v1.get_variable",
            "embedding_lookup_unique": "tf.nn.embedding_lookup"}),
    "deprecated": ContribModule(
        "`tf.summary`: `scalar_summary`, `image_summary`, `histogram_summary`, "
        "`audio_summary`, `merge_summary`, `merge_all_summaries`",
        extras={"scalar_summary": "v1.summary.scalar",
                "image_summary": "v1.summary.image",
                "histogram_summary": "v1.summary.histogram",
                "audio_summary": "v1.summary.audio",
                "merge_summary": "v1.summary.merge",
                "merge_all_summaries": "v1.summary.merge_all"}),
    "training": ContribModule(
        "tf-slim's training and evaluation loops (`create_train_op`, `train`, "
        "`evaluate_once`, `evaluate_repeatedly`, hooks, `checkpoints_iterator`); "
        "`HParams` is tf1compat's, TF 1.x's class",
        bases=("tf_slim.training.training", "tf_slim.training.evaluation"),
        extras={"HParams": "tf1compat.v1.hparam:HParams"},
        unsupported={
            "bucket_by_sequence_length": "tf.data.experimental.bucket_by_sequence_length",
            "batch_sequences_with_states": "tf.keras.layers.RNN(stateful=True) on tf.data",
            "SequenceQueueingStateSaver": "tf.keras.layers.RNN(stateful=True) on tf.data",
            "stratified_sample": "tf.data.Dataset.rejection_resample",
            "rejection_sample": "tf.data.Dataset.rejection_resample",
            "resample_at_rate": "tf.data.Dataset.rejection_resample",
            "weighted_resample": "tf.data.Dataset.sample_from_datasets",
            "FeedingQueueRunner": "tf.data.Dataset.from_generator",
            "python_input": "tf.data.Dataset.from_generator"}),
    "data": ContribModule(
        "`tf.data.experimental`, plus `Dataset`, `TFRecordDataset`, `TextLineDataset`, "
        "`FixedLengthRecordDataset`, `Iterator` from `tf.compat.v1.data`",
        bases=("tf.data.experimental",),
        extras={name: f"v1.data.{name}" for name in (
            "Dataset", "TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset",
            "Iterator")},
        unsupported={
            "batch_and_drop_remainder": "Dataset.batch(batch_size, drop_remainder=True)",
            "padded_batch_and_drop_remainder":
                "Dataset.padded_batch(batch_size, drop_remainder=True)",
            "sliding_window_batch": "Dataset.window(size, shift).flat_map(...)",
            "sloppy_interleave": "Dataset.interleave(..., deterministic=False)",
            "read_batch_features": "tf.data.experimental.make_batched_features_dataset",
            "LMDBDataset": "tensorflow_io's LMDB dataset"}),
    "rnn": ContribModule(
        "`static_rnn`, `static_bidirectional_rnn`, `static_state_saving_rnn` from "
        "`tf.compat.v1.nn`; with Keras 2 (tf-keras), the cells of "
        "`tf.compat.v1.nn.rnn_cell` (`BasicLSTMCell`, `MultiRNNCell`, `DropoutWrapper`, ...)",
        extras={name: f"v1.nn.{name}" for name in (
            "static_rnn", "static_bidirectional_rnn", "static_state_saving_rnn")},
        keras2={name: f"v1.nn.rnn_cell.{name}" for name in _KERAS2_CELLS},
        unsupported={name: _KERAS_CELLS for name in (
            *_KERAS2_CELLS, "LayerNormBasicLSTMCell", "AttentionCellWrapper",
            "OutputProjectionWrapper", "InputProjectionWrapper", "LSTMBlockCell",
            "GRUBlockCell", "NASCell", "UGRNNCell", "IntersectionRNNCell",
            "CoupledInputForgetGateLSTMCell")}),
    "keras": ContribModule(
        "`tf.keras`: Keras 2 (the tf-keras package) under `tf1compat run`, Keras 3 without it",
        bases=("v1.keras",)),
    "metrics": ContribModule("tf-slim's streaming metrics (`tf_slim.metrics`)",
                             bases=("tf_slim.metrics",)),
    "losses": ContribModule("tf-slim's losses (`tf_slim.losses`)",
                            bases=("tf_slim.losses",)),
    "lookup": ContribModule(
        "`tf.compat.v1.lookup`; `HashTable` is `StaticHashTable`, `MutableHashTable` and "
        "`MutableDenseHashTable` are `tf.lookup.experimental`'s",
        bases=("v1.lookup",),
        extras={"HashTable": "v1.lookup.StaticHashTable",
                "MutableHashTable": "tf.lookup.experimental.MutableHashTable",
                "MutableDenseHashTable": "tf.lookup.experimental.DenseHashTable"},
        unsupported={name: "tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(...))"
                     for name in ("index_table_from_file", "index_table_from_tensor",
                                  "index_to_string_table_from_file",
                                  "index_to_string_table_from_tensor", "string_to_index",
                                  "index_to_string")}),
    "util": ContribModule(
        "`make_tensor_proto`, `make_ndarray`, `constant_value` (`tf.get_static_value`)",
        extras={"make_tensor_proto": "tf.make_tensor_proto",
                "make_ndarray": "tf.make_ndarray",
                "constant_value": "tf.get_static_value"}),
    "factorization": ContribModule(
        "`KMeans` and its constants (`RANDOM_INIT`, `KMEANS_PLUS_PLUS_INIT`, `KMC2_INIT`, "
        "`SQUARED_EUCLIDEAN_DISTANCE`, `COSINE_DISTANCE`) from TensorFlow's clustering ops, "
        "where TF 1.x moved contrib's",
        extras={name: f"{_CLUSTERING_OPS}:{name}" for name in (
            "KMeans", "RANDOM_INIT", "KMEANS_PLUS_PLUS_INIT", "KMC2_INIT",
            "SQUARED_EUCLIDEAN_DISTANCE", "COSINE_DISTANCE")},
        unsupported={
            "KMeansClustering": "the KMeans class (training_graph) in a tf.compat.v1 loop",
            "GMM": "TensorFlow Probability's tfp.distributions.MixtureSameFamily",
            "GmmAlgorithm": "TensorFlow Probability's tfp.distributions.MixtureSameFamily",
            "gmm": "TensorFlow Probability's tfp.distributions.MixtureSameFamily",
            "WALSModel": "TensorFlow Recommenders, or tf.linalg.lstsq for alternating steps",
            "WALSMatrixFactorization": "TensorFlow Recommenders"}),
    "signal": ContribModule("`tf.signal`", bases=("tf.signal",)),
    "stateless": ContribModule(
        "`tf.random.stateless_*` (`stateless_random_uniform` is `stateless_uniform`, ...)",
        extras={"stateless_random_uniform": "tf.random.stateless_uniform",
                "stateless_random_normal": "tf.random.stateless_normal",
                "stateless_truncated_normal": "tf.random.stateless_truncated_normal",
                "stateless_multinomial": "tf.random.stateless_categorical"}),
}

# Contrib modules of TF 1.15 with no counterpart run mode could give them.
_WITHOUT_COUNTERPART = {
    "autograph": "tf.autograph",
    "batching": "tf.nondifferentiable_batch_function",
    "bayesflow": "TensorFlow Probability (tensorflow_probability)",
    "checkpoint": "tf.train.Checkpoint",
    "cloud": "tensorflow_io (BigQuery, GCS readers)",
    "cluster_resolver": "tf.distribute.cluster_resolver",
    "compiler": "tf.function(jit_compile=True)",
    "constrained_optimization": "TensorFlow Constrained Optimization (tensorflow_constrained_"
                                "optimization)",
    "copy_graph": "rebuilding the graph (no TensorFlow 2 counterpart)",
    "crf": "TensorFlow Addons' tfa.text (crf_log_likelihood, crf_decode)",
    "cudnn_rnn": "tf.keras.layers.LSTM / GRU (they use cuDNN on GPU)",
    "distribute": "tf.distribute",
    "distributions": "TensorFlow Probability's tfp.distributions",
    "eager": "TensorFlow 2 eager execution and tf.function",
    "estimator": "the tensorflow_estimator package",
    "feature_column": _FEATURE_COLUMNS,
    "ffmpeg": "tensorflow_io's audio and video ops",
    "gan": "TF-GAN (tensorflow_gan)",
    "graph_editor": "rebuilding the graph (no TensorFlow 2 counterpart)",
    "grid_rnn": "tf.keras.layers.RNN with custom cells",
    "image": "tf.image, or TensorFlow Addons' tfa.image (rotate, transform, ...)",
    "input_pipeline": "tf.data",
    "integrate": "TensorFlow Probability's tfp.math.ode",
    "kernel_methods": "tf.keras.layers.experimental.RandomFourierFeatures",
    "labeled_tensor": "plain tensors (no TensorFlow 2 counterpart)",
    "learn": "tf.keras, or tf.estimator (tensorflow_estimator)",
    "legacy_seq2seq": "TensorFlow Addons' tfa.seq2seq",
    "linear_optimizer": "tf.keras linear models",
    "memory_stats": "tf.config.experimental.get_memory_info",
    "mixed_precision": "tf.keras.mixed_precision",
    "model_pruning": "tensorflow_model_optimization's tfmot.sparsity",
    "nn": "tf.nn",
    "opt": "tf.keras.optimizers, or TensorFlow Addons' tfa.optimizers",
    "optimizer_v2": "tf.keras.optimizers",
    "periodic_resample": "tf.reshape / tf.transpose (no TensorFlow 2 counterpart)",
    "predictor": "tf.saved_model.load",
    "proto": "tf.io.decode_proto / tf.io.encode_proto",
    "quantization": "tf.quantization",
    "quantize": "tensorflow_model_optimization's quantization-aware training "
                "(tfmot.quantization.keras.quantize_model)",
    "receptive_field": "computing it by hand (no TensorFlow 2 counterpart)",
    "recurrent": "tf.keras.layers.RNN",
    "reduce_slice_ops": "tf.math.segment_sum and friends",
    "remote_fused_graph": "nothing (removed from TensorFlow)",
    "resampler": "TensorFlow Addons' tfa.image.resampler",
    "rpc": "tf.distribute / gRPC outside the graph",
    "saved_model": "tf.compat.v1.saved_model",
    "seq2seq": "TensorFlow Addons' tfa.seq2seq",
    "solvers": "tf.linalg",
    "sparsemax": "TensorFlow Addons' tfa.activations.sparsemax",
    "specs": "tf.keras (no TensorFlow 2 counterpart)",
    "staging": "tf.data's Dataset.prefetch",
    "stat_summarizer": "the TensorFlow Profiler",
    "summary": "tf.summary (TensorFlow 2: create_file_writer, scalar, ...)",
    "tensor_forest": "TensorFlow Decision Forests",
    "tensorboard": "tensorboard.plugins.projector",
    "tensorrt": "tf.experimental.tensorrt.Converter (TF-TRT; needs TensorFlow built with "
                "TensorRT)",
    "testing": "tf.test",
    "tfprof": "tf.profiler",
    "timeseries": "tf.keras models (no TensorFlow 2 counterpart)",
    "tpu": "tf.distribute.TPUStrategy",
}
# Constants of those modules, with their TF 1.15 values: a program compares with
# them (``mode == tf.contrib.learn.ModeKeys.TRAIN``), so they must be right.
_CONSTANTS = {
    "learn": {
        "ModeKeys": {"TRAIN": "train", "EVAL": "eval", "INFER": "infer"},
        "ProblemType": {"UNSPECIFIED": 0, "CLASSIFICATION": 1, "LINEAR_REGRESSION": 2,
                        "LOGISTIC_REGRESSION": 3},
        "PredictionKey": {"CLASSES": "classes", "PROBABILITIES": "probabilities",
                          "LOGITS": "logits", "LOGISTIC": "logistic", "SCORES": "scores",
                          "TOP_K": "top_k", "GENERIC": "output"}},
}
CONTRIB.update({name: ContribModule(None, alternative, constants=_CONSTANTS.get(name, {}))
                for name, alternative in _WITHOUT_COUNTERPART.items()})


def unknown_contrib_message(name):
    """Why ``tf.contrib.<name>`` (not in :data:`CONTRIB`) is not there."""
    return (f"module 'tf.contrib' has no attribute {name!r}: tf1compat run mode does not "
            f"provide it; it provides {sorted(CONTRIB)}")


# tensorflow.<part> -> what to say when a module below it is not provided
_MISSING_MODULE_HINTS = {
    "contrib": "import tf.contrib's modules themselves",
    "examples": "it provides tensorflow.examples.tutorials.mnist (input_data, mnist)",
}


def missing_module_message(dotted, reason):
    """Why ``import <dotted>`` fails in run mode when it is below a part run mode
    provides entirely (``tensorflow.contrib``, ``tensorflow.examples``); else None."""
    hint = _MISSING_MODULE_HINTS.get(dotted.split(".")[1] if "." in dotted else "")
    if hint is None:
        return None
    return f"No module named {dotted!r}: tf1compat run mode does not provide it; {hint} ({reason})"

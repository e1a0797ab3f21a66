"""TF 1.x's tf.contrib.training.HParams (tf1compat.v1.hparam): its semantics as TF 1.x
had them, its errors, and the class run mode gives a program."""

import copy
import json
import pickle

import pytest
from legacy_programs import tf1compat_run, write_program

from tf1compat.v1.hparam import HParams


def _model_hparams():
    return HParams(learning_rate=0.1, num_cells=18, data_format="NHWC", use_aux_head=True,
                   filter_sizes=[3, 5], scales=[1.0, 2.0], path="/a/b=c/d")


def test_hyperparameters_are_attributes_typed_by_the_values_they_were_added_with():
    hparams = _model_hparams()
    assert (hparams.learning_rate, hparams.num_cells, hparams.filter_sizes) == (0.1, 18, [3, 5])
    assert hparams.values() == {"learning_rate": 0.1, "num_cells": 18, "data_format": "NHWC",
                                "use_aux_head": True, "filter_sizes": [3, 5],
                                "scales": [1.0, 2.0], "path": "/a/b=c/d"}
    assert "num_cells" in hparams and "nope" not in hparams
    hparams.num_cells = 2.5  # plain attribute assignment is not checked, as in TF 1.x
    assert hparams.values()["num_cells"] == 2.5
    hparams.add_hparam("dropout", 0.5)
    assert list(hparams.values())[-1] == "dropout"
    hparams.del_hparam("dropout")
    hparams.del_hparam("dropout")  # a second time: nothing
    assert "dropout" not in hparams and not hasattr(hparams, "dropout")
    assert HParams().values() == {}


def test_parse_reads_tf1s_grammar():
    hparams = _model_hparams()
    assert hparams.parse("num_cells=6, learning_rate=-2.5e-3,data_format=NCHW,") is hparams
    assert (hparams.num_cells, hparams.learning_rate, hparams.data_format) == (6, -2.5e-3, "NCHW")
    hparams.parse("filter_sizes=[7, 9,11],scales=[3],path=/x=y/z,learning_rate=+2")
    assert (hparams.filter_sizes, hparams.scales, hparams.path) == ([7, 9, 11], [3.0], "/x=y/z")
    assert type(hparams.learning_rate) is float and hparams.learning_rate == 2.0
    hparams.parse("filter_sizes=[],data_format=")  # an empty list, an empty string
    assert (hparams.filter_sizes, hparams.data_format) == ([], "")
    for text, value in [("true", True), ("False", False), ("false", False), ("True", True),
                        ("0", False), ("1", True)]:
        assert hparams.parse(f"use_aux_head={text}").use_aux_head is value
    hparams.parse("")
    assert hparams.num_cells == 6
    dotted = HParams()
    dotted.add_hparam("a.b", 0.0)  # TF 1.x allowed dots: only getattr reaches them
    assert getattr(dotted.parse("a.b=1.5"), "a.b") == 1.5


def test_str_parses_back_and_repr_is_sorted():
    hparams = HParams(b=[2.0, 3.0], a=1, c="relu6")
    assert str(hparams) == "b=[2.0, 3.0],a=1,c=relu6"
    assert repr(hparams) == "HParams([('a', 1), ('b', [2.0, 3.0]), ('c', 'relu6')])"
    other = HParams(b=[5.0], a=4, c="relu10").parse(str(hparams))
    assert other.values() == hparams.values()


@pytest.mark.parametrize("values, message", [
    ("nope=1", r"HParams\.parse: unknown hyperparameter 'nope' in 'nope=1'; the "
               r"hyperparameters are \['data_format', 'filter_sizes', .*'use_aux_head'\]"),
    ("num_cells=1,,scales=[1]", r"malformed hyperparameters at character 12 of "
                                r"'num_cells=1,,scales=\[1\]' \(',scales=\[1\]'\): expected "
                                r"name=value or name=\[value,...\], separated by commas"),
    ("num_cells=poipoi", r"could not parse hyperparameter 'num_cells' of type int from "
                         r"'poipoi' in 'num_cells=poipoi': expected an integer"),
    ("num_cells=1.0", r"hyperparameter 'num_cells' of type int from '1.0'"),
    ("learning_rate=relu", r"'learning_rate' of type float from 'relu' .*expected a number"),
    ("scales=[1.0,x]", r"'scales' of type float from 'x' in 'scales=\[1.0,x\]'"),
    ("use_aux_head=yep", r"'use_aux_head' of type bool from 'yep' .*expected true, false, "
                         r"True, False or an integer"),
    ("num_cells=[1]", r"HParams\.parse: hyperparameter 'num_cells' holds one int, not a list; "
                      r"got \[1\]"),
    ("filter_sizes=3", r"hyperparameter 'filter_sizes' holds a list of int; got 3, not a list"),
    ("num_cells=1,num_cells=2", r"hyperparameter 'num_cells' is assigned twice in "
                                r"'num_cells=1,num_cells=2'"),
    ("filter_sizes[1]=3", r"'filter_sizes\[1\]=3' in 'filter_sizes\[1\]=3' assigns one element "
                          r"of a list, .*assign the whole list, filter_sizes=\[...\]"),
])
def test_parse_errors_say_what_where_and_what_was_expected(values, message):
    hparams = _model_hparams()
    before = hparams.values()
    with pytest.raises(ValueError, match=message):
        hparams.parse(values)
    assert hparams.values() == before


def test_parse_sets_all_or_nothing():
    hparams = _model_hparams()
    for values in ("learning_rate=0.5,num_cells=x", "learning_rate=0.5,filter_sizes=3"):
        with pytest.raises(ValueError, match="HParams.parse"):
            hparams.parse(values)
        assert hparams.learning_rate == 0.1


def test_a_hyperparameter_added_as_none_takes_anything_but_a_parsed_string():
    hparams = HParams(checkpoint=None)
    hparams.set_hparam("checkpoint", "1")  # TF 1.x: no type to check against
    assert hparams.checkpoint == "1"
    with pytest.raises(ValueError, match=r"hyperparameter 'checkpoint' was added as None, so "
                                         r"its type is unknown and 'x' in 'checkpoint=x'"):
        hparams.parse("checkpoint=x")
    again = HParams(checkpoint=None)
    again.add_hparam("checkpoint", 3)  # TF 1.x's rule: a None-valued name may be added again
    assert again.values() == {"checkpoint": 3}


def test_set_hparam_converts_an_int_to_a_float_and_keeps_other_types_exact():
    class Context:
        pass

    context = Context()
    hparams = HParams(rate=0.5, rates=[0.1, 0.2], context=Context(), name="a")
    hparams.set_hparam("rate", 1)
    hparams.set_hparam("rates", [1, 2.5])
    hparams.set_hparam("context", context)
    hparams.set_hparam("name", "b")
    assert type(hparams.rate) is float and hparams.rates == [1.0, 2.5]
    assert all(type(v) is float for v in hparams.rates)
    assert hparams.context is context and hparams.name == "b"


@pytest.mark.parametrize("name, value, message", [
    ("steps", 2.5, r"HParams\.set_hparam: hyperparameter 'steps' is of type int; got 2\.5 "
                   r"\(float\), expected an integer \(a float is not truncated\)"),
    ("steps", True, r"'steps' is of type int; got True \(bool\)"),
    ("steps", "2", r"'steps' is of type int; got '2' \(str\)"),
    ("flag", 1, r"'flag' is of type bool; got 1 \(int\), expected True or False"),
    ("flag", "true", r"'flag' is of type bool; got 'true' \(str\)"),
    ("name", 2.2, r"'name' is of type str; got 2\.2 \(float\), expected a string"),
    ("rate", False, r"'rate' is of type float; got False \(bool\)"),
    ("sizes", [2, 3.3], r"'sizes' is of type int; got 3\.3 \(float\)"),
    ("steps", [1], r"hyperparameter 'steps' holds one int, not a list; got \[1\]"),
    ("sizes", 1, r"hyperparameter 'sizes' holds a list of int; got 1, not a list"),
])
def test_set_hparam_refuses_what_tf1_refused_naming_the_hyperparameter(name, value, message):
    hparams = HParams(steps=1, flag=True, name="a", rate=0.5, sizes=[1, 2])
    with pytest.raises(ValueError, match=message):
        hparams.set_hparam(name, value)
    assert hparams.values() == {"steps": 1, "flag": True, "name": "a", "rate": 0.5,
                                "sizes": [1, 2]}


def test_unknown_hyperparameters_are_a_key_error_or_an_attribute_error_naming_the_known():
    hparams = HParams(steps=1)
    with pytest.raises(KeyError, match=r"HParams\.set_hparam: no hyperparameter 'step'; the "
                                       r"hyperparameters are \['steps'\] \(add_hparam"):
        hparams.set_hparam("step", 2)
    with pytest.raises(KeyError, match=r"HParams\.override_from_dict: no hyperparameter 'x'"):
        hparams.override_from_dict({"steps": 3, "x": 1})
    assert hparams.steps == 1  # all or nothing
    with pytest.raises(AttributeError, match=r"'HParams' object has no hyperparameter 'step'; "
                                             r"its hyperparameters are \['steps'\]"):
        hparams.step  # noqa: B018


@pytest.mark.parametrize("name, value, message", [
    ("steps", 2, r"HParams\.add_hparam: 'steps' is a hyperparameter already \(set_hparam "
                 r"changes it, del_hparam removes it\); choose another name"),
    ("values", 2, r"'values' is the name of an HParams method or attribute"),
    ("parse", 2, r"'parse' is the name of an HParams method or attribute"),
    ("_hparam_types", 2, r"'_hparam_types' is an attribute of this HParams already"),
    ("sizes", [], r"hyperparameter 'sizes' is an empty list; a list takes its type from its "
                  r"first element"),
])
def test_add_hparam_refuses_taken_names_and_empty_lists(name, value, message):
    hparams = HParams(steps=1)
    with pytest.raises(ValueError, match=message):
        hparams.add_hparam(name, value)
    assert hparams.values() == {"steps": 1}


def test_the_constructor_refuses_the_names_add_hparam_refuses():
    with pytest.raises(ValueError, match=r"^HParams: 'values' is the name of an HParams method"):
        HParams(steps=1, values=2)
    with pytest.raises(ValueError, match=r"^HParams: hyperparameter 'sizes' is an empty list"):
        HParams(sizes=())


def test_override_from_dict_sets_all_or_nothing():
    hparams = HParams(a=1, b=2.0, c="tanh", d=[0.5])
    assert hparams.override_from_dict({"a": -2, "c": "identity", "d": [0.1, 0.2]}) is hparams
    assert hparams.values() == {"a": -2, "b": 2.0, "c": "identity", "d": [0.1, 0.2]}
    with pytest.raises(ValueError, match=r"HParams\.override_from_dict: hyperparameter 'a'"):
        hparams.override_from_dict({"c": "relu", "a": 1.5})
    assert hparams.c == "identity"


def test_json_round_trip_and_tf1s_options():
    hparams = HParams(aaa=1, b=2.0, c_c="relu6", d=True, e=[1.0, 2.0])
    text = hparams.to_json()
    assert json.loads(text) == hparams.values()
    other = HParams(aaa=10, b=20.0, c_c="hello", d=False, e=[0.0])
    assert other.parse_json(text).values() == hparams.values()
    assert other.parse_json('{"b": 3}').b == 3.0 and type(other.b) is float
    assert HParams(aaa=123).to_json(indent=2) == '{\n  "aaa": 123\n}'
    assert HParams(aaa=123).to_json(separators=(";", "=")) == '{"aaa"=123}'
    assert HParams(b="x", a=False).to_json(sort_keys=True) == '{"a": false, "b": "x"}'
    with pytest.raises(ValueError, match=r"HParams\.parse_json: hyperparameter 'aaa' is of "
                                         r"type int; got 1\.5"):
        other.parse_json('{"aaa": 1.5}')
    with pytest.raises(ValueError, match=r"HParams\.parse_json: expected a JSON object of "
                                         r"name-value pairs, got list '\[1\]'"):
        other.parse_json("[1]")


def test_deepcopy_and_pickle_give_independent_hparams():
    hparams = _model_hparams()
    hparams.set_model_structure({"cells": 3})
    copied = copy.deepcopy(hparams)
    copied.set_hparam("num_cells", 2)
    copied.filter_sizes.append(7)
    copied.add_hparam("extra", 1)
    assert (hparams.num_cells, hparams.filter_sizes, "extra" in hparams) == (18, [3, 5], False)
    assert copied.get_model_structure() == {"cells": 3}
    restored = pickle.loads(pickle.dumps(hparams))
    assert restored.values() == hparams.values()
    with pytest.raises(ValueError, match="'num_cells' is of type int"):
        restored.set_hparam("num_cells", 1.5)  # the types travel too


def test_get_returns_a_default_that_fits_or_says_why_not():
    hparams = HParams(aaa=1, b=2.0, c_c="relu6", d=True, e=[5.0, 6.0])
    assert [hparams.get("aaa"), hparams.get("b", 3), hparams.get("e", [1, 2])] == [1, 2.0,
                                                                                  [5.0, 6.0]]
    assert hparams.get("unknown") is None and hparams.get("unknown", [1]) == [1]
    for key, default, message in [
            ("aaa", 2.0, r"HParams\.get: default 2\.0 does not fit: hyperparameter 'aaa' is "
                         r"of type int"),
            ("b", False, r"default False does not fit: hyperparameter 'b' is of type float"),
            ("c_c", [1], r"default \[1\] does not fit hyperparameter 'c_c': it is not a list"),
            ("e", 123.0, r"default 123\.0 does not fit hyperparameter 'e': it is a list of "
                         r"float"),
            ("e", ["a"], r"hyperparameter 'e' is of type float; got 'a' \(str\)")]:
        with pytest.raises(ValueError, match=message):
            hparams.get(key, default)


def test_a_hparam_def_is_refused_naming_what_tensorflow_2_lacks():
    with pytest.raises(ValueError, match=r"HParams\(hparam_def=\.\.\.\): TF 1\.x's HParamDef "
                                         r"protocol buffer .* does not exist on TensorFlow 2"):
        HParams(hparam_def=b"\n\x05")
    assert HParams(hparam_def=None, model_structure="m", a=1).get_model_structure() == "m"


HPARAMS_PROGRAM = """
    import copy

    import tensorflow as tf
    from tensorflow.contrib.training import HParams


    def cifar_config():
        return tf.contrib.training.HParams(stem_multiplier=3.0, num_cells=18,
                                           drop_path_keep_prob=0.6, filter_sizes=[3, 5])


    config = cifar_config()
    evaluation = copy.deepcopy(config)
    evaluation.set_hparam("drop_path_keep_prob", 1)
    evaluation.parse("num_cells=2,filter_sizes=[7]")
    print(isinstance(evaluation, HParams), HParams is tf.contrib.training.HParams)
    print(config)
    print(sorted(evaluation.values().items()))
    scale = tf.constant(evaluation.stem_multiplier) * evaluation.num_cells
    with tf.Session() as sess:
        print(sess.run(scale))
    try:
        evaluation.set_hparam("num_cells", 2.5)
    except ValueError as e:
        print(e)
"""


def test_check_finds_hparams_supported_and_its_neighbours_not(tmp_path):
    from tf1compat.v1.check import check_file

    program = write_program(tmp_path, "config.py", HPARAMS_PROGRAM + (
        "    tf.contrib.training.stratified_sample(x, y, [0.5], [0.5], 2)\n"))
    [finding] = check_file(str(program))
    assert finding.name == "tf.contrib.training.stratified_sample"


@pytest.mark.tf
@pytest.mark.slow
def test_run_mode_gives_the_program_tf1s_hparams(tmp_path):
    program = write_program(tmp_path / "prog", "config.py", HPARAMS_PROGRAM)
    done = tf1compat_run(program, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "True True",
        "stem_multiplier=3.0,num_cells=18,drop_path_keep_prob=0.6,filter_sizes=[3, 5]",
        "[('drop_path_keep_prob', 1.0), ('filter_sizes', [7]), ('num_cells', 2), "
        "('stem_multiplier', 3.0)]",
        "6.0",
        "HParams.set_hparam: hyperparameter 'num_cells' is of type int; got 2.5 (float), "
        "expected an integer (a float is not truncated)"]

"""TF 1.x's ``tf.contrib.training.HParams``: hyperparameters as attributes, each typed
by the value it was added with, overridden from ``name=value`` strings, dicts and JSON.

Run mode gives it as ``tf.contrib.training.HParams`` (the contrib table's ``training``
row); ``tf1compat port`` writes it beside a ported program as ``tf1_legacy/hparam.py``.
What differs from TF 1.x: no ``HParamDef`` protocol buffer (``hparam_def=``,
``to_proto``: TensorFlow 2 has no such message), and errors that say where and what was
expected (the same exception types).
"""

import json
import numbers
import re
from typing import Any

__all__ = ["HParams"]

# one clause of HParams.parse's text: name, an optional [index], then a value or a list
_CLAUSE = re.compile(r"(?P<name>[a-zA-Z][\w.]*)(\[\s*(?P<index>\d+)\s*\])?\s*=\s*"
                     r"((?P<value>[^,\[]*)|\[(?P<values>[^\]]*)\])($|,\s*)")
_EXPECTED = {bool: "True or False", int: "an integer (a float is not truncated)",
             float: "a number", str: "a string", bytes: "a string"}
_BOOLEANS = {"true": True, "True": True, "false": False, "False": False}


def _expected(param_type: type) -> str:
    return next((text for kind, text in _EXPECTED.items() if issubclass(param_type, kind)),
                f"a {param_type.__name__}")


def _parsed_scalar(text: str, param_type: type, name: str, values: str) -> Any:
    """``text`` read as a ``param_type`` for :meth:`HParams.parse` (a bool as TF 1.x
    read one: ``true``, ``True``, ``false``, ``False`` or an integer)."""
    where = (f"HParams.parse: could not parse hyperparameter {name!r} of type "
             f"{param_type.__name__} from {text!r} in {values!r}: expected")
    if param_type is type(None):
        raise ValueError(f"HParams.parse: hyperparameter {name!r} was added as None, so its "
                         f"type is unknown and {text!r} in {values!r} cannot be read as one; "
                         "set_hparam sets any value")
    try:
        if param_type is bool:
            return _BOOLEANS[text] if text in _BOOLEANS else bool(int(text))
        return param_type(text)
    except (ValueError, TypeError):
        expected = "true, false, True, False or an integer" if param_type is bool \
            else _expected(param_type)
        raise ValueError(f"{where} {expected}") from None


def _parse_values(values: str, types: dict[str, type]) -> dict[str, Any]:
    """``name=value,name=[v1,v2],...`` as ``{name: value}``, each value read as its
    hyperparameter's type (a list's elements as its elements' type)."""
    parsed: dict[str, Any] = {}
    position = 0
    while position < len(values):
        clause = _CLAUSE.match(values, position)
        if clause is None:
            raise ValueError(f"HParams.parse: malformed hyperparameters at character {position} "
                             f"of {values!r} ({values[position:]!r}): expected name=value or "
                             "name=[value,...], separated by commas")
        position = clause.end()
        name = clause["name"]
        if name not in types:
            raise ValueError(f"HParams.parse: unknown hyperparameter {name!r} in {values!r}; "
                             f"the hyperparameters are {sorted(types)}")
        if clause["index"] is not None:
            raise ValueError(f"HParams.parse: {clause.group(0).rstrip(', ')!r} in {values!r} "
                             "assigns one element of a list, which HParams cannot (TF 1.x's "
                             f"refused it too): assign the whole list, {name}=[...]")
        if name in parsed:
            raise ValueError(f"HParams.parse: hyperparameter {name!r} is assigned twice in "
                             f"{values!r}")
        if clause["values"] is not None:
            elements = [e for e in re.split("[ ,]", clause["values"]) if e]
            parsed[name] = [_parsed_scalar(e, types[name], name, values) for e in elements]
        else:
            parsed[name] = _parsed_scalar(clause["value"], types[name], name, values)
    return parsed


def _converted(where: str, name: str, param_type: type, value: Any) -> Any:
    """``value`` as a ``param_type``, with TF 1.x's rules: the same type as it is;
    anything for a hyperparameter added as None; an integer to a float; never a number
    to a string, a string or number to a bool or back, a float to an integer."""
    if type(value) is param_type or param_type is type(None):
        return value
    refused = (issubclass(param_type, (str, bytes)) and not isinstance(value, (str, bytes))
               or issubclass(param_type, bool) != isinstance(value, bool)
               or issubclass(param_type, numbers.Integral)
               and not isinstance(value, numbers.Integral)
               or issubclass(param_type, numbers.Number)
               and not isinstance(value, numbers.Number))
    if refused:
        raise ValueError(f"{where}: hyperparameter {name!r} is of type {param_type.__name__}; "
                         f"got {value!r} ({type(value).__name__}), expected "
                         f"{_expected(param_type)}")
    return param_type(value)


class HParams:
    """Hyperparameters as name-value pairs, each an attribute (``hparams.learning_rate``)
    whose type is taken from the value it was added with (a list's from its first
    element); :meth:`set_hparam`, :meth:`parse`, :meth:`parse_json` and
    :meth:`override_from_dict` change values of that type only. ``model_structure`` is
    kept for :meth:`get_model_structure`."""

    def __init__(self, hparam_def: Any = None, model_structure: Any = None,
                 **kwargs: Any) -> None:
        self._hparam_types: dict[str, tuple[type, bool]] = {}
        self._model_structure = model_structure
        if hparam_def is not None:
            raise ValueError("HParams(hparam_def=...): TF 1.x's HParamDef protocol buffer "
                             "(tensorflow.contrib.training's hparam_pb2) does not exist on "
                             "TensorFlow 2; give the hyperparameters as keyword arguments, or "
                             "parse_json what to_json wrote")
        for name, value in kwargs.items():
            self._add(name, value, "HParams")

    def __getattr__(self, name: str) -> Any:
        """Only reached for a missing attribute: say which hyperparameters there are."""
        if name.startswith("__"):  # copy, pickle and friends probing for protocols
            raise AttributeError(name)
        known = sorted(self.__dict__.get("_hparam_types", {}))
        raise AttributeError(f"'HParams' object has no hyperparameter {name!r}; its "
                             f"hyperparameters are {known}")

    def _add(self, name: str, value: Any, where: str) -> None:
        if getattr(self, name, None) is not None:  # TF 1.x's rule: a None value is replaced
            what = "a hyperparameter already (set_hparam changes it, del_hparam removes it)" \
                if name in self._hparam_types else \
                "the name of an HParams method or attribute" if hasattr(HParams, name) else \
                "an attribute of this HParams already"
            raise ValueError(f"{where}: {name!r} is {what}; choose another name")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"{where}: hyperparameter {name!r} is an empty list; a list "
                                 "takes its type from its first element, so it must have one")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def add_hparam(self, name: str, value: Any) -> None:
        """Add hyperparameter ``name``; ValueError if the name is taken (by a
        hyperparameter or a member of HParams) or ``value`` is an empty list."""
        self._add(name, value, "HParams.add_hparam")

    def _checked(self, name: str, value: Any, where: str) -> Any:
        """``value`` converted to hyperparameter ``name``'s type (KeyError: no such
        hyperparameter; ValueError: not of its type)."""
        if name not in self._hparam_types:
            raise KeyError(f"{where}: no hyperparameter {name!r}; the hyperparameters are "
                           f"{sorted(self._hparam_types)} (add_hparam adds one)")
        param_type, is_list = self._hparam_types[name]
        if isinstance(value, list) != is_list:
            expected = f"a list of {param_type.__name__}; got {value!r}, not a list" if is_list \
                else f"one {param_type.__name__}, not a list; got {value!r}"
            raise ValueError(f"{where}: hyperparameter {name!r} holds {expected}")
        return [_converted(where, name, param_type, v) for v in value] if is_list else \
            _converted(where, name, param_type, value)

    def _set(self, values: dict[str, Any], where: str) -> "HParams":
        """Set all ``values`` (name -> value) or, if one does not fit, none."""
        converted = {name: self._checked(name, value, where) for name, value in values.items()}
        for name, value in converted.items():
            setattr(self, name, value)
        return self

    def set_hparam(self, name: str, value: Any) -> None:
        """Set an existing hyperparameter: KeyError if there is none, ValueError if
        ``value`` does not have its type (an int for a float is converted)."""
        self._set({name: value}, "HParams.set_hparam")

    def del_hparam(self, name: str) -> None:
        """Remove hyperparameter ``name``; nothing if there is none."""
        if name in self._hparam_types:
            delattr(self, name)
            del self._hparam_types[name]

    def override_from_dict(self, values_dict: dict[str, Any]) -> "HParams":
        """:meth:`set_hparam` for each pair of ``values_dict``, all or (if one does not
        fit) none; returns this HParams."""
        return self._set(values_dict, "HParams.override_from_dict")

    def parse(self, values: str) -> "HParams":
        """Set hyperparameters from ``name=value`` pairs separated by commas (a list as
        ``name=[v1,v2]``, a bool as ``true``/``false``/``1``/``0``), all or none: ValueError
        naming the clause for an unknown name, a malformed clause or a value of the wrong
        type. Returns this HParams."""
        types = {name: param_type for name, (param_type, _) in self._hparam_types.items()}
        return self._set(_parse_values(values, types), "HParams.parse")

    def parse_json(self, values_json: str) -> "HParams":
        """Set hyperparameters from a JSON object of name-value pairs (as
        :meth:`override_from_dict`); returns this HParams."""
        values = json.loads(values_json)
        if not isinstance(values, dict):
            raise ValueError("HParams.parse_json: expected a JSON object of name-value pairs, "
                             f"got {type(values).__name__} {values_json!r}")
        return self._set(values, "HParams.parse_json")

    def to_json(self, indent: int | str | None = None,
                separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
        """The hyperparameters as a JSON object (``json.dumps``' options)."""
        return json.dumps(self.values(), indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def values(self) -> dict[str, Any]:
        """The hyperparameters as a dict, in the order they were added."""
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key: str, default: Any = None) -> Any:
        """Hyperparameter ``key``'s value, or ``default`` when there is none; ValueError
        if there is one and ``default`` does not fit its type."""
        if key not in self._hparam_types:
            return default
        if default is not None:
            param_type, is_list = self._hparam_types[key]
            where = f"HParams.get: default {default!r} does not fit"
            if isinstance(default, list) != is_list:
                kind = f"a list of {param_type.__name__}" if is_list else "not a list"
                raise ValueError(f"{where} hyperparameter {key!r}: it is {kind}")
            for value in default if is_list else [default]:
                _converted(where, key, param_type, value)
        return getattr(self, key)

    def set_model_structure(self, model_structure: Any) -> None:
        self._model_structure = model_structure

    def get_model_structure(self) -> Any:
        return self._model_structure

    def __contains__(self, key: object) -> bool:
        return key in self._hparam_types

    def __str__(self) -> str:
        return ",".join(f"{name}={value}" for name, value in self.values().items())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({sorted(self.values().items())})"

"""What :class:`~clustersim.Cluster` and :class:`~clustersim.Workload` share: a validated spec.

A spec is held in its normalized JSON form (every key, defaults filled in, as the C++ core writes it)
together with the name of the file it came from, which error messages name. Every constructor and
every change goes through the C++ parser, so a bad value is refused with the same file, JSON path and
message as the ``clustersim`` command; changes are applied as its ``--set key.path=value`` options.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple, TypeVar, Union

from . import _core

__all__ = ["PathLike", "flatten_overrides", "override_text"]

PathLike = Union[str, "os.PathLike[str]"]
_SpecT = TypeVar("_SpecT", bound="_Spec")

# (normalized JSON text, file) from the C++ core.
_Loaded = Tuple[str, str]


def override_text(value: Any) -> str:
    """The text of an override value, as ``--set key=<text>`` would take it (JSON)."""
    return json.dumps(value, default=_json_default, allow_nan=False)


def _json_default(value: Any) -> Any:
    # NumPy scalars and arrays (grids built with numpy.arange, DataFrame cells).
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 0) == 0:
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"cannot write {type(value).__name__} {value!r} into a spec")


def flatten_overrides(overrides: Mapping[str, Any], prefix: str = "") -> List[Tuple[str, str]]:
    """``{"fabric": {"oversubscription": 2}, "nodes": 4}`` as ``[("fabric.oversubscription", "2"),
    ("nodes", "4")]``: nested dictionaries are merged key by key, other values replace."""
    out: List[Tuple[str, str]] = []
    for key, value in overrides.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.extend(flatten_overrides(value, prefix=path + "."))
        else:
            out.append((path, override_text(value)))
    return out


def _combine(overrides: Optional[Mapping[str, Any]], kwargs: Mapping[str, Any]) -> List[Tuple[str, str]]:
    combined: Dict[str, Any] = dict(overrides or {})
    combined.update(kwargs)
    return flatten_overrides(combined)


class _Spec:
    """Base of Cluster and Workload: normalized spec data plus the file it came from."""

    __slots__ = ("_data", "_file")

    # The kind of spec, set by each subclass ("cluster", "workload"): its C++ entry points are
    # _core.load_<kind>, _core.parse_<kind> and _core.<kind>_presets.
    _kind = ""

    @classmethod
    def _load(cls, source: str, overrides: List[Tuple[str, str]]) -> _Loaded:
        """A file or preset with overrides -> (normalized JSON, file)."""
        return getattr(_core, "load_" + cls._kind)(source, overrides)  # type: ignore[no-any-return]

    @classmethod
    def _parse(cls, text: str, file: str, overrides: List[Tuple[str, str]]) -> _Loaded:
        """JSON text with overrides -> (normalized JSON, file)."""
        return getattr(_core, "parse_" + cls._kind)(text, file, overrides)  # type: ignore[no-any-return]

    @classmethod
    def _preset_names(cls) -> List[str]:
        return list(getattr(_core, cls._kind + "_presets")())

    _data: Dict[str, Any]
    _file: str

    def __init__(self, **keys: Any) -> None:
        loaded = type(self)._parse(override_text(keys), "<keyword arguments>", [])
        self._set(loaded)

    # -- construction -------------------------------------------------------------------------------
    def _set(self, loaded: _Loaded) -> None:
        text, file = loaded
        object.__setattr__(self, "_data", json.loads(text))
        object.__setattr__(self, "_file", file)

    @classmethod
    def _from_loaded(cls: type[_SpecT], loaded: _Loaded) -> _SpecT:
        spec = cls.__new__(cls)
        spec._set(loaded)
        return spec

    @classmethod
    def presets(cls) -> List[str]:
        """Names of the built-in presets, usable with :meth:`preset`."""
        return list(cls._preset_names())

    @classmethod
    def preset(cls: type[_SpecT], name: str, /, **overrides: Any) -> _SpecT:
        """A built-in preset, with keyword overrides of top-level keys (dictionaries merge)."""
        return cls._from_loaded(cls._load(name, _combine(None, overrides)))

    @classmethod
    def load(cls: type[_SpecT], source: PathLike, /, **overrides: Any) -> _SpecT:
        """A spec file path or a preset name (the CLI's ``--cluster``/``--workload`` argument)."""
        return cls._from_loaded(cls._load(os.fspath(source), _combine(None, overrides)))

    @classmethod
    def from_json(cls: type[_SpecT], source: PathLike, /) -> _SpecT:
        """A spec from a JSON file path, or from JSON text (a string starting with ``{``)."""
        if isinstance(source, str) and source.lstrip().startswith("{"):
            return cls._from_loaded(cls._parse(source, "<json>", []))
        return cls._from_loaded(cls._load(os.fspath(source), []))

    @classmethod
    def from_dict(cls: type[_SpecT], data: Mapping[str, Any], /, *, file: str = "<dict>") -> _SpecT:
        """A spec from a dictionary with the keys of the JSON form; ``file`` names it in errors."""
        return cls._from_loaded(cls._parse(override_text(data), file, []))

    @classmethod
    def coerce(cls: type[_SpecT], value: Union[_SpecT, PathLike, Mapping[str, Any]], /) -> _SpecT:
        """``value`` itself when it is already a spec; a file or preset name; or a dictionary."""
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            return cls.from_dict(value)
        if isinstance(value, (str, os.PathLike)):
            return cls.load(value)
        raise TypeError(f"expected a {cls.__name__}, a file path, a preset name or a dict, got {type(value).__name__}")

    # -- changes ------------------------------------------------------------------------------------
    def updated(self: _SpecT, overrides: Optional[Mapping[str, Any]] = None, /, **kwargs: Any) -> _SpecT:
        """A copy with values changed, validated again.

        ``overrides`` maps dotted paths to values (``{"fabric.oversubscription": 2}``); keyword
        arguments name top-level keys, and dictionaries merge (``fabric={"oversubscription": 2}``).
        """
        loaded = type(self)._parse(self.to_json(indent=None), self._file, _combine(overrides, kwargs))
        return type(self)._from_loaded(loaded)

    # -- access -------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The spec's ``name``."""
        return str(self._data.get("name", ""))

    @property
    def file(self) -> str:
        """Where the spec came from (a file, a preset's file, ``<dict>``): named by error messages."""
        return self._file

    def get(self, path: str, default: Any = None) -> Any:
        """The value at a dotted path (``"fabric.oversubscription"``), or ``default``."""
        node: Any = self._data
        for key in path.split("."):
            if isinstance(node, Mapping) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return default
        return copy.deepcopy(node)

    def __getitem__(self, path: str) -> Any:
        sentinel = object()
        value = self.get(path, sentinel)
        if value is sentinel:
            raise KeyError(path)
        return value

    def __contains__(self, path: object) -> bool:
        sentinel = object()
        return isinstance(path, str) and self.get(path, sentinel) is not sentinel

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def to_dict(self) -> Dict[str, Any]:
        """The spec as a dictionary (a copy): every key, defaults filled in."""
        return copy.deepcopy(self._data)

    def to_json(self, path: Optional[PathLike] = None, *, indent: Optional[int] = 2) -> str:
        """The spec as JSON text; also written to ``path`` when given. ``from_json`` reads it back."""
        text = json.dumps(self._data, indent=indent)
        if path is not None:
            _core.write_output_file(os.fspath(path), text + "\n", "spec file")
        return text

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._data == other._data

    def __hash__(self) -> int:
        return hash(json.dumps(self._data, sort_keys=True))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: use .updated(...) for a changed copy")

    def __getstate__(self) -> Tuple[str, str]:
        return (json.dumps(self._data), self._file)

    def __setstate__(self, state: Tuple[str, str]) -> None:
        object.__setattr__(self, "_data", json.loads(state[0]))
        object.__setattr__(self, "_file", state[1])

    def _as_core(self) -> Tuple[str, str]:
        """(JSON text, file) for the C++ core."""
        return json.dumps(self._data), self._file

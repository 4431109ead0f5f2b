"""The two kinds of failure a user can meet, with the same text as the ``clustersim`` command.

:class:`SpecError`
    The input is wrong: a spec file, a preset name, a dictionary, an override. It names the file, the
    JSON path of the bad value (an RFC 6901 pointer such as ``/fabric/oversubscription``) and what was
    expected. The CLI prints ``error: <str(e)>`` and exits with status 2.
:class:`SimulationError`
    The input was valid but the simulation could not finish (a crashed simulation process, a deadlock,
    a model asked to leave its domain). The CLI prints ``simulation failed: <str(e)>``, exit status 1.

Every simulation runs in a child process, so neither error ever takes the Python interpreter down.
"""

from __future__ import annotations

__all__ = ["SpecError", "SimulationError"]


class SpecError(ValueError):
    """Bad input: ``file``, ``json_path`` and ``message`` say which value and what was expected.

    ``str(error)`` is ``"<file>: <json_path>: <message>"``, exactly what the CLI prints after
    ``error:``; an empty file reads ``<input>`` and an empty path (the whole document) ``(document)``.
    A bad option (``file`` such as ``"--algorithm dp"``) has no path: ``"<file>: <message>"``.
    """

    def __init__(self, file: str, json_path: str, message: str) -> None:
        super().__init__(file, json_path, message)
        self.file: str = file
        self.json_path: str = json_path
        self.message: str = message

    def __str__(self) -> str:
        file = self.file or "<input>"
        if not self.json_path and file.startswith("--"):
            return f"{file}: {self.message}"
        path = self.json_path or "(document)"
        return f"{file}: {path}: {self.message}"


class SimulationError(RuntimeError):
    """A valid input whose simulation could not finish (the child process crashed or failed)."""

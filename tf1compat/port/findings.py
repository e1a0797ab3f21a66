"""What ``tf1compat port`` reports per place in the program: each edit it made
(:class:`Change`) and each TF1 name it could not port (:class:`Finding`, the record
``tf1compat check`` reports too: file, line, the TF1 name, and why).

The pipeline pass (:mod:`tf1compat.port.pipelines`) and the fixers
(:mod:`tf1compat.port.fixers`) both report with these."""

import dataclasses

from tf1compat.v1.check import Finding

__all__ = ["Change", "Finding"]


@dataclasses.dataclass(frozen=True)
class Change:
    """An edit at ``path``:``line`` (a line of the program as the user wrote it):
    the TF1 ``name`` became ``replacement``."""

    path: str
    line: int
    name: str
    replacement: str

    def __str__(self):
        return f"{self.path}:{self.line}: {self.name} -> {self.replacement}"

# SPDX-License-Identifier: Apache-2.0
"""fxc's exceptions: what the C++ library throws, as Python exceptions."""


class Error(ValueError):
    """A graph, a value or an input fxc refuses: a parse error, a cutoff above Nyquist, an
    array of the wrong shape, an unreadable file.

    Attributes: ``message`` (the first error, without location), ``code`` (``"fx-parse"``,
    ``"fx-design"``, ``"fxc-python"``, ...), ``file``, ``line`` and ``column`` (1-based; 0 when
    the error has no place in a source) and ``report`` (the whole rendered diagnostic, with
    the source line and a caret under the error).
    """

    def __init__(self, message, code="", file="", line=0, column=0, report=""):
        super().__init__(report or message)
        self.message = message
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.report = report or message

    def __reduce__(self):  # picklable, for Dask workers
        return (type(self), (self.message, self.code, self.file, self.line, self.column, self.report))


class InternalError(RuntimeError):
    """A bug in fxc (an invariant broken), never the input's fault: please report it."""

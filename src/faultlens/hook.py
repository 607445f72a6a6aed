"""`faultlens.install()`: diagnose the traceback of an uncaught exception when a script dies.

This hook is the one place outside the CLI that writes to the terminal: it runs when Python is
already printing a traceback and about to exit, which is exactly when the user wants the answer.
"""

from __future__ import annotations

import sys
import traceback


def install(stream=None, top: int = 3) -> None:
    """Opt in from a training script: `import faultlens; faultlens.install()`."""
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        previous(exc_type, exc, tb)
        if issubclass(exc_type, KeyboardInterrupt):
            return
        out = stream or sys.stderr
        try:
            from .api import diagnose
            from .render.text import render

            text = "".join(traceback.format_exception(exc_type, exc, tb))
            report = diagnose(text.encode("utf-8", "replace"))
            print("\n" + render(report, top=top), file=out)
        except Exception as err:  # never hide the real traceback behind our own failure
            print(f"faultlens: could not diagnose this exception: {err}", file=out)

    hook.faultlens = True  # type: ignore[attr-defined]
    sys.excepthook = hook

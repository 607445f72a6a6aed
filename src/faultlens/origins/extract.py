"""Find the messages a source file prints: Python `raise`, logger calls, `warnings.warn`,
`assert ..., msg`, `torch._check(..., lambda: msg)`; C/C++/CUDA check macros (TORCH_CHECK,
AT_ERROR, TORCH_WARN, GGML_ABORT, ...), printf-style logging and `throw`; Go `fmt.Errorf` and
loggers; and the message-like strings of a compiled library's string table.

Used by tools/build_origins.py (a development step); each function takes text, not files, so the
tests feed it real-shaped snippets.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .template import (WILD, brace_parts, is_prefix, normalise, printf_parts, split_lines,
                       worth_indexing)


@dataclass(frozen=True)
class Found:
    template: str
    line: int
    function: str
    kind: str


LOG_LEVELS = {"debug", "info", "warning", "warn", "error", "critical", "exception", "fatal",
              "warning_once", "info_once", "warning_advice", "error_once", "debug_once"}


def _finish(template: str, line: int, function: str, kind: str) -> list[Found]:
    return [Found(t, line, function, kind) for t in split_lines(template) if worth_indexing(t)]


# ---- Python -------------------------------------------------------------------------------

def _py_parts(node: ast.AST, style: str = "", consts: dict | None = None) -> list[str | None]:
    """A message expression as literal parts and placeholders (None); `consts`: the file's
    string constants (`MESSAGE = "..."` assigned once), which a message may name."""
    if consts and isinstance(node, (ast.Name, ast.Attribute)):
        name = node.id if isinstance(node, ast.Name) else node.attr
        if name in consts and (isinstance(node, ast.Name) or name.isupper()):
            return _py_parts(consts[name], style)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if style == "printf":
            return printf_parts(node.value)
        if style == "brace":
            return brace_parts(node.value)
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        parts: list[str | None] = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value)
            else:
                parts.append(None)
        return parts
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _py_parts(node.left, "printf", consts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _py_parts(node.left, style, consts) + _py_parts(node.right, style, consts)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"):
        return _py_parts(node.func.value, "brace", consts)
    if isinstance(node, ast.Lambda):
        return _py_parts(node.body, style, consts)
    return [None]


def _function_statements(fn: ast.AST):
    """The statements of a function, nested blocks included, nested functions and classes not."""
    todo = list(fn.body)
    while todo:
        stmt = todo.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo += [s for s in getattr(stmt, field, []) or [] if isinstance(s, ast.AST)]


def _string_constants(tree: ast.AST, function: bool = False) -> dict[str, ast.AST]:
    """Names assigned exactly once to a string expression: in the file (module or class level),
    or with `function`, in that function's own body (`message = "..."; raise X(message)`)."""
    seen: dict[str, list[ast.AST]] = {}
    appended: set[str] = set()
    bodies = [list(_function_statements(tree))] if function else \
        [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
    for body in bodies:
        for stmt in body:
            if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                appended.add(stmt.target.id)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name):
                seen.setdefault(stmt.targets[0].id, []).append(stmt.value)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and \
                    stmt.value is not None:
                seen.setdefault(stmt.target.id, []).append(stmt.value)
    out = {}
    for name, values in seen.items():
        v = values[0]
        if len(values) == 1 and (isinstance(v, ast.JoinedStr) or (
                isinstance(v, ast.Constant) and isinstance(v.value, str)) or (
                isinstance(v, ast.BinOp) and isinstance(v.op, (ast.Add, ast.Mod))) or (
                isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and
                v.func.attr == "format" and isinstance(v.func.value, ast.Constant))):
            # `message += ...` later: the assigned text starts the message, a value follows
            out[name] = ast.BinOp(v, ast.Add(), ast.Name("_")) if name in appended else v
    return out


_EXC_NAME = re.compile(r"(Error|Exception|Warning|Exit|Interrupt)$")
_BUILDER = re.compile(r"(?:^|_)(?:log|msg|message|error|err|warning|warn)(?:_|$)", re.IGNORECASE)
"""A function that builds a message for its caller to log or raise (vLLM's _make_log_backend)."""


def _call_name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _receiver(func: ast.AST) -> str:
    if isinstance(func, ast.Attribute):
        v = func.value
        if isinstance(v, ast.Name):
            return v.id
        if isinstance(v, ast.Attribute):
            return v.attr
        if isinstance(v, ast.Call):
            return _call_name(v.func)
    return ""


class _PyVisitor(ast.NodeVisitor):
    def __init__(self, consts: dict | None = None, module: str | None = None) -> None:
        self.stack: list[str] = []
        self.found: list[Found] = []
        self.consts = consts or {}
        self.module = module
        self.in_function = 0

    def _scope(self, node) -> None:
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    def visit_FunctionDef(self, node) -> None:
        self.in_function += 1
        outer = self.consts
        local = _string_constants(node, function=True)
        self.consts = {**outer, **local} if local else {k: v for k, v in outer.items()}
        # a parameter of the function shadows the file's constant of that name
        for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
            self.consts.pop(a.arg, None)
        self._scope(node)
        self.consts = outer
        self.in_function -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        # an exception class: a traceback prints its qualified name (module.QualName) before
        # the message, the only text when the message is empty (torch's ChildFailedError)
        bases = [_call_name(b) for b in node.bases]
        if self.module and not self.in_function and (
                _EXC_NAME.search(node.name) or any(_EXC_NAME.search(b) for b in bases if b)):
            qualname = ".".join([self.module] + self.stack + [node.name])
            if worth_indexing(qualname):
                self.found.append(Found(qualname, node.lineno, ".".join(self.stack + [node.name]),
                                        "exception class"))
        self._scope(node)

    def _add(self, parts: list[str | None], node: ast.AST, kind: str) -> None:
        self.found += _finish(normalise(parts), node.lineno, ".".join(self.stack), kind)

    def visit_Return(self, node: ast.Return) -> None:
        v = node.value
        if isinstance(v, ast.Name) and v.id in self.consts:  # msg = "..."; return msg
            v = self.consts[v.id]
        if self.in_function and self.stack and _BUILDER.search(self.stack[-1]) and (
                isinstance(v, ast.JoinedStr) or (isinstance(v, ast.BinOp) and isinstance(
                    v.op, (ast.Add, ast.Mod))) or (isinstance(v, ast.Call) and isinstance(
                    v.func, ast.Attribute) and v.func.attr == "format")):
            self._add(_py_parts(v, "", self.consts), node, "message")
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        exc = node.exc
        if isinstance(exc, ast.Call) and exc.args:
            # the message is the first argument with text (CudaAPIError(code, msg))
            parts = [_py_parts(a, "", self.consts) for a in exc.args[:3]]
            best = next((p for p in parts if any(p)), parts[0])
            self._add(best, node, f"raise {_call_name(exc.func)}")
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        if node.msg is not None:
            self._add(_py_parts(node.msg, "", self.consts), node, "assert")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _call_name(node.func)
        recv = _receiver(node.func).lower()
        if name in LOG_LEVELS and node.args and ("log" in recv or recv == "self"):
            style = "printf" if len(node.args) > 1 else ""
            level = {"warn": "warning", "exception": "error", "fatal": "critical"}.get(
                name, name.replace("_once", "").replace("_advice", ""))
            self._add(_py_parts(node.args[0], style, self.consts), node, f"log.{level}")
        elif name in ("warn", "warn_explicit") and node.args and recv in ("warnings", ""):
            self._add(_py_parts(node.args[0], "", self.consts), node, "warning")
        elif name in ("_check", "_check_with", "_check_value", "_check_index", "_check_type"):
            msg = node.args[-1] if len(node.args) >= 2 + (name == "_check_with") else None
            msg = msg or next((k.value for k in node.keywords if k.arg == "message"), None)
            if msg is not None:
                self._add(_py_parts(msg, "", self.consts), node, "check")
        self.generic_visit(node)


def module_of(path: str) -> str | None:
    """The dotted module a package file defines ('torch/distributed/x/__init__.py' ->
    'torch.distributed.x'), None for a path that is no importable module."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def python_messages(source: str, module: str | None = None) -> list[Found]:
    """Messages of one Python file; [] when it does not parse. With `module` (the file's dotted
    module name) its exception classes are messages too: their qualified names."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    v = _PyVisitor(_string_constants(tree), module)
    try:
        v.visit(tree)
    except RecursionError:
        pass
    return v.found


# ---- C, C++, CUDA, Go -----------------------------------------------------------------------

# macro -> (kind, arguments before the message, message style)
# style "pieces": every argument is printed (c10::str); "printf"/"brace": one format string
_C_CALLS = {
    "TORCH_CHECK": ("TORCH_CHECK", 1, "pieces"),
    "TORCH_CHECK_VALUE": ("TORCH_CHECK", 1, "pieces"),
    "TORCH_CHECK_INDEX": ("TORCH_CHECK", 1, "pieces"),
    "TORCH_CHECK_TYPE": ("TORCH_CHECK", 1, "pieces"),
    "TORCH_CHECK_NOT_IMPLEMENTED": ("TORCH_CHECK", 1, "pieces"),
    "TORCH_CHECK_LINALG": ("TORCH_CHECK", 1, "pieces"),
    "TORCH_INTERNAL_ASSERT": ("TORCH_INTERNAL_ASSERT", 1, "pieces"),
    "AT_ERROR": ("AT_ERROR", 0, "pieces"),
    "TORCH_WARN": ("TORCH_WARN", 0, "pieces"),
    "TORCH_WARN_ONCE": ("TORCH_WARN", 0, "pieces"),
    "C10_THROW_ERROR": ("C10_THROW_ERROR", 1, "pieces"),
    "ORT_THROW": ("ORT_THROW", 0, "pieces"),
    "ORT_ENFORCE": ("ORT_ENFORCE", 1, "pieces"),
    "ORT_MAKE_STATUS": ("ORT_MAKE_STATUS", 2, "pieces"),
    "GGML_ABORT": ("GGML_ABORT", 0, "printf"),
    "LLAMA_LOG_ERROR": ("log.error", 0, "printf"),
    "LLAMA_LOG_WARN": ("log.warning", 0, "printf"),
    "LLAMA_LOG_INFO": ("log.info", 0, "printf"),
    "GGML_LOG_ERROR": ("log.error", 0, "printf"),
    "GGML_LOG_WARN": ("log.warning", 0, "printf"),
    "GGML_LOG_INFO": ("log.info", 0, "printf"),
    "LOG_ERR": ("log.error", 0, "printf"),
    "LOG_WRN": ("log.warning", 0, "printf"),
    "fprintf": ("fprintf", 1, "printf"),
    "printf": ("printf", 0, "printf"),
    "WARN": ("log.warning", 0, "printf"),
    # NVIDIA's open GPU kernel modules (the NVRM: lines of dmesg)
    "nv_printf": ("printk", 1, "printf"),
    "NV_PRINTF": ("printk", 1, "printf"),
    "NV_DEV_PRINTF": ("printk", 2, "printf"),
    "portDbgPrintf": ("printk", 0, "printf"),
    "nv_printf_ex": ("printk", 2, "printf"),
    # Slurm's log.h (the "srun: error: " prefix is the logger's)
    "error": ("log.error", 0, "printf"),
    "fatal": ("log.critical", 0, "printf"),
    "verbose": ("log.info", 0, "printf"),
    "runtime_error": ("throw", 0, "pieces"),
    "invalid_argument": ("throw", 0, "pieces"),
    "logic_error": ("throw", 0, "pieces"),
    "out_of_range": ("throw", 0, "pieces"),
    "Errorf": ("error", 0, "printf"),
    "Sprintf": ("format", 0, "printf"),  # Go: an Error() method's text
    "New": ("error", 0, "printf"),
    "Warnf": ("log.warning", 0, "printf"),
    "Warningf": ("log.warning", 0, "printf"),
    "Infof": ("log.info", 0, "printf"),
    "Fatalf": ("log.critical", 0, "printf"),
    "Printf": ("log.info", 0, "printf"),
    "Error": ("log.error", 0, "printf"),
    "Warning": ("log.warning", 0, "printf"),
}
_GO_CALLS = {"Errorf", "New", "Warnf", "Warningf", "Infof", "Fatalf", "Printf", "Error", "Warning",
             "Sprintf"}
_C_CALL = re.compile(r"\b(" + "|".join(sorted(_C_CALLS, key=len, reverse=True)) + r")\s*\(")
_GGML_ASSERT = re.compile(r"\bGGML_ASSERT\s*\(")
# a message table entry: { ESLURM_INVALID_GRES, "Invalid generic resource (gres) specification" }
_TABLE_ENTRY = re.compile(r'\{\s*[A-Z][A-Z0-9_]{3,}\s*,\s*"((?:[^"\\\n]|\\.){12,})"\s*\}')
# a string macro: #define GGML_CUDA_NAME "CUDA"
_DEFINE = re.compile(r'^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+"((?:[^"\\\n]|\\.)*)"[ \t]*$',
                     re.MULTILINE)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_C_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_C_FUNC = re.compile(r"^(?:func[ \t]+(?:\([^)\n]*\)[ \t]*)?(\w+)|[A-Za-z_][\w:<>,\*& \t]*?"
                     r"\b([A-Za-z_~][\w:~]*)[ \t]*\([^;\n]*$)", re.MULTILINE)
_C_NOT_FUNC = {"if", "for", "while", "switch", "return", "sizeof", "defined", "TORCH_CHECK",
               "import", "package", "var", "const", "type"}
_ESCAPES = {"n": "\n", "t": " ", '"': '"', "\\": "\\", "'": "'", "0": ""}


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), s)


def _balanced(text: str, start: int, limit: int = 3000) -> str | None:
    """The text inside the parentheses opening at text[start] (quotes respected)."""
    depth = 0
    i = start
    end = min(len(text), start + limit)
    while i < end:
        ch = text[i]
        if ch == '"':
            m = _C_STRING.match(text, i)
            if not m:
                return None
            i = m.end()
            continue
        if ch == "'":
            i = text.find("'", i + 2) + 1 if text[i + 1:i + 2] != "\\" else text.find("'", i + 3) + 1
            if i <= 0:
                return None
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
        i += 1
    return None


def _split_args(inner: str) -> list[str]:
    args, depth, cur, i = [], 0, [], 0
    while i < len(inner):
        ch = inner[i]
        if ch == '"':
            m = _C_STRING.match(inner, i)
            if m:
                cur.append(m.group())
                i = m.end()
                continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(ch)
        i += 1
    if cur:
        args.append("".join(cur).strip())
    return args


def string_defines(source: str) -> dict[str, str]:
    """A file's string macros (`#define NAME "text"`); of several definitions of one name (one
    per platform, under #if), the last, the default branch."""
    return {m.group(1): m.group(2) for m in _DEFINE.finditer(source)}


def _arg_parts(arg: str, style: str, defines: dict[str, str] | None = None) -> list[str | None]:
    """One argument: its string literals (adjacent ones joined, a string macro between them
    expanded), anything else a placeholder."""
    parts: list[str | None] = []
    pos = 0
    if defines:
        arg = _IDENT.sub(lambda m: f'"{defines[m.group()]}"' if m.group() in defines else
                         m.group(), arg)
    for m in _C_STRING.finditer(arg):
        if arg[pos:m.start()].strip():
            parts.append(None)
        lit = _unescape(m.group(1))
        parts += printf_parts(lit) if style == "printf" else (
            brace_parts(lit) if style == "brace" else [lit])
        pos = m.end()
    if arg[pos:].strip() or not parts:
        parts.append(None)
    return parts


def _functions(text: str, go: bool = False) -> list[tuple[int, str]]:
    out = []
    for m in _C_FUNC.finditer(text):
        name = m.group(1) if go else m.group(1) or m.group(2)
        if name and name.split("::")[-1] not in _C_NOT_FUNC and not m.group().startswith(
                ("return", "else", "#", "case")):
            out.append((m.start(), name))
    return out


def c_messages(source: str, go: bool = False, defines: dict[str, str] | None = None) -> list[Found]:
    """Messages of one C/C++/CUDA (or Go) file; `defines`: the string macros of the project
    (string_defines of its files), expanded where a message names one."""
    funcs = _functions(source, go)
    found: list[Found] = []

    def function_at(pos: int) -> str:
        name = ""
        for start, fname in funcs:
            if start > pos:
                break
            name = fname
        return name

    def line_at(pos: int) -> int:
        return source.count("\n", 0, pos) + 1

    for m in _C_CALL.finditer(source):
        kind, skip, style = _C_CALLS[m.group(1)]
        if go and m.group(1) not in _GO_CALLS:
            continue
        if not go and m.group(1) in _GO_CALLS:
            continue
        if m.group(1) in ("error", "fatal", "verbose") and (
                go or source[m.start() - 1:m.start()] in (".", ">", ":")):
            continue
        if m.group(1) == "fprintf" and not source.startswith("stderr", m.end()):
            continue
        inner = _balanced(source, m.end() - 1)
        if inner is None:
            continue
        args = _split_args(inner)[skip:]
        if not args or '"' not in args[0] and style != "pieces" and not (
                defines and _IDENT.match(args[0]) and _IDENT.match(args[0]).group() in defines):
            continue
        if style == "pieces":
            parts: list[str | None] = []
            for a in args:
                parts += _arg_parts(a, "", defines) if '"' in a or defines and a in defines \
                    else [None]
        else:
            parts = _arg_parts(args[0], style, defines)
        if not any(p for p in parts if p):
            continue
        found += _finish(normalise(parts), line_at(m.start()), function_at(m.start()), kind)
    for m in _GGML_ASSERT.finditer(source):
        inner = _balanced(source, m.end() - 1)
        if inner and "\n" not in inner:
            found += _finish(f"GGML_ASSERT({inner.strip()}) failed", line_at(m.start()),
                             function_at(m.start()), "GGML_ASSERT")
    if not go:
        for m in _TABLE_ENTRY.finditer(source):
            found += _finish(normalise(printf_parts(_unescape(m.group(1)))), line_at(m.start()),
                             "", "message table")
    return found


# ---- compiled libraries -----------------------------------------------------------------------

_WORDS = re.compile(r"[A-Za-z]{2,}")
_SIGNATURE = re.compile(r"^[\w.]+(::\w+)+\(|Tensor\(?\w?!?\)? self|^_Z|\bconst\b.*&|std::|"
                        r"^[\w./-]+$|\.(cpp|cu|h|hpp|cc|py):\d*$")


def binary_string_message(s: str, min_len: int = 20) -> str | None:
    """A string from a library's string table as a template, if it reads like a message. A short
    label ending in ': ' ('CUDA error: ') is a prefix the code appends a value to."""
    if s.endswith(": ") and is_prefix(s.strip() + " " + WILD) and not _SIGNATURE.search(s):
        return s.strip() + " " + WILD
    s = s.strip()
    if not min_len <= len(s) <= 500 or " " not in s or _SIGNATURE.search(s):
        return None
    if len(_WORDS.findall(s)) < 3:
        return None
    letters = sum(ch.isalpha() or ch == " " for ch in s)
    if letters / len(s) < 0.7:
        return None
    parts = printf_parts(s) if "%" in s else brace_parts(s) if "{}" in s else [s]
    t = normalise(parts)
    return t if worth_indexing(t) and WILD * 2 not in t else None

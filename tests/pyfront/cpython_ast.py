#!/usr/bin/env python3
"""Prints CPython's own AST of a file in the format of `dkv parse FILE.py`, so that
ast_agree.sh can compare pyfront's tree with the reference parser's: the same nodes,
names, operators, values and positions (line, 1-based byte column).

Usage: cpython_ast.py FILE.py
"""
import ast
import sys

OPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.MatMult: "@", ast.Div: "/",
    ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|",
    ast.BitXor: "^", ast.BitAnd: "&", ast.FloorDiv: "//", ast.Not: "not",
    ast.Invert: "~", ast.UAdd: "+", ast.USub: "-", ast.And: "and", ast.Or: "or",
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
    ast.GtE: ">=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}

out = []
source = b""


def at(node):
    # col_offset counts UTF-8 bytes, as dkv's columns do.
    return f"@{node.lineno}:{node.col_offset + 1}"


def line(depth, text):
    out.append("  " * depth + text)


def quote(data):
    s = '"'
    for b in data:
        c = chr(b)
        if c in '"\\':
            s += "\\" + c
        elif c == "\n":
            s += "\\n"
        elif c == "\t":
            s += "\\t"
        elif b < 0x20 or b == 0x7F:
            s += "\\x%02x" % b
        else:
            s += c  # non-ASCII bytes raw, as dkv prints them (output is latin-1)
    return s + '"'


def segment(node):
    lines = source.split(b"\n")
    if node.lineno != node.end_lineno:
        return None
    return lines[node.lineno - 1][node.col_offset:node.end_col_offset].decode("utf-8")


def child(label, node, depth):
    if node is not None:
        expr(node, depth, label)


def lst(label, nodes, depth):
    if nodes:
        line(depth, f"{label}:")
        for n in nodes:
            expr(n, depth + 1, "")


def body(label, stmts, depth):
    if stmts:
        line(depth, f"{label}:")
        for s in stmts:
            stmt(s, depth + 1)


def params(a, depth):
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + a.defaults
    items = []
    for i, p in enumerate(positional):
        kind = "positional-only" if i < len(a.posonlyargs) else "positional"
        items.append((p, kind, defaults[i]))
    if a.vararg:
        items.append((a.vararg, "*args", None))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        items.append((p, "keyword-only", d))
    if a.kwarg:
        items.append((a.kwarg, "**kwargs", None))
    for p, kind, d in items:
        line(depth, f"param {p.arg} {kind} {at(p)}")
        child("annotation", p.annotation, depth + 1)
        child("default", d, depth + 1)


def keywords(ks, depth):
    for k in ks:
        line(depth, f"keyword {k.arg} {at(k)}" if k.arg else f"keyword ** {at(k)}")
        expr(k.value, depth + 1, "")


def generators(gs, depth):
    for g in gs:
        line(depth, ("async for" if g.is_async else "for") + " @?")
        child("target", g.target, depth + 1)
        child("iter", g.iter, depth + 1)
        lst("ifs", g.ifs, depth + 1)


def type_params(ps, depth):
    for p in ps:
        mark = {"TypeVar": "", "TypeVarTuple": "*", "ParamSpec": "**"}[type(p).__name__]
        line(depth, f"type_param {mark}{p.name} {at(p)}")
        child("bound", getattr(p, "bound", None), depth + 1)
        child("default", getattr(p, "default_value", None), depth + 1)


def stmt(s, depth):
    k = type(s).__name__
    head = f"{k} {at(s)}"
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = "async " if isinstance(s, ast.AsyncFunctionDef) else ""
        line(depth, f"{a}FunctionDef {s.name} {at(s)}")
        lst("decorators", s.decorator_list, depth + 1)
        type_params(getattr(s, "type_params", []), depth + 1)
        params(s.args, depth + 1)
        child("returns", s.returns, depth + 1)
        body("body", s.body, depth + 1)
    elif isinstance(s, ast.ClassDef):
        line(depth, f"ClassDef {s.name} {at(s)}")
        lst("decorators", s.decorator_list, depth + 1)
        type_params(getattr(s, "type_params", []), depth + 1)
        lst("bases", s.bases, depth + 1)
        keywords(s.keywords, depth + 1)
        body("body", s.body, depth + 1)
    elif isinstance(s, ast.Return):
        line(depth, head)
        child("value", s.value, depth + 1)
    elif isinstance(s, ast.Delete):
        line(depth, head)
        lst("targets", s.targets, depth + 1)
    elif isinstance(s, ast.Assign):
        line(depth, head)
        lst("targets", s.targets, depth + 1)
        child("value", s.value, depth + 1)
    elif isinstance(s, ast.AugAssign):
        line(depth, f"AugAssign {OPS[type(s.op)]}= {at(s)}")
        child("target", s.target, depth + 1)
        child("value", s.value, depth + 1)
    elif isinstance(s, ast.AnnAssign):
        line(depth, head)
        child("target", s.target, depth + 1)
        child("annotation", s.annotation, depth + 1)
        child("value", s.value, depth + 1)
    elif isinstance(s, (ast.For, ast.AsyncFor)):
        a = "async " if isinstance(s, ast.AsyncFor) else ""
        line(depth, f"{a}For {at(s)}")
        child("target", s.target, depth + 1)
        child("iter", s.iter, depth + 1)
        body("body", s.body, depth + 1)
        body("orelse", s.orelse, depth + 1)
    elif isinstance(s, (ast.While, ast.If)):
        line(depth, head)
        child("test", s.test, depth + 1)
        body("body", s.body, depth + 1)
        body("orelse", s.orelse, depth + 1)
    elif isinstance(s, (ast.With, ast.AsyncWith)):
        a = "async " if isinstance(s, ast.AsyncWith) else ""
        line(depth, f"{a}With {at(s)}")
        for item in s.items:
            line(depth + 1, "item")
            child("context", item.context_expr, depth + 2)
            child("vars", item.optional_vars, depth + 2)
        body("body", s.body, depth + 1)
    elif isinstance(s, ast.Match):
        line(depth, head)
        child("subject", s.subject, depth + 1)
        for c in s.cases:
            line(depth + 1, "case @?")
            pattern(c.pattern, depth + 2, "pattern")
            child("guard", c.guard, depth + 2)
            body("body", c.body, depth + 2)
    elif isinstance(s, ast.Raise):
        line(depth, head)
        child("exc", s.exc, depth + 1)
        child("cause", s.cause, depth + 1)
    elif isinstance(s, (ast.Try, getattr(ast, "TryStar", ast.Try))):
        star = type(s).__name__ == "TryStar"
        line(depth, f"{'TryStar' if star else 'Try'} {at(s)}")
        body("body", s.body, depth + 1)
        for h in s.handlers:
            line(depth + 1, f"except as {h.name} {at(h)}" if h.name else f"except {at(h)}")
            child("type", h.type, depth + 2)
            body("body", h.body, depth + 2)
        body("orelse", s.orelse, depth + 1)
        body("finalbody", s.finalbody, depth + 1)
    elif isinstance(s, ast.Assert):
        line(depth, head)
        child("test", s.test, depth + 1)
        child("msg", s.msg, depth + 1)
    elif isinstance(s, (ast.Import, ast.ImportFrom)):
        if isinstance(s, ast.Import):
            line(depth, head)
        else:
            line(depth, f"ImportFrom {'.' * s.level}{s.module or ''} {at(s)}")
        for a in s.names:
            pos = at(a)
            line(depth + 1, f"alias {a.name} as {a.asname} {pos}" if a.asname else f"alias {a.name} {pos}")
    elif isinstance(s, (ast.Global, ast.Nonlocal)):
        line(depth, f"{k} {', '.join(s.names)} {at(s)}")
    elif isinstance(s, ast.Expr):
        line(depth, head)
        child("value", s.value, depth + 1)
    elif type(s).__name__ == "TypeAlias":
        line(depth, f"TypeAlias {s.name.id} {at(s)}")
        type_params(s.type_params, depth + 1)
        child("value", s.value, depth + 1)
    else:  # Pass, Break, Continue
        line(depth, head)


def pattern(p, depth, label):
    prefix = f"{label}: " if label else ""
    k = type(p).__name__
    name = getattr(p, "name", None) if k in ("MatchAs", "MatchStar") else getattr(p, "rest", None)
    name = f" {name}" if name else ""
    line(depth, f"{prefix}{k}{name} {at(p)}")
    if k == "MatchValue":
        child("value", p.value, depth + 1)
    elif k == "MatchSingleton":
        text = repr(p.value)
        line(depth + 1, f"value: Constant {text} {at(p)}")
    elif k in ("MatchSequence", "MatchOr"):
        for c in p.patterns:
            pattern(c, depth + 1, "")
    elif k == "MatchMapping":
        for key, c in zip(p.keys, p.patterns):
            child("key", key, depth + 1)
            pattern(c, depth + 1, "")
    elif k == "MatchClass":
        child("value", p.cls, depth + 1)
        for c in p.patterns:
            pattern(c, depth + 1, "")
        for n, c in zip(p.kwd_attrs, p.kwd_patterns):
            pattern(c, depth + 1, n)
    elif k == "MatchAs" and p.pattern is not None:
        pattern(p.pattern, depth + 1, "")


def constant(e):
    v = e.value
    if v is None or v is True or v is False or v is Ellipsis:
        return {None: "None", True: "True", False: "False"}.get(v, "...") if v is not Ellipsis else "..."
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v) if -(2**63) <= v < 2**63 else segment(e)
    if isinstance(v, (float, complex)):
        return segment(e)
    if isinstance(v, bytes):
        return "b" + quote(v)
    return quote(v.encode("utf-8"))


def expr(e, depth, label):
    prefix = f"{label}: " if label else ""
    k = type(e).__name__
    d = depth + 1

    def head(detail=""):
        line(depth, f"{prefix}{k} {detail} {at(e)}" if detail else f"{prefix}{k} {at(e)}")

    if isinstance(e, ast.Name):
        head(e.id)
    elif isinstance(e, ast.Constant):
        k = "Constant"
        head(constant(e))
    elif isinstance(e, ast.JoinedStr):
        k = "Constant"
        head('f-string "?"')
    elif isinstance(e, ast.UnaryOp):
        head(OPS[type(e.op)])
        child("operand", e.operand, d)
    elif isinstance(e, ast.BinOp):
        head(OPS[type(e.op)])
        child("left", e.left, d)
        child("right", e.right, d)
    elif isinstance(e, ast.BoolOp):
        head(OPS[type(e.op)])
        lst("values", e.values, d)
    elif isinstance(e, ast.Compare):
        head(", ".join(OPS[type(o)] for o in e.ops))
        child("left", e.left, d)
        lst("comparators", e.comparators, d)
    elif isinstance(e, ast.Call):
        head()
        child("func", e.func, d)
        lst("args", e.args, d)
        keywords(e.keywords, d)
    elif isinstance(e, ast.Attribute):
        head(e.attr)
        child("value", e.value, d)
    elif isinstance(e, ast.Subscript):
        head()
        child("value", e.value, d)
        child("slice", e.slice, d)
    elif isinstance(e, ast.Slice):
        head()
        child("lower", e.lower, d)
        child("upper", e.upper, d)
        child("step", e.step, d)
    elif isinstance(e, (ast.Tuple, ast.List, ast.Set)):
        head()
        lst("elts", e.elts, d)
    elif isinstance(e, ast.Dict):
        head()
        for key, value in zip(e.keys, e.values):
            child("key", key, d)
            child("value" if key is not None else "unpack", value, d)
    elif isinstance(e, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        head()
        child("elt", e.elt, d)
        generators(e.generators, d)
    elif isinstance(e, ast.DictComp):
        head()
        child("key", e.key, d)
        child("value", e.value, d)
        generators(e.generators, d)
    elif isinstance(e, ast.Lambda):
        head()
        params(e.args, d)
        child("body", e.body, d)
    elif isinstance(e, ast.IfExp):
        head()
        child("test", e.test, d)
        child("body", e.body, d)
        child("orelse", e.orelse, d)
    elif isinstance(e, ast.NamedExpr):
        head()
        child("target", e.target, d)
        child("value", e.value, d)
    elif isinstance(e, (ast.Starred, ast.Await, ast.Yield, ast.YieldFrom)):
        head()
        child("value", e.value, d)
    else:
        raise SystemExit(f"cpython_ast.py: unhandled node {k}")


def main():
    global source
    with open(sys.argv[1], "rb") as f:
        source = f.read()
    tree = ast.parse(source)
    out.append("Module")
    for s in tree.body:
        stmt(s, 1)
    sys.stdout.buffer.write(("\n".join(out) + "\n").encode("latin-1"))


if __name__ == "__main__":
    main()

"""tuner_args.py: the one argument list a tuner passes to every configuration of an
operator, built from gensor's launch descriptions (`construct --out`'s JSON, its
"launch" object and the "args" list in it). Standard library only: `make test`
checks it without Kernel Tuner or numpy (tests/tuner_args_check.py).

Kernel Tuner takes one argument list for a whole search, but the kernels of one
operator differ in their last argument: a split-K configuration takes a workspace
(`ws`) and the others take none. So the list is what every configuration takes,
then one workspace as large as the largest of the space needs; a kernel without a
workspace gets an unused trailing parameter of the same type (adapt_source). The
workspace must be zero before each kernel's first launch (each launch leaves it ready
for the next, but another kernel lays it out differently), so the harness zeroes it
before every configuration.
"""
import re

ROLES = ("input", "output", "bias", "extent", "shape", "alpha", "beta", "workspace")
BUFFER = "float*"
UNUSED_WS = "gensor_unused_ws"


def launch_args(launch):
    """The checked argument list of one launch description (a list of dicts: name,
    role, type; bytes and elems for a buffer, value for a scalar)."""
    args = launch.get("args")
    if not isinstance(args, list):
        raise ValueError("the launch description has no 'args' list (a gensor without labelled launch arguments)")
    names = set()
    for i, a in enumerate(args):
        if a.get("role") not in ROLES:
            raise ValueError("argument %d (%s): unknown role %r" % (i, a.get("name"), a.get("role")))
        if a.get("name") in names:
            raise ValueError("argument %d: name %r twice" % (i, a.get("name")))
        names.add(a.get("name"))
        if a["type"] == BUFFER:
            if not isinstance(a.get("bytes"), int) or a["bytes"] < 0 or a.get("elems", -1) * 4 != a["bytes"]:
                raise ValueError("buffer %s: bad size (bytes %r, elems %r)" % (a["name"], a.get("bytes"), a.get("elems")))
        elif a["type"] in ("int", "float"):
            if "value" not in a:
                raise ValueError("scalar %s has no value" % a["name"])
        else:
            raise ValueError("argument %s: unknown type %r" % (a["name"], a["type"]))
        if a["role"] == "workspace" and (i != len(args) - 1 or not a.get("zero_before_first_launch")):
            raise ValueError("the workspace must be the last argument and zeroed before the first launch")
    return args


def _fixed(args):
    return [a for a in args if a["role"] != "workspace"]


def _workspace(args):
    ws = [a for a in args if a["role"] == "workspace"]
    return ws[0]["bytes"] if ws else 0


def common_args(launches, workspace_bytes=0):
    """One argument list for the configurations whose launch descriptions are given:
    the arguments all of them take (they must agree), then a workspace of the
    largest size any of them, or workspace_bytes (the space's largest), needs; no
    workspace when none needs one."""
    if not launches:
        raise ValueError("no launch description")
    first = launch_args(launches[0])
    for L in launches[1:]:
        check_compatible(first, L, workspace=False)
    ws = max([workspace_bytes] + [_workspace(launch_args(L)) for L in launches])
    common = [dict(a) for a in _fixed(first)]
    if ws > 0:
        common.append({"name": "ws", "role": "workspace", "type": BUFFER, "bytes": ws, "elems": ws // 4,
                       "zero_before_first_launch": True})
    return common


def check_compatible(common, launch, workspace=True):
    """Raise ValueError unless the configuration of `launch` takes the common list's
    arguments (the same names, roles, types and sizes or values, in order) and
    (workspace) its workspace, if any, fits the common one."""
    mine = launch_args(launch)
    a, b = _fixed(common), _fixed(mine)
    if [x["name"] for x in a] != [x["name"] for x in b]:
        raise ValueError("arguments %s, expected %s" % ([x["name"] for x in b], [x["name"] for x in a]))
    for x, y in zip(a, b):
        for k in ("role", "type", "bytes", "value"):
            if x.get(k) != y.get(k):
                raise ValueError("argument %s: %s %r, expected %r" % (x["name"], k, y.get(k), x.get(k)))
    need, have = _workspace(mine), _workspace(common)
    if workspace and need > have:
        raise ValueError("the configuration's workspace (%d bytes) is larger than the list's (%d)" % (need, have))


def _signature_span(src, name):
    m = re.search(r"\b%s\s*\(" % re.escape(name), src)
    if not m:
        raise ValueError("no kernel %s in the source" % name)
    end = src.index(")", m.end())
    return m.end(), end


def signature_names(src, name):
    """The parameter names of kernel `name` in src, in order."""
    begin, end = _signature_span(src, name)
    return [p.strip().split()[-1].lstrip("*") for p in src[begin:end].split(",") if p.strip()]


def adapt_source(src, name, launch, common, new_name="gensor_kernel"):
    """The source of one configuration for the common list: checked against it
    (check_compatible), the kernel renamed to new_name, and an unused trailing
    workspace parameter added when the list has a workspace and the kernel none."""
    check_compatible(common, launch)
    if _workspace(common) and not _workspace(launch_args(launch)):
        begin, end = _signature_span(src, name)
        ws_type = "__global float*" if "__kernel" in src[:begin] else "float*"
        src = src[:end] + ", %s %s" % (ws_type, UNUSED_WS) + src[end:]
    return re.sub(r"\b%s\b" % re.escape(name), new_name, src)


def host_args(common, make_buffer, make_int, make_float):
    """The host-side argument list: make_buffer(arg) for a buffer (inputs filled,
    the output and the workspace zeroed, by the caller's choice), make_int(value)
    and make_float(value) for the scalars."""
    out = []
    for a in common:
        if a["type"] == BUFFER:
            out.append(make_buffer(a))
        elif a["type"] == "int":
            out.append(make_int(a["value"]))
        else:
            out.append(make_float(a["value"]))
    return out

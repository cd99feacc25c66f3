#!/usr/bin/env python3
"""The import graph of src/: which file uses which, the circles in it, and
the arrows that go up between layers.

    python3 tools/import_graph.py            # circles and upward arrows
    python3 tools/import_graph.py --dot      # the graph, for Graphviz

A file's uses are the `crate::…` and `super::…` paths it names (in `use`
lines and in code, not in its own `mod tests`), resolved to the file that
defines the module. A
parent's use of its own child module is not an arrow: declaring a module
is not depending on it. Exit status 1 when there is a circle or an upward
arrow, so CI can keep it clean.
"""
import os
import re
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

# Layers, lowest first: a file may use its own layer and those below.
# The GPU runtime sits under the extractors (their GPU twins are written
# against it); the GPU backend above them runs the twins.
LAYERS = [
    ("core", ["core"]),
    ("hip (GPU runtime)", ["hip"]),
    ("extractors", ["extractors"]),
    ("cpu", ["cpu"]),
    ("gpu", ["gpu"]),
    ("vmaf (scorer)", ["vmaf"]),
    ("element", ["element", "report", ""]),
]


def module_of(path):
    rel = os.path.relpath(path, SRC)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib"):
        rel = rel[:-1]
    return "::".join(rel)


def layer_of(module):
    best = (None, -1)
    for rank, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + "::") or p == "") and len(p) > best[1]:
                best = (rank, len(p))
    return best[0]


def files():
    for root, _, names in os.walk(SRC):
        if os.sep + "bin" in root:
            continue
        for n in names:
            if n.endswith(".rs"):
                yield os.path.join(root, n)


def strip_comments(text):
    # A file's own tests are not part of the architecture.
    text = re.split(r"\n#\[cfg\(test\)\]\s*\nmod \w+", text)[0]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//")[0] for line in text.splitlines())


def resolve(path, modules):
    """The longest module prefix of `path` (a list of names) that is a file."""
    for n in range(len(path), -1, -1):
        m = "::".join(path[:n])
        if m in modules:
            return m
    return None


def uses(path, module, modules):
    text = strip_comments(open(path).read())
    # Expand `use a::{b, c::d}` one level, enough for this code base.
    found = []
    for m in re.finditer(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^}]*)\}", text):
        for part in m.group(2).split(","):
            part = part.strip().split(" as ")[0]
            if part and part not in ("self",):
                found.append(m.group(1) + "::" + part.split("::")[0])
            elif part == "self":
                found.append(m.group(1))
    found += re.findall(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", text)
    out = set()
    here = module.split("::") if module else []
    for p in found:
        parts = p.split("::")
        if parts[0] == "crate":
            target = parts[1:]
        else:
            ups = 0
            while parts and parts[0] == "super":
                parts, ups = parts[1:], ups + 1
            target = here[: max(0, len(here) - ups)] + parts
        t = resolve(target, modules)
        if t is None or t == module:
            continue
        # A parent using its own child is the declaration, not a dependency.
        if t.startswith(module + "::") or (module == "" and t):
            continue
        out.add(t)
    return out


def circles(graph):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def main():
    paths = {module_of(p): p for p in files()}
    modules = set(paths)
    graph = {m: uses(p, m, modules) for m, p in paths.items()}
    if "--dot" in sys.argv:
        print("digraph src {")
        for m, ts in sorted(graph.items()):
            for t in sorted(ts):
                print(f'  "{m or "lib"}" -> "{t or "lib"}";')
        print("}")
        return 0
    bad = 0
    for c in circles(graph):
        bad += 1
        print("circle:", " <-> ".join(m or "lib" for m in c))
    for m, ts in sorted(graph.items()):
        for t in sorted(ts):
            lm, lt = layer_of(m), layer_of(t)
            if lm is not None and lt is not None and lt > lm:
                bad += 1
                print(f"upward: {m} ({LAYERS[lm][0]}) uses {t} ({LAYERS[lt][0]})")
    edges = sum(len(t) for t in graph.values())
    print(f"{len(graph)} files, {edges} arrows, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

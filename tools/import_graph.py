#!/usr/bin/env python3
"""The import graph of the project's Rust crates: which file uses which, the
circles in it, and the arrows that go up between layers.

    python3 tools/import_graph.py            # circles and upward arrows
    python3 tools/import_graph.py --dot      # the graph, for Graphviz
    python3 tools/import_graph.py --crate DIR  # one other crate (lib.rs)
        [--siblings PARENT]                    # PARENT's folders: only `common` shared

Three crates are read: the library (src/), the command (src/bin/vmafhip/)
and the C library (libvmaf/src/). A file's uses are the `crate::…`,
`super::…` and `self::…` paths it names (in `use` lines and in code, not in
its `#[cfg(test)]` modules), resolved from the module they are written in
(an inline `mod name { … }` counts) to the file that defines the target
module. A parent's use of its own child module is not an arrow: declaring
a module is not depending on it. Folders of siblings (the extractors) may
use their shared modules but not each other: such an arrow is sideways.
Exit status 1 when there is a circle, an upward or a sideways arrow, so CI
can keep it clean.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# Each crate: its folder, its root file, folders below it that are other
# crates, and its layers, lowest first: a file may use its own layer and
# those below. A module in no layer is checked for circles only.
CRATES = [
    {
        "name": "lib",
        "dir": "src",
        "root": "lib.rs",
        "skip": ["bin"],
        # The GPU runtime sits under the extractors (their GPU twins are
        # written against it); the GPU backend above them runs the twins.
        "layers": [
            ("core", ["core"]),
            ("hip (GPU runtime)", ["hip"]),
            ("extractors", ["extractors"]),
            ("cpu", ["cpu"]),
            ("gpu", ["gpu"]),
            ("vmaf (the one door)", ["vmaf"]),
            ("element", ["element", "report", ""]),
        ],
        # Each extractor's folder uses what they share (`common`, the
        # registry's traits, the plan), never another extractor's folder.
        "siblings": [("extractors", ["common", "plan", "model_spec"])],
    },
    {
        "name": "vmafhip",
        "dir": "src/bin/vmafhip",
        "root": "main.rs",
        "skip": [],
        "layers": [
            ("cli (options)", ["cli", "usage"]),
            ("media", ["media"]),
            ("helpers", ["align", "alert", "heap", "interrupt", "reconnect"]),
            ("scoring", ["pair", "ladder", "pairs", "live"]),
            ("main", [""]),
        ],
    },
    {
        "name": "libvmaf",
        "dir": "libvmaf/src",
        "root": "lib.rs",
        "skip": [],
        "layers": [],
    },
]


def module_of(crate_dir, root, path):
    rel = os.path.relpath(path, crate_dir)
    if rel == root:
        return ""
    parts = rel[:-3].split(os.sep)
    if parts[-1] == "mod":
        parts = parts[:-1]
    return "::".join(parts)


def layer_of(layers, module):
    best = (None, -1)
    for rank, (_, prefixes) in enumerate(layers):
        for p in prefixes:
            hit = module == p or module.startswith(p + "::") or p == ""
            if hit and len(p) > best[1]:
                best = (rank, len(p))
    return best[0]


def sideways(siblings, m, t):
    """Whether `m` uses `t` across sibling folders: both under the same
    parent, in different children, neither of them shared."""
    for parent, shared in siblings:
        head = parent + "::"
        if not (m.startswith(head) and t.startswith(head)):
            continue
        a, b = m[len(head):].split("::")[0], t[len(head):].split("::")[0]
        if a != b and a not in shared and b not in shared:
            return True
    return False


def files(crate):
    base = os.path.join(ROOT, crate["dir"])
    for root, _, names in os.walk(base):
        rel = os.path.relpath(root, base)
        if rel != "." and rel.split(os.sep)[0] in crate["skip"]:
            continue
        for n in names:
            if n.endswith(".rs"):
                yield os.path.join(root, n)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = []
    for line in text.splitlines():
        # Strings hold no paths that matter here, and may hold `//`.
        code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
        out.append(code.split("//")[0])
    return "\n".join(out)


def block_end(text, open_at):
    """The index just past the `}` that closes the `{` at `open_at`."""
    depth = 0
    for i in range(open_at, len(text)):
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def without_tests(text):
    """The text without its `#[cfg(test)]` items (test modules, helpers)."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?(?:mod|fn|impl|use)\b", text)
        if not m:
            return text
        brace = text.find("{", m.end())
        semi = text.find(";", m.end())
        if semi != -1 and (brace == -1 or semi < brace):
            text = text[: m.start()] + text[semi + 1 :]
        else:
            text = text[: m.start()] + text[block_end(text, brace) :]


def inline_modules(text):
    """(start, end, path) of each inline `mod name { … }`, outermost first."""
    spans = []

    def scan(lo, hi, prefix):
        for m in re.finditer(r"\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{", text[lo:hi]):
            start = lo + m.start()
            if any(s <= start < e for s, e, _ in spans):
                continue
            brace = lo + m.end() - 1
            end = block_end(text, brace)
            path = prefix + [m.group(1)]
            spans.append((brace, end, path))
            scan(brace + 1, end - 1, path)

    scan(0, len(text), [])
    return spans


def module_at(spans, pos):
    best = []
    for s, e, path in spans:
        if s <= pos < e and len(path) > len(best):
            best = path
    return best


def resolve(path, modules):
    """The longest module prefix of `path` (a list of names) that is a file."""
    for n in range(len(path), -1, -1):
        m = "::".join(path[:n])
        if m in modules:
            return m
    return None


PATH = r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)*)"


def uses(path, module, modules):
    text = without_tests(strip_comments(open(path).read()))
    spans = inline_modules(text)
    found = []
    # `use a::{b, c::d}`: each first segment after the brace.
    for m in re.finditer(PATH + r"::\{([^}]*)\}", text):
        for part in m.group(2).split(","):
            part = part.strip().split(" as ")[0]
            if part == "self":
                found.append((m.start(), m.group(1)))
            elif part and part != "*":
                found.append((m.start(), m.group(1) + "::" + part.split("::")[0]))
            else:
                found.append((m.start(), m.group(1)))
    for m in re.finditer(PATH, text):
        if "::" in m.group(1):
            found.append((m.start(), m.group(1)))
    out = set()
    here_file = module.split("::") if module else []
    for pos, p in found:
        parts = p.split("::")
        here = here_file + module_at(spans, pos)
        if parts[0] == "crate":
            target = parts[1:]
        elif parts[0] == "self":
            target = here + parts[1:]
        else:
            ups = 0
            while parts and parts[0] == "super":
                parts, ups = parts[1:], ups + 1
            target = here[: max(0, len(here) - ups)] + parts
        t = resolve(target, modules)
        if t is None or t == module:
            continue
        # A parent using its own child is the declaration, not a dependency.
        if module == "" or t.startswith(module + "::"):
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


def crate_graph(crate):
    base = os.path.join(ROOT, crate["dir"])
    paths = {module_of(base, crate["root"], p): p for p in files(crate)}
    modules = set(paths)
    return {m: uses(p, m, modules) for m, p in paths.items()}


def name(crate, module):
    return f'{crate["name"]}:{module or crate["root"][:-3]}'


def main():
    crates = CRATES
    if "--crate" in sys.argv:
        folder = os.path.abspath(sys.argv[sys.argv.index("--crate") + 1])
        crates = [{"name": "crate", "dir": folder, "root": "lib.rs", "skip": [], "layers": []}]
        if "--siblings" in sys.argv:
            parent = sys.argv[sys.argv.index("--siblings") + 1]
            crates[0]["siblings"] = [(parent, ["common"])]
    graphs = [(c, crate_graph(c)) for c in crates]
    if "--dot" in sys.argv:
        print("digraph crates {")
        for c, graph in graphs:
            for m, ts in sorted(graph.items()):
                for t in sorted(ts):
                    print(f'  "{name(c, m)}" -> "{name(c, t)}";')
        print("}")
        return 0
    bad = nfiles = edges = 0
    for c, graph in graphs:
        nfiles += len(graph)
        edges += sum(len(t) for t in graph.values())
        for circle in circles(graph):
            bad += 1
            print("circle:", " <-> ".join(name(c, m) for m in circle))
        layers = c["layers"]
        for m, ts in sorted(graph.items()):
            for t in sorted(ts):
                lm, lt = layer_of(layers, m), layer_of(layers, t)
                if lm is not None and lt is not None and lt > lm:
                    bad += 1
                    print(
                        f"upward: {name(c, m)} ({layers[lm][0]}) uses {name(c, t)} ({layers[lt][0]})"
                    )
                if sideways(c.get("siblings", []), m, t):
                    bad += 1
                    print(f"sideways: {name(c, m)} uses {name(c, t)}")
    read = ", ".join(c["dir"] for c in crates)
    print(f"{read}: {nfiles} files, {edges} arrows, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

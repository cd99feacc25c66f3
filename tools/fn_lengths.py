#!/usr/bin/env python3
"""Functions longer than a limit in the project's Rust crates.

    python3 tools/fn_lengths.py [LIMIT] [DIR...]   # default 100, src libvmaf/src python/src

A function runs from its `fn` line to the brace that closes its body
(comments and string literals are not counted as braces); test code is
counted like the rest. Exit status 1 when one is longer than LIMIT lines.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FN = re.compile(r'\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"C"\s+)?fn\s+(\w+)')


def braces(line):
    """The line's braces, less those in comments, strings and char literals."""
    line = re.sub(r"//.*", "", line)
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.count("{"), line.count("}")


def lengths(path):
    """(lines, first line, name) of every function with a body in `path`."""
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, text in enumerate(lines):
        m = FN.match(text)
        if not m or text.rstrip().endswith(";"):
            continue
        depth, started = 0, False
        for j in range(i, len(lines)):
            opened, closed = braces(lines[j])
            depth += opened - closed
            started = started or opened > 0
            if started and depth == 0:
                yield j - i + 1, i + 1, m.group(7)
                break


def main():
    args = sys.argv[1:]
    limit = int(args.pop(0)) if args and args[0].isdigit() else 100
    dirs = args or ["src", "libvmaf/src", "python/src"]
    over = []
    for d in dirs:
        for folder, _, names in os.walk(os.path.join(ROOT, d)):
            for n in sorted(names):
                if n.endswith(".rs"):
                    path = os.path.join(folder, n)
                    rel = os.path.relpath(path, ROOT)
                    over += [(k, f"{rel}:{at}", name) for k, at, name in lengths(path) if k > limit]
    for k, where, name in sorted(over, reverse=True):
        print(f"{where}: {name}, {k} lines")
    print(f"{', '.join(dirs)}: {len(over)} functions over {limit} lines")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""check-layers.py: the include graph of strata's folders, checked.

Usage: check-layers.py ROOT --layer LAYER=FOLDER ... [--only PREFIX=PLACE[,PLACE...]] ...
(bottom layer first; CMakeLists.txt passes its Layers table). Reads every
#include of the .c, .cpp, .h and .cu files under sim/ and models/ and checks
that:
  1. the folders include one another without a cycle;
  2. a folder includes only folders of its own layer or of the layers below;
  3. no include climbs out of its folder with "../";
  4. a system include <PREFIX...> named by --only appears only in the
     PLACEs given (a folder, or a file; the longest matching PREFIX rules):
     SimGrid's headers in the engine alone, its internal ones in one file.
Which headers a layer exports is the compiler's check (CMakeLists.txt,
strata_folder, and the ctests layers_*_include), not this script's.
Prints the folder graph and each violation; exits 1 on any, 0 on none.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SYSTEM = re.compile(r'^\s*#\s*include\s+<([^>]+)>')
USAGE = "usage: check-layers.py ROOT --layer LAYER=FOLDER ... [--only PREFIX=PLACE[,PLACE...]] ..."


def parse(args):
    layers, order, only = {}, [], {}
    while args:
        if len(args) < 2 or "=" not in args[1]:
            sys.exit(USAGE)
        flag, spec = args[0], args[1]
        args = args[2:]
        key, value = spec.split("=", 1)
        if flag == "--layer":
            if key not in order:
                order.append(key)
            layers[value] = order.index(key)
        elif flag == "--only":
            only[key] = value.split(",")
        else:
            sys.exit(USAGE)
    return layers, order, only


def system_problem(only, inc, path, where):
    """The violation of rule 4 by <inc> in path (relative to ROOT), or None."""
    rules = [p for p in only if inc.startswith(p)]
    if not rules:
        return None
    prefix = max(rules, key=len)
    places = only[prefix]
    if any(path == p or path.startswith(p.rstrip("/") + "/") for p in places):
        return None
    return f"{where}: <{inc}>: <{prefix}...> is for {', '.join(places)} alone"


def main(argv):
    root = argv[1]
    layers, order, only = parse(argv[2:])
    leaf = {os.path.basename(f): f for f in layers}
    problems, edges = [], {}
    for top in ("sim", "models"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".c", ".cpp", ".h", ".cu")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                folder = os.path.relpath(dirpath, root)
                with open(path, errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        where = f"{rel}:{n}"
                        m = SYSTEM.match(line)
                        if m:
                            p = system_problem(only, m.group(1), rel, where)
                            if p:
                                problems.append(p)
                            continue
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        if ".." in inc.split("/"):
                            problems.append(f'{where}: "{inc}" climbs out of its folder')
                            continue
                        target = leaf.get(inc.split("/")[0]) if "/" in inc else folder
                        if target is None or target == folder:
                            continue
                        edges.setdefault(folder, set()).add(target)
                        if folder in layers and layers[target] > layers[folder]:
                            problems.append(f'{where}: "{inc}": {folder} ({order[layers[folder]]}) '
                                            f'includes {target} ({order[layers[target]]}), a layer above it')
    for folder in sorted(edges):
        print(f"{folder} -> {' '.join(sorted(edges[folder]))}")
    # cycles: depth-first search with colours
    colour, stack = {}, []

    def visit(v):
        colour[v] = 1
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if colour.get(w) == 1:
                problems.append("folder cycle: " + " -> ".join(stack[stack.index(w):] + [w]))
            elif w not in colour:
                visit(w)
        stack.pop()
        colour[v] = 2

    for v in sorted(edges):
        if v not in colour:
            visit(v)
    for p in problems:
        print(p)
    print(f"check-layers: {len(edges)} folders, {sum(map(len, edges.values()))} edges, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

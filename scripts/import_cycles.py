"""Fail on any import cycle among a package's modules, naming each one.

`python scripts/import_cycles.py [PACKAGE]` (default tf1compat; scripts/test runs it)
builds the import graph of PACKAGE with grimp (import-linter's engine) from every
import statement, those inside functions too, and adds what Python runs besides: an
import of ``a.b.c`` from outside ``a.b`` first runs the packages ``a`` and ``a.b``
(their ``__init__``), so a module that imports ``a.b.c`` depends on them as well. A
cycle hidden by moving an import into a function is still a cycle here. Names imported
with ``importlib.import_module`` on a computed name (the lazy public names of
``tf1compat`` and ``tf1compat.v1``) are not statements, and are not in the graph.

Exit 0 when there is none; else exit 1 after one line per cycle, the shortest through
each group of modules that import each other: ``a -> b -> a``.
"""

import collections
import sys

__all__ = ["import_graph", "find_cycles", "main"]


def import_graph(package):
    """``{module: modules it imports}`` within ``package``, as described above."""
    import grimp

    graph = grimp.build_graph(package, cache_dir=None)
    inside = {module for module in graph.modules
              if module == package or module.startswith(package + ".")}
    edges = {module: set() for module in inside}
    for importer in inside:
        for imported in graph.find_modules_directly_imported_by(importer) & inside:
            edges[importer].add(imported)
            parts = imported.split(".")
            for size in range(1, len(parts)):
                ancestor = ".".join(parts[:size])
                if importer != ancestor and not importer.startswith(ancestor + "."):
                    edges[importer].add(ancestor)
    return edges


def _components(edges):
    """The groups of two or more modules that import each other (and modules that
    import themselves), by Tarjan's algorithm, without recursion."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, successors = work[-1]
            successor = next(successors, None)
            if successor is not None:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges[successor]))))
                elif successor in on_stack:
                    low[module] = min(low[module], index[successor])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == module:
                        break
                if len(group) > 1 or module in edges[module]:
                    groups.append(group)
    return groups


def _shortest_cycle(edges, group):
    """The shortest cycle within ``group``, from its first module back to it."""
    start = min(group)
    previous, queue = {start: None}, collections.deque([start])
    while queue:
        module = queue.popleft()
        for successor in sorted(edges[module] & group):
            if successor == start:
                path = [module]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if successor not in previous:
                previous[successor] = module
                queue.append(successor)
    raise AssertionError(f"no cycle through {start}")  # a component always has one


def find_cycles(edges):
    """One shortest cycle per group of modules that import each other, sorted."""
    return sorted(_shortest_cycle(edges, group) for group in _components(edges))


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    package = args[0] if args else "tf1compat"
    cycles = find_cycles(import_graph(package))
    for cycle in cycles:
        print(f"import cycle: {' -> '.join(cycle)}", file=sys.stderr)
    return 1 if cycles else 0


if __name__ == "__main__":
    raise SystemExit(main())

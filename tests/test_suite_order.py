"""The order scripts/test's two workers take the modules in (tests/conftest.py): the
modules with the most tests marked slow first, each module's tests kept together and
in their order."""

import pathlib

from conftest import pytest_collection_modifyitems


class Item:
    """What the ordering reads of a collected test: its file and its slow mark."""

    def __init__(self, module, name, slow=False):
        self.path = pathlib.Path(module)
        self.name = name
        self.slow = slow

    def get_closest_marker(self, name):
        return "slow" if name == "slow" and self.slow else None


def test_modules_with_more_slow_tests_come_first_each_in_its_order():
    items = [Item("test_a.py", "a1"), Item("test_a.py", "a2"), Item("test_a.py", "a3"),
             Item("test_b.py", "b1", slow=True),
             Item("test_c.py", "c1", slow=True), Item("test_c.py", "c2"),
             Item("test_c.py", "c3", slow=True),
             Item("test_d.py", "d1"), Item("test_d.py", "d2")]
    pytest_collection_modifyitems(items)
    # c: 2 slow; b: 1 slow (a single test: pytest-xdist's own order put it last);
    # then a and d by their number of tests
    assert [item.name for item in items] == ["c1", "c2", "c3", "b1", "a1", "a2", "a3",
                                             "d1", "d2"]

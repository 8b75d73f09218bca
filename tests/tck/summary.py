#!/usr/bin/env python3
"""`make tck`'s verdict, from the TCK's JUnit report (reports/junitreport.xml).

Prints the failing tests with the first line of their reason, the counts per category,
then, as its last line, `tck: MUST N passed, M failed`. Exits 1 if any test failed
(a failure or an error), 2 if there is no report or it holds no test, else 0.

A category is a test module of tests/compatibility (e.g. `core_operations/test_artifacts`);
the parametrized requirement runner (`core_operations/test_requirements`) is split by
requirement group (`CORE-SEND`, `STREAM-SUB`, ...). Skipped tests (other transports than
JSON-RPC, capabilities the card does not declare) count in neither number of the last line.
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET

from collections import defaultdict
from pathlib import Path

MODULE_PREFIX = "tests.compatibility."
# Failures sharing one reason are listed one by one up to this many, else collapsed.
COLLAPSE = 8
# Skips for the transport filter (`--transport jsonrpc`): expected, not listed.
OTHER_TRANSPORT = re.compile(r"Transport '\w+' not configured")
# `test_must_requirement[CORE-SEND-001-jsonrpc]` -> CORE-SEND; the group is everything
# before the number (CORE-EXECUTION-MODE-001, CORE-MULTI-001a).
REQUIREMENT_GROUP = re.compile(r"\[([A-Z][A-Z0-9-]*?)-\d+[a-z]?-\w+\]")


def category(case: ET.Element) -> str:
    """The test module (and requirement group) a test case belongs to."""
    classname = case.get("classname", "")
    if classname.startswith(MODULE_PREFIX):
        classname = classname[len(MODULE_PREFIX):]
    parts = classname.split(".")
    # `module.Class` or just `module` for module-level test functions.
    module = [p for p in parts if not p[:1].isupper()]
    name = "/".join(module) or "?"
    group = REQUIREMENT_GROUP.search(case.get("name", ""))
    if name.endswith("test_requirements") and group:
        name = f"{name} {group.group(1)}"
    return name


def outcome(case: ET.Element) -> tuple[str, str]:
    """`passed`, `failed` or `skipped`, and for a failure the first line of its reason."""
    for tag in ("failure", "error"):
        found = case.find(tag)
        if found is not None:
            reason = (found.get("message") or found.text or tag).strip()
            return "failed", reason.splitlines()[0] if reason else tag
    skipped = case.find("skipped")
    if skipped is not None:
        return "skipped", (skipped.get("message") or "").strip()
    return "passed", ""


def main(argv: list[str]) -> int:
    report = Path(argv[1]) if len(argv) > 1 else Path("reports/junitreport.xml")
    if not report.is_file():
        print(f"tck: no report at {report}: the TCK did not run to the end")
        return 2
    cases = list(ET.parse(report).getroot().iter("testcase"))
    if not cases:
        print(f"tck: {report} holds no test")
        return 2

    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    failures: list[tuple[str, str]] = []
    skips: dict[str, int] = defaultdict(int)
    for case in cases:
        result, reason = outcome(case)
        counts[category(case)][result] += 1
        if result == "failed":
            test = f"{case.get('classname', '').removeprefix(MODULE_PREFIX)}::{case.get('name')}"
            failures.append((test, reason[:240]))
        elif result == "skipped" and not OTHER_TRANSPORT.search(reason):
            skips[reason.splitlines()[0][:240] if reason else "?"] += 1

    if failures:
        print(f"failed ({len(failures)}):")
        by_reason: dict[str, list[str]] = defaultdict(list)
        for test, reason in failures:
            by_reason[reason].append(test)
        for reason, tests in by_reason.items():
            if len(tests) > COLLAPSE:
                print(f"  {len(tests)} tests ({tests[0]}, ...): {reason}")
            else:
                print("\n".join(f"  {test}: {reason}" for test in tests))
    if skips:
        # A MUST test the TCK skips for a reason other than the transport filter (a
        # prerequisite task it could not create, a capability the card does not declare).
        print("skipped, not for the transport filter:")
        for reason, n in sorted(skips.items(), key=lambda kv: -kv[1]):
            print(f"  {n:>3} x {reason}")
    width = max(len(name) for name in counts)
    print(f"{'category':<{width}}  passed  failed  skipped")
    for name in sorted(counts):
        c = counts[name]
        print(f"{name:<{width}}  {c['passed']:>6}  {c['failed']:>6}  {c['skipped']:>7}")
    known = known_failures()
    unexplained = [test for test, _ in failures if test not in known]
    for test, reason in known.items():
        state = "fails, as named" if any(t == test for t, _ in failures) else "NO LONGER FAILS: drop it"
        print(f"known: {test}: {state}: {reason}")
    passed = sum(c["passed"] for c in counts.values())
    failed = sum(c["failed"] for c in counts.values())
    print(f"tck: MUST {passed} passed, {failed} failed")
    return 1 if unexplained else 0


def known_failures() -> dict[str, str]:
    """The failures named on purpose in known-failures.txt beside this script."""
    path = Path(__file__).with_name("known-failures.txt")
    named = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            test, _, reason = line.partition("\t")
            named[test.strip()] = reason.strip()
    return named


if __name__ == "__main__":
    sys.exit(main(sys.argv))

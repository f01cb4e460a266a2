#!/usr/bin/env python3
"""Unity batches for the unit tests: groups of test files that can share one translation unit.

usage: unity_groups.py MAX_PER_GROUP FILE...
prints one line per file that joins a batch: "GROUP<TAB>FILE". Files left out compile alone.

Test files declare their helpers at namespace scope (fixtures, `h100()`, `kernel()`, matchers), often
under the same names; in one translation unit those collide. Each file's namespace-scope names are
read from the lines that start at column 0 (clang-format does not indent namespaces, and a test's
body is indented), and no batch holds two files that declare the same name. A file-scope `using
namespace` other than a literals namespace leaks into the files after it, so such files are batched
only with files that have the same directives.
"""
import re
import sys

SKIP = re.compile(r"^(TEST|TEST_F|TEST_P|TYPED_TEST|INSTANTIATE_TEST_SUITE_P|namespace|using namespace|"
                  r"}|#|//|/\*|\*|template\b|return\b)")
TYPE = re.compile(r"^(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)")
ALIAS = re.compile(r"^using\s+(\w+)\s*=")
MACRO = re.compile(r"^(?:MATCHER|MATCHER_P\d?|ACTION|ACTION_P\d?)\(\s*(\w+)")
DEFINE = re.compile(r"^#\s*define\s+(\w+)")
DECL = re.compile(r"(\w+)\s*(?:\(|=|;|\{|\[)")


def names_and_directives(path):
    names, directives = set(), set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line or line[0] in " \t\n":
                continue
            m = DEFINE.match(line)
            if m:
                names.add(m.group(1))
                continue
            if line.startswith("using namespace"):
                target = line.split()[2].rstrip(";")
                if not target.endswith("_literals"):
                    directives.add(target)
                continue
            for pattern in (TYPE, ALIAS, MACRO):
                m = pattern.match(line)
                if m:
                    names.add(m.group(1))
                    break
            else:
                if SKIP.match(line):
                    continue
                # A function or variable: the name is the identifier before the first '(', '=',
                # ';', '{' or '[' (its type comes first: `const Spec& h100() {`).
                m = DECL.search(line)
                if m and m.group(1) not in ("operator", "const", "constexpr"):
                    names.add(m.group(1))
    return names, frozenset(directives)


def main():
    limit = int(sys.argv[1])
    groups = []  # [directives, names, files]
    for path in sys.argv[2:]:
        names, directives = names_and_directives(path)
        for g in groups:
            if g[0] == directives and len(g[2]) < limit and not (g[1] & names):
                g[1] |= names
                g[2].append(path)
                break
        else:
            groups.append([directives, set(names), [path]])
    for i, (_, _, files) in enumerate(groups):
        if len(files) > 1:
            for path in files:
                print(f"unit_{i}\t{path}")


if __name__ == "__main__":
    main()

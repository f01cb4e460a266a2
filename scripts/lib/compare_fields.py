"""Compares `nvidia-smi --query-gpu` with `gpuclk query` on the same fields.

stdin: the two CSV outputs (noheader, nounits) interleaved line by line (paste -d'\\n').
argv[1]: the comma-separated field list. Prints a Markdown table; exit 1 if any field differs.
"""
import sys


def norm(value):
    value = value.strip()
    try:
        return "%.2f" % float(value)
    except ValueError:
        return value.lower()


def main():
    fields = sys.argv[1].split(",")
    lines = sys.stdin.read().splitlines()
    differ = 0
    for g in range(0, len(lines) - 1, 2):
        smi = [x.strip() for x in lines[g].split(", ")]
        ours = [x.strip() for x in lines[g + 1].split(", ")]
        for field, a, b in zip(fields, smi, ours):
            same = norm(a) == norm(b) or (a.startswith("[") and b.startswith("["))
            differ += not same
            print("| GPU%d %s | %s | %s | %s |" % (g // 2, field, a, b, "yes" if same else "NO"))
    print("\n%d field(s) differ" % differ)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

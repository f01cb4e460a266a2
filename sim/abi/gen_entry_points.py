#!/usr/bin/env python3
"""Generates libnvml-sim.so's exported NVML functions from entry_points.txt.

Run by CMake at build time:  gen_entry_points.py LIST OUT_DIR
Writes OUT_DIR/entry_points.gen.h   (the getters' prototypes, the list of exported names)
       OUT_DIR/entry_points.gen.cpp (one exported function per entry point)

Every exported function does what the real library does before it answers: the init check,
the handle lookup (invalid handle -> INVALID_ARGUMENT, lost GPU -> GPU_IS_LOST), injected
faults, NULL output pointers (INVALID_ARGUMENT), struct versions (ARGUMENT_VERSION_MISMATCH),
and the (buffer, length) string protocol (INSUFFICIENT_SIZE). What is left is the model
getter: nvmlReturn_t getter(std::size_t gpu, <the remaining parameters>), written by hand in
the nvml_*.cpp files. The list's syntax is described at the top of entry_points.txt.
"""

import re
import sys
from pathlib import Path

KINDS = {"device", "system", "unsupported", "alias", "custom"}
ACCESS = {"identity", "telemetry", "write"}

LINE = re.compile(
    r"^(?P<kind>\w+)\s+(?:(?P<access>identity|telemetry|write)\s+)?"
    r"(?P<name>nvml\w+)\s*\((?P<params>[^)]*)\)\s*"
    r"(?:->\s*(?P<getter>\w+)|=\s*(?P<target>nvml\w+)(?:\((?P<args>[^)]*)\))?)?\s*$"
)
PARAM = re.compile(r"^(?P<type>.*?[\s*])(?P<name>\w+)(?P<nullable>\?)?(?:\{(?P<version>[^}]+)\})?$")


class Param:
    def __init__(self, text, where):
        m = PARAM.match(text.strip())
        if not m:
            sys.exit(f"{where}: cannot parse parameter '{text.strip()}'")
        self.type = " ".join(m["type"].split()).replace(" *", "*")
        self.name = m["name"]
        self.nullable = bool(m["nullable"])
        self.version = m["version"]
        self.pointer = "*" in self.type

    def decl(self):
        return f"{self.type} {self.name}"


class Entry:
    def __init__(self, m, where):
        self.where = where
        self.kind = m["kind"]
        self.access = m["access"]
        self.name = m["name"]
        self.getter = m["getter"]
        self.target = m["target"]
        self.args = m["args"]
        raw = m["params"].strip()
        self.variadic = raw.endswith("...")
        if self.variadic:
            raw = raw[:-3].rstrip().rstrip(",")
        self.params = [] if raw in ("", "void") else [Param(p, where) for p in raw.split(",")]
        if self.kind not in KINDS:
            sys.exit(f"{where}: unknown kind '{self.kind}' (one of {', '.join(sorted(KINDS))})")
        if self.kind == "device" and (not self.access or not self.getter):
            sys.exit(f"{where}: a device entry needs an access kind and '-> getter'")
        if self.kind == "system" and not self.getter:
            sys.exit(f"{where}: a system entry needs '-> getter'")
        if self.kind == "alias" and not self.target:
            sys.exit(f"{where}: an alias needs '= target'")
        if self.kind in ("device", "unsupported") and (
            not self.params or self.params[0].type != "nvmlDevice_t"
        ):
            if self.kind == "device":
                sys.exit(f"{where}: a device entry's first parameter is the nvmlDevice_t")

    def signature(self):
        parts = [p.decl() for p in self.params]
        if self.variadic:
            parts.append("...")
        return f"nvmlReturn_t {self.name}({', '.join(parts) or 'void'})"

    def string_out(self, params):
        """(char* buffer, unsigned int length) as the last two parameters: a string getter."""
        if len(params) >= 2 and params[-2].type == "char*" and params[-1].type == "unsigned int":
            return params[-2], params[-1]
        return None


def parse(path):
    entries, seen = [], {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{path}:{number}"
        m = LINE.match(line)
        if not m:
            sys.exit(f"{where}: cannot parse '{line}'")
        entry = Entry(m, where)
        if entry.name in seen:
            sys.exit(f"{where}: {entry.name} is already listed at {seen[entry.name]}")
        seen[entry.name] = where
        entries.append(entry)
    return entries


def checks(params, indent):
    out = []
    for p in params:
        if p.pointer and not p.nullable:
            out.append(f"{indent}if (!{p.name}) return NVML_ERROR_INVALID_ARGUMENT;")
        if p.version:
            out.append(
                f"{indent}if ({p.name}->version != {p.version}) "
                "return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;"
            )
    return out


def getter_call(entry, first, params):
    """Code that calls the getter and returns; first: the getter's leading argument."""
    string = entry.string_out(params)
    if string:
        buffer, length = string
        rest = params[:-2]
        args = ", ".join([first, *[p.name for p in rest], "text"])
        return [
            "    std::string text;",
            f"    const nvmlReturn_t status = get::{entry.getter}({args});",
            "    if (status != NVML_SUCCESS) return status;",
            f"    return copy_string(text, {buffer.name}, {length.name});",
        ]
    args = ", ".join([first, *[p.name for p in params]])
    return [f"    return get::{entry.getter}({args});"]


def getter_prototype(entry):
    params = entry.params[1:] if entry.kind == "device" else entry.params
    first = "std::size_t gpu" if entry.kind == "device" else "Context& context"
    string = entry.string_out(params)
    if string:
        rest = [p.decl() for p in params[:-2]]
        return f"nvmlReturn_t {entry.getter}({', '.join([first, *rest, 'std::string& text'])});"
    return f"nvmlReturn_t {entry.getter}({', '.join([first, *[p.decl() for p in params]])});"


def define(entry):
    out = [f"GPUCLK_SIM_EXPORT {entry.signature()} {{"]
    if entry.kind == "device":
        device, rest = entry.params[0], entry.params[1:]
        out.append(
            f'  return with_gpu({device.name}, "{entry.name}", Access::{entry.access}, '
            "[&](std::size_t gpu) -> nvmlReturn_t {"
        )
        out += checks(rest, "    ")
        out += getter_call(entry, "gpu", rest)
        out.append("  });")
    elif entry.kind == "system":
        out.append("  return with_system([&](Context& context) -> nvmlReturn_t {")
        out += checks(entry.params, "    ")
        out += getter_call(entry, "context", entry.params)
        out.append("  });")
    elif entry.kind == "unsupported":
        if entry.params and entry.params[0].type == "nvmlDevice_t":
            out.append(
                f'  return with_gpu({entry.params[0].name}, "{entry.name}", Access::identity, '
                "[](std::size_t) { return NVML_ERROR_NOT_SUPPORTED; });"
            )
        else:
            for p in entry.params:
                out.append(f"  (void){p.name};")
            out.append(
                "  return with_system([](Context&) { return NVML_ERROR_NOT_SUPPORTED; });"
            )
    elif entry.kind == "alias":
        args = entry.args if entry.args is not None else ", ".join(p.name for p in entry.params)
        out.append(f"  return {entry.target}({args});")
    out.append("}")
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen_entry_points.py LIST OUT_DIR")
    entries = parse(sys.argv[1])
    out_dir = Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    banner = f"// Generated by sim/abi/gen_entry_points.py from {Path(sys.argv[1]).name}: do not edit."

    header = [
        banner,
        "#pragma once",
        "",
        "#include <cstddef>",
        "#include <string>",
        "",
        '#include "nvml/nvml_abi.h"',
        "",
        "// Every entry point the library exports, with the signature the list gives it.",
    ]
    # nvmlErrorString returns a string, not an nvmlReturn_t: nvml_abi.h declares it.
    header += [f"extern \"C\" {e.signature()};" for e in entries if e.name != "nvmlErrorString"]
    header += ["", "namespace gpuclk::sim::abi {", "class Context;", "namespace get {", ""]
    header += [getter_prototype(e) for e in entries if e.kind in ("device", "system")]
    header += ["", "}  // namespace get", ""]
    header.append("// The names of every exported entry point, in the list's order.")
    header.append("inline constexpr const char* kEntryPoints[] = {")
    header += [f'    "{e.name}",' for e in entries]
    header += ["};", "", "}  // namespace gpuclk::sim::abi", ""]

    source = [
        banner,
        "#include <string>",
        "",
        '#include "abi_common.h"',
        '#include "entry_points.gen.h"',
        "",
        "using namespace gpuclk::sim::abi;",
        "",
        "// NOLINTBEGIN",
    ]
    for e in entries:
        if e.kind == "custom":
            continue
        source += define(e) + [""]
    source += ["// NOLINTEND", ""]

    write(out_dir / "entry_points.gen.h", "\n".join(header))
    write(out_dir / "entry_points.gen.cpp", "\n".join(source))


def write(path, text):
    """Only rewrites a file whose content changed, so an unchanged list recompiles nothing."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


if __name__ == "__main__":
    main()

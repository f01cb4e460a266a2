#!/usr/bin/env python3
"""The examples of README.md and docs/*.md, generated from the commands they show.

    scripts/doc-examples.py [--update] [--bin PATH/TO/gpuclk] [FILE.md ...]

Default: README.md and docs/*.md; gpuclk is build/release/gpuclk. Every fenced block of those
files is one of four kinds, and a block that is none of them fails the check:

* **An example** — the block right after a `<!-- example ... -->` comment is a transcript:
  each `$ COMMAND` line (a line ending in `\\` continues on the next) is run from the repository
  root with the build's directory first on PATH (so `gpuclk` is the binary given), and followed
  by what it printed, stdout and stderr together, then `[exit N]` when it exited N != 0.
  Each block runs in one shell on a fresh simulated node and journal (a temporary
  GPUCLK_SIM_STATE, the journal beside it, and TMPDIR; `/tmp/` in a command is a directory of the
  block's own, shown as `/tmp/`), so it prints the same whatever ran before.
  The comment says how: `<!-- example[ OPTION ...][: ENV] -->`. ENV is environment the block
  does not show (`GPUCLK_SIM_SPEED=0`). OPTIONs:
    - `lines=SPEC[;SPEC...]`: an excerpt, per command (`;` between commands; `all` or nothing
      keeps all): SPEC is items separated by commas, `N`, `N-M`, `N-$`, `$`, `$-K` (`$` is the
      last line), or `/REGEX/` (every line it matches; `\\s` for a blank) and `/REGEX/+N` (with
      the N lines after each), for output whose length varies; each run of left-out lines is
      one `...` line, indented as the first of them. A `!/REGEX/` item drops the lines it
      matches first, with no mark: lines that come or not with timing (a service's note that it
      waited for a lock).
    - `tolerance=R%[,A]`: the output varies from run to run (simulated time runs while it
      samples): a number matches when it is within R % (or A, absolute) of the written one;
      everything else, and the count of lines and numbers, must match (runs of blanks count as
      one). A figure off by more fails; `--update` then rewrites the block (within the tolerance
      it keeps the written one).
    - `mask=/REGEX/[,/REGEX/...]`: what a REGEX's groups match (all it matches, without groups)
      compares equal to anything: for figures that are noise by nature, as a spread of runs.
    - `vary=/REGEX/[,/REGEX/...]`: lines whose number varies from run to run (a screen's graph
      rows, which give way to one more finding): the lines a REGEX matches are left out on both
      sides before comparing; the block keeps them as written (`--update` writes them as run).
    - `continues`: runs on the node, journal and /tmp of the file's previous example block.
    - `screen=COLSxROWS`: the block's last command is a full-screen program (top, nvtop): run in
      a tmux pane of that size, its screen is captured once it has stopped changing (but for
      what `mask=` masks), then `q` ends it.
    - `needs=PROG[,PROG]`: the block is skipped (kept as written, with a note) where PROG is not
      installed (nvtop, setpriv), or, for `root`, where this is not run as root.
    - `timeout=S`: the longest a command may take (default 120 s).
    - `live`: what the block prints depends on how far simulated time has run by then (it runs
      many times faster than the wall clock, or a load starts 2 s after power-on), as in every
      block with a tolerance: `--no-live` skips it.
  Always masked, in every block: the temporary directories (`…/`), the repository's absolute
  path (left out) and the build directory (`build/release/`); a loopback port a background
  command printed (`127.0.0.1:PORT`) is shown as the written one (and the written one in later
  commands means the actual one); wall-clock times and dates (`21:13:11`, `2026-11-21T21:16:39Z`),
  a process id after `pid` and the journal's boot id compare equal to any other, and so do a
  sampler's counts of samples and ticks and its lateness (`(728 samples)`, `Ticks : 202`), which
  the machine's load decides, not the command. A command ending in `&` runs in the background:
  what it printed until it fell quiet (1 s; if the block shows it printing, it is waited for,
  else 3 s at most) follows it, what it prints later follows the command during which it came;
  the block's background commands are stopped at its end.
* **An example a test records** — `<!-- example recorded-by=TEST ... -->`: the command needs
  what only that test sets up (a Prometheus scraping eight services); the test runs it and calls
  `scripts/doc-examples.py --recorded COMMAND OUTPUT FILE.md...`, which checks that each line the
  block shows is a line of that run's output, in any order (loopback ports masked), within the
  block's tolerance and masks. The check of the files makes sure TEST names the command.
* **A quote** — the block after `<!-- quote: PATH -->` shows gpuclk's output on real GPUs,
  recorded in PATH (docs/results/...): each of its lines but `...` and the `$ COMMAND` that made
  it must be a line of PATH, in order (blanks at the ends and runs of blanks ignored).
* **Not gpuclk's output** — a block whose fence names a language (```sh for commands to type,
  ```toml/```json/```csv/```yaml for files, ```cpp, ```text for diagrams and other tools' output).
  Such a block may not show a `$ gpuclk ...` line followed by output: that is an example.

--no-live skips the examples with a tolerance or `live`: they run simulated time 10-100x faster
than the wall clock, which a sanitized build (ASan, TSan: several times slower) cannot keep up
with, so their figures are not the command's (tests/cli/CMakeLists.txt passes it there).
Without --update, a block whose output changed fails (exit 1) with a diff; with --update the
blocks are rewritten (those still within their tolerance and masks are kept; --refresh rewrites
them too). tests/cli/CMakeLists.txt runs it on every file in `make test` (ctest -L docs).
"""
import argparse
import concurrent.futures
import difflib
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ELISION = re.compile(r"^\s*(\.\.\.|…)\s*$")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# Wall-clock values: equal to any other of their kind when written and run output are compared.
VOLATILE = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?Z?"), "<datetime>"),
    (re.compile(r"\b[A-Z][a-z]{2} [A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d \d{4}\b"), "<date>"),
    (re.compile(r"\b\d\d:\d\d:\d\d\b"), "<time>"),
    (re.compile(r"(\b(?:pid|session)\"?:? )\d+"), r"\1<pid>"),
    (re.compile(r"(\bboot_id\"?:? \"?)[0-9a-f-]{36}"), r"\1<boot id>"),
    # How often a sampler ran: the machine's load decides it, not the command.
    (re.compile(r"\(\d+ samples\)"), "(<n> samples)"),
    (re.compile(r"(\"samples\": )\d+"), r"\1<n>"),
    (re.compile(r"^(\s*(?:Samples|Ticks|Missed ticks|Lateness p99)\s+: )[\d.]+"), r"\1<n>"),
]
PORT = re.compile(r"127\.0\.0\.1:(\d{4,5})")
VERBOSE = False
REFRESH = False  # --refresh: --update writes every example anew, also where it still matches
NO_LIVE = False  # --no-live: examples with a tolerance or `live` are skipped


class DocError(Exception):
    pass


@dataclass
class Marker:
    kind: str  # example, quote
    env: str = ""
    options: dict = field(default_factory=dict)
    source: str = ""  # quote: the file


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    fence: str
    body: list
    marker: Marker | None


@dataclass
class Command:
    text: list  # the command's lines as written ("$ ..." and continuations)
    output: list  # what the file shows after it

    @property
    def shell(self):
        lines = [self.text[0][2:]] + self.text[1:]
        return "\n".join(lines)


def parse_marker(line):
    m = re.fullmatch(r"<!-- example(.*?) -->", line)
    if m:
        inner = m.group(1)
        env = ""
        if ": " in inner:  # options have no blanks: the first ": " starts the environment
            inner, env = inner.split(": ", 1)
        options = {}
        for word in inner.split():
            key, _, value = word.partition("=")
            options[key] = value
        unknown = set(options) - {"lines", "tolerance", "mask", "vary", "continues", "screen",
                                  "needs", "timeout", "recorded-by", "live"}
        if unknown:
            raise DocError(f"unknown example option(s) {', '.join(sorted(unknown))}")
        return Marker("example", env.strip(), options)
    m = re.fullmatch(r"<!-- quote: (\S+) -->", line)
    if m:
        return Marker("quote", source=m.group(1))
    if line.startswith("<!-- example") or line.startswith("<!-- quote"):
        raise DocError(f"malformed marker {line!r}: <!-- example[ OPTION...][: ENV] --> or "
                       "<!-- quote: PATH -->")
    return None


def parse(path):
    """The file's lines, and its fenced blocks with the marker before each."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = []
    pending = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            start = i
            i += 1
            while i < len(lines) and lines[i] != "```":
                i += 1
            if i == len(lines):
                raise DocError(f"{path}:{start + 1}: the block is not closed")
            blocks.append(Block(start + 1, line, lines[start + 1:i], pending))
            pending = None
        elif line.strip():
            try:
                pending = parse_marker(line.strip())
            except DocError as e:
                raise DocError(f"{path}:{i + 1}: {e}") from None
        i += 1
    return lines, blocks


def commands_of(block, where):
    cmds = []
    for line in block.body:
        if cmds and cmds[-1].text[-1].endswith("\\") and not cmds[-1].output:
            cmds[-1].text.append(line)
        elif line.startswith("$ "):
            cmds.append(Command([line], []))
        elif not cmds:
            raise DocError(f"{where}: an example starts with a `$ COMMAND` line, not {line!r}")
        else:
            cmds[-1].output.append(line)
    if not cmds:
        raise DocError(f"{where}: an example with no `$ COMMAND` line")
    return cmds


# --- excerpts -------------------------------------------------------------------------------


def select_lines(spec, lines, where):
    """The lines SPEC keeps, each run left out replaced by one `...` line."""
    if spec in ("", "all"):
        return lines
    items = re.findall(r"!?/(?:[^/\\]|\\.)*/(?:\+\d+)?|[^,]+", spec)
    drops = [re.compile(i[2:-1]) for i in items if i.startswith("!/") and i.endswith("/")]
    lines = [line for line in lines if not any(d.search(line) for d in drops)]
    items = [i for i in items if not i.startswith("!")]
    if not items:
        return lines
    n = len(lines)

    def pos(s):
        if s == "$":
            return n
        if s.startswith("$-"):
            return n - int(s[2:])
        return int(s)

    keep = set()
    for item in items:
        m = re.fullmatch(r"/(.*)/(?:\+(\d+))?", item)
        if m:  # the lines matching a pattern, each with the N lines after it
            pattern, after = re.compile(m.group(1)), int(m.group(2) or 0)
            for k, line in enumerate(lines, 1):
                if pattern.search(line):
                    keep.update(range(k, min(k + after, n) + 1))
            continue
        m = re.fullmatch(r"(\$(?:-\d+)?|\d+)(?:-(\$(?:-\d+)?|\d+))?", item)
        if not m:
            raise DocError(f"{where}: bad lines item {item!r} (N, N-M, N-$, $, $-K, /RE/, /RE/+N)")
        a = pos(m.group(1))
        b = pos(m.group(2)) if m.group(2) else a
        keep.update(range(max(a, 1), min(b, n) + 1))
    out = []
    for k, line in enumerate(lines, 1):
        if k in keep:
            out.append(line)
        elif k - 1 in keep or (k == 1 and out == []):
            indent = len(line) - len(line.lstrip())
            out.append(" " * indent + "...")
    return out


# --- comparison -----------------------------------------------------------------------------


def mask_groups(m):
    """A match with its groups (or, without groups, all of it) replaced by `<masked>`."""
    text, base = m.group(0), m.start()
    spans = [(m.start(g) - base, m.end(g) - base) for g in range(1, m.re.groups + 1)
             if m.start(g) >= 0] or [(0, len(text))]
    out, pos = [], 0
    for a, b in spans:
        out += [text[pos:a], "<masked>"]
        pos = b
    return "".join(out) + text[pos:]


def parse_masks(text, where):
    masks = []
    for item in re.findall(r"/(?:[^/\\]|\\.)*/|[^,]+", text):
        if not (len(item) > 1 and item.startswith("/") and item.endswith("/")):
            raise DocError(f"{where}: bad mask {item!r} (/REGEX/, comma separated)")
        masks.append(re.compile(item[1:-1]))
    return masks


def masked(line, masks=()):
    for pattern, repl in VOLATILE:
        line = pattern.sub(repl, line)
    for pattern in masks:
        line = pattern.sub(mask_groups, line)
    return line


def parse_tolerance(text, where):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)%(?:,(\d+(?:\.\d+)?))?", text)
    if not m:
        raise DocError(f"{where}: bad tolerance {text!r} (R% or R%,A)")
    return float(m.group(1)) / 100, float(m.group(2) or 0)


def lines_match(written, got, tolerance, masks):
    w, g = masked(written, masks), masked(got, masks)
    if tolerance is None:
        return w == g
    rel, absolute = tolerance
    if " ".join(NUMBER.sub("#", w).split()) != " ".join(NUMBER.sub("#", g).split()):
        return False
    for a, b in zip(NUMBER.findall(w), NUMBER.findall(g)):
        x, y = float(a), float(b)
        if abs(x - y) > max(rel * max(abs(x), abs(y)), absolute):
            return False
    return True


def outputs_match(written, got, tolerance, masks=()):
    return len(written) == len(got) and all(
        lines_match(a, b, tolerance, masks) for a, b in zip(written, got))


# --- running a block ------------------------------------------------------------------------


class Runner:
    """One shell per block; commands are written to its stdin, each answers on its stdout."""

    def __init__(self, bindir, workdir, env, timeout):
        self.bindir = bindir
        self.dir = workdir
        self.timeout = timeout
        self.count = 0
        self.background = []  # [file, offset]
        self.ports = {}  # actual -> written
        os.makedirs(os.path.join(workdir, "tmp"), exist_ok=True)
        self.errlog = open(os.path.join(workdir, "shell.err"), "w")
        self.shell = subprocess.Popen(
            ["bash", "--noprofile", "--norc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.errlog, cwd=ROOT, start_new_session=True, text=True)
        unset = ("GPUCLK_SIM_SPEED GPUCLK_SIM_START GPUCLK_SIM_ADVANCE GPUCLK_SIM_SCENARIO "
                 "GPUCLK_STATE_DIR "
                 "GPUCLK_NVML_LIB GPUCLK_READ_ONLY GPUCLK_SOCKET GPUCLK_FALLBACK_SIM NO_COLOR")
        setup = [
            f"unset {unset}",
            f"export PATH={shlex.quote(bindir)}:\"$PATH\"",
            f"export GPUCLK_SIM_STATE={shlex.quote(workdir + '/sim.state')}",
            f"export TMPDIR={shlex.quote(workdir + '/tmp')} LC_ALL=C.UTF-8",
        ]
        if env:
            setup.append(f"export {env}")
        self.send("\n".join(setup) + "\n")

    def send(self, text):
        self.shell.stdin.write(text)
        self.shell.stdin.flush()

    def answer(self, what):
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DocError(f"{what} did not end within {self.timeout:g} s")
            ready, _, _ = select.select([self.shell.stdout], [], [], left)
            if ready:
                line = self.shell.stdout.readline()
                if not line:
                    raise DocError(f"the shell ended while running {what}")
                if line.startswith("@@"):
                    return line[2:].strip()

    def command_text(self, text):
        """What runs: /tmp/ is the block's own, build/release/ the build given, ports actual."""
        text = text.replace("/tmp/", self.dir + "/tmp/")
        text = re.sub(r"(?<![\w/])build/release/", self.bindir + "/", text)
        for actual, written in self.ports.items():
            text = text.replace(f"127.0.0.1:{written}", f"127.0.0.1:{actual}")
        return text

    def clean(self, text):
        text = text.replace(self.dir + "/tmp/", "/tmp/")
        text = re.sub(re.escape(self.dir) + r"/\S*/", "…/", text)
        text = re.sub(re.escape(self.dir) + r"/\S*", "…", text)
        text = text.replace(self.bindir + "/", "build/release/")
        text = text.replace(ROOT + "/", "")
        for actual, written in self.ports.items():
            text = text.replace(f"127.0.0.1:{actual}", f"127.0.0.1:{written}")
        lines = [line.rstrip() for line in text.split("\n")]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def read(self, path, offset=0):
        with open(path, encoding="utf-8", errors="replace") as f:
            f.seek(offset)
            return f.read()

    def quiet(self, path, offset, seconds, wait_output=0.0):
        """Waits until PATH has stopped growing for SECONDS, and, for at most WAIT_OUTPUT
        seconds, until it has grown past OFFSET."""
        start = time.monotonic()
        size, since = -1, start
        while time.monotonic() - start < self.timeout:
            now = os.path.getsize(path) if os.path.exists(path) else 0
            if now != size:
                size, since = now, time.monotonic()
            elif time.monotonic() - since >= seconds and (
                    now > offset or time.monotonic() - start >= wait_output):
                return
            time.sleep(0.05)

    def learn_ports(self, text, written):
        got = PORT.findall(text)
        shown = PORT.findall("\n".join(written))
        for k, actual in enumerate(got):
            if actual not in self.ports:
                self.ports[actual] = shown[k] if k < len(shown) else actual

    def run(self, cmd):
        self.count += 1
        n = self.count
        text = self.command_text(cmd.shell)
        out = os.path.join(self.dir, f"out.{n}")
        background = re.match(r"(?s)(.*?)\s*&\s*(#.*)?$", text)
        if background and not background.group(1).rstrip().endswith("&"):
            # disowned: the shell would report a background command killed by a signal
            self.send(f"{background.group(1)} >{shlex.quote(out)} 2>&1 </dev/null & disown\n"
                      f"echo @@started\n")
            self.answer(cmd.text[0])
            # Until it has printed (what the block shows it printing, or anything within 3 s)
            # and then been quiet for a second.
            self.quiet(out, 0, 1.0, self.timeout if cmd.output else 3.0)
            got = self.read(out)
            self.background.append([out, len(got.encode())])
            self.learn_ports(got, cmd.output)
            return self.clean(got)
        self.send(f"eval {shlex.quote(text)} >{shlex.quote(out)} 2>&1 </dev/null\n"
                  f"echo \"@@$?\"\n")
        rc = int(self.answer(cmd.text[0]))
        lines = self.clean(self.read(out))
        if rc != 0:
            lines.append(f"[exit {rc}]")
        for bg in self.background:  # what the background commands printed meanwhile
            self.quiet(bg[0], bg[1], 0.5)
            more = self.read(bg[0], bg[1])
            bg[1] += len(more.encode())
            lines += self.clean(more)
        return lines

    def close(self):
        """Ends the block's shell and what it left running (its process group: the background
        commands), SIGTERM first, SIGKILL for what still runs 3 s later."""
        try:
            self.shell.stdin.close()
        except OSError:
            pass
        group = self.shell.pid  # a session of its own: the group is the shell's and its jobs'
        try:
            os.killpg(group, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            self.shell.poll()
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.shell.wait()
        self.errlog.close()


def sanitizer_runtime(bindir):
    """The ASan or TSan runtime a sanitized build's libnvml-sim.so needs loaded first."""
    ldd = subprocess.run(["ldd", os.path.join(bindir, "libnvml-sim.so")], capture_output=True,
                         text=True).stdout
    m = re.search(r"(lib[at]san\S*) => (\S+)", ldd)
    return m.group(2) if m else ""


def run_screen(runner, cmd, size, spec, masks, where):
    """The command in a tmux pane of SIZE, captured once the lines SPEC keeps stopped changing
    but for what MASKS mask (a graph elsewhere on the screen may go on moving)."""
    m = re.fullmatch(r"(\d+)x(\d+)", size)
    if not m:
        raise DocError(f"{where}: bad screen size {size!r} (COLSxROWS)")
    script = os.path.join(runner.dir, "screen.sh")
    with open(script, "w") as f:
        f.write(f"cd {shlex.quote(ROOT)}\n"
                f"export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 NCURSES_NO_UTF8_ACS=1\n")
        runtime = sanitizer_runtime(runner.bindir)
        if runtime:  # a sanitized simulator in a program that is not (nvtop) needs it first
            f.write(f"export LD_PRELOAD={shlex.quote(runtime)} ASAN_OPTIONS=detect_leaks=0\n")
        f.write(f"eval {shlex.quote(runner.command_text(cmd.shell))}\nsleep 60\n")
    # The shell's environment (PATH, the simulator's state) is the pane's too.
    sock = f"gpuclk-doc-{os.path.basename(runner.dir)}-{runner.count}"
    runner.count += 1
    runner.send(f"tmux -L {sock} new-session -d -x {m.group(1)} -y {m.group(2)} "
                f"'bash {script}'; echo @@$?\n")
    if runner.answer(cmd.text[0]) != "0":
        raise DocError(f"{where}: tmux did not start the screen")
    try:
        deadline = time.monotonic() + runner.timeout
        last, since, moving = None, time.monotonic(), []
        while time.monotonic() < deadline:
            shot = subprocess.run(["tmux", "-L", sock, "capture-pane", "-p"],
                                  capture_output=True, text=True).stdout
            shot = select_lines(spec, runner.clean(shot), where)
            now = [masked(x, masks) for x in shot]
            before = [masked(x, masks) for x in last] if last is not None else None
            if now != before:
                since = time.monotonic()
                moving = [x for x in now if before is not None and x not in before]
            elif any(line.strip() for line in shot) and time.monotonic() - since >= 2.0:
                break
            last = shot
            time.sleep(0.2)
        else:
            raise DocError(f"{where}: the screen never settled; still changing: "
                           + " | ".join(moving[:3]))
        subprocess.run(["tmux", "-L", sock, "send-keys", "q"], capture_output=True)
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
    return last


def run_example(block, marker, bindir, workdir, where, masks=()):
    opts = marker.options
    cmds = commands_of(block, where)
    specs = opts.get("lines", "").split(";") if "lines" in opts else []
    if len(specs) > len(cmds):
        raise DocError(f"{where}: lines= has {len(specs)} parts for {len(cmds)} command(s)")
    runner = Runner(bindir, workdir, marker.env, float(opts.get("timeout") or 120))
    got = []
    try:
        for k, cmd in enumerate(cmds):
            spec = specs[k] if k < len(specs) else ""
            if "screen" in opts and k == len(cmds) - 1:
                got.append(run_screen(runner, cmd, opts["screen"], spec, masks, where))
            else:
                got.append(select_lines(spec, runner.run(cmd), where))
    finally:
        runner.close()
    return cmds, got


# --- checking a file ------------------------------------------------------------------------


def looks_like_gpuclk_output(body):
    for k, line in enumerate(body):
        if re.match(r"\$ .*\bgpuclk\b", line):
            j = k
            while body[j].endswith("\\") and j + 1 < len(body):
                j += 1
            if j + 1 < len(body) and body[j + 1].strip() and not body[j + 1].startswith("$ "):
                return True
    return False


def check_quote(block, marker, where):
    path = os.path.join(ROOT, marker.source)
    if not os.path.isfile(path):
        raise DocError(f"{where}: quotes {marker.source}, which does not exist")
    with open(path, encoding="utf-8") as f:
        source = [" ".join(line.split()) for line in f.read().split("\n")]
    k = 0
    for line in block.body:
        if ELISION.match(line) or line.startswith("$ "):
            continue
        want = " ".join(line.split())
        while k < len(source) and source[k] != want:
            k += 1
        if k == len(source):
            return f"{where}: not in {marker.source} (after the lines before it): {line.strip()}"
        k += 1
    return None


def check_recorded_by(block, marker, where):
    """A block a test checks against its own run: the test names this block's command."""
    cmds = commands_of(block, where)
    test = marker.options["recorded-by"]
    path = os.path.join(ROOT, test)
    if not os.path.isfile(path):
        return f"{where}: recorded by {test}, which does not exist"
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for cmd in cmds:
        if "doc-examples.py --recorded" not in text or cmd.shell.split(" | ")[0] not in text:
            return (f"{where}: recorded by {test}, which does not check `{cmd.shell}` "
                    "(scripts/doc-examples.py --recorded COMMAND OUTPUT FILE.md)")
    return None


def recorded(command, output_path, files):
    """--recorded: the blocks of FILES that show COMMAND, recorded by a test, against the
    output its run wrote: each line a block shows (but `...`) must be a line of that output, in
    any order (a test's loopback ports, which order its nodes, masked), within the block's
    tolerance and masks."""
    with open(output_path, encoding="utf-8", errors="replace") as f:
        got = [line.rstrip() for line in f.read().split("\n")]
    port = [re.compile(r"127\.0\.0\.1:(\d+)")]
    problems, found = [], 0
    for path in files:
        _, blocks = parse(path)
        rel = os.path.relpath(os.path.abspath(path), ROOT)
        for block in blocks:
            marker = block.marker
            if not marker or marker.kind != "example" or "recorded-by" not in marker.options:
                continue
            where = f"{rel}:{block.line}"
            for cmd in commands_of(block, where):
                if cmd.shell != command:
                    continue
                found += 1
                tolerance = (parse_tolerance(marker.options["tolerance"], where)
                             if "tolerance" in marker.options else None)
                masks = (parse_masks(marker.options["mask"], where)
                         if "mask" in marker.options else []) + port
                for line in cmd.output:
                    if ELISION.match(line):
                        continue
                    if not any(lines_match(line, g, tolerance, masks) for g in got):
                        problems.append(f"{where}: this run of `{command}` printed no line like: "
                                        f"{line}")
    if not found:
        problems.append(f"no block of {', '.join(files)} shows `{command}`")
    for p in problems:
        print(p)
    print(f"doc-examples: {found} recorded block(s) of `{command}` checked against {output_path}",
          file=sys.stderr)
    return 1 if problems else 0


@dataclass
class Example:
    where: str
    block: Block
    tolerance: tuple | None
    masks: list
    vary: list  # lines left out of the comparison (`vary=`)
    chain: list  # the blocks that run on one node, this one among them (`continues`)
    result: tuple | None = None  # (commands, output per command), or DocError
    seconds: float = 0


class FileCheck:
    """One file: its blocks classified (problems found at once), its examples to run."""

    def __init__(self, path):
        self.path = path
        self.rel = os.path.relpath(path, ROOT) if path.startswith(ROOT + "/") else path
        self.problems, self.examples, self.skipped, self.quotes, self.recorded = [], [], 0, 0, 0
        try:
            self.lines, blocks = parse(path)
        except DocError as e:
            self.lines, blocks = [], []
            self.problems.append(str(e))
        chain = None
        for block in blocks:
            try:
                self.classify(block, chain)
            except DocError as e:
                self.problems.append(str(e))
            if self.examples:
                chain = self.examples[-1].chain

    def classify(self, block, chain):
        where = f"{self.rel}:{block.line}"
        marker = block.marker
        if marker is None:
            if block.fence == "```":
                self.problems.append(
                    f"{where}: a block with neither a marker nor a language: gpuclk's output is an "
                    "example (<!-- example -->) or a quote (<!-- quote: FILE -->); anything else "
                    "names its language (```sh, ```text …)")
            elif looks_like_gpuclk_output(block.body):
                self.problems.append(f"{where}: shows gpuclk's output, but is not generated: make "
                                     "it an example (<!-- example -->) or a quote")
            return
        if marker.kind == "quote":
            self.quotes += 1
            problem = check_quote(block, marker, where)
            if problem:
                self.problems.append(problem)
            return
        if "recorded-by" in marker.options:
            self.recorded += 1
            problem = check_recorded_by(block, marker, where)
            if problem:
                self.problems.append(problem)
            return
        needs = [p for p in marker.options.get("needs", "").split(",") if p]
        if "screen" in marker.options:
            needs.append("tmux")
        missing = [p for p in needs
                   if (os.geteuid() != 0 if p == "root" else shutil.which(p) is None)]
        if missing:
            print(f"doc-examples: {where}: skipped ({', '.join(missing)} not installed)",
                  file=sys.stderr)
            self.skipped += 1
            return
        tolerance = None
        if "tolerance" in marker.options:
            tolerance = parse_tolerance(marker.options["tolerance"], where)
        if NO_LIVE and ("tolerance" in marker.options or "live" in marker.options):
            print(f"doc-examples: {where}: skipped (--no-live: it runs while simulated time runs "
                  "fast)", file=sys.stderr)
            self.skipped += 1
            return
        if "continues" in marker.options:
            if chain is None:
                raise DocError(f"{where}: `continues`, but no example block runs before it")
        else:
            chain = []
        masks = parse_masks(marker.options["mask"], where) if "mask" in marker.options else []
        vary = parse_masks(marker.options["vary"], where) if "vary" in marker.options else []
        example = Example(where, block, tolerance, masks, vary, chain)
        chain.append(example)
        self.examples.append(example)

    def finish(self, update):
        """Compares what ran with what is written; rewrites the file (--update) or reports."""
        replaced = {}
        for ex in self.examples:
            if isinstance(ex.result, DocError):
                e = str(ex.result)
                self.problems.append(e if e.startswith(ex.where) else f"{ex.where}: {e}")
                continue
            if VERBOSE:
                print(f"doc-examples: {ex.where}: {ex.seconds:.1f} s", file=sys.stderr)
            cmds, got = ex.result
            new_body, same = [], True
            for cmd, out in zip(cmds, got):
                def steady(lines):
                    return [x for x in lines if not any(v.search(x) for v in ex.vary)]
                if outputs_match(steady(cmd.output), steady(out), ex.tolerance,
                                 ex.masks) and not REFRESH:
                    out = cmd.output  # equal up to masked values and the tolerance: keep it
                else:
                    same = False
                new_body += cmd.text + out
            if same:
                continue
            if update:
                replaced[ex.block.line] = new_body
                print(f"doc-examples: {ex.where}: updated", file=sys.stderr)
            else:
                diff = difflib.unified_diff(ex.block.body, new_body, f"{ex.where} (as written)",
                                            f"{ex.where} (as run now)", lineterm="")
                self.problems.append("\n".join(diff))
        if replaced:
            out, i, lines = [], 0, self.lines
            while i < len(lines):
                out.append(lines[i])
                if lines[i].startswith("```") and (i + 1) in replaced:
                    out += replaced[i + 1]
                    i += 1
                    while lines[i] != "```":
                        i += 1
                    continue
                i += 1
            with open(self.path, "w", encoding="utf-8") as f:
                f.write("\n".join(out))


def LIVE_COST(ex):
    """Roughly how long an example runs: live ones (tolerance, screens) first."""
    return 2 if ex.tolerance or "screen" in ex.block.marker.options else 1


def run_chain(chain, bindir, work):
    """Runs the examples of one node in order (a failed one fails those that continue it)."""
    workdir = tempfile.mkdtemp(dir=work, prefix="node.")
    os.chmod(workdir, 0o755)  # other users' commands (setpriv) reach its socket and simulator
    failed = None
    for ex in chain:
        started = time.monotonic()
        if failed:
            ex.result = DocError(f"continues {failed}, which failed")
            continue
        try:
            ex.result = run_example(ex.block, ex.block.marker, bindir, workdir, ex.where,
                                    ex.masks)
        except DocError as e:
            ex.result, failed = e, ex.where
        ex.seconds = time.monotonic() - started


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--update", action="store_true", help="rewrite the blocks that changed")
    ap.add_argument("--refresh", action="store_true",
                    help="with --update: rewrite every example, also those within their tolerance")
    ap.add_argument("--no-live", action="store_true",
                    help="skip the examples with a tolerance or `live` (simulated time runs fast "
                         "there): a sanitized build runs too slowly for them")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build/release/gpuclk"))
    ap.add_argument("-v", "--verbose", action="store_true", help="each block's time")
    ap.add_argument("-j", "--jobs", type=int, default=6,
                    help="examples run at once (default 6: most of them wait on simulated time)")
    ap.add_argument("--recorded", nargs=2, metavar=("COMMAND", "OUTPUT"),
                    help="check the blocks of FILES that show COMMAND and are recorded by a test "
                         "against the OUTPUT of the test's run")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    global VERBOSE, REFRESH, NO_LIVE
    VERBOSE, REFRESH, NO_LIVE = args.verbose, args.refresh and args.update, args.no_live
    if args.recorded:
        return recorded(args.recorded[0], args.recorded[1], args.files)
    if not os.access(args.bin, os.X_OK):
        print(f"doc-examples: no gpuclk at {args.bin} (build it, or give --bin)", file=sys.stderr)
        return 2
    bindir = os.path.dirname(os.path.realpath(args.bin))
    files = args.files or [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
        if f.endswith(".md"))
    checks = [FileCheck(os.path.abspath(path)) for path in files]
    chains = []
    for check in checks:
        for ex in check.examples:
            if ex.chain[0] is ex:
                chains.append(ex.chain)
    # The longest first; most examples sleep while simulated time runs, so several run at once.
    chains.sort(key=lambda c: -sum(LIVE_COST(ex) for ex in c))
    with tempfile.TemporaryDirectory(prefix="gpuclk-doc-examples.") as work:
        os.chmod(work, 0o755)
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(lambda c: run_chain(c, bindir, work), chains))
    status = 0
    for check in checks:
        check.finish(args.update)
        for p in check.problems:
            print(p)
        print(f"doc-examples: {check.rel}: {len(check.examples)} example(s) run, "
              f"{check.quotes} quote(s) checked"
              + (f", {check.recorded} recorded by tests" if check.recorded else "")
              + (f", {check.skipped} skipped" if check.skipped else "")
              + (f", {len(check.problems)} problem(s)" if check.problems else ""), file=sys.stderr)
        if check.problems:
            status = 1
    if status:
        print("doc-examples: the examples differ from what the commands print, or a block is "
              "unmarked; scripts/doc-examples.py --update rewrites the examples", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())

"""CWL packages the tests deploy: a CommandLineTool running a Python script given in
`InitialWorkDirRequirement`, and a two-step Workflow."""

from __future__ import annotations

import json
import textwrap

#: The header of a CWL package deployed as YAML.
CWL_YAML = {"Content-Type": "application/cwl+yaml"}


def shout_tool(process_id: str, word: str = "") -> str:
    """Upper-cases `message` `times` times (and appends `word`: a replacement's mark),
    after `seconds` of sleep; its log says when it starts."""
    return f"""\
cwlVersion: v1.2
class: CommandLineTool
id: {process_id}
label: Shout
doc: Upper-cases a message.
requirements:
  InitialWorkDirRequirement:
    listing:
      - entryname: shout.py
        entry: |
          import sys, time
          print("started", sys.argv[3], file=sys.stderr, flush=True)
          time.sleep(float(sys.argv[3]))
          print((sys.argv[1].upper() + " ") * int(sys.argv[2]) + "{word}")
baseCommand: [python3, shout.py]
inputs:
  message:
    type: string
    label: What to shout
    inputBinding: {{position: 1}}
  times:
    type: int
    default: 2
    inputBinding: {{position: 2}}
  seconds:
    type: float
    default: 0
    inputBinding: {{position: 3}}
outputs:
  shouted:
    type: stdout
  times_shouted:
    type: int
    outputBinding:
      outputEval: $(inputs.times)
stdout: shouted.txt
"""


TWO_STEPS = """\
cwlVersion: v1.2
$graph:
  - id: main
    class: Workflow
    label: Shout, then exclaim
    inputs:
      message: string
    outputs:
      final:
        type: File
        outputSource: exclaim/out
    steps:
      shout:
        run: "#upper"
        in: {message: message}
        out: [out]
      exclaim:
        run: "#exclaim"
        in: {text: shout/out}
        out: [out]
  - id: upper
    class: CommandLineTool
    baseCommand: [python3, -c, "import sys; print(sys.argv[1].upper())"]
    inputs:
      message: {type: string, inputBinding: {position: 1}}
    outputs:
      out: stdout
  - id: exclaim
    class: CommandLineTool
    baseCommand: [python3, -c, "import sys; print(open(sys.argv[1]).read().strip() + '!')"]
    inputs:
      text: {type: File, inputBinding: {position: 1}}
    outputs:
      out: stdout
"""


def application_package(process_id: str, cwl: str, **description: str) -> str:
    """An OGC application package holding `cwl` (YAML) by value."""
    return json.dumps({"processDescription": {"id": process_id, **description},
                       "executionUnit": {"value": cwl, "mediaType": "application/cwl+yaml"}})


def python_tool(process_id: str, script: str, inputs: dict[str, str],
                outputs: dict[str, str]) -> str:
    """A CommandLineTool running `script` (Python, written into its working folder) with
    its `inputs` (name -> CWL type, in the order of its arguments) and `outputs` (name ->
    CWL type or `stdout`)."""
    listed = "\n".join(f"  {name}: {{type: {kind}, inputBinding: {{position: {n}}}}}"
                       for n, (name, kind) in enumerate(inputs.items(), start=1))
    returned = "\n".join(f"  {name}: {kind}" for name, kind in outputs.items())
    return (f"cwlVersion: v1.2\nclass: CommandLineTool\nid: {process_id}\n"
            "requirements:\n  InitialWorkDirRequirement:\n    listing:\n"
            "      - entryname: tool.py\n        entry: |\n"
            + textwrap.indent(textwrap.dedent(script).strip("\n"), " " * 10) + "\n"
            "baseCommand: [python3, tool.py]\n"
            + (f"inputs:\n{listed}\n" if inputs else "inputs: []\n")
            + (f"outputs:\n{returned}\n" if outputs else "outputs: []\n"))


def prober(process_id: str) -> str:
    """Tries what a job must not do (`reads`, `connects`: [host, port], writes a `secret`
    in its own folder), and reports each attempt: "ok" or the error's name."""
    return python_tool(process_id, """
        import glob, json, os, socket, sys, time
        asked = json.loads(sys.argv[1])
        def attempt(action):
            try:
                action()
                return "ok"
            except OSError as e:
                return type(e).__name__
        def read(path):
            with open(path, "rb") as f:
                f.read()
        def connect(host, port):
            socket.create_connection((host, port), timeout=2).close()
        with open("secret.txt", "w") as f:
            f.write(asked["secret"])
        print("folder", os.getcwd(), file=sys.stderr, flush=True)
        report = {
            "cwd": os.getcwd(),
            "tmp": sorted(os.listdir("/tmp")),
            "read": {p: attempt(lambda p=p: read(p)) for p in asked["reads"]},
            "connect": {f"{h}:{p}": attempt(lambda h=h, p=p: connect(h, p))
                        for h, p in asked["connects"]},
        }
        print(json.dumps(report))
        time.sleep(asked.get("seconds", 0))
        """, {"asked": "string"}, {"report": "stdout"})


def secretive(process_id: str) -> str:
    """Writes its `token` (named secret by cwltool's `Secrets` hint) to its log."""
    return f"""\
cwlVersion: v1.2
class: CommandLineTool
id: {process_id}
$namespaces: {{cwltool: "http://commonwl.org/cwltool#"}}
hints:
  cwltool:Secrets:
    secrets: [token]
baseCommand: [python3, -c, "import sys; print('using', sys.argv[1], file=sys.stderr)"]
inputs:
  token: {{type: string, inputBinding: {{position: 1}}}}
outputs: []
"""


def inspector(process_id: str) -> str:
    """Reports what a tool may reach of other processes: its own descriptors, and for every
    other pid it sees, its command line, the names in its environment and the descriptors
    `pidfd_getfd` takes from it (each fd's target, or the errors met)."""
    return python_tool(process_id, r"""
        import ctypes, errno, json, os
        libc = ctypes.CDLL(None, use_errno=True)
        def target(fd):
            try:
                return os.readlink(f"/proc/self/fd/{fd}")
            except OSError as e:
                return type(e).__name__
        def environ(pid):
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    return sorted(v.split(b"=")[0].decode() for v in f.read().split(b"\0") if v)
            except OSError as e:
                return type(e).__name__
        def cmdline(pid):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    return f.read().replace(b"\0", b" ").decode().strip()
            except OSError as e:
                return type(e).__name__
        def taken(pid):
            try:
                pidfd = os.pidfd_open(pid)
            except OSError as e:
                return type(e).__name__
            got, errors = {}, set()
            for fd in range(256):
                new = libc.syscall(438, pidfd, fd, 0)  # pidfd_getfd
                if new < 0:
                    errors.add(errno.errorcode[ctypes.get_errno()])
                    continue
                got[fd] = target(new)
                os.close(new)
            os.close(pidfd)
            return got or sorted(errors - {"EBADF"})
        me = os.getpid()
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        own = {fd: target(int(fd)) for fd in os.listdir("/proc/self/fd")}
        print(json.dumps({
            "me": me,
            "fds": sorted(t for t in own.values() if not t.startswith("/proc/")),
            "pids": {p: {"cmdline": cmdline(p), "environ": environ(p), "fds": taken(p)}
                     for p in pids if p != me}}))
        """, {}, {"report": "stdout"})


def greedy(process_id: str) -> str:
    """Does what a careless (or hostile) job does, as `action` says: `fill` writes
    `amount` MiB to `/tmp/filled`; `fork` starts `amount` processes that sleep; `sleep`
    sleeps `amount` seconds. It prints what it did, or the error that stopped it."""
    return python_tool(process_id, """
        import os, sys, time
        action, amount = sys.argv[1], int(sys.argv[2])
        if action == "fill":
            with open("/tmp/filled", "wb") as f:
                for _ in range(amount):
                    f.write(b"x" * 2**20)
                    f.flush()
        elif action == "fork":
            for n in range(amount):
                if os.fork() == 0:
                    time.sleep(600)
                    os._exit(0)
        else:
            time.sleep(amount)
        print(action, amount, "done")
        """, {"action": "string", "amount": "int"}, {"said": "stdout"})


def many_steps(process_id: str, steps: int) -> str:
    """A workflow of `steps` steps, each running the same tool of its `$graph`."""
    listed = "\n".join(f"      s{n}: {{run: '#upper', in: {{message: message}}, out: [out]}}"
                       for n in range(steps))
    return f"""\
cwlVersion: v1.2
$graph:
  - id: {process_id}
    class: Workflow
    inputs:
      message: string
    outputs: []
    steps:
{listed}
  - id: upper
    class: CommandLineTool
    baseCommand: [python3, -c, "import sys; print(sys.argv[1].upper())"]
    inputs:
      message: {{type: string, inputBinding: {{position: 1}}}}
    outputs:
      out: stdout
"""


def scripted(process_id: str, lines: int) -> str:
    """A tool whose `expressionLib` holds `lines` lines of JavaScript (cwltool checks them
    with JSHint, under nodejs)."""
    library = "\n".join(f"        var v{n} = function (x) {{ return x + {n}; }};"
                        for n in range(lines))
    return f"""\
cwlVersion: v1.2
class: CommandLineTool
id: {process_id}
requirements:
  InlineJavascriptRequirement:
    expressionLib:
      - |
{library}
baseCommand: [echo]
arguments: [$(v1(1))]
inputs: []
outputs: []
"""


def cdo_mean(process_id: str) -> str:
    """The time mean of sea surface temperature files, by CDO (`timmean` of their
    `mergetime`), to one NetCDF: a real tool on real data (the docs' example)."""
    return f"""\
cwlVersion: v1.2
class: CommandLineTool
id: {process_id}
label: Time mean (CDO)
doc: The time mean of NetCDF files, merged along time.
baseCommand: [cdo, -s, timmean, -mergetime]
arguments:
  - {{position: 2, valueFrom: mean.nc}}
inputs:
  files:
    type: File[]
    label: NetCDF files
    inputBinding: {{position: 1}}
outputs:
  mean:
    type: File
    outputBinding: {{glob: mean.nc}}
"""

"""``make fingerprint`` (``python -m normbook.tools.fingerprint``): does pinning the kernels'
instruction set make this CPU compute what the reference's CPU computed, bit for bit?

Two small networks of the book's two families, a 1-D CNN with InstanceNorm (paper A) and a 2-D
CNN with BatchNorm (paper B), are trained for a few hundred Adam steps on seeded data, on one
thread, and their final weights hashed: once as the machine chooses its kernels, once with
the pins the Makefile sets by default (:data:`PINNED`, ``make pins``). Each runs in a fresh
process, since the libraries choose their kernels once per process. The result is written to
``_build/<profile>/fingerprint.json``; ``make reference`` keeps the reference machine's in the
reference ledger, and the *Build and compute* page compares the two: equal pinned hashes on two
different CPUs are the evidence that pinning makes their ledgers agree; unequal ones, that it
does not. (On a Zen 4, pinned, they were equal to the Zen 3 reference's, and a whole pinned
`cpu` book gave the reference's verdict for every claim; unpinned, three differed.) A CPU that
cannot run the reference's kernels (no AVX2: ARM, older x86) is told so, and pointed to the
bundle of the reference's networks (``make book BUNDLE=...``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

# the Makefile's default pins (tested equal): the reference machine's kernels
PINNED = {
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "ATEN_CPU_CAPABILITY": "avx2",
    "OPENBLAS_CORETYPE": "Haswell",
}
NO_AVX2 = (
    "this CPU has no AVX2 ({why}): pinning cannot give it the reference machine's kernels. "
    "For the reference's verdicts, build from the bundle of its networks: "
    "make book BUNDLE=<the bundle's file or URL> (README, 'The book from a bundle')"
)


def has_avx2(cpuinfo: str | None = None) -> tuple[bool, str]:
    """Whether this CPU can run the pinned kernels, and why not (x86 with AVX2 only)."""
    import platform

    if cpuinfo is None:
        try:
            cpuinfo = open("/proc/cpuinfo").read()
        except OSError:
            return False, f"no /proc/cpuinfo on {platform.system()} {platform.machine()}"
    flags = next((line for line in cpuinfo.splitlines() if line.startswith("flags")), "")
    if "avx2" in flags.split():
        return True, ""
    return False, f"{platform.machine()}, no avx2 among its flags"


STEPS = 200

# Runs in a fresh interpreter: prints {"a": hash, "b": hash, "s_per_step": {...}} as JSON.
PROGRAM = r"""
import hashlib, json, sys, time
import torch
torch.set_num_threads(1)
steps = int(sys.argv[1])

def fingerprint(net, batch, target):
    opt = torch.optim.Adam(net.parameters(), 1e-3)
    g = torch.Generator().manual_seed(1)
    t0 = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad()
        x = torch.randn(*batch, generator=g)
        loss = ((net(x) - target(x)) ** 2).mean()
        loss.backward()
        opt.step()
    dt = (time.perf_counter() - t0) / steps
    blob = b"".join(p.detach().numpy().tobytes() for p in net.parameters())
    return hashlib.sha256(blob).hexdigest()[:16], dt

torch.manual_seed(0)
c = 32
a = torch.nn.Sequential(*[m for i in range(4) for m in (
    torch.nn.Conv1d(1 if i == 0 else c, c, 3, padding=1), torch.nn.InstanceNorm1d(c),
    torch.nn.ReLU())], torch.nn.Conv1d(c, 1, 1))
ramp = torch.linspace(-1, 1, 128)
ha, ta = fingerprint(a, (32, 1, 128), lambda x: ramp.expand_as(x))
torch.manual_seed(0)
b = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
    torch.nn.MaxPool2d(2), torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32),
    torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10))
hb, tb = fingerprint(b, (32, 3, 32, 32), lambda x: x.mean(dim=(2, 3)).repeat(1, 4)[:, :10])
print(json.dumps({"a": ha, "b": hb, "s_per_step": {"a": ta, "b": tb}}))
"""


def run(env_extra: dict[str, str], steps: int = STEPS) -> dict:
    """The two networks' hashes and seconds per step in a fresh process with ``env_extra``."""
    env = {k: v for k, v in os.environ.items() if k not in PINNED}
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", PROGRAM, str(steps)], env=env,
                         capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(steps: int = STEPS) -> dict:
    """This machine's fingerprint: as it chooses its kernels, and pinned to AVX2."""
    from normbook.runtime.devices import machine

    ok, why = has_avx2()
    return {"machine": machine(), "steps": steps, "date": time.strftime("%Y-%m-%d"),
            "as_is": run({}, steps), "pinned": run(PINNED, steps) if ok else None,
            "pinned_flags": PINNED, "no_avx2": None if ok else why}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m normbook.tools.fingerprint", description=__doc__)
    ap.add_argument("--profile", default="cpu", help="the build folder to write it into")
    ap.add_argument("--steps", type=int, default=STEPS)
    args = ap.parse_args(argv)
    if args.steps < 1:
        print(f"error: --steps must be at least 1, got {args.steps}", file=sys.stderr)
        return 2
    from normbook.publish import project

    data = measure(args.steps)
    out = project.build_dir(args.profile) / "fingerprint.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    project.write_atomic(out, json.dumps(data, indent=1) + "\n")
    if data["pinned"] is None:
        print(f"[fingerprint] {out}: as is {data['as_is']['a']} {data['as_is']['b']}")
        print("[fingerprint] " + NO_AVX2.format(why=data["no_avx2"]))
        return 0
    print(f"[fingerprint] {out}: as is {data['as_is']['a']} {data['as_is']['b']}, pinned "
          f"{data['pinned']['a']} {data['pinned']['b']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

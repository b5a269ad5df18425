# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the same-run peer benchmarks (bench/loops_vs_faust.py, bench/dynamics_vs_peers.py).

Faust builds and runs a Faust program in bench/peers/faust/harness.cpp; fxc_bench times a graph
with `fxc bench --json`; max_diff and median are the small numeric helpers both scripts use.
"""
import json, os, shutil, subprocess, sys
import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
FAUST_DIR = os.path.join(ROOT, "bench", "peers", "faust")
WORKLOAD_DIR = os.path.join(ROOT, "bench", "workloads")

# Precisions of a Faust build: the computation's (faust -double or not) and the harness's I/O.
#   f32: float inside, float32 in and out;  f64: -double inside, float32 in and out;
#   f64io: -double inside, float32 in (widened exactly) and float64 out (-DFAUSTFLOAT=double).
PRECISIONS = {"f32": (False, False), "f64": (True, False), "f64io": (True, True)}


def output_dtype(precision):
    """The sample type of the harness's --output file for a precision."""
    return np.float64 if PRECISIONS[precision][1] else np.float32


class Faust:
    def __init__(self, build_dir):
        self.build_dir = build_dir
        self.faust, self.cxx = shutil.which("faust"), shutil.which("g++")
        if not self.faust or not self.cxx:
            sys.exit(os.path.basename(sys.argv[0]) + ": " + ("faust" if not self.faust else "g++") +
                     " not found (apt-get install faust g++)")
        self.version = subprocess.run([self.faust, "--version"], capture_output=True, text=True,
                                      check=True).stdout.split("\n")[0].strip()
        self.gxx = subprocess.run([self.cxx, "--version"], capture_output=True, text=True).stdout.split("\n")[0].strip()
        os.makedirs(build_dir, exist_ok=True)

    def program(self, dsp_name, channels, layout):
        """The mono .dsp, or (layout 'par') its chain under par(i, C, chain), written to the build dir."""
        dsp = os.path.join(FAUST_DIR, dsp_name)
        stem = os.path.splitext(dsp_name)[0]
        if layout != "par" or channels == 1:
            return dsp, stem
        with open(dsp) as f:
            text = f.read()
        if "process = chain;" not in text:
            raise RuntimeError(f"{dsp} has no 'process = chain;' line")
        text = text.replace("process = chain;", f"process = par(i, {channels}, chain);")
        stem = f"{stem}_x{channels}"
        path = os.path.join(self.build_dir, stem + ".dsp")
        if not os.path.exists(path) or open(path).read() != text:
            with open(path, "w") as f:
                f.write(text)
        return path, stem

    def binary(self, dsp_name, channels, layout, precision):
        double, double_io = PRECISIONS[precision]
        dsp, stem = self.program(dsp_name, channels, layout)
        harness = os.path.join(FAUST_DIR, "harness.cpp")
        stem += "_" + precision
        header, exe = os.path.join(self.build_dir, stem + ".h"), os.path.join(self.build_dir, stem)
        newest = max(os.path.getmtime(dsp), os.path.getmtime(os.path.join(FAUST_DIR, dsp_name)),
                     os.path.getmtime(harness), os.path.getmtime(__file__))
        if os.path.exists(exe) and os.path.getmtime(exe) >= newest:
            return exe
        subprocess.run([self.faust, "-lang", "cpp", "-cn", "FaustChain"] + (["-double"] if double else []) +
                       ["-o", header, dsp], check=True, capture_output=True, text=True)
        subprocess.run([self.cxx, "-std=c++17", "-O3", "-march=native", f'-DFAUST_HEADER="{header}"',
                        f'-DFAUST_PRECISION="{"f64" if double else "f32"}"'] +
                       (["-DFAUSTFLOAT=double"] if double_io else []) + [harness, "-o", exe],
                       check=True, capture_output=True, text=True)
        return exe

    def run(self, dsp_name, channels, layout, precision, input_path, samples, fs, repeat, output_path=None):
        exe = self.binary(dsp_name, channels, layout, precision)
        cmd = [exe, "--input", input_path, "--channels", str(channels), "--samples", str(samples),
               "--repeat", str(repeat), "--fs", str(fs)] + (["--output", output_path] if output_path else [])
        return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def fxc_bench(fxc, fx, channels, secs, fs, repeat, threads=None):
    """`fxc bench --json` at float32 on its own noise (uniform in [-1, 1]), without the accuracy check."""
    cmd = [fxc, "bench", os.path.join(WORKLOAD_DIR, fx), "--channels", str(channels), "--seconds", str(secs),
           "--fs", str(fs), "--dtype", "f32", "--repeat", str(repeat), "--json", "--no-check"]
    if threads:
        cmd += ["--threads", str(threads)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def max_diff(a, b):
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def median(values):
    return float(np.median(values))


def usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()

#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Draws the plots of the dynamics stages in docs/fx-language.md ("Dynamics (version 2)"),
measured by running fxc itself, not by evaluating the equations here:

  docs/img/dynamics_static.svg   static curves: output level against input level (-80..0 dB)
      of compressor(-20 dB, 4) with knee 0 and 10 dB, expander(-40 dB, 2) with knee 0 and 6 dB,
      gate(-40 dB, range=-30 dB) and limiter(-6 dB), all with attack = release = 0 ms. Each
      level is one channel of a constant (DC) input, all levels (0.25 dB apart) in one
      `fxc run`; the output level is 20 log10 |out| of the last sample.
  docs/img/dynamics_step.svg     step responses of compressor(-30 dB, 4, 5 ms, 40 ms) and
      limiter(-20 dB, 40 ms, lookahead=2 ms): the input steps from -40 dB to -10 dB at 50 ms
      and back at 250 ms (400 ms at 48 kHz), as a DC step (channel 0) and as a 1 kHz sine of
      that peak level (channel 1), in one `fxc run`. The gain in dB is out[n] / in[n - L]
      (L the lookahead, 0 for the compressor) at every sample where the input is not near
      zero; the attack and release times are measured where the DC step's gain reduction has
      covered 1 - 1/e of its way.

Run from anywhere with Debian's Python (NumPy only: the SVG is written by hand, in the look of
`fxc freqz`'s plots):

    /usr/bin/python3 scripts/plot_dynamics.py [--fxc build/tools/fxc/fxc] [--out-dir docs/img]

It also runs the same inputs through scripts/gen_dynamics_reference.py (the contract's
equations as plain float64 loops) and stops with an error, writing nothing, if fxc's outputs
differ from it by more than 1e-9 of the input's peak, or if a measured time constant is more
than a sample away from the stage's attack or release.
"""
import argparse
import importlib.util
import math
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
FS = 48000
TOLERANCE = 1e-9  # of the input's peak, float64 kernels against the float64 reference

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
# Matplotlib's "tab10", as `fxc freqz` draws with.
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]
MINUS = "\u2212"  # a typographic minus, as fxc freqz labels


# --- running fxc --------------------------------------------------------------------------------

def run_fxc(fxc, graph_text, x, outputs, workdir):
    """Runs `graph_text` (one input, the given outputs) on x [channels, samples] in float64
    at FS and returns the outputs' arrays."""
    work = pathlib.Path(workdir)
    (work / "graph.fx").write_text(graph_text)
    np.save(work / "in.npy", np.ascontiguousarray(x, dtype=np.float64))
    command = [fxc, "run", str(work / "graph.fx"), "-i", str(work / "in.npy"),
               "--fs", str(FS), "--dtype", "f64", "--progress", "never"]
    for name in outputs:
        command += ["-o", str(work / f"{name}.npy")]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"plot_dynamics: {' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return {name: np.load(work / f"{name}.npy") for name in outputs}


def load_reference():
    """scripts/gen_dynamics_reference.py, imported by path as python/tests does."""
    path = ROOT / "scripts" / "gen_dynamics_reference.py"
    spec = importlib.util.spec_from_file_location("gen_dynamics_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(label, measured, expected, peak):
    worst = float(np.max(np.abs(measured - expected))) / peak
    print(f"  {label:<44} largest difference {worst:.1e} of the peak")
    if not worst <= TOLERANCE:
        sys.exit(f"plot_dynamics: {label}: fxc differs from the contract's equations "
                 f"(scripts/gen_dynamics_reference.py) by {worst:.3g} of the peak")


def db(v):
    return 20 * np.log10(np.maximum(np.abs(v), 1e-300))


# --- a small SVG writer ---------------------------------------------------------------------------

def num(v):
    s = f"{v:.1f}"
    return s[:-2] if s.endswith(".0") else s


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def label(v):
    """A tick label: whole numbers without a point, a typographic minus."""
    s = f"{abs(v):g}"
    return MINUS + s if v < 0 and s != "0" else s


class Svg:
    def __init__(self, width, height):
        self.width, self.height = width, height
        self.defs, self.body = [], []

    def add(self, element):
        self.body.append(element)

    def text(self, x, y, s, size=11, anchor="start", valign=0.5, grey=0.2, bold=False,
             colour=None, rotate=None):
        """Text with its left/centre/right (anchor) at x and its cap height's top (valign 0),
        middle (0.5) or baseline (1) at y, like fxc freqz's text()."""
        cap = 0.67 * size
        baseline = y + cap * (1 - valign)
        fill = colour or grey_rgb(grey)
        attrs = f'x="{num(x)}" y="{num(baseline)}" font-size="{size}" fill="{fill}"'
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        if bold:
            attrs += ' font-weight="bold"'
        if rotate is not None:
            attrs += f' transform="rotate({rotate} {num(x)} {num(y)})"'
        self.add(f"<text {attrs}>{esc(s)}</text>")

    def path(self, d, stroke, width=1.0, dash=None, opacity=None, fill="none", clip=None,
             cap="round"):
        attrs = f'd="{d}" fill="{fill}" stroke="{stroke}" stroke-width="{num(width) if width >= 1 else width}"'
        if stroke != "none":
            attrs += f' stroke-linejoin="round" stroke-linecap="{cap}"'
        if dash:
            attrs += f' stroke-dasharray="{dash}"'
        if opacity is not None:
            attrs += f' opacity="{opacity}"'
        if clip:
            attrs += f' clip-path="url(#{clip})"'
        self.add(f"<path {attrs}/>")

    def clip_rect(self, name, x, y, w, h):
        self.defs.append(f'<clipPath id="{name}"><rect x="{num(x)}" y="{num(y)}" '
                         f'width="{num(w)}" height="{num(h)}"/></clipPath>')

    def write(self, path):
        lines = ['<?xml version="1.0" encoding="UTF-8"?>', f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" '
                 f'height="{self.height}" viewBox="0 0 {self.width} {self.height}" '
                 f'font-family="{FONT}">']
        if self.defs:
            lines += ["<defs>"] + self.defs + ["</defs>"]
        lines.append(f'<rect width="{self.width}" height="{self.height}" fill="#fff"/>')
        lines += self.body
        lines.append("</svg>")
        pathlib.Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def grey_rgb(level):
    v = round(255 * level)
    return f"#{v:02x}{v:02x}{v:02x}"


def polyline(points):
    return "M" + " L".join(f"{num(x)} {num(y)}" for x, y in points)


def simplify(px, py, tolerance=0.2):
    """Ramer-Douglas-Peucker on a polyline in pixels: the points that keep it within
    `tolerance` px of the original (the SVGs stay small; the drawing does not change)."""
    n = len(px)
    if n <= 2:
        return list(zip(px, py))
    keep = np.zeros(n, dtype=bool)
    keep[0] = keep[-1] = True
    stack = [(0, n - 1)]
    while stack:
        a, b = stack.pop()
        if b <= a + 1:
            continue
        dx, dy = px[b] - px[a], py[b] - py[a]
        seg = math.hypot(dx, dy)
        xs, ys = px[a + 1:b] - px[a], py[a + 1:b] - py[a]
        dist = np.abs(xs * dy - ys * dx) / seg if seg > 0 else np.hypot(xs, ys)
        i = int(np.argmax(dist))
        if dist[i] > tolerance:
            keep[a + 1 + i] = True
            stack += [(a, a + 1 + i), (a + 1 + i, b)]
    return list(zip(px[keep], py[keep]))


def decimate(px, py):
    """Per pixel column, the first, lowest, highest and last point in their order: what a
    rasteriser would draw of a curve with many samples a pixel."""
    column = np.floor(px).astype(np.int64)
    starts = np.flatnonzero(np.r_[True, column[1:] != column[:-1]])
    ends = np.r_[starts[1:], len(px)]
    keep = []
    for s, e in zip(starts, ends):
        idx = {s, e - 1, s + int(np.argmin(py[s:e])), s + int(np.argmax(py[s:e]))}
        keep += sorted(idx)
    keep = np.array(keep)
    return px[keep], py[keep]


class Panel:
    """A plot area with linear axes, drawn in the style of fxc freqz's panels."""

    def __init__(self, svg, name, x, y, w, h, xlim, ylim):
        self.svg, self.name = svg, name
        self.x, self.y, self.w, self.h = x, y, w, h
        self.xlim, self.ylim = xlim, ylim
        svg.clip_rect(name, x, y, w, h)

    def px(self, v):
        return self.x + self.w * (np.asarray(v, dtype=float) - self.xlim[0]) / (self.xlim[1] - self.xlim[0])

    def py(self, v):
        return self.y + self.h * (self.ylim[1] - np.asarray(v, dtype=float)) / (self.ylim[1] - self.ylim[0])

    def grid(self, xticks, yticks, xminor=(), yminor=(), ylabels=True, xlabels=True, size=11):
        svg = self.svg
        svg.add(f'<rect x="{num(self.x)}" y="{num(self.y)}" width="{num(self.w)}" '
                f'height="{num(self.h)}" fill="#fff"/>')
        d = []
        for v in xminor:
            d.append(f"M{num(round(float(self.px(v))) + 0.5)} {num(self.y)} v{num(self.h)}")
        for v in yminor:
            d.append(f"M{num(self.x)} {num(round(float(self.py(v))) + 0.5)} h{num(self.w)}")
        if d:
            svg.path(" ".join(d), grey_rgb(0.92), width=0.6, cap="butt")
        d = []
        for v in xticks:
            d.append(f"M{num(round(float(self.px(v))) + 0.5)} {num(self.y)} v{num(self.h)}")
        for v in yticks:
            d.append(f"M{num(self.x)} {num(round(float(self.py(v))) + 0.5)} h{num(self.w)}")
        svg.path(" ".join(d), grey_rgb(0.80), width=0.9, cap="butt")
        if ylabels:
            for v in yticks:
                svg.text(self.x - 0.64 * size, float(self.py(v)), label(v), anchor="end", size=size)
        if xlabels:
            for v in xticks:
                svg.text(float(self.px(v)), self.y + self.h + 0.7 * size, label(v), anchor="middle",
                         valign=0, size=size)

    def border(self):
        self.svg.add(f'<rect x="{num(self.x + 0.5)}" y="{num(self.y + 0.5)}" width="{num(self.w - 1)}" '
                     f'height="{num(self.h - 1)}" fill="none" stroke="{grey_rgb(0.35)}"/>')

    def axis_titles(self, xtitle=None, ytitle=None):
        if xtitle:
            self.svg.text(self.x + self.w / 2, self.y + self.h + 34, xtitle, size=12, anchor="middle",
                          valign=0)
        if ytitle:
            self.svg.text(self.x - 50, self.y + self.h / 2, ytitle, size=12, anchor="middle",
                          rotate=-90)

    def title(self, s):
        self.svg.text(self.x, self.y - 12, s, size=13, bold=True, grey=0.1, valign=1)

    def curve(self, xs, ys, colour, width=1.7, dash=None, opacity=None, tolerance=0.2):
        px, py = self.px(xs), self.py(ys)
        ok = np.isfinite(px) & np.isfinite(py)
        px, py = px[ok], py[ok]
        if len(px) > 4 * self.w:
            px, py = decimate(px, py)
        points = simplify(px, py, tolerance)
        self.svg.path(polyline(points), colour, width=width, dash=dash, opacity=opacity,
                      clip=self.name)
        return list(zip(px, py))

    def legend(self, entries, curves_px, avoid=()):
        """entries: (label, colour, dash, opacity); in the corner the curves cross least (and
        away from the rectangles in `avoid`, (x, y, w, h) in pixels)."""
        row, pad, sample = 18, 8, 26
        w = pad + sample + 6 + max(6.3 * len(e[0]) for e in entries) + pad
        h = pad + row * len(entries) + pad - 4
        inset = 10
        corners = [(self.x + self.w - w - inset, self.y + inset),
                   (self.x + inset, self.y + inset),
                   (self.x + self.w - w - inset, self.y + self.h - h - inset),
                   (self.x + inset, self.y + self.h - h - inset)]
        points = [p for c in curves_px for p in c]
        for ax, ay, aw, ah in avoid:
            points += [(px, py) for px in np.arange(ax, ax + aw, 4) for py in np.arange(ay, ay + ah, 4)]
        points = np.array(points) if points else np.zeros((0, 2))

        def hits(corner):
            cx, cy = corner
            inside = ((points[:, 0] >= cx) & (points[:, 0] <= cx + w) &
                      (points[:, 1] >= cy) & (points[:, 1] <= cy + h))
            return int(np.count_nonzero(inside))

        bx, by = min(corners, key=hits)
        self.svg.add(f'<rect x="{num(bx + 0.5)}" y="{num(by + 0.5)}" width="{num(w)}" height="{num(h)}" '
                     f'fill="#fff" fill-opacity="0.92" stroke="{grey_rgb(0.7)}" stroke-width="0.8"/>')
        for i, (text, colour, dash, opacity) in enumerate(entries):
            cy = by + pad + row * i + row / 2 - 2
            self.svg.path(f"M{num(bx + pad)} {num(cy)} h{sample}", colour, width=2, dash=dash,
                          opacity=opacity)
            self.svg.text(bx + pad + sample + 6, cy, text, grey=0.15)


def header(svg, title, note):
    svg.text(84, 30, title, size=17, bold=True, grey=0.1)
    svg.text(svg.width - 28, 30, note, size=11, grey=0.4, anchor="end")


# --- static curves ----------------------------------------------------------------------------------

STATIC_LEVELS = np.round(np.arange(-80.0, 0.0 + 1e-9, 0.25), 2)
STATIC_SAMPLES = 32
STATIC_STAGES = [
    # (output, .fx stage, reference stage, reference parameters (dB, seconds))
    ("comp_hard", "compressor(-20 dB, 4, 0 ms, 0 ms)", "compressor",
     dict(threshold=-20.0, ratio=4.0, attack=0.0, release=0.0)),
    ("comp_knee", "compressor(-20 dB, 4, 0 ms, 0 ms, knee=10 dB)", "compressor",
     dict(threshold=-20.0, ratio=4.0, attack=0.0, release=0.0, knee=10.0)),
    ("exp_hard", "expander(-40 dB, 2, 0 ms, 0 ms)", "expander",
     dict(threshold=-40.0, ratio=2.0, attack=0.0, release=0.0)),
    ("exp_knee", "expander(-40 dB, 2, 0 ms, 0 ms, knee=6 dB)", "expander",
     dict(threshold=-40.0, ratio=2.0, attack=0.0, release=0.0, knee=6.0)),
    ("gate", "gate(-40 dB, 0 ms, 0 ms, range=-30 dB)", "gate",
     dict(threshold=-40.0, attack=0.0, release=0.0, range=-30.0)),
    ("limiter", "limiter(-6 dB, 0 ms)", "limiter", dict(ceiling=-6.0, release=0.0)),
]


def measure_static(fxc, ref, workdir):
    x = np.repeat((10.0 ** (STATIC_LEVELS / 20))[:, None], STATIC_SAMPLES, axis=1)
    graph = ["graph dynamics_static", f"input x : {len(STATIC_LEVELS)}"]
    graph += [f"output {name} = x | {stage}" for name, stage, _, _ in STATIC_STAGES]
    out = run_fxc(fxc, "\n".join(graph) + "\n", x, [s[0] for s in STATIC_STAGES], workdir)
    print(f"static curves: {len(STATIC_LEVELS)} levels x {STATIC_SAMPLES} samples, one fxc run; "
          "against the contract's equations:")
    curves = {}
    for name, _, kind, params in STATIC_STAGES:
        y = out[name]
        want = ref.STAGES[kind](x, FS, **params)
        check(name, y, want, 1.0)
        # The same in dB, where the curves are drawn (down to -120 dB).
        worst_db = float(np.max(np.abs(db(y[:, -1]) - db(want[:, -1]))))
        if not worst_db <= 1e-9:
            sys.exit(f"plot_dynamics: {name}: the static curve is {worst_db:.3g} dB off the contract's")
        if np.any(y[:, 1:] != y[:, :1]):
            sys.exit(f"plot_dynamics: {name}: the output of a constant input is not constant "
                     "with attack = release = 0")
        curves[name] = db(y[:, -1])
    return curves


def plot_static(curves, path):
    svg = Svg(900, 862)
    header(svg, "Dynamics: static curves",
           "measured with fxc run: a DC input per level, attack = release = 0, fs = 48000 Hz")
    left, right, gap_x, top, h, gap_y = 84, 28, 90, 84, 300, 112
    w = (svg.width - left - right - gap_x) / 2
    panels = [
        # (title, [(output, legend)], y limits, the knee's close-up: (x limits, y limits, step))
        ("compressor(\u221220 dB, 4)", [("comp_hard", "knee = 0 dB"), ("comp_knee", "knee = 10 dB")],
         (-80, 0), ((-30, -10), (-30, -15), 5)),
        ("expander(\u221240 dB, 2)", [("exp_hard", "knee = 0 dB"), ("exp_knee", "knee = 6 dB")],
         (-120, 0), ((-50, -30), (-60, -30), 10)),
        ("gate(\u221240 dB, range=\u221230 dB)", [("gate", "range = \u221230 dB")], (-120, 0), None),
        ("limiter(\u22126 dB)", [("limiter", "ceiling = \u22126 dB")], (-80, 0), None),
    ]
    xs = STATIC_LEVELS
    for i, (title, lines, ylim, closeup) in enumerate(panels):
        col, row = i % 2, i // 2
        p = Panel(svg, f"static{i}", left + col * (w + gap_x), top + row * (h + gap_y), w, h,
                  (-80, 0), ylim)
        p.grid(range(-80, 1, 20), range(ylim[0], ylim[1] + 1, 20),
               xminor=range(-70, 0, 20), yminor=range(ylim[0] + 10, ylim[1], 20))
        p.axis_titles("Input level (dB)", "Output level (dB)")
        p.title(title)
        colours = [PALETTE[k] for k in range(len(lines))] if i < 2 else [PALETTE[i]]
        drawn = [p.curve(xs, xs, grey_rgb(0.45), width=1.2, dash="5 4")]
        for (name, _), colour in zip(lines, colours):
            drawn.append(p.curve(xs, curves[name], colour))
        p.border()
        avoid = []
        if closeup:
            # The knee is a dB or two wide: a close-up in the empty lower right corner.
            (cx, cy, step) = closeup
            iw, ih = 132, 100
            z = Panel(svg, f"knee{i}", p.x + p.w - iw - 12, p.y + p.h - ih - 24, iw, ih, cx, cy)
            svg.add(f'<rect x="{num(z.x - 30)}" y="{num(z.y - 19)}" width="{num(iw + 36)}" '
                    f'height="{num(ih + 37)}" fill="#fff" stroke="{grey_rgb(0.7)}" stroke-width="0.8"/>')
            z.grid(range(cx[0], cx[1] + 1, 10), range(cy[0], cy[1] + 1, step),
                   xminor=range(cx[0] + 5, cx[1], 10), size=9)
            svg.text(z.x, z.y - 7, "the knee, closer", size=9, grey=0.4, valign=1)
            z.curve(xs, xs, grey_rgb(0.45), width=1, dash="4 3")
            for (name, _), colour in zip(lines, colours):
                z.curve(xs, curves[name], colour, width=1.4)
            z.border()
            avoid.append((z.x - 30, z.y - 19, iw + 36, ih + 37))
        entries = [("1:1", grey_rgb(0.45), "5 4", None)]
        entries += [(text, colour, None, None) for (_, text), colour in zip(lines, colours)]
        p.legend(entries, drawn, avoid)
    svg.write(path)


# --- step responses ---------------------------------------------------------------------------------

STEP_SAMPLES = int(0.400 * FS)
STEP_UP, STEP_DOWN = int(0.050 * FS), int(0.250 * FS)
QUIET_DB, LOUD_DB = -40.0, -10.0
TONE_HZ = 1000.0
COMPRESSOR = ("compressor(-30 dB, 4, 5 ms, 40 ms)",
              dict(threshold=-30.0, ratio=4.0, attack=5e-3, release=40e-3))
LIMITER = ("limiter(-20 dB, 40 ms, lookahead=2 ms)", dict(ceiling=-20.0, release=40e-3, lookahead=2e-3))
LOOKAHEAD = int(round(0.002 * FS))


def step_input():
    n = np.arange(STEP_SAMPLES)
    level = np.where((n >= STEP_UP) & (n < STEP_DOWN), LOUD_DB, QUIET_DB)
    amplitude = 10.0 ** (level / 20)
    return np.stack([amplitude, amplitude * np.sin(2 * np.pi * TONE_HZ * n / FS)]), amplitude


def crossing(reduction, step, final):
    """Samples from `step` until the reduction has covered 1 - 1/e of its way from its value
    before the step to `final`: (the first sample count at which it has, as
    gen_dynamics_reference.py measures; the count interpolated linearly between the samples
    around it; the reduction there). For a constant target the smoothed reduction is
    start + (final - start) (1 - alpha^k) after k samples, which covers 1 - 1/e at k = tau fs."""
    start = reduction[step - 1]
    goal = start + (1 - math.exp(-1)) * (final - start)
    after = reduction[step:]
    reached = np.flatnonzero(after >= goal if final > start else after <= goal)
    j = int(reached[0])
    before = reduction[step + j - 1]
    fraction = (goal - before) / (after[j] - before)
    return j + 1, j + fraction, goal


def measure_step(fxc, ref, workdir):
    x, amplitude = step_input()
    graph = ("graph dynamics_step\ninput x : 2\n"
             f"output comp = x | {COMPRESSOR[0]}\noutput lim = x | {LIMITER[0]}\n")
    out = run_fxc(fxc, graph, x, ["comp", "lim"], workdir)
    print("step responses: a DC step and a 1 kHz sine, one fxc run; against the contract's equations:")
    check("compressor", out["comp"], ref.compressor(x, FS, **COMPRESSOR[1]), float(amplitude.max()))
    check("limiter", out["lim"], ref.limiter(x, FS, **LIMITER[1]), float(amplitude.max()))

    result = {}
    for key, delay in (("comp", 0), ("lim", LOOKAHEAD)):
        y = out[key]
        # The gain the stage applied at each output sample: out[n] = c[n] x[n - L].
        src = np.zeros_like(x)
        src[:, delay:] = x[:, :STEP_SAMPLES - delay]
        t = np.arange(STEP_SAMPLES) / FS * 1000
        dc_ok = np.arange(STEP_SAMPLES) >= delay
        gain_dc = np.full(STEP_SAMPLES, np.nan)
        gain_dc[dc_ok] = db(y[0, dc_ok] / src[0, dc_ok])
        # The sine's gain where the input is at least a tenth of its peak (not a zero crossing).
        src_amp = np.zeros(STEP_SAMPLES)
        src_amp[delay:] = amplitude[:STEP_SAMPLES - delay]
        sine_ok = np.abs(src[1]) >= 0.1 * np.maximum(src_amp, 1e-30)
        sine_ok &= src_amp > 0
        reduction = -gain_dc
        # For the limiter the reduction grows as the level does (instant attack) and is released
        # once the lookahead window has passed the step down: in output time, at STEP_DOWN + L.
        final = reduction[STEP_DOWN - 1]
        attack_n, attack_k, attack_goal = crossing(reduction, STEP_UP, final)
        release_n, release_k, release_goal = crossing(reduction, STEP_DOWN + delay, 0.0)
        result[key] = dict(t=t, gain_dc=gain_dc, t_sine=t[sine_ok],
                           gain_sine=db(y[1, sine_ok] / src[1, sine_ok]), final=final,
                           attack=(attack_k / FS * 1000, attack_goal), attack_samples=attack_n,
                           release=(release_k / FS * 1000, release_goal), release_samples=release_n,
                           delay=delay)
    c, l = result["comp"], result["lim"]
    print(f"  compressor: final reduction {c['final']:.6f} dB (static curve: "
          f"{(1 - 1 / 4) * (LOUD_DB + 30):.6f}); 1 - 1/e of the attack after {c['attack_samples']} "
          f"samples (interpolated {c['attack'][0]:.4f} ms; tau 5 ms), of the release after "
          f"{c['release_samples']} samples ({c['release'][0]:.4f} ms; tau 40 ms)")
    print(f"  limiter: final reduction {l['final']:.6f} dB ({LOUD_DB + 20:.6f}); all of it at the "
          f"step's sample {STEP_UP} (instant attack); 1 - 1/e of the release after "
          f"{l['release_samples']} samples ({l['release'][0]:.4f} ms; tau 40 ms), from sample "
          f"{STEP_DOWN + LOOKAHEAD} = the step down + the lookahead")
    for name, got, want in (("compressor attack", c["attack_samples"], 5.0),
                            ("compressor release", c["release_samples"], 40.0),
                            ("limiter release", l["release_samples"], 40.0)):
        if abs(got - want * FS / 1000) > 1:
            sys.exit(f"plot_dynamics: {name}: 1 - 1/e after {got} samples, not {want} ms")
    if l["attack_samples"] != 1 or abs(l["final"] - (LOUD_DB + 20)) > 1e-9:
        sys.exit("plot_dynamics: the limiter's reduction is not all there at the step")
    if abs(c["final"] - (1 - 1 / 4) * (LOUD_DB + 30)) > 1e-9:
        sys.exit("plot_dynamics: the compressor's reduction does not settle on its static curve")
    return result


def plot_step(result, path):
    svg = Svg(900, 728)
    header(svg, "Dynamics: step responses",
           f"measured with fxc run, fs = 48 kHz; input {MINUS}40 dB, {MINUS}10 dB from 50 ms to 250 ms")
    left, right, gap, zoom_w = 84, 28, 26, 220
    main_w = svg.width - left - right - gap - zoom_w
    top, h, row_gap = 84, 236, 116
    ylim, yticks = (-18, 1.5), range(-18, 1, 3)
    zoom = (45, 75)
    rows = [("comp", "compressor(\u221230 dB, 4, 5 ms, 40 ms)", 5, 40,
             "1 kHz sine"),
            ("lim", "limiter(\u221220 dB, 40 ms, lookahead=2 ms)", 0, 40,
             "1 kHz sine (under the DC step)")]
    dc_colour, sine_colour = PALETTE[0], PALETTE[1]
    note = grey_rgb(0.25)

    def marker(x, y):
        svg.add(f'<circle cx="{num(x)}" cy="{num(y)}" r="3" fill="#fff" stroke="{note}" '
                f'stroke-width="1.2"/>')

    for r, (key, title, attack_ms, release_ms, sine_label) in enumerate(rows):
        d = result[key]
        y0 = top + r * (h + row_gap)
        main = Panel(svg, f"step{r}", left, y0, main_w, h, (0, 400), ylim)
        detail = Panel(svg, f"zoom{r}", left + main_w + gap, y0, zoom_w, h, zoom, ylim)
        for p, xt in ((main, range(0, 401, 50)), (detail, range(zoom[0], zoom[1] + 1, 5))):
            p.grid(xt, yticks, ylabels=p is main)
            # The loud part of the input, shaded.
            x1, x2 = float(p.px(max(50, p.xlim[0]))), float(p.px(min(250, p.xlim[1])))
            svg.add(f'<rect x="{num(x1)}" y="{num(p.y)}" width="{num(x2 - x1)}" height="{num(p.h)}" '
                    f'fill="{PALETTE[0]}" fill-opacity="0.06" clip-path="url(#{p.name})"/>')
            p.axis_titles("Time (ms)", "Gain (dB)" if p is main else None)
        main.title(title)
        detail.title(f"{zoom[0]} to {zoom[1]} ms")
        svg.text(float(main.px(150)), main.y + 10, f"input at {MINUS}10 dB (shaded)", size=10,
                 grey=0.4, anchor="middle", valign=0)

        drawn = []
        for p in (main, detail):
            drawn.append(p.curve(d["t_sine"], d["gain_sine"], sine_colour, width=1.0, opacity=0.85))
            drawn.append(p.curve(d["t"], d["gain_dc"], dc_colour, width=1.7))

        # Release: where the DC step's reduction has 1/e of its way left.
        rel_ms, rel_goal = d["release"]
        rel_start = 250 + d["delay"] * 1000 / FS
        rx, ry = float(main.px(rel_start + rel_ms)), float(main.py(-rel_goal))
        svg.path(f"M{num(float(main.px(rel_start)))} {num(ry)} H{num(rx)}", note, width=1, dash="2 2")
        marker(rx, ry)
        svg.text(rx + 8, ry + 6, f"release \u03c4 = {release_ms} ms:", size=10, grey=0.25, valign=0)
        svg.text(rx + 8, ry + 20, f"1/e left after {rel_ms:.2f} ms", size=10, grey=0.25, valign=0)
        if d["delay"]:
            svg.text(rx + 8, ry + 34, f"(from {rel_start:g} ms = 250 + 2)", size=10, grey=0.25,
                     valign=0)
        if attack_ms:
            at_ms, at_goal = d["attack"]
            ax, ay = float(detail.px(50 + at_ms)), float(detail.py(-at_goal))
            svg.path(f"M{num(float(detail.px(50)))} {num(ay)} H{num(ax)} "
                     f"M{num(ax)} {num(ay + 4)} V{num(float(detail.py(-13.2)))}", note, width=1,
                     dash="2 2")
            marker(ax, ay)
            tx = float(detail.px(46))
            svg.text(tx, float(detail.py(-13.6)), f"attack \u03c4 = {attack_ms} ms:", size=10,
                     grey=0.25, valign=0)
            svg.text(tx, float(detail.py(-13.6)) + 14, f"1 \u2212 1/e after {at_ms:.2f} ms", size=10,
                     grey=0.25, valign=0)
        else:
            # Lookahead: the reduction is in place at the step, the delayed signal comes L later.
            lx1, lx2 = float(detail.px(50)), float(detail.px(50 + d["delay"] * 1000 / FS))
            ly = float(detail.py(-8))
            svg.path(f"M{num(lx2)} {num(detail.y)} V{num(detail.y + detail.h)}", note, width=1,
                     dash="3 3", clip=detail.name)
            svg.path(f"M{num(lx1)} {num(ly)} H{num(lx2)} M{num(lx1)} {num(ly - 4)} v8 "
                     f"M{num(lx2)} {num(ly - 4)} v8", note, width=1)
            tx = float(detail.px(53.5))
            for k, line in enumerate(["lookahead 2 ms: the gain", "falls at the step (50 ms);",
                                      "the delayed loud signal", "arrives at 52 ms (dashed),",
                                      "already turned down"]):
                svg.text(tx, float(detail.py(-0.8)) + 14 * k, line, size=10, grey=0.25, valign=0)
        for p in (main, detail):
            p.border()
        label_box = (float(main.px(150)) - 70, main.y, 140, 24)
        main.legend([("DC step", dc_colour, None, None), (sine_label, sine_colour, None, 0.85)],
                    drawn[:2], [label_box])
    svg.write(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fxc", default=os.environ.get("FXC", str(ROOT / "build" / "tools" / "fxc" / "fxc")))
    ap.add_argument("--out-dir", default=str(ROOT / "docs" / "img"))
    args = ap.parse_args()
    if not os.access(args.fxc, os.X_OK):
        sys.exit(f"plot_dynamics: no fxc at {args.fxc} (build it, or pass --fxc)")
    ref = load_reference()
    with tempfile.TemporaryDirectory(prefix="plot_dynamics_") as work:
        static = measure_static(args.fxc, ref, work)
        step = measure_step(args.fxc, ref, work)
    out = pathlib.Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, draw, data in (("dynamics_static.svg", plot_static, static),
                             ("dynamics_step.svg", plot_step, step)):
        draw(data, out / name)
        print(f"wrote {out / name} ({(out / name).stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()

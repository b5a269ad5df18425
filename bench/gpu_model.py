#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A performance model of fxc's CUDA kernels: predicted kernel time per workload against the
memory floor (read the input once, write the output once at the device's bandwidth).

    python3 bench/gpu_model.py [--device h100|h200|l4] [--detail] [--json] [--loops]

Nothing here was measured on a GPU. Every device figure and latency is an assumption, written
down in DEVICES and ASSUMPTIONS below and in docs/cuda-performance-model.md, which also gives
the formulas. The kernels are the ones codegen/cuda/ generates (docs/cuda.md,
Kernels): the chunked scan's five entries, one thread per channel, sums. The strategy and chunk
length follow passes/cost_model.cpp (choose_iir's CUDA branch, choose_gpu_chunk) for the
device; registers per thread are ptxas's (CUDA 13.0, sm_90) for the generated source of each
workload. Python 3 standard library only.
"""
import argparse
import json
import math
import sys

# --- devices -------------------------------------------------------------------------------
# Datasheet figures (NVIDIA H100 / H200 / L4 product pages and the CUDA C++ Programming Guide's
# arithmetic-instruction table); latencies are rough figures from public microbenchmarks.
# All of it is an assumption until a GPU run replaces it.
DEVICES = {
    "h100": dict(
        name="H100 SXM5 80 GB (sm_90)", sms=132, clock_ghz=1.98, bandwidth=3.35e12,
        f64_per_sm=64,      # float64 FMA per SM per cycle: 132 x 64 x 1.98 GHz = 16.7 T FMA/s (33.5 TFLOP/s)
        f32_per_sm=128,     # float32 FMA per SM per cycle: 33.5 T FMA/s (67 TFLOP/s)
        cvt_per_sm=16,      # conversions to/from 64-bit types per SM per cycle (programming guide, cc 9.0)
        f64_mma_per_sm=128,  # float64 FMAs per SM per cycle as tensor-core DMMA (67 TFLOP/s: twice f64_per_sm)
        threads_per_sm=2048, blocks_per_sm=32, regs_per_sm=65536, smem_per_sm=228 * 1024,
        l2_bytes=50e6, pcie=50e9),
    "h200": dict(
        name="H200 SXM 141 GB (sm_90)", sms=132, clock_ghz=1.98, bandwidth=4.8e12,
        f64_per_sm=64, f32_per_sm=128, cvt_per_sm=16, f64_mma_per_sm=128,
        threads_per_sm=2048, blocks_per_sm=32, regs_per_sm=65536, smem_per_sm=228 * 1024,
        l2_bytes=50e6, pcie=50e9),
    "l4": dict(
        name="L4 24 GB (sm_89)", sms=58, clock_ghz=2.04, bandwidth=300e9,
        f64_per_sm=2,       # 1:64 of float32: 58 x 2 x 2.04 GHz = 0.24 T FMA/s
        f32_per_sm=128,     # 58 x 128 x 2.04 GHz = 15 T FMA/s (30 TFLOP/s)
        cvt_per_sm=16,
        threads_per_sm=1536, blocks_per_sm=24, regs_per_sm=65536, smem_per_sm=100 * 1024,
        l2_bytes=48e6, pcie=25e9),
}

ASSUMPTIONS = dict(
    fma_latency_f64=8,       # cycles from a float64 FMA's issue to its result being usable
    fma_latency_f32=4,
    l1_latency=35,           # cycles: an L1 hit
    l2_latency=270,          # cycles: an L2 hit
    dram_latency=900,        # cycles: a DRAM access (~450 ns at 1.98 GHz)
    sync_cycles=20,          # a __syncthreads with the block's warps already there
    launch_us_graph=1.0,     # per kernel launch inside a replayed CUDA graph
    launch_us_plain=2.5,     # per kernel launch without a graph (execute_cuda)
    host_staging=27e9,       # bytes/s of the host's copies into and out of page-locked staging (split over
                             # the worker pool): W1 from host memory, 340 MB staged, measured 12.8 ms (H100 host, 2026-11-27)
    tanh_f64_ops=30,         # float64 pipe instructions of one double tanh (libdevice, estimated)
    tanh_f64_path=20,        # of them, dependent (critical path, in FMA latencies)
    interleaved_unroll=4,    # loads in flight per thread in the interleaved loop before kCudaSampleAhead
                             # (--what-if loads-as-needed; ptxas 13.0 hoists 4)
    tile_half=16,            # codegen::kCudaTileHalf: the planar tile's halves, one copying in while the other computes
    sample_ahead=8,          # codegen::kCudaSampleAhead: inputs loaded a block ahead by a thread of its channel
    error_feedback_ops=3,    # --what-if f32-state: extra float32 ops per section-sample of a float32 form
                             # (bench/float32_forms.cpp's: 7 in all)
    pair_ops=120,            # float32 ops per section-sample in float pairs (state_precision pairs, mixed_pairs):
                             # four pair multiply-adds (a product of 8 and a sum of 20) and one product, as emitted
    pair_path=29,            # dependent float32 ops around one section's recurrence in pairs (z0 -> o -> z0:
                             # a sum, a product and two sums), against 3 FMAs in float64
    pairs_max_f64_rate=1 / 32,  # thresholds.gpu_float_pairs_max_f64_rate: pairs on devices at or below it
)

# --what-if: changes that are not in the code, to see what would close a gap.
WHAT_IF = {
    "f32-state": "chains with float64 state compute in float32 with exact small coefficients "
                 "(4 + error_feedback_ops float32 ops per section-sample, no conversions, half the registers); "
                 "not built: bench/float32_forms.cpp measures such a form 700x worse than float64 on a "
                 "highpass's rumble (docs/cuda.md, Not done)",
    "const-coeffs": "coefficients from kernel parameters/constant memory instead of registers "
                    "(registers: 40 + 4 per section in float64, 40 + 2 in float32)",
    "wavefront": "the chunk passes run the chain's steps as a wavefront (gpu_wavefront_max_steps=48: blocks "
                 "of 64, one section's recurrence per sample); off by default since the H200 measured it no faster",
    "loads-as-needed": "the code the H200 measured on 2026-11-30: the planar tile's 32 rows loaded and stored "
                       "one at a time (32 memory round trips a step of 32 samples) and interleaved inputs loaded "
                       "as needed (interleaved_unroll in flight), where the tile's halves now take turns (one "
                       "copying in while the block computes from the other) and inputs load 8 samples ahead",
    "no-table": "the code before 2026-11-30's state table: the chunk_states pass runs the chain's sections over "
                "each chunk (5 instructions a section and sample, float32 ones in a mixed chain) instead of summing "
                "D products with a table",
    "one-loop": "the code before 2026-12-03's two loops of the planar halves: one loop that tests the layout at every "
                "copy and store and reads the row tables from shared memory at each, and no unrolled whole half",
    "no-f64-mma": "the chunked scan's planar table sums as float64 FMAs on every GPU (the code before 2026-12-03, "
                  "and what it runs on GPUs without float64 tensor cores), not as 8 x 8 x 4 matrix products (DMMA) "
                  "on sm_80 and sm_90",
    "no-pairs": "float64 arithmetic stays float64 on a device with slow float64 "
                "(gpu_float_pairs_max_f64_rate=0; the code takes float pairs there)",
}

BLOCK = 128       # codegen::kCudaBlockThreads
WAVE_BLOCK = 64   # codegen::kCudaWavefrontThreads: a wavefront's chunk passes
GROUP = 32        # codegen::kCudaCarryGroup
CARRY_PARTIALS = 4  # codegen::kCudaCarryPartialSums
CARRY_REGS = 168    # group_sums / chunk_starts with the row in registers (ptxas 13.0, W1: 166 / 168)
CARRY_REGS_WIDE = 96  # more than 32 state rows: the row is read from shared memory (not measured)
SCAN_THREADS = 256
TILE_SMEM = 128 * 36 * 4 + 128 * (8 + 4)  # the chunk passes' tile and row tables (19968 bytes per block, ptxas)
WAVE_TILE_SMEM = 64 * 65 * 4 + 2 * 64 * 8  # a wavefront output pass's ring tile and row tables (17664 bytes, ptxas)
WAVE_STATES_SMEM = 64 * 33 * 4 + 2 * 64 * 8  # its chunk_states pass's tile of 32 samples (9472 bytes)


# --- workloads -----------------------------------------------------------------------------
# sections: biquads in the chain; state: the arithmetic's type (f64 where the cost model picks
# state_precision f64: poles near the unit circle, as for W4's chain; mixed where split-precision
# leaves only `f64_sections` of them in float64 and the rest in float32, as for W1); regs: ptxas's
# registers per thread for (chunk_states, output pass) of `fxc dump --emit cuda --dtype f32`
# compiled for sm_90 (CUDA 13.0, --fmad=false --ftz=true), with the chunk passes' wavefront
# (--what-if wavefront, 2026-11-28; regs_plain: without it, the default, 2026-11-30: the tile's
# halves moving 16 bytes a lane and the interleaved inputs 8 ahead, which take 80 / 88 of W4's
# 80 / 96; W1's output pass 162 since its two loops, 2026-12-03); extra: other kernels of the graph.
WORKLOADS = [
    dict(id="W1 8 ch x 120 s", channels=8, seconds=120, fs=44100, sections=15, state="mixed", f64_sections=6,
         regs=(166, 166), regs_plain=(164, 162), target=("floor", 3.0)),
    dict(id="W4 chain 1024 ch x 60 s", channels=1024, seconds=60, fs=48000, sections=6, state="mixed", f64_sections=2,
         regs=(56, 64), regs_plain=(80, 96), target=("floor", 2.0)),
    dict(id="W5 1 ch x 600 s", channels=1, seconds=600, fs=44100, sections=6, state="f64",
         regs=(90, 98), regs_plain=(80, 96)),
    dict(id="W6 256 x 1 s stereo (512 ch)", channels=512, seconds=1, fs=48000, sections=6, state="mixed", f64_sections=2,
         regs=(56, 64), regs_plain=(80, 96), target=("launches", 1)),
    dict(id="vocal 2 ch x 60 s", channels=2, seconds=60, fs=48000, sections=4, state="mixed", f64_sections=2,
         regs=(60, 56), regs_plain=(56, 72), tail="tanh",
         extra=[dict(kind="delay", line=240, regs=32), dict(kind="sum", operands=2, regs=25)]),
    dict(id="W2 8 ch x 60 s", channels=8, seconds=60, fs=44100, sections=4, state="f32",
         regs=(47, 48), regs_plain=(48, 56)),
    # bench/gpu_bench.py's other IIR rows
    dict(id="W1 1024 ch x 10 s (gpu_bench)", channels=1024, seconds=10, fs=44100, sections=15, state="mixed",
         f64_sections=6, regs=(166, 166), regs_plain=(164, 159)),
    dict(id="W2 1 ch x 300 s (gpu_bench)", channels=1, seconds=300, fs=44100, sections=4, state="f32",
         regs=(47, 48), regs_plain=(48, 56)),
    dict(id="W4 2 ch x 10 s (gpu_bench)", channels=2, seconds=10, fs=48000, sections=6, state="mixed", f64_sections=2,
         regs=(56, 64), regs_plain=(80, 96)),
    # W3: five FIRs fused into one of 511 taps, FFT overlap-save (fir_fft) of 2048 points
    dict(id="W3 1 ch x 60 s (fir_fft)", channels=1, seconds=60, fs=44100, fir_taps=511, fft=2048, regs=48),
    # bench/workloads/long_fir.fx: a FIR of 24001 taps, partitioned (fir_partitioned) in 12
    # partitions of 2048 taps, 4096-point FFTs; registers: the larger of the two transform kernels
    dict(id="long FIR 2 ch x 60 s (fir_partitioned)", channels=2, seconds=60, fs=48000, fir_taps=24001, fft=4096,
         partitioned=True, regs=56),
]

SIGNAL_BYTES = 4  # float32 samples in and out (the design's workloads)
SECTION_OPS = 5   # instructions of a section's sample: o = b0 v + z0; z0 = b1 v - a1 o + z1; z1 = b2 v - a2 o
SCHEDULERS_PER_SM = 4  # each issues at most one warp instruction a cycle
# Instructions a chunk pass's thread issues per sample besides its sections', tail's and input
# conversions, counted on the shortest path through a steady half step of 16 samples of the
# planar wide loop (every row 16-byte aligned, whole groups of 4, as in every workload here) in
# the SASS of `fxc dump --emit cuda --dtype f32`, sm_90, CUDA 13.0, 2026-12-03: the tile's copies
# (four 16-byte ones a thread, from row pointers read once a chunk), its reads (one 16-byte
# read per 4 samples), the flushes around conversions, the loop and the step's barriers and
# bounds. W2 (float32) 23.75 in chunk_states and 26.12 in the output pass, W1 (mixed) 86.44 in
# the output pass, W4's chain (mixed) 41.06, W5 (float64) 41.06: the output pass 2 more (its
# results into the tile, four 16-byte stores). `--what-if one-loop` takes the code before that
# day (one loop testing the layout at every copy and store, row tables read at each): 95.81 for
# W1's output pass, 48.19 for W4's chain's, 32.31 and 25.62 for W2.
# The interleaved loop and the wavefront keep the counts of 2026-11-30 (the whole loop body of
# the planar loop then: 102 for W1's output pass, which the interleaved loop issues about as many
# as, 55 against 58 for W4's chain's): those loops did not change.
PASS_OVERHEAD = dict(f32=4, f64=8, mixed=7)
OUTPUT_OVERHEAD = 2
PASS_OVERHEAD_ONE_LOOP = dict(f32=6, f64=11, mixed=11)
OUTPUT_OVERHEAD_ONE_LOOP = 7
PASS_OVERHEAD_OTHER = dict(f32=13, f64=15, mixed=15)
OUTPUT_OVERHEAD_OTHER = 10
# The chunk_states pass with a state table (codegen::kCudaStateTableMaxRows: sections in float64,
# D = 2 x sections at most 48): a sample is D float64 FMAs, D / 2 16-byte shared-memory reads of
# the table's row (a broadcast), the conversion (2), and this much more per sample: the copies of
# the tile's and the table's halves, the loop and the barriers (the same count, 2026-12-03: W1
# (D = 30) 51.94 instructions a sample in all, W4's chain (D = 12) 24.88; 55.25 and 26.88 in one
# loop; the interleaved loop: the whole loop body of 2026-11-30, 55 and 26).
STATE_TABLE_MAX_ROWS = 48
TABLE_OVERHEAD = 5
TABLE_OVERHEAD_ONE_LOOP = 8
TABLE_OVERHEAD_OTHER = 7
# With float64 tensor cores (sm_80, sm_90: DMMA, the device's f64_mma_per_sm) and the planar
# layout the table's sums are 8 x 8 x 4 matrix products, a warp's 32 chunks at a time over the
# table's rows padded to 8s (P): per 4 samples of a warp, 4 x P / 8 DMMA, P / 8 8-byte reads of
# the table and 4 reads and conversions of the samples (3 instructions each). In thread
# instructions a sample: (12 + 5 P / 8) / 4, and 7 more for the copies, the loop, the barriers
# and the NOPs ptxas puts between DMMAs (SASS, sm_90, CUDA 13.0, 2026-12-03: W1 (P = 32) 252 a
# warp's half step of 16 samples, 16 a sample; 130 registers).
MMA_TABLE_OVERHEAD = 8
MMA_TABLE_REGS = {32: 130}
TABLE_REGS = {30: 148, 12: 80}  # ptxas: W1 (2026-12-03, 146 in one loop), W4's chain (2026-11-30) (D: registers)


def resident_threads(dev, regs, block, smem=0):
    """Threads of one kernel an SM holds at once (registers, threads, blocks, shared memory)."""
    per_warp = math.ceil(regs / 8) * 8 * 32
    warps = math.ceil(block / 32)
    by_regs = dev["regs_per_sm"] // (per_warp * warps)
    by_threads = dev["threads_per_sm"] // block
    by_smem = dev["smem_per_sm"] // (smem + 1024) if smem else dev["blocks_per_sm"]
    return max(0, min(by_regs, by_threads, dev["blocks_per_sm"], by_smem)) * block


def waves(threads, block, resident, dev):
    blocks = math.ceil(threads / block)
    per_sm = max(1, resident // block)
    return math.ceil(blocks / (dev["sms"] * per_sm))


def chunk_length(channels, samples, dev):
    """passes::choose_gpu_chunk for `dev`: the longest of 1024, 512 that keeps the GPU busy."""
    busy = dev["sms"] * dev["threads_per_sm"] // 2
    for L in (1024, 512):
        if channels * math.ceil(samples / L) >= busy:
            return L
    return 256


class Kernel:
    # pipe_ops_f32: a mixed chain's float32 sections, on the float32 pipe beside the float64 one.
    def __init__(self, name, launches=1, bytes_=0.0, pipe_ops=0.0, pipe="f64", cvts=0.0, flops=0.0,
                 latency_cycles=0.0, pipe_ops_f32=0.0, smem_words=0.0, instructions=0.0):
        self.name, self.launches, self.bytes, self.pipe_ops, self.pipe = name, launches, bytes_, pipe_ops, pipe
        self.cvts, self.flops, self.latency_cycles = cvts, flops, latency_cycles
        self.pipe_ops_f32 = pipe_ops_f32
        self.smem_words = smem_words  # 4-byte shared-memory accesses (32 banks: 32 per SM per cycle)
        self.instructions = instructions  # thread instructions, where counted (the chunk passes)

    def times(self, dev):
        clock = dev["clock_ghz"] * 1e9
        rate = {"f64": dev["f64_per_sm"], "f64 mma": dev.get("f64_mma_per_sm", 0)}.get(self.pipe, dev["f32_per_sm"])
        memory = self.bytes / dev["bandwidth"]
        pipes = max(self.pipe_ops / (dev["sms"] * rate * clock),
                    self.pipe_ops_f32 / (dev["sms"] * dev["f32_per_sm"] * clock))
        throughput = pipes + self.cvts / (dev["sms"] * dev["cvt_per_sm"] * clock)
        latency = self.latency_cycles / clock
        bounds = {"memory": memory, f"{self.pipe} pipe": throughput, "latency": latency}
        if self.smem_words:
            bounds["shared memory"] = self.smem_words / (dev["sms"] * 32 * clock)
        if self.instructions:  # a warp instruction per scheduler per cycle, at best
            bounds["issue"] = self.instructions / 32 / (dev["sms"] * SCHEDULERS_PER_SM * clock)
        bound = max(bounds, key=bounds.get)
        return bounds, bound, bounds[bound]


def fir_fft_kernels(w, dev, a):
    """fir_fft (codegen/cuda/emit_fir.cpp): a block of up to 256 threads per (channel, pair of
    segments); two complex FFTs of `fft` points in shared memory per pair, each segment giving
    fft - (taps - 1) outputs; then the ring's update, a block of 128 threads per channel, a
    thread per input."""
    C, taps, n = w["channels"], w["fir_taps"], w["fft"]
    N = round(w["seconds"] * w["fs"])
    step = n - (taps - 1)
    pairs = math.ceil(math.ceil(N / step) / 2)
    blocks = C * pairs
    threads = min(256, n // 2)
    log2n = int(math.log2(n))
    word = SIGNAL_BYTES  # float32 here
    butterflies = blocks * 2 * (n // 2) * log2n  # forward and inverse
    # each butterfly: 4 shared loads and 4 stores (re, im of two points); the load, the product
    # with the spectrum and the store: 2 + 4 + 2 per point
    smem = butterflies * 8 + blocks * n * 8
    flops = butterflies * 10 + blocks * n * 6
    # the signal read once per segment with its taps - 1 samples of history, the output written
    # once; the spectrum and twiddles (3 n complex words) come from L2 per block
    dram = C * N * word * (n / step) + C * N * word
    l2 = blocks * 3 * n * word
    smem_bytes = 2 * n * word
    res = resident_threads(dev, w["regs"], threads, smem_bytes)
    per_thread = max(1, (n // 2) // threads)
    # a stage: each thread's butterflies, a shared-memory round trip each, then a __syncthreads
    stage = per_thread * (2 * a["l1_latency"]) + a["sync_cycles"]
    latency = waves(blocks * threads, threads, res, dev) * (a["dram_latency"] + 2 * log2n * stage + a["dram_latency"])
    ks = [Kernel("fir_fft", 1, dram + l2 / 4, flops / 2, "f32", 0, flops, latency, 0, smem),
          # the ring: each thread loads ceil(taps / 128) inputs and stores them, independent of each
          # other: a DRAM latency, the stores behind it, and the __syncthreads before the position
          Kernel("ring", 1, C * taps * 2 * word, 0, "f32", 0, 0,
                 a["dram_latency"] + math.ceil(taps / 128) * a["l1_latency"] + a["sync_cycles"])]
    info = dict(L=n, chunks_per_channel=2 * pairs, threads=blocks * threads, groups=pairs, scan_steps=0,
                layout="planar", occupancy=res)
    return ks, info, C, N


def fir_partitioned_kernels(w, dev, a):
    """fir_partitioned (codegen/cuda/emit_fir.cpp): segments of half = fft / 2 samples, the taps
    in P partitions of `half`. The spectra pass: a block of 256 threads per pair of input
    segments, one complex FFT of `fft` points, both half spectra written (half + 1 complex
    points each). The inverse pass: a block per pair of output segments, each thread a bin:
    P + 1 spectra and 2 P partition spectra read from L2 (the spectra of a channel's last P
    segments stay there), 2 P complex multiply-adds, then one inverse FFT and the outputs.
    Then the ring, as fir_fft's."""
    C, taps, n = w["channels"], w["fir_taps"], w["fft"]
    N = round(w["seconds"] * w["fs"])
    half = n // 2
    P = math.ceil(taps / half)
    out_pairs = math.ceil(math.ceil(N / half) / 2)
    in_pairs = (2 * out_pairs + P) // 2
    threads = min(256, half)
    log2n = int(math.log2(n))
    word = SIGNAL_BYTES  # float32 here
    cword = 2 * word  # a complex number
    smem_bytes = 2 * n * word
    res = resident_threads(dev, w["regs"], threads, smem_bytes)
    per_thread = max(1, half // threads)
    stage = per_thread * (2 * a["l1_latency"]) + a["sync_cycles"]
    fft_smem = (n // 2) * log2n * 8 + n * 4  # a transform's butterflies, and the points in or out

    # spectra: the signal read twice (two overlapping windows a pair), the spectra written once
    blocks = C * in_pairs
    dram = 2 * C * N * word + blocks * 2 * (half + 1) * cword
    flops = blocks * ((n // 2) * log2n * 10 + (half + 1) * 8)
    latency = waves(blocks * threads, threads, res, dev) * (2 * a["dram_latency"] + log2n * stage)
    ks = [Kernel("spectra", 1, dram, flops / 2, "f32", 0, flops, latency, 0, blocks * (fft_smem + 2 * (half + 1) * 4))]
    # inverse: every spectrum written above read back once from DRAM, P + 1 of them and 2 P
    # partitions per block through L2 (a quarter of L2's traffic counted as DRAM bytes, as fir_fft's)
    blocks = C * out_pairs
    l2 = blocks * (half + 1) * (P + 1 + 2 * P) * cword
    dram = C * in_pairs * 2 * (half + 1) * cword + C * N * word
    flops = blocks * ((half + 1) * 2 * P * 8 + (n // 2) * log2n * 10)
    per_bin = (P + 1) * a["l1_latency"]  # each step's loads wait on L2, then feed the FMAs
    latency = waves(blocks * threads, threads, res, dev) * (
        math.ceil((half + 1) / threads) * per_bin + log2n * stage + a["dram_latency"])
    ks.append(Kernel("inverse", 1, dram + l2 / 4, flops / 2, "f32", 0, flops, latency, 0,
                     blocks * (fft_smem + 2 * (half + 1) * 2)))
    ks.append(Kernel("ring", 1, C * taps * 2 * word, 0, "f32", 0, 0,
                     a["dram_latency"] + math.ceil(taps / 128) * a["l1_latency"] + a["sync_cycles"]))
    info = dict(L=n, chunks_per_channel=2 * out_pairs, threads=C * out_pairs * threads, groups=out_pairs,
                scan_steps=0, layout="planar", occupancy=res)
    return ks, info, C, N


def kernels_for(w, dev, a):
    if w.get("partitioned"):
        return fir_partitioned_kernels(w, dev, a)
    if "fir_taps" in w:
        return fir_fft_kernels(w, dev, a)
    C = w["channels"]
    N = round(w["seconds"] * w["fs"])
    S = w["sections"]
    D = 2 * S
    wi = a.get("what_if", ())
    f64 = w["state"] in ("f64", "mixed") and "f32-state" not in wi
    # float pairs: the float64 sections' arithmetic in pairs of floats on the float32 pipe
    pairs = f64 and "no-pairs" not in wi and dev["f64_per_sm"] / dev["f32_per_sm"] <= a["pairs_max_f64_rate"]
    # A section's sample: 4 FMAs and a product (SASS: 5 float64 or float32 instructions);
    # --what-if f32-state's form takes 7.
    ops = SECTION_OPS if f64 or w["state"] == "f32" else 4 + a["error_feedback_ops"]
    # mixed: the first `hot` sections in float64, the others in float32 (5 ops, the f32 pipe)
    hot = w.get("f64_sections", S) if f64 else 0
    cold_ops = SECTION_OPS * (S - hot) if f64 else 0
    wave = "wavefront" in wi  # every workload's chain has 2 to 33 steps
    regs = w["regs"] if wave else w.get("regs_plain", w["regs"])
    block, tile_smem = (WAVE_BLOCK, WAVE_TILE_SMEM) if wave else (BLOCK, TILE_SMEM)
    states_smem = WAVE_STATES_SMEM if wave else TILE_SMEM
    if w["state"] != "f32" and not f64:
        regs = tuple(32 + (r - 32) // 2 for r in regs)
    if "const-coeffs" in wi:
        regs = tuple(max(32, 40 + (4 if f64 else 2) * S) for r in regs)
    pipe = "f64" if f64 and not pairs else "f32"
    lat = a["fma_latency_f64"] if f64 and not pairs else a["fma_latency_f32"]
    interleaved = C >= 32  # the runtime's device layout: interleaved when a signal has 32 channels or more
    busy = dev["sms"] * dev["threads_per_sm"] // 2
    sb = SIGNAL_BYTES
    ks = []
    tail_ops = a["tanh_f64_ops"] if w.get("tail") == "tanh" else 0
    tail_path = a["tanh_f64_path"] * lat if w.get("tail") == "tanh" else 0
    if C >= busy:
        raise SystemExit(f"{w['id']}: thread per channel (not modelled for IIR here)")
    L = chunk_length(C, N, dev)
    chunks = math.ceil(N / L)
    T = C * chunks
    groups = math.ceil(chunks / GROUP)
    steps = max(1, math.ceil(math.log2(groups))) if groups > 1 else 1
    state_bytes = 8 * D
    # The wavefront: an iteration's steps are independent, so its path is one section's
    # recurrence, z0 -> o -> fma(-a1, o, z1) -> z0 (three FMA latencies of the slowest type), and a
    # memoryless tail adds nothing to it. Without it: at best one FMA latency per section (the o's).
    if wave:
        per_sample_path = (a["pair_path"] if pairs else 3) * lat
        tail_path = 0
    elif pairs:  # a pair's section: its whole recurrence before the next section's sample
        per_sample_path = hot * a["pair_path"] * lat + (S - hot) * a["fma_latency_f32"]
    else:
        per_sample_path = hot * lat + (S - hot) * a["fma_latency_f32"] if f64 else S * lat
    # Memory round trips a thread waits out. Planar: a chunk's first half tile (the next half
    # copies in while a half computes; one row at a time before: the H200's long-scoreboard
    # stalls). Interleaved: a block of inputs loads while the one before computes, so a block waits
    # for the longer of the two (before: loads as the arithmetic needed them, a few in flight).
    as_needed = "loads-as-needed" in wi
    if interleaved and as_needed:
        u = a["interleaved_unroll"]
        pass_cycles = lambda extra: math.ceil(L / u) * (a["dram_latency"] + u * (per_sample_path + extra))
    elif interleaved:
        u = a["sample_ahead"]
        pass_cycles = lambda extra: a["dram_latency"] + math.ceil(L / u) * max(a["dram_latency"],
                                                                               u * (per_sample_path + extra))
    elif as_needed:
        pass_cycles = lambda extra: math.ceil(L / 32) * (32 * a["dram_latency"] + 2 * a["sync_cycles"]
                                                       + 32 * (per_sample_path + extra))
    else:
        # The tile's halves take turns: a half's copies wait only where its samples' arithmetic is
        # shorter than a memory round trip, and a chunk's first half waits one.
        h = a["tile_half"]
        pass_cycles = lambda extra: a["dram_latency"] + math.ceil(L / h) * (
            3 * a["sync_cycles"] + max(a["dram_latency"], h * (per_sample_path + extra)))
    # 0. chunk_states
    sect_ops = hot * ops if f64 else S * ops
    if pairs:  # on the float32 pipe with the float32 sections
        sect_ops, cold_ops = hot * a["pair_ops"] + cold_ops, 0
    # conversions: the load into float64, and in a mixed chain the one back to float32 after its
    # float64 sections (the output pass then stores float32 as it is)
    cvt_in = (2 if f64 and hot < S else 1) if f64 and not pairs else 0
    kind = "f32" if not f64 else ("mixed" if hot < S else "f64")
    # The planar wide loop's overheads (two loops since 2026-12-03); the interleaved loop's and the
    # wavefront's as counted before.
    if interleaved or wave:
        pass_over, out_over, table_over = PASS_OVERHEAD_OTHER, OUTPUT_OVERHEAD_OTHER, TABLE_OVERHEAD_OTHER
    elif "one-loop" in wi:
        pass_over, out_over, table_over = PASS_OVERHEAD_ONE_LOOP, OUTPUT_OVERHEAD_ONE_LOOP, TABLE_OVERHEAD_ONE_LOOP
    else:
        pass_over, out_over, table_over = PASS_OVERHEAD, OUTPUT_OVERHEAD, TABLE_OVERHEAD
    per_sample = sect_ops + cold_ops + cvt_in + pass_over[kind]
    table = f64 and not pairs and D <= STATE_TABLE_MAX_ROWS and "no-table" not in wi
    mma = table and not interleaved and "f64_mma_per_sm" in dev and "no-f64-mma" not in wi
    if mma:
        P = math.ceil(D / 8) * 8
        table_sample = (12 + 5 * P / 8) / 4 + MMA_TABLE_OVERHEAD
        res = resident_threads(dev, MMA_TABLE_REGS.get(P, TABLE_REGS.get(D, regs[0])), BLOCK, TILE_SMEM + 32 * P * 8)
        # A warp's 16 sums chain 4 DMMA a half step each, well under a memory round trip.
        table_cycles = a["dram_latency"] + math.ceil(L / a["tile_half"]) * (
            3 * a["sync_cycles"] + max(a["dram_latency"], a["tile_half"] * table_sample))
        # Shared memory a sample, in 4-byte words (32 a cycle an SM): the table's reads (P / 8 a
        # warp's 4 samples, 8 bytes a lane, 2 wavefronts each with its columns swizzled), the
        # samples' reads (one a sample) and the tile's and the table's copies.
        smem = P / 16 + sb / 4 + sb / 4 + P / 64
        ks.append(Kernel("chunk_states", 1, C * N * sb + T * state_bytes, C * N * P, "f64 mma", C * N,
                         2 * C * N * D, waves(T, BLOCK, res, dev) * table_cycles, 0, smem_words=C * N * smem,
                         instructions=C * N * table_sample))
    elif table:
        # D independent float64 FMAs a sample: a thread's path is its own issue (the FMAs of a
        # warp take two cycles each of its scheduler's float64 unit), not a recurrence.
        table_sample = D + D // 2 + 2 + table_over
        res = resident_threads(dev, TABLE_REGS.get(D, regs[0]), BLOCK, TILE_SMEM + 32 * D * 8)
        table_path = max(table_sample, 2 * D)
        table_cycles = a["dram_latency"] + math.ceil(L / a["tile_half"]) * (
            3 * a["sync_cycles"] + max(a["dram_latency"], a["tile_half"] * table_path))
        ks.append(Kernel("chunk_states", 1, C * N * sb + T * state_bytes, C * N * D, "f64", 2 * C * N,
                         2 * C * N * D, waves(T, BLOCK, res, dev) * table_cycles, 0,
                         instructions=C * N * table_sample))
    else:
        res = resident_threads(dev, regs[0], block, states_smem)
        ks.append(Kernel("chunk_states", 1, C * N * sb + T * state_bytes, C * N * sect_ops, pipe,
                         cvt_in * C * N, C * N * S * (2 * ops - 1),
                         waves(T, block, res, dev) * pass_cycles(0), C * N * cold_ops,
                         instructions=C * N * per_sample))
    # 1. group_sums and 3. chunk_starts: one block per (channel, group), a thread per row, G steps
    # The group's 32 chunk states are loaded before the walk (one memory latency per block); a
    # thread's row of A^L is in registers (up to 32 rows, else read from shared memory each step);
    # a step loads s from shared memory and sums its D products in CARRY_PARTIALS chains.
    cb = math.ceil(D / 32) * 32
    res_c = resident_threads(dev, CARRY_REGS if D <= 32 else CARRY_REGS_WIDE, cb, min(D * D, 4096) * 8 + 8 * D)
    mem_lat = a["l2_latency"] if T * state_bytes <= dev["l2_bytes"] else a["dram_latency"]
    chain = math.ceil(D / CARRY_PARTIALS) + 2  # the FMAs of one partial sum, then two adds
    step_cycles = a["l1_latency"] + chain * a["fma_latency_f64"] + 2 * a["sync_cycles"] + mem_lat / GROUP
    carry_w = waves(C * groups * cb, cb, res_c, dev)
    ks.append(Kernel("group_sums", 1, T * state_bytes + C * groups * state_bytes, T * D * D, "f64", 0,
                     2 * T * D * D, carry_w * GROUP * step_cycles))
    # 2. group_scan, `steps` launches
    scan_threads = C * groups * D
    res_s = resident_threads(dev, 32, SCAN_THREADS)
    ks.append(Kernel("group_scan", steps, steps * 3 * C * groups * state_bytes, steps * C * groups * D * D, "f64", 0,
                     steps * 2 * C * groups * D * D,
                     steps * waves(scan_threads, SCAN_THREADS, res_s, dev) * (a["dram_latency"] + D * a["fma_latency_f64"])))
    ks.append(Kernel("chunk_starts", 1, 2 * T * state_bytes + C * groups * state_bytes, T * D * D, "f64", 0,
                     2 * T * D * D, carry_w * GROUP * step_cycles))
    # 4. output pass
    res = resident_threads(dev, regs[1], block, tile_smem)
    ks.append(Kernel("output", 1, 2 * C * N * sb + T * state_bytes, C * N * (sect_ops + tail_ops), pipe,
                     2 * C * N if f64 and not pairs else 0, C * N * (S * (2 * ops - 1) + tail_ops * 2),
                     waves(T, block, res, dev) * pass_cycles(tail_path), C * N * cold_ops,
                     instructions=C * N * (per_sample + tail_ops + out_over)))
    for e in w.get("extra", []):
        if e["kind"] == "delay":
            # chain_elementwise (codegen/cuda/emit_cuda.cpp): a grid-stride loop over (channel,
            # sample), up to 4096 blocks of 256, each sample read from D samples earlier (or the
            # line) and written; then the lines' next state (a thread per cell) and their copy
            # back, both small. Independent loads: a DRAM latency per grid-stride iteration.
            threads = min(4096, math.ceil(C * N / 256)) * 256
            res_e = resident_threads(dev, e["regs"], 256)
            iters = math.ceil(C * N / threads)
            ks.append(Kernel("delay (elementwise)", 1, 2 * C * N * sb, 0, "f32", 0, 0,
                             waves(threads, 256, res_e, dev) * iters * a["dram_latency"]))
            line_bytes = C * e["line"] * sb
            ks.append(Kernel("delay lines", 2, 3 * line_bytes, 0, "f32", 0, 0, 2 * a["dram_latency"]))
        elif e["kind"] == "sum":
            k = e["operands"]
            threads = min(4096, math.ceil(C * N / 256)) * 256
            res_e = resident_threads(dev, e["regs"], 256)
            iters = math.ceil(C * N / threads)
            ks.append(Kernel("sum", 1, (k + 1) * C * N * sb, C * N * k, "f32", 0, 2 * C * N * k,
                             waves(threads, 256, res_e, dev) * iters * a["dram_latency"]))
    info = dict(L=L, chunks_per_channel=chunks, threads=T, groups=groups, scan_steps=steps,
                layout="interleaved" if interleaved else "planar",
                occupancy=resident_threads(dev, regs[0], block, states_smem))
    return ks, info, C, N


def model(w, dev, a):
    ks, info, C, N = kernels_for(w, dev, a)
    rows = []
    total = 0.0
    for k in ks:
        bounds, bound, t = k.times(dev)
        rows.append(dict(kernel=k.name, launches=k.launches, bytes=k.bytes, flops=k.flops, bound=bound,
                         time_s=t, **{f"{b}_s": v for b, v in bounds.items()}))
        total += t
    launches = sum(k.launches for k in ks)
    floor = 2 * C * N * SIGNAL_BYTES / dev["bandwidth"]
    # the limiter: what bounds the kernels that take most of the time
    by_bound = {}
    for r in rows:
        by_bound[r["bound"]] = by_bound.get(r["bound"], 0) + r["time_s"]
    limiter = max(by_bound, key=by_bound.get)
    graph = total + launches * a["launch_us_graph"] * 1e-6
    plain = total + launches * a["launch_us_plain"] * 1e-6
    # From host memory the pieces run on three streams (copies in, kernels, copies out at once)
    # while the host stages the next piece in and the last one out: the slowest of the four.
    in_bytes = out_bytes = C * N * SIGNAL_BYTES
    host_bytes = in_bytes + out_bytes
    return dict(workload=w["id"], **info, bytes=sum(k.bytes for k in ks), flops=sum(k.flops for k in ks),
                launches=launches, floor_s=floor, kernels_s=total, predicted_s=graph, predicted_plain_s=plain,
                ratio=graph / floor, limiter=limiter, limiter_share=by_bound[limiter] / total,
                with_host_s=max(graph, in_bytes / dev["pcie"], out_bytes / dev["pcie"], host_bytes / a["host_staging"]),
                target=w.get("target"), kernels=rows)


def fmt_t(s):
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def verdict(r):
    t = r["target"]
    if not t:
        return ""
    if t[0] == "floor":
        return f"≤ {t[1]:g}x: {'met' if r['ratio'] <= t[1] else 'MISSED'}"
    if t[0] == "launches":
        return "one launch per entry for the batch: met"
    return ""


def table(results, dev):
    out = [f"### {dev['name']}: {dev['sms']} SMs, {dev['bandwidth'] / 1e12:.2f} TB/s, "
           f"{dev['sms'] * dev['f64_per_sm'] * dev['clock_ghz'] / 1e3:.2f} T float64 FMA/s, "
           f"{dev['sms'] * dev['f32_per_sm'] * dev['clock_ghz'] / 1e3:.1f} T float32 FMA/s", "",
           "| workload | L, layout | threads (per SM) | bytes moved | GFLOP | launches | floor | predicted (graph) | "
           "no graph | ratio | limited by | target | + host copies |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        out.append(
            f"| {r['workload']} | {r['L']}, {r['layout']} | {r['threads']:,} ({r['occupancy']}) | "
            f"{r['bytes'] / 1e6:,.0f} MB | {r['flops'] / 1e9:,.1f} | {r['launches']} | {fmt_t(r['floor_s'])} | "
            f"{fmt_t(r['predicted_s'])} | {fmt_t(r['predicted_plain_s'])} | {r['ratio']:.2f}x | "
            f"{r['limiter']} ({r['limiter_share'] * 100:.0f}%) | {verdict(r)} | {fmt_t(r['with_host_s'])} |")
    return "\n".join(out)


def detail(results):
    out = []
    for r in results:
        out += ["", f"**{r['workload']}** (L = {r['L']}, {r['groups']} groups per channel, {r['scan_steps']} scan "
                    f"steps)", "",
                "| kernel | launches | MB | memory | pipe | issue | latency | time | bound |",
                "|---|---|---|---|---|---|---|---|---|"]
        for k in r["kernels"]:
            pipe = next(v for key, v in k.items() if key.endswith("pipe_s"))
            issue = fmt_t(k["issue_s"]) if "issue_s" in k else "-"
            out.append(f"| {k['kernel']} | {k['launches']} | {k['bytes'] / 1e6:,.1f} | {fmt_t(k['memory_s'])} | "
                       f"{fmt_t(pipe)} | {issue} | {fmt_t(k['latency_s'])} | {fmt_t(k['time_s'])} | {k['bound']} |")
    return "\n".join(out)


# --- loops ---------------------------------------------------------------------------------
# Loops through one mix (docs/cuda.md, "Loops"): fused, one chain kernel a thread per channel
# (fuse-loops, the default); unfused (--threshold gpu_fuse_loops=0), the loop's kernels once per
# pass of its delay. Each loop: (delay in samples, sections in its body, other body stages).
# A graph's loops run one after another on the stream, fused or not.
LOOP_WORKLOADS = [
    dict(id="loop echo 2 ch x 60 s (bench/workloads/loop_echo.fx)", channels=2, seconds=60, fs=48000,
         loops=[(12000, 1, 0)]),
    dict(id="Freeverb 8 ch x 60 s (bench/workloads/loop_freeverb.fx)", channels=8, seconds=60, fs=44100,
         loops=[(d, 1, 0, "combs") for d in (1116, 1188, 1277, 1356, 1422, 1491, 1557, 1617)]
         + [(d, 0, 0) for d in (556, 441, 341, 225)]),
    dict(id="one-sample loop with a tanh, 2 ch x 10 s", channels=2, seconds=10, fs=48000, loops=[(1, 0, 1)]),
    dict(id="loop echo, a batch of 512 stereo items (1024 ch) x 6 s", channels=1024, seconds=6, fs=48000,
         loops=[(12000, 1, 0)]),
]
LOOP_AHEAD = 8        # codegen::kCudaLoopAhead: a block of samples, its cells and inputs loaded a block ahead
LOOP_PREFETCH = 64    # codegen::kCudaLoopPrefetch: inputs brought into L2 this many samples on


def loop_times(w, dev, a):
    """(fused seconds, unfused seconds, fused path in cycles per sample, fused seconds one after
    another) of a loop workload, float32. A loop's optional fourth field names its side-by-side
    group (codegen::cuda_side_by_side: independent loops in one launch, each on its own warps)."""
    clock = dev["clock_ghz"] * 1e9
    C, N = w["channels"], w["seconds"] * w["fs"]
    lat = a["fma_latency_f32"]
    warps = math.ceil(C / 32)
    schedulers = 4 * dev["sms"]
    fused = unfused = apart = 0.0
    paths = []
    groups = {}  # side-by-side group: (longest member's path, its warps)
    for delay, sections, other, *side in w["loops"]:
        tail = other * a["tanh_f64_path"] / 2 * lat  # a float32 tanh: about half the double's dependent chain
        # Instructions a sample issues: 5 per section, a tail stage's, the mix and its store and
        # position (about 7), the input, output and line accesses (about 5).
        issue = 5 * sections + other * a["tanh_f64_ops"] / 2 + 12
        # Blocks of LOOP_AHEAD samples whose inputs come a block ahead, from L2 (prefetched): what
        # of an L2 latency a block's samples do not cover waits.
        if delay >= 2 * LOOP_AHEAD:
            # The line's cells come with the inputs (L2: written a delay ago); the body's
            # recurrence is its sections' own (3 FMA latencies), the mix is off it (its value is
            # read a delay later).
            body = max(issue, 3 * lat if sections else 0)
        else:
            # The line in 15 registers: each sample shifts the mix in (15 selects of two
            # instructions); the mix reaches the loop_read `delay` samples later, through the body
            # and the mix itself (a product, then a sum), plus a select a sample.
            recurrence = (sections * 2 * lat + tail + 2 * lat) / delay + 2
            body = max(issue + 2 * (2 * LOOP_AHEAD - 1), 3 * lat if sections else 0, recurrence)
        exposed = max(0.0, a["l2_latency"] - LOOP_AHEAD * body) / LOOP_AHEAD
        path = body + exposed
        paths.append(path)
        # A warp per scheduler at most keeps each thread's path; more share the issue slots.
        share = max(1.0, warps / schedulers)
        alone = N * path * share / clock + a["launch_us_plain"] * 1e-6
        apart += alone
        if side:
            longest, group_warps = groups.get(side[0], (0.0, 0))
            groups[side[0]] = (max(longest, path), group_warps + warps)
        else:
            fused += alone
        # Unfused: per pass (the delay's samples): the feedback read and the sum (elementwise, a
        # DRAM latency each), the body's chain a thread per channel (its sections' recurrence and
        # an L2 latency per 4 samples: its input is the read's output, just written), the line's
        # write (a thread per channel, a store a sample), each a launch (no graph: execute_cuda).
        passes = math.ceil(N / delay)
        kernels = 3 + (1 if sections or other else 0)
        chain = delay * max(3 * lat * sections + tail, a["l2_latency"] / a["interleaved_unroll"]) if sections or other else 0
        per_pass = kernels * a["launch_us_plain"] * 1e-6 + (2 * a["dram_latency"] + chain + delay * 4) / clock
        unfused += passes * per_pass
    for longest, group_warps in groups.values():  # one launch: as long as its slowest member
        fused += N * longest * max(1.0, group_warps / schedulers) / clock + a["launch_us_plain"] * 1e-6
    return fused, unfused, paths, apart


def loop_table(dev, a):
    out = [f"### Fused loops, {dev['name']} (float32, a thread per channel; no CUDA graph)", "",
           "| workload | loops | fused: cycles per sample | fused | fused, one launch a loop | unfused (per pass) | "
           "unfused / fused |",
           "|---|---|---|---|---|---|---|"]
    for w in LOOP_WORKLOADS:
        fused, unfused, paths, apart = loop_times(w, dev, a)
        cycles = f"{min(paths):.0f}" if min(paths) == max(paths) else f"{min(paths):.0f}-{max(paths):.0f}"
        out.append(f"| {w['id']} | {len(w['loops'])} | {cycles} | {fmt_t(fused)} | {fmt_t(apart)} | {fmt_t(unfused)} | "
                   f"{unfused / fused:.1f}x |")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="h100", choices=sorted(DEVICES))
    p.add_argument("--detail", action="store_true", help="per-kernel breakdown")
    p.add_argument("--json", action="store_true")
    p.add_argument("--loops", action="store_true", help="fused against unfused loops (docs/cuda-performance-model.md)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="override an assumption (e.g. fma_latency_f64=4, dram_latency=600)")
    p.add_argument("--what-if", action="append", default=[], choices=sorted(WHAT_IF),
                   help="model a change that is not in the code: " + "; ".join(f"{k}: {v}" for k, v in WHAT_IF.items()))
    args = p.parse_args()
    dev = DEVICES[args.device]
    a = dict(ASSUMPTIONS)
    for s in args.set:
        name, _, value = s.partition("=")
        if name not in a:
            sys.exit(f"unknown assumption {name!r}; one of {', '.join(a)}")
        a[name] = float(value)
    a["what_if"] = tuple(args.what_if)
    if args.loops:
        print(loop_table(dev, a))
        return
    results = [model(w, dev, a) for w in WORKLOADS]
    if args.json:
        print(json.dumps(dict(device=dev, assumptions=a, results=results), indent=1))
        return
    if args.what_if:
        print("What if (not the code as it is): " + "; ".join(WHAT_IF[k] for k in args.what_if) + "\n")
    print(table(results, dev))
    if args.detail:
        print(detail(results))


if __name__ == "__main__":
    main()

# A side-chain/link compressor case of the dynamics reference tests:
# scripts/gen_dynamics_reference.py writes this file and its expected output,
# tests/data/dynamics/link_max_compressor_*.npy (fs = 48 kHz; the inputs bind in order, x first).
graph link_max_compressor
input x : 2
output x | compressor(-20 dB, 4, 5 ms, 50 ms, link=max)

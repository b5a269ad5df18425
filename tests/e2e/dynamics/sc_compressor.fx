# A side-chain/link compressor case of the dynamics reference tests:
# scripts/gen_dynamics_reference.py writes this file and its expected output,
# tests/data/dynamics/sc_compressor_*.npy (fs = 48 kHz; the inputs bind in order, x first).
graph sc_compressor
input x : 2
input key : 2
output x | compressor(-30 dB, 4, 2 ms, 80 ms, key=key)

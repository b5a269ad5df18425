# A side-chain/link compressor case of the dynamics reference tests:
# scripts/gen_dynamics_reference.py writes this file and its expected output,
# tests/data/dynamics/sc_compressor_mono_key_*.npy (fs = 48 kHz; the inputs bind in order, x first).
graph sc_compressor_mono_key
input x : 2
input key : 1
output x | compressor(-36 dB, 6, 1 ms, 120 ms, knee=6 dB, key=key)

# A side-chain/link compressor case of the dynamics reference tests:
# scripts/gen_dynamics_reference.py writes this file and its expected output,
# tests/data/dynamics/sc_link_mean_compressor_*.npy (fs = 48 kHz; the inputs bind in order, x first).
graph sc_link_mean_compressor
input x : 2
input key : 2
output x | compressor(-28 dB, 3, 1 ms, 60 ms, makeup=2 dB, key=key, link=mean)

# A side-chain/link expander case of the dynamics reference tests:
# scripts/gen_dynamics_reference.py writes this file and its expected output,
# tests/data/dynamics/link_mean_expander_*.npy (fs = 48 kHz; the inputs bind in order, x first).
graph link_mean_expander
input x : 2
output x | expander(-35 dB, 3, 2 ms, 40 ms, knee=6 dB, link=mean)

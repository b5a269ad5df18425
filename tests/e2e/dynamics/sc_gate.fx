# A side-chain/link gate case of the dynamics reference tests:
# scripts/gen_dynamics_reference.py writes this file and its expected output,
# tests/data/dynamics/sc_gate_*.npy (fs = 48 kHz; the inputs bind in order, x first).
graph sc_gate
input x : 2
input key : 2
output x | gate(-30 dB, 0.5 ms, 15 ms, hold=3 ms, range=-50 dB, key=key)

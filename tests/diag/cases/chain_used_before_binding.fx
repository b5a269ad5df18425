# A stage or chain used after '|' before its binding: said as such (it used to read as a
# signal closing a loop: "'eq' is a signal, not a stage or a chain").
input x
y = x | eq
eq = lowpass(1 kHz)
output y

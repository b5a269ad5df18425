# A loop with nothing fed into it: silence, and an error at the output (it was an IR
# verifier error, which errors.md calls a bug in fxc).
input x
y = y | delay(1)
output y

# 0.005 ms is a quarter of a sample at 48 kHz: it rounds to no delay at all.
input x
y = x + 0.5 * (y | delay(0.005 ms))
output y

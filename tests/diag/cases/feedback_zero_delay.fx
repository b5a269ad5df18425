input x
y = x + 0.5 * (y | delay(0))
output y

input x
y = x | tanh()
| gain(0.5)
output y

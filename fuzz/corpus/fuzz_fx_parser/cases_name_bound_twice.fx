input x
x = x | tanh()
y = x | gain(0.5)
y = x | gain(0.25)
output y

input x
output y
y = x | tanh()

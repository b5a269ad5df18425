input x
y = y | tanh()
output y

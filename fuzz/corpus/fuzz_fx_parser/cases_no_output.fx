input x
y = x | tanh()

input x
y = x | tanh()
ouptut y

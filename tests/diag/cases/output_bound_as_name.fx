# output = x binds a name (the contract reserves no word); with no output statement, the
# "no output" error points at it.
input x
output = x | tanh()

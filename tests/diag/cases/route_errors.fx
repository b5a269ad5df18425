# Channel routing that does not fit the signal.
input x : 2
a = x[2]
l, c, r = x
b = x[1:1]
m = x | mix([[1, 0.5], [0.5]])
t = [x, 3]
output x

input x : 1
a = x | gain(3 kHz)
b = 2 ms * x
output a + b

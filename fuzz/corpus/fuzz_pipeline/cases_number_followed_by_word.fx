input x : 1
a = 2x
b = x | delay(5msec)
output a + b

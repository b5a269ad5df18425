input x : 1
a = x | fir([])
b = x | butter(4, [])
output a + b

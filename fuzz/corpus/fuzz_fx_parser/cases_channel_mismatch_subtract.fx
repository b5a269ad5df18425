input a : 2
input b : 2
input c : 1
output a + b - c

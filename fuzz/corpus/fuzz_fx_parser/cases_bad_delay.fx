input x : 1
a = x | delay(-3)
b = x | delay(2.5)
c = x | delay(2 kHz)
output a + b + c

input x : 1
a = x | firwin(101, 1 kHz, window=kaiser)
b = x | firwin(101, 1 kHz, beta=8.6)
output a + b

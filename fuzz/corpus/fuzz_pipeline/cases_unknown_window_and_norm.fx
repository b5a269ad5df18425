input x : 1
a = x | firwin(101, 1 kHz, window=haming)
b = x | bessel(4, 1 kHz, norm="magnitude")
output a + b

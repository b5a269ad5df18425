input x : 1
a = x | lowpass("1 kHz")
b = x | butter([4], 1 kHz)
c = x | firwin(101, 1 kHz, pass_zero=maybe)
output a + b + c

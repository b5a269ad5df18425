#!set fc=500Hz
graph eq
fc = 2 kHz
input x : 1
output x | lowpass(fc, 0.7)

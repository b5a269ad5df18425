# RUN: fxc dump %s --emit ir --fs 48000
# Every IIR family and band type, designed at 48 kHz (compare scipy.signal, output='sos').
graph families
input x : 1

b1 = x | butter(3, 1 kHz) | butter(2, 500 Hz, highpass)
b2 = x | butter(2, [300 Hz, 3 kHz], bandpass) | butter(1, [1 kHz, 2 kHz], bandstop)
c1 = x | cheby1(3, 1 dB, 2 kHz) | cheby1(2, 0.5, [1 kHz, 4 kHz], btype=bandstop)
c2 = x | cheby2(4, 40 dB, 5 kHz, highpass) | cheby2(N=2, rs=60, Wn=[200 Hz, 800 Hz], btype=bandpass)
e  = x | ellip(3, 0.5, 50, 6 kHz) | ellip(2, 1, 40, [2 kHz, 3 kHz], bandpass)
be = x | bessel(2, 1 kHz) | bessel(3, 3 kHz, highpass, norm=delay) | bessel(4, 10 kHz, norm=mag)
output b1 + b2 + c1 + c2 + e + be

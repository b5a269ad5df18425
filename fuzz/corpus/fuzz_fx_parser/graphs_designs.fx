# The other designs and raw coefficients, in one mono path each, summed.
graph designs
input x

iir = x | cheby2(4, 50, 6 kHz) | bessel(3, 2 kHz, highpass, norm=mag) |
      ellip(2, 1, 40, [1 kHz, 1.5 kHz], bandstop)
fir = x | firwin(31, [1 kHz, 5 kHz], window=blackman, pass_zero=false) |
      firwin(21, 3 kHz, window=kaiser, beta=6) | firwin(101, 8 kHz, window=hann)
raw = x | sos([[0.5, 0.2, 0.1, 2, -0.4, 0.1]]) | tf([0.2, 0.3], [1, -0.5, 0.1]) |
      fir([0.25, 0.5, 0.25]) | delay(3)
output iir + 0.5 * fir - raw

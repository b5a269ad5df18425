# Each broken line is reported; the parser resumes at the next statement.
input x : 2
a = x | lowpass(1 kHz,, 0.7)
b = x | * highpass(200 Hz)
c = x | tanh() tanh()
output a + b + c

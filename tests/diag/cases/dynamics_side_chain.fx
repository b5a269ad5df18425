graph dynamics_side_chain
input x : 2
input k : 3
a = x | compressor(-20 dB, 4, 1 ms, 10 ms, key=k)
b = x | compressor(-20 dB, 4, 1 ms, 10 ms, link=sum)
c = x | gate(-40 dB, 1 ms, 10 ms, key=2)
d = x | envelope(1 ms, 10 ms, link=max)
output a + b + c + d

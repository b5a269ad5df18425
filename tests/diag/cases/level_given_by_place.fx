# peaking(f0, q, gain): a level written second goes to q by its place, and only 'missing gain'
# was said; the note names where the level went and how to give it.
input x
output x | peaking(1 kHz, 6 dB)

# SciPy's and NumPy's words for a band type or a window: fxc's word, not the nearest spelling
# ('hanning' is nearer 'hamming', which is another window).
input x
a = x | butter(2, 1 kHz, hp)
output a | firwin(65, 1 kHz, window=hanning)

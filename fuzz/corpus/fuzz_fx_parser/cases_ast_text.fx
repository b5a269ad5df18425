# RUN: fxc dump %s --emit ast
# The parser's view: comments, continuations after | + * , and brackets, ';' as a separator,
# units with and without a space, keywords, strings, lists and negative numbers.
graph ast_text
input left : 1; input right : 1
input any

eq = lowpass(8kHz) |            # a chain, bound to a name
     gain(-0.5)
band = butter(2, [300 Hz,
                  3 kHz], btype="bandpass")
output l = left | eq | band
output r = -6 dB * right | delay(2.5 ms) + 0.25 * (right | fir([1, -1e-1, 2.5e-1]))
output any | (0.5 * eq);

# RUN: fxc dump %s --emit ir-opt --fs 48000 --channels 2 --target cuda
# On the GPU too, loops through one mix become one kernel each (fuse-loops): an echo whose filter
# follows the delay, Jezar's allpass core (its dry mix taken in) and a one-sample loop, each a
# thread per channel; the cross-coupled pair and the filter before a delay keep their feedback
# nodes and run in passes of their shortest delay.
graph fused_loops_cuda
input x
echo = x + 0.5 * (echo | delay(10 ms) | lowpass(3 kHz))
past = line | delay(225)
line = x + 0.5 * past
tight = x + 0.9 * (tight | delay(1) | tanh())
a = x + 0.5 * (b | delay(7))
b = 0.5 * (a | delay(11))
before = x + 0.5 * (before | lowpass(2 kHz) | delay(13))
output echo + (past - x) + tight + a + before

# Loop L2 (bench/loops_vs_faust.py): Jezar's Freeverb mono bank (8 lowpass-feedback combs,
# 4 allpasses, his 44.1 kHz tuning, room 0.5, damp 0.5) on each of 8 channels independently.
# 8 ch x 60 s at 44.1 kHz.
graph loop_freeverb
import "std/reverb.fx"
input x : 8
output x | freeverb_mono()

// SPDX-License-Identifier: Apache-2.0
// fxc: a compiler for audio signal-processing graphs. The one header of the public API.
//
//   #include <fxc/fxc.h>
//   fxc::Program eq = fxc::Program::from_source(
//       "input x : 2\noutput y = x | butter(4, 80 Hz, highpass)\n", {.sample_rate_hz = 44100});
//   eq.run(in, out, frames);                 // planar float* per channel, or fxc::Signal
//   fxc::Processor live = eq.processor();    // for an audio callback
//   live.prepare(512);
//   live.process(in, out, 256);              // noexcept, allocates nothing
//
// Everything is in namespace fxc; errors are fxc::Error. docs/api.md is the guide.
#pragma once

#include <fxc/dsl.h>
#include <fxc/error.h>
#include <fxc/param_value.h>
#include <fxc/processor.h>
#include <fxc/program.h>
#include <fxc/signal.h>
#include <fxc/types.h>
#include <fxc/version.h>

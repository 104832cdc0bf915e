// Package signal holds the numerical signal processing of dataset
// conversion: Butterworth low-pass design as second-order sections, causal
// and zero-phase filtering that match scipy.signal's sosfilt and
// sosfiltfilt, decimation, resampling onto a uniform clock (linear for
// Euclidean coordinates, slerp for orientations) and the alignment of
// several timestamped streams onto one clock with gap detection.
//
// Filters follow scipy's conventions so that numbers can be compared with
// a Python reference: a section is (b0, b1, b2, a0, a1, a2) with a0 = 1,
// Butter(N, fc, fs) equals scipy.signal.butter(N, fc, fs=fs,
// output="sos"), SOS.Filter equals sosfilt, SOS.Zi equals sosfilt_zi and
// FiltFilt equals sosfiltfilt with its default odd padding.
//
// Time is in seconds and rates in hertz throughout. Multi-channel values
// are stored row-major: sample i of a stream of width w is
// Values[i*w : (i+1)*w].
package signal

// Package msgstest holds what the tests of msgs and msgs/rosmsg share:
// sample values of every typed message of msgs, which rosmsg's tests use as
// inputs for the dynamic codec, the message paths, the fuzzers and the
// JavaScript cross-check, and msgs' tests round-trip. Only tests import it;
// both test suites are external packages (msgs_test, rosmsg_test) because
// this package imports msgs.
package msgstest

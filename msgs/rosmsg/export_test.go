package rosmsg

// Internals that the tests (package rosmsg_test, external so that they can
// use the typed messages of msgs as inputs) look at.

// DefinitionDelimiter is definitionDelimiter.
const DefinitionDelimiter = definitionDelimiter

// IsTimeLike is isTimeLike.
var IsTimeLike = isTimeLike

// Package traffic holds the words the core and the actuators share: a
// route's Level, a service's Split of traffic, and the kinds of operator
// Override. It is a leaf: it imports nothing of Hermes, so the evaluator
// decides in these words and every actuator backend reads them, with no
// translation in between.
package traffic

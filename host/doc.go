// Package host runs tool calls for mcphost: it turns what the client saw
// into the decision engine's terms, and (in later work) holds the gate every
// call passes and the model loop.
package host
